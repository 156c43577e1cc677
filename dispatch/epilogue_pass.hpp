// epilogue_pass.hpp: the library's own pass over C for an epilogue the backend did not fuse.
#pragma once

#include <cstdint>
#include <cstring>

#include "activation_math.hpp"
#include "gemm/gemm.h"
#include "problem.hpp"

namespace gemm {

// p's epilogue applied to C, which already holds Z = alpha * op(A) * op(B) + beta * C (the
// product run without the epilogue), on the memory C lives in: host memory here, device and
// managed memory by a kernel on p.stream (the installed device services). p is one matrix.
gemm_status_t apply_epilogue(const problem &p);

// The host half: C, aux, bias and bias_grad in host memory.
void apply_epilogue_on_host(const problem &p);

// The epilogue, all but the bias gradient, on rows [row_begin, row_end) of columns
// [col_begin, col_end) of an f32 or f64 C in host memory that holds the product: the host
// pass's loop, and cpu_omp's on each block of C its threads finish.
template <class T>
void apply_epilogue_block(const epilogue_spec &e, T *c, int64_t ldc, int64_t row_begin, int64_t row_end,
                          int64_t col_begin, int64_t col_end) {
    const bool per_row = e.axis == epilogue_axis::rows;
    const T *bias = e.backward() ? nullptr : static_cast<const T *>(e.bias);
    T *aux = static_cast<T *>(e.aux);
    const int64_t n = row_end - row_begin;
    for (int64_t j = col_begin; j < col_end; ++j) {
        T *cj = c + j * ldc + row_begin;
        T *auxj = aux ? aux + j * e.ld_aux + row_begin : nullptr;
        if (e.backward()) {
            activation_math::backward_column(e.act, cj, auxj, n);
            continue;
        }
        if (bias && per_row)
            for (int64_t i = 0; i < n; ++i) cj[i] += bias[row_begin + i];
        else if (bias)
            for (int64_t i = 0; i < n; ++i) cj[i] += bias[j];
        if (auxj) std::memcpy(auxj, cj, std::size_t(n) * sizeof(T));
        activation_math::forward_column(e.act, cj, n);
    }
}

}  // namespace gemm
