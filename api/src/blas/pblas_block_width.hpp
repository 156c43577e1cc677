// pblas_block_width.hpp: the values GEMM_PBLAS_BLOCK takes, for pblas_block.cpp (in
// libgemm_blas) and for the option's declaration (pblas_block_option.hpp, in libgemm's settings).
#pragma once

#include <cstdlib>

namespace gemm {

// PBLAS's own is 32; 256 makes each local GEMM deep enough that C's traffic no longer bounds it
// (docs/DISTRIBUTED.md, Where the time goes).
constexpr int pblas_block_default = 256;
constexpr const char *pblas_block_rule = "must be a whole number from 1 to 65536";

// The width GEMM_PBLAS_BLOCK's value v gives, or 0 when v breaks pblas_block_rule.
inline int pblas_block_width(const char *v) {
    if (!v || *v < '0' || *v > '9') return 0;
    char *end = nullptr;
    const long width = std::strtol(v, &end, 10);
    return *end == '\0' && width >= 1 && width <= 65536 ? static_cast<int>(width) : 0;
}

}  // namespace gemm
