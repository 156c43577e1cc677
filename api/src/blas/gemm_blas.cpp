// gemm_blas.cpp: the drop-in BLAS interface (sgemm_, dgemm_, cblas_sgemm, cblas_dgemm) that
// routes existing programs' GEMMs through gemm, with reference-BLAS argument checking.
#include <cstdarg>
#include <cstddef>
#include <cstdio>

#include "failure_policy.hpp"
#include "gemm/gemm.h"

namespace {

// ---- error reporting, as reference BLAS does it --------------------------------------------

// The program's own error handlers if it has them (test suites define them), else the system
// BLAS's: weak references resolved by the dynamic linker, so gemm_blas never replaces either
// and a program linked to it still exports its own to us. With none, print the reference
// message. Reference BLAS then stops the program; like OpenBLAS, we return instead.
extern "C" void xerbla_(const char *name, const int *info, std::size_t name_length) __attribute__((weak));
extern "C" void cblas_xerbla(int position, const char *routine, const char *form, ...) __attribute__((weak));
// Reference CBLAS's flag "the current call is row-major": its cblas_xerbla (and the handler of
// its test suite) reads it to map the positions of the column-major problem it passed to
// Fortran (m and n, lda and ldb swapped) back to the caller's.
extern "C" int RowMajorStrg __attribute__((weak));

void report_fortran(const char *name, int info) {
    if (xerbla_) {
        xerbla_(name, &info, 6);
        return;
    }
    std::fprintf(stderr, " ** On entry to %.6s parameter number %2d had an illegal value\n", name, info);
}

// The position reference CBLAS's handler prints for a row-major call: the swaps it undoes.
int row_major_position(int position) {
    switch (position) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    }
    return position;
}

// position as reference CBLAS passes it (see cblas_check); row_major as it sets RowMajorStrg.
// A handler that has no RowMajorStrg to read is given the position as the reference passes it,
// and the message printed here is the one the reference handler prints.
void report_cblas(int position, bool row_major, const char *routine, const char *form, int value) {
    if (cblas_xerbla) {
        // A process-wide flag, so threads reporting at once race on it; reference CBLAS writes
        // its own RowMajorStrg in every call and has the same race.
        if (&RowMajorStrg) RowMajorStrg = row_major ? 1 : 0;
        cblas_xerbla(position, routine, form, value);
        if (&RowMajorStrg) RowMajorStrg = 0;  // as reference CBLAS leaves it after every call
        return;
    }
    if (row_major) position = row_major_position(position);
    std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", position, routine);
    if (*form) std::fprintf(stderr, form, value);
}

// ---- reference argument checks ------------------------------------------------------------

bool same_letter(char c, char upper) { return c == upper || c == upper + ('a' - 'A'); }

// The transpose a Fortran character names, or 0 when it names none.
gemm_op_t fortran_op(char c) {
    if (same_letter(c, 'N')) return GEMM_OP_N;
    if (same_letter(c, 'T')) return GEMM_OP_T;
    if (same_letter(c, 'C')) return GEMM_OP_C;
    return gemm_op_t(0);
}

int max1(int v) { return v > 1 ? v : 1; }

// INFO as the reference xGEMM computes it: the first bad argument in its order of checks.
int fortran_info(gemm_op_t ta, gemm_op_t tb, int m, int n, int k, int lda, int ldb, int ldc) {
    int nrowa = ta == GEMM_OP_N ? m : k;
    int nrowb = tb == GEMM_OP_N ? k : n;
    if (!ta) return 1;
    if (!tb) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < max1(nrowa)) return 8;
    if (ldb < max1(nrowb)) return 10;
    if (ldc < max1(m)) return 13;
    return 0;
}

bool valid_op(int op) { return op == GEMM_OP_N || op == GEMM_OP_T || op == GEMM_OP_C; }

char op_letter(int op) { return op == GEMM_OP_N ? 'N' : op == GEMM_OP_T ? 'T' : 'C'; }

// What reference CBLAS reports first, as observed on netlib CBLAS 3.11 and matched here
// quirk for quirk: it checks Order (1), TransA (2) and TransB (3; but 2 in row-major), then
// runs the Fortran checks on the column-major problem it passes on (row-major swaps the
// operands and m with n) and reports Fortran INFO + 1 without mapping it back, under the
// routine name the Fortran xerbla_ built ("cblas_sgemm ", with a trailing blank).
struct cblas_error {
    int position = 0;
    const char *form = "";
    int value = 0;
    bool from_fortran = false;
};

