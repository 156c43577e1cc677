// error.hpp: the thread-local "last error" every API call leaves behind.
#pragma once

#include <string>

#include "gemm/gemm.h"

namespace gemm {

// Records why the current call failed and returns status, so callers can write
// `return set_error(GEMM_STATUS_..., "...")`. parameter: cblas position, 0 if none.
gemm_status_t set_error(gemm_status_t status, std::string message, int parameter = 0) noexcept;

// The same with a string literal, for paths that must not allocate (out of memory).
gemm_status_t set_fixed_error(gemm_status_t status, const char *message) noexcept;

// Names the parameter of the failure already recorded (a check that words its message for
// one entry point, on behalf of another that knows where the argument sits); returns status.
gemm_status_t set_error_parameter(gemm_status_t status, int parameter) noexcept;

// Called at the start of every API call.
void clear_error() noexcept;

const char *last_error_message() noexcept;
int last_error_parameter() noexcept;

}  // namespace gemm
