// cublas.hpp: registration of the cuBLAS backend.
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cublas_backend();
}
