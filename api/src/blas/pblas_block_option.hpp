// pblas_block_option.hpp: GEMM_PBLAS_BLOCK, the panel width the drop-in BLAS gives ScaLAPACK's
// PBLAS (pblas_block.cpp), declared beside the code that reads it. libgemm's settings lists it
// and checks it before any call runs, as it does GEMM_BLAS_ON_FAILURE.
#pragma once

#include <string>

#include "dispatch/backend.hpp"
#include "pblas_block_width.hpp"

namespace gemm {

inline std::string invalid_pblas_block(const std::string &v) {
    return pblas_block_width(v.c_str()) ? "" : pblas_block_rule;
}

inline backend_option pblas_block_option() {
    return {"GEMM_PBLAS_BLOCK", "1 to 65536", "256",
            "the width of the panels ScaLAPACK's PBLAS multiplies in each local GEMM (its PILAENV, which the drop-in "
            "BLAS provides; 32 is ScaLAPACK's own); every MPI rank must see the same value",
            invalid_pblas_block};
}

}  // namespace gemm
