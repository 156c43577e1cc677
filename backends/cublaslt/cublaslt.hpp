// cublaslt.hpp: registration of the cuBLASLt backend.
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cublaslt_backend();
}
