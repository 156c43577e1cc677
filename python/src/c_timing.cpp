// c_timing.cpp: gemm._gemm._time_sgemm, the C call timed in a C loop on the operands
// gemm.matmul is timed on, the reference bench/python_overhead.py subtracts.
#include "bindings.hpp"

#include "operand.hpp"
#include "python_error.hpp"

#include <chrono>

namespace nb = nanobind;

namespace gemm_python {
namespace {

// Seconds for calls row-major gemm_sgemm calls C = A B on contiguous float32 matrices.
double time_sgemm(nb::handle a_object, nb::handle b_object, nb::handle c_object, int64_t calls) {
    const operand a = import_input(a_object, "a"), b = import_input(b_object, "b");
    const operand c = import_output(c_object, "out");
    for (const operand *x : {&a, &b, &c}) {
        const strided_shape &g = x->geometry;
        if (x->dtype != GEMM_F32 || x->device >= 0 || g.shape.size() != 2 || g.strides[1] != 1 ||
            g.strides[0] != g.shape[1])
            refuse(GEMM_STATUS_INVALID_VALUE, "a", "_time_sgemm takes contiguous float32 host matrices");
    }
    const int64_t m = a.geometry.shape[0], k = a.geometry.shape[1], n = b.geometry.shape[1];
    const auto *pa = reinterpret_cast<const float *>(a.data), *pb = reinterpret_cast<const float *>(b.data);
    auto *pc = reinterpret_cast<float *>(c.data);
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    double seconds = 0;
    {
        nb::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < calls && status == GEMM_STATUS_SUCCESS; ++i)
            status = gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0f, pa, k, pb, n, 0.0f, pc, n);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    check(status);
    return seconds;
}

}  // namespace

void bind_c_timing(nb::module_ &m) {
    m.def("_time_sgemm", &time_sgemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("calls"));
}

}  // namespace gemm_python
