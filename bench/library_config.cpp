// library_config.cpp: probing the library's configuration with one tiny call.
#include "library_config.hpp"

#include <cstdlib>

#include "cli_args.hpp"

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
    return s == GEMM_STATUS_INVALID_CONFIG || s == GEMM_STATUS_UNKNOWN_BACKEND ||
           s == GEMM_STATUS_BACKEND_UNAVAILABLE;
}

config_probe_result library_config_probe() {
    float a = 1.0f, b = 2.0f, c = 0.0f;
    config_probe_result r;
    r.status = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
    if (r.status != GEMM_STATUS_SUCCESS) {
        r.message = gemm_last_error();
        return r;
    }
    r.valid = c == 2.0f;
    if (!r.valid) r.message = "a 1x1x1 sgemm computed " + std::to_string(c) + " instead of 2";
    return r;
}

std::string backend_refusal(const std::string &name) {
    gemm_status_t s = gemm_set_backend(name.c_str());
    std::string why = s == GEMM_STATUS_SUCCESS ? "" : gemm_last_error();
    gemm_set_backend(nullptr);
    return why;
}

std::string watched_variables_prefix() {
    std::string prefix;
    for (const std::string &name : watched_variables())
        if (const char *value = std::getenv(name.c_str())) prefix += name + "=" + shell_quote(value) + " ";
    return prefix;
}

}  // namespace gemm_cli
