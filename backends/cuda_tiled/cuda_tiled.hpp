// cuda_tiled.hpp: registration of the hand-written tiled CUDA backend (textbook and
// register-tiled kernels, f32 and f64).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cuda_tiled_backend();
}
