// epilogue_pass.hpp: the device half of the library's epilogue pass (dispatch/epilogue_pass.hpp).
#pragma once

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// p's epilogue on C in device or managed memory: kernels on p.stream, on p.device; returns
// once they are enqueued.
gemm_status_t epilogue_pass(const problem &p);

}  // namespace gemm::cuda
