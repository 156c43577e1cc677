// cuda_naive.hpp: registration of the one-thread-per-element CUDA backend.
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cuda_naive_backend();
}
