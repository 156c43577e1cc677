// error.hpp: the thread-local "last error" every API call leaves behind.
#pragma once

#include <string>

#include "gemm/gemm.h"

namespace gemm {

// Records why the current call failed and returns status, so callers can write
// `return set_error(GEMM_STATUS_..., "...")`. parameter: cblas position, 0 if none.
gemm_status_t set_error(gemm_status_t status, std::string message, int parameter = 0);

// Called at the start of every API call.
void clear_error();

const char *last_error_message();
int last_error_parameter();

}  // namespace gemm
