// device_info.hpp: what the CLI needs to know about CUDA devices (how many, what each is,
// whether --device N names a usable one), with no CUDA type in sight. device_info_cuda.cpp
// answers with the CUDA runtime; device_info_none.cpp, compiled when the build has no CUDA,
// refuses every request with a clear message. Device memory and timing belong to the
// library's measurement engine (gemm_measure).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gemm_cli {

// Device work that cannot be done: no CUDA in this build, no such device, a CUDA error.
class device_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct device_properties {
    int ordinal = -1;
    std::string name;
    int major = 0, minor = 0;  // compute capability
    int sm_count = 0;
    int64_t l2_bytes = 0;
    int64_t memory_bytes = 0;
};

// True when this build can use CUDA devices at all.
bool device_support_compiled();

// How many CUDA devices this process can use now: 0 without CUDA in the build or without a
// device (then *why, when given, says which).
int device_count(std::string *why);

// Describes device ordinal after checking that it can be used; throws device_error when it
// cannot.
device_properties device_select(int ordinal);

// Describes device ordinal (0 <= ordinal < device_count()); throws device_error when its
// properties cannot be read.
device_properties device_describe(int ordinal);

}  // namespace gemm_cli
