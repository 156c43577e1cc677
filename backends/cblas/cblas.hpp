// cblas.hpp: registration of the system-CBLAS backend (OpenBLAS, BLIS, MKL through dlopen).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cblas_backend();
}
