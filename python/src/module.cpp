// module.cpp: the nanobind module gemm._gemm (the package gemm wraps it: python/gemm).
#include "bindings.hpp"

#include "operand.hpp"
#include "python_error.hpp"

namespace nb = nanobind;

NB_MODULE(_gemm, m) {
    gemm_python::register_error_translator();
    m.def("_set_error_type", &gemm_python::set_error_type);
    m.def("_set_helpers", &gemm_python::set_helpers);
    gemm_python::bind_matmul(m);
    gemm_python::bind_plan(m);
    gemm_python::bind_queries(m);
    gemm_python::bind_c_timing(m);
}
