// cpu_omp.hpp: registration of the packed, SIMD, multithreaded CPU backend.
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cpu_omp_backend();
}
