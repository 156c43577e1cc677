// struct_size.hpp: the rule for the public structs that carry a struct_size (gemm.h, at
// gemm_desc_t): which sizes a caller's copy may have for this library to use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm/gemm.h"

namespace gemm {

// Whether the caller's struct at s, struct_size bytes long, may be used as this library's
// struct of `ours` bytes: struct_size == ours; or larger (a newer gemm.h's) with every byte
// past ours 0, the fields this library does not know left at 0. A size below ours, or above
// what any version's struct will have, is refused. On refusal sets the thread's error to
// GEMM_STATUS_INVALID_VALUE: "<field> = <struct_size> ...", naming type and ending with `fix`
// (what the caller should do), at parameter position `position` (0: none).
gemm_status_t check_struct_size(const void *s, int64_t struct_size, std::size_t ours, const std::string &field,
                                const char *type, const char *fix, int position = 0);

}  // namespace gemm
