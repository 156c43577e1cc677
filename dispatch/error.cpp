// error.cpp: thread-local error state behind gemm_last_error().
#include "error.hpp"

namespace gemm {
namespace {
struct error_state {
    std::string message;
    int parameter = 0;
};
thread_local error_state tls_error;
}  // namespace

gemm_status_t set_error(gemm_status_t status, std::string message, int parameter) {
    tls_error.message = std::move(message);
    tls_error.parameter = parameter;
    return status;
}

void clear_error() {
    tls_error.message.clear();
    tls_error.parameter = 0;
}

const char *last_error_message() { return tls_error.message.c_str(); }
int last_error_parameter() { return tls_error.parameter; }

}  // namespace gemm
