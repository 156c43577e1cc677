// struct_size.cpp: check_struct_size, the rule for the public structs that carry a struct_size.
#include "struct_size.hpp"

#include "dispatch/error.hpp"

namespace gemm {
namespace {

// No version's struct grows this large: a struct_size beyond it was never set, and scanning
// that many bytes of the caller's memory for zeros would read past the struct.
constexpr int64_t largest_struct_size = 4096;

}  // namespace

gemm_status_t check_struct_size(const void *s, int64_t struct_size, std::size_t ours, const std::string &field,
                                const char *type, const char *fix, int position) {
    const std::string ours_text = std::to_string(ours) + " bytes";
    const std::string head = field + " = " + std::to_string(struct_size);
    if (struct_size < int64_t(ours))
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         head + " is smaller than this library's " + type + " (" + ours_text + "): " + fix, position);
    if (struct_size > largest_struct_size)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         head + " is larger than any " + type + " (" + std::to_string(largest_struct_size) +
                             " bytes at most), so it was never set: " + fix,
                         position);
    const unsigned char *bytes = static_cast<const unsigned char *>(s);
    for (int64_t i = int64_t(ours); i < struct_size; ++i)
        if (bytes[i] != 0)
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             head + " is larger than this library's " + type + " (" + ours_text + "), and byte " +
                                 std::to_string(i) + " is not 0: it belongs to a field this library does not have; " +
                                 "leave such fields 0 or use a library that has them",
                             position);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
