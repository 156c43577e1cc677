// bindings.hpp: the parts of the module gemm._gemm, each binding its own functions.
#pragma once

#include <nanobind/nanobind.h>

namespace gemm_python {

void bind_matmul(nanobind::module_ &m);
void bind_plan(nanobind::module_ &m);
void bind_queries(nanobind::module_ &module);
void bind_c_timing(nanobind::module_ &m);

}  // namespace gemm_python
