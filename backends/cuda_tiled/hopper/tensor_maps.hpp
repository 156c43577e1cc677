// tensor_maps.hpp: the TMA descriptors (tensor maps) of the Hopper kernel's operands.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled::hopper {

// One operand (stored column-major with leading dimension ld: `rows` along it when along_rows,
// else k) as boxes of operand_tile's shape for a tile of tile_rows rows: 128 bytes along
// the contiguous dimension. NOT_SUPPORTED, with the reason, where the driver has no encoder or
// refuses the operand.
gemm_status_t encode_operand(CUtensorMap &map, dtype t, const void *ptr, bool along_rows, int tile_rows, int64_t k,
                             int64_t rows, int64_t ld, int64_t stride, int64_t matrices);

}  // namespace gemm::cuda_tiled::hopper
