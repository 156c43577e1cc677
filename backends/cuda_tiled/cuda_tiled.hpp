// cuda_tiled.hpp: registration of the hand-written tiled CUDA backend (textbook and
// register-tiled kernels for f32 and f64, tensor-core kernels for f16 and bf16, and on compute
// capability 9.0 the wgmma and skinny kernels; kernel_table.hpp lists them).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cuda_tiled_backend();
}
