// epilogue_pass.hpp: the library's own pass over C for an epilogue the backend did not fuse.
#pragma once

#include "gemm/gemm.h"
#include "problem.hpp"

namespace gemm {

// p's epilogue applied to C, which already holds Z = alpha * op(A) * op(B) + beta * C (the
// product run without the epilogue), on the memory C lives in: host memory here, device and
// managed memory by a kernel on p.stream (the installed device services). p is one matrix.
gemm_status_t apply_epilogue(const problem &p);

// The host half: C, aux, bias and bias_grad in host memory.
void apply_epilogue_on_host(const problem &p);

}  // namespace gemm
