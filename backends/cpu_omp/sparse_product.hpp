// sparse_product.hpp: cpu_omp's gemm_spmm_csr and gemm_spmm_coo: C = alpha * op(A) * op(B) +
// beta * C with a sparse A, shared out over the calling thread and the backend's pool.
#pragma once

#include "dispatch/backend.hpp"
#include "dispatch/sparse_problem.hpp"

namespace gemm::cpu_omp_detail {

// s on host memory, computed in s.type; the variant's name ("csr_rows_f32") goes into ctx.
gemm_status_t sparse_product(const sparse_problem &s, run_report &ctx);

}  // namespace gemm::cpu_omp_detail
