// blas_on_failure_option.hpp: GEMM_BLAS_ON_FAILURE, the drop-in BLAS's one variable, declared
// beside the code that reads it (failure_policy.cpp, in libgemm_blas). libgemm's settings
// lists it with the library's own and checks it before any call runs, so that `gemm info`
// shows it and a typo fails the first call, not the first failure it was meant for.
#pragma once

#include <string>

#include "dispatch/backend.hpp"

namespace gemm {

// The values failure_policy.cpp's chosen_policy() takes.
inline std::string invalid_blas_on_failure(const std::string &v) {
    return v == "system" || v == "stop" ? "" : "must be system or stop";
}

inline backend_option blas_on_failure_option() {
    return {"GEMM_BLAS_ON_FAILURE", "system, stop", "system",
            "what the drop-in BLAS does with a valid call gemm cannot compute: the system BLAS computes it, or the "
            "program stops",
            invalid_blas_on_failure};
}

}  // namespace gemm
