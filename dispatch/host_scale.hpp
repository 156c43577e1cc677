// host_scale.hpp: C = beta * C on host memory, the k == 0 / alpha == 0 case for host backends
// whose library might read A or B anyway.
#pragma once

#include "problem.hpp"

namespace gemm {

// Every C of p (f32, f64, c32 or c64) scaled by beta; with beta == 0, C is written without being read,
// so NaN in C cannot leak. A and B are not touched (they may be NULL).
void scale_c_on_host(const problem &p);

}  // namespace gemm
