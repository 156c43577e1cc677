// cublasxt.hpp: registration of the cuBLASXt backend (host-memory GEMM over the GPUs of a host).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cublasxt_backend();
}
