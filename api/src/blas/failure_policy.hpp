// failure_policy.hpp: what the drop-in BLAS does with a valid call gemm did not compute. A BLAS
// caller has no status to read, so it never gets C back unwritten: the system BLAS computes
// the call (said once on stderr), or the program stops with the reason. docs/BLAS.md.
#pragma once

#include "gemm/gemm.h"

namespace gemm_blas {

// A call as the Fortran interface takes it, column-major (a row-major CBLAS call swapped); T is
// float, double, std::complex<float> or std::complex<double>.
template <class T> struct fortran_call {
    char transa, transb;
    int m, n, k;
    T alpha;
    const T *a;
    int lda;
    const T *b;
    int ldb;
    T beta;
    T *c;
    int ldc;
};

// Called after gemm returned status for call; routine is the entry point's name. Returns only
// once C holds the result; never throws (it runs inside the extern "C" BLAS entry points).
// Defined for the four types in failure_policy.cpp.
template <class T> void on_failure(const char *routine, gemm_status_t status, const fortran_call<T> &call) noexcept;

}  // namespace gemm_blas
