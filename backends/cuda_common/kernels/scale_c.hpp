// scale_c.hpp: C = beta * C on the device.
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// C = beta * C for every matrix of dp (beta == 0 writes zeros without reading C), any C type;
// the k == 0 or alpha == 0 case for backends whose library would read A or B.
gemm_status_t scale_c(const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda
