// python_error.hpp: gemm.Error raised from C++: a refusal of the binding's own, or a failed
// C call with the library's status, parameter position and message.
#pragma once

#include <gemm/gemm.h>

#include <nanobind/nanobind.h>

#include <string>

namespace gemm_python {

// What gemm.Error carries; argument names the Python argument at fault, or is empty.
struct call_failure {
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    int parameter = 0;
    std::string message;
    std::string argument;
};

// Thrown by the binding; translated into gemm.Error (the class _set_error_type gave).
struct error_exception {
    call_failure failure;
};

// Refuses a Python argument before any C call: gemm.Error with parameter 0.
[[noreturn]] void refuse(gemm_status_t status, const std::string &argument, const std::string &message);

// The failure of the C call that just returned status on this thread.
call_failure failure_of_last_call(gemm_status_t status);

// Raises gemm.Error for a failed status of the last C call on this thread.
void check(gemm_status_t status);
[[noreturn]] void raise_failure(const call_failure &failure);

void set_error_type(nanobind::handle type);
void register_error_translator();

}  // namespace gemm_python
