// transpose_tiles.hpp: cpu_omp's gemm_omatcopy: B = alpha * op(A) in cache-sized square tiles,
// shared out over the calling thread and the backend's pool.
#pragma once

#include "dispatch/backend.hpp"
#include "dispatch/transpose_problem.hpp"

namespace gemm::cpu_omp_detail {

// The tile's edge for an element of `bytes`: a tile of A and one of B fit in a 32 KiB L1 data
// cache together (64 x 64 of 4 bytes is 16 KiB each), so the strided side of a transpose (the
// columns of B that one column of A's tile scatters to) stays in L1 while the tile is done.
// backends/cpu_omp/NOTES.md, "Transposes", has the measurements.
constexpr int64_t transpose_tile_edge(std::size_t bytes) { return bytes <= 4 ? 64 : 32; }

// t on host memory; the variant's name ("tiles_f32_64x64") goes into ctx.
gemm_status_t transpose_tiles(const transpose_problem &t, run_report &ctx);

}  // namespace gemm::cpu_omp_detail