cblas_error cblas_check(int order, int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc) {
    bool row = order == GEMM_ROW_MAJOR;
    if (!row && order != GEMM_COL_MAJOR) return {1, "Illegal layout setting, %d\n", order, false};
    if (!valid_op(ta)) return {2, "Illegal TransA setting, %d\n", ta, false};
    if (!valid_op(tb)) return {row ? 2 : 3, "Illegal TransB setting, %d\n", tb, false};
    gemm_op_t a = gemm_op_t(ta), b = gemm_op_t(tb);
    int info = row ? fortran_info(b, a, n, m, k, ldb, lda, ldc) : fortran_info(a, b, m, n, k, lda, ldb, ldc);
    if (!info) return {};
    return {info + 1, "", 0, true};
}

// ---- the routines --------------------------------------------------------------------------

template <class T> struct typed;
template <> struct typed<float> {
    static constexpr const char *fortran_name = "SGEMM ";
    static constexpr const char *fortran_symbol = "sgemm_";
    static constexpr const char *cblas_name = "cblas_sgemm";
    static constexpr const char *cblas_fortran_name = "cblas_sgemm ";
    static gemm_status_t call(gemm_layout_t l, gemm_op_t ta, gemm_op_t tb, int64_t m, int64_t n,
                              int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                              int64_t ldb, float beta, float *c, int64_t ldc) {
        return gemm_sgemm(l, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
};
template <> struct typed<double> {
    static constexpr const char *fortran_name = "DGEMM ";
    static constexpr const char *fortran_symbol = "dgemm_";
    static constexpr const char *cblas_name = "cblas_dgemm";
    static constexpr const char *cblas_fortran_name = "cblas_dgemm ";
    static gemm_status_t call(gemm_layout_t l, gemm_op_t ta, gemm_op_t tb, int64_t m, int64_t n,
                              int64_t k, double alpha, const double *a, int64_t lda,
                              const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
        return gemm_dgemm(l, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
};

template <class T>
void fortran_gemm(const char *transa, const char *transb, const int *m, const int *n,
                  const int *k, const T *alpha, const T *a, const int *lda, const T *b,
                  const int *ldb, const T *beta, T *c, const int *ldc) {
    gemm_op_t ta = fortran_op(*transa), tb = fortran_op(*transb);
    if (int info = fortran_info(ta, tb, *m, *n, *k, *lda, *ldb, *ldc)) {
        report_fortran(typed<T>::fortran_name, info);
        return;
    }
    // Reference quick return: nothing to do, and C may not be read at all.
    if (*m == 0 || *n == 0 || ((*alpha == T(0) || *k == 0) && *beta == T(1))) return;
    gemm_status_t s = typed<T>::call(GEMM_COL_MAJOR, ta, tb, *m, *n, *k, *alpha, a, *lda, b,
                                     *ldb, *beta, c, *ldc);
    if (s != GEMM_STATUS_SUCCESS)
        gemm_blas::on_failure(typed<T>::fortran_symbol, s,
                              {*transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc});
}

template <class T>
void cblas_gemm(int order, int ta, int tb, int m, int n, int k, T alpha, const T *a, int lda,
                const T *b, int ldb, T beta, T *c, int ldc) {
    if (cblas_error e = cblas_check(order, ta, tb, m, n, k, lda, ldb, ldc); e.position) {
        report_cblas(e.position, order == GEMM_ROW_MAJOR,
                     e.from_fortran ? typed<T>::cblas_fortran_name : typed<T>::cblas_name, e.form, e.value);
        return;
    }
    if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
    gemm_status_t s = typed<T>::call(gemm_layout_t(order), gemm_op_t(ta), gemm_op_t(tb), m, n, k,
                                     alpha, a, lda, b, ldb, beta, c, ldc);
    if (s == GEMM_STATUS_SUCCESS) return;
    // As Fortran takes it: row-major C is column-major C^T = op(B)^T op(A)^T.
    char la = op_letter(ta), lb = op_letter(tb);
    if (order == GEMM_ROW_MAJOR)
        gemm_blas::on_failure(typed<T>::cblas_name, s, {lb, la, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc});
    else
        gemm_blas::on_failure(typed<T>::cblas_name, s, {la, lb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

}  // namespace

#define GEMM_BLAS_API extern "C" __attribute__((visibility("default")))

// The Fortran signature: the two character arguments' hidden lengths come last, as gfortran
// passes them. They are not read (only the first character counts), so C callers that omit
// them, as many do, are served as well.
GEMM_BLAS_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                          const int *k, const float *alpha, const float *a, const int *lda,
                          const float *b, const int *ldb, const float *beta, float *c,
                          const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                          const int *k, const double *alpha, const double *a, const int *lda,
                          const double *b, const int *ldb, const double *beta, double *c,
                          const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void cblas_sgemm(int order, int transa, int transb, int m, int n, int k,
                               float alpha, const float *a, int lda, const float *b, int ldb,
                               float beta, float *c, int ldc) {
    cblas_gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void cblas_dgemm(int order, int transa, int transb, int m, int n, int k,
                               double alpha, const double *a, int lda, const double *b, int ldb,
                               double beta, double *c, int ldc) {
    cblas_gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
