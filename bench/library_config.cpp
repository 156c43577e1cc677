// library_config.cpp: the environment the library reads, and whether it accepts it (asked
// through gemm_backend_supports: nothing is computed).
#include "library_config.hpp"

#include <cstdlib>

#include "cli_args.hpp"
#include "problem_args.hpp"

namespace gemm_cli {

std::vector<std::string> watched_variables() {
    std::vector<std::string> names;
    for (int64_t i = 0; i < gemm_option_count(); ++i) {
        gemm_option_info_t info{};
        if (gemm_option_get_info(i, &info) == GEMM_STATUS_SUCCESS) names.emplace_back(info.name);
    }
    // XDG_CACHE_HOME places the tune cache when GEMM_TUNE_CACHE is unset.
    for (const char *other : {"XDG_CACHE_HOME", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) names.emplace_back(other);
    return names;
}

std::string status_name(gemm_status_t s) {
    std::string text = gemm_status_string(s);
    return text.substr(0, text.find(':'));
}

bool is_configuration_error(gemm_status_t s) {
    return s == GEMM_STATUS_INVALID_CONFIG || s == GEMM_STATUS_UNKNOWN_BACKEND || s == GEMM_STATUS_BACKEND_UNAVAILABLE;
}

config_probe_result library_config_probe() {
    config_probe_result r;
    gemm_desc_t d = tiny_desc(GEMM_F32, -1);
    r.status = gemm_backend_supports(nullptr, &d);
    r.valid = r.status == GEMM_STATUS_SUCCESS;
    if (!r.valid) r.message = gemm_last_error();
    return r;
}

std::string backend_refusal(const std::string &name) {
    gemm_desc_t d = tiny_desc(GEMM_F32, -1);
    gemm_status_t s = gemm_backend_supports(name.c_str(), &d);
    // Not serving this one problem is no refusal of the backend.
    return s == GEMM_STATUS_SUCCESS || s == GEMM_STATUS_NOT_SUPPORTED ? "" : gemm_last_error();
}

std::string watched_variables_prefix() {
    std::string prefix;
    for (const std::string &name : watched_variables())
        if (const char *value = std::getenv(name.c_str())) prefix += name + "=" + shell_quote(value) + " ";
    return prefix;
}

}  // namespace gemm_cli
