// error.cpp: thread-local error state behind gemm_last_error().
#include "error.hpp"

namespace gemm {
namespace {
struct error_state {
    std::string message;
    const char *fixed = nullptr;  // a message that needed no allocation; wins over message
    int parameter = 0;
};
thread_local error_state tls_error;
}  // namespace

gemm_status_t set_error(gemm_status_t status, std::string message, int parameter) noexcept {
    tls_error.message.swap(message);  // never allocates
    tls_error.fixed = nullptr;
    tls_error.parameter = parameter;
    return status;
}

gemm_status_t set_fixed_error(gemm_status_t status, const char *message) noexcept {
    tls_error.message.clear();
    tls_error.fixed = message;
    tls_error.parameter = 0;
    return status;
}

gemm_status_t set_error_parameter(gemm_status_t status, int parameter) noexcept {
    tls_error.parameter = parameter;
    return status;
}

void clear_error() noexcept {
    tls_error.message.clear();
    tls_error.fixed = nullptr;
    tls_error.parameter = 0;
}

const char *last_error_message() noexcept { return tls_error.fixed ? tls_error.fixed : tls_error.message.c_str(); }
int last_error_parameter() noexcept { return tls_error.parameter; }

}  // namespace gemm
