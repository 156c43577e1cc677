// pblas_block.cpp: PILAENV, the logical block size of ScaLAPACK's PBLAS, which the drop-in BLAS
// provides in place of ScaLAPACK's own (the preloaded definition is the one the program's
// ScaLAPACK calls). PDGEMM and its kin multiply their operands in panels of this width: each
// rank's local GEMMs are updates of its part of C that deep. ScaLAPACK's 32 makes every such
// GEMM read and write the rank's whole part of C for 32 multiply-adds an element, which
// memory bandwidth bounds far below the cores' rate; the default here (pblas_block_width.hpp)
// is deep enough for cpu_omp's rate, and GEMM_PBLAS_BLOCK sets another (thousands make an
// offloaded rank's calls pay for their trips to the GPU). The ranks of one product exchange
// panels of this width, so every rank must get the same value: it comes from the environment
// only, never from what the rank's machine measures.
#include <cstdio>
#include <cstdlib>

#include "pblas_block_width.hpp"

namespace {

int pblas_block() {
    const char *v = std::getenv("GEMM_PBLAS_BLOCK");
    if (!v || !*v) return gemm::pblas_block_default;
    if (const int width = gemm::pblas_block_width(v)) return width;
    // PILAENV cannot return an error, and a width that differs between ranks would stall the
    // product: the program stops, naming the variable, as it does for GEMM_BLAS_ON_FAILURE.
    std::fprintf(stderr, "gemm_blas: GEMM_PBLAS_BLOCK='%s' %s; stopping the program (PILAENV cannot return an error)\n",
                 v, gemm::pblas_block_rule);
    std::fflush(nullptr);
    std::_Exit(EXIT_FAILURE);
}

}  // namespace

// ictxt and prec (the BLACS context, the precision S, D, C, Z or I) leave the width unchanged:
// one width serves every type, as in ScaLAPACK's own. Fortran callers pass prec's length too,
// which this C definition need not read.
extern "C" __attribute__((visibility("default"))) int pilaenv_(const int *ictxt, const char *prec) {
    (void)ictxt;
    (void)prec;
    static const int width = pblas_block();
    return width;
}
