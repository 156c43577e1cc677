// device_info_none.cpp: device_info.hpp for builds without CUDA: every request fails.
#include "device_info.hpp"

namespace gemm_cli {
namespace {

constexpr const char *no_cuda = "this build has no CUDA (configure with a CUDA compiler and GEMM_WITH_CUDA=ON)";

}  // namespace

bool device_support_compiled() { return false; }

int device_count(std::string *why) {
    if (why) *why = no_cuda;
    return 0;
}

device_properties device_select(int) { throw device_error(no_cuda); }
device_properties device_describe(int) { throw device_error(no_cuda); }

}  // namespace gemm_cli
