// cuda_tiled.hpp: registration of the hand-written tiled CUDA backend (textbook and
// register-tiled kernels for f32 and f64, a tensor-core kernel for f16 and bf16).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cuda_tiled_backend();
}
