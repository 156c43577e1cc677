// library_config.hpp: the environment the library reads, and whether it accepts it.
#pragma once

#include <string>
#include <vector>

#include "gemm/gemm.h"

namespace gemm_cli {

// The variables that change what the library or its backends do, in display order: every
// GEMM_* variable the library reads (gemm_option_get_info: its own, then each backend's), then
// the others that place the tune cache or size thread pools.
std::vector<std::string> watched_variables();

struct config_probe_result {
    bool valid = false;
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string message;  // the library's explanation when not valid
};

// Whether a program's 1x1x1 f32 host call would be served under the selection in force and
// the GEMM_* variables (gemm_backend_supports with no backend).
config_probe_result library_config_probe();

// The status's name ("GEMM_STATUS_NOT_SUPPORTED") without the explanation that follows it.
std::string status_name(gemm_status_t s);

// True for the statuses that mean "the configuration is wrong", not "this call is".
bool is_configuration_error(gemm_status_t s);

// Why the library refuses to force `name` (a backend or "backend:variant") on this machine:
// the backend is unavailable, or has no such variant. "" when it accepts it.
std::string backend_refusal(const std::string &name);

// "GEMM_BACKEND=cblas OMP_NUM_THREADS=2 " for the watched variables that are set.
std::string watched_variables_prefix();

}  // namespace gemm_cli
