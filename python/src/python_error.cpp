// python_error.cpp: gemm.Error from the binding's refusals and the library's statuses.
#include "python_error.hpp"

#include <nanobind/stl/string.h>

#include <exception>

namespace nb = nanobind;

namespace gemm_python {
namespace {

// Held for the life of the process: the module's functions may raise until it ends.
PyObject *error_type = nullptr;

}  // namespace

void refuse(gemm_status_t status, const std::string &argument, const std::string &message) {
    throw error_exception{{status, 0, argument + ": " + message, argument}};
}

call_failure failure_of_last_call(gemm_status_t status) {
    return {status, gemm_last_error_parameter(), gemm_last_error(), ""};
}

void raise_failure(const call_failure &failure) { throw error_exception{failure}; }

void check(gemm_status_t status) {
    if (status != GEMM_STATUS_SUCCESS) raise_failure(failure_of_last_call(status));
}

void set_error_type(nb::handle type) {
    Py_XDECREF(error_type);
    error_type = type.inc_ref().ptr();
}

void register_error_translator() {
    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const error_exception &e) {
            const call_failure &f = e.failure;
            if (!error_type) {
                PyErr_SetString(PyExc_ValueError, f.message.c_str());
                return;
            }
            nb::object argument = f.argument.empty() ? nb::none() : nb::cast(f.argument);
            nb::object error = nb::handle(error_type)(f.message, static_cast<int>(f.status), f.parameter, argument);
            PyErr_SetObject(error_type, error.ptr());
        }
    });
}

}  // namespace gemm_python
