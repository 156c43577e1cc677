// gemm_blas.cpp: the drop-in BLAS interface (sgemm_, dgemm_, cgemm_, zgemm_ and their cblas_
// forms) that routes existing programs' GEMMs through gemm, with reference-BLAS argument checking.
#include <dlfcn.h>

#include <complex>
#include <cstdarg>
#include <cstddef>
#include <cstdio>

#include "failure_policy.hpp"
#include "gemm/gemm.h"

namespace {

// ---- error reporting, as reference BLAS does it --------------------------------------------

// The program's own error handlers if it has them (test suites define them): weak references
// resolved by the dynamic linker, so gemm_blas never replaces either and a program linked to it
// still exports its own to us. A BLAS library's handlers are never called: reference BLAS's
// stop the program and OpenBLAS's cblas_xerbla exits, where OpenBLAS's own GEMM reports and
// returns. Without the program's, the reference message is printed here and the call returns.
extern "C" void xerbla_(const char *name, const int *info, std::size_t name_length) __attribute__((weak));
extern "C" void cblas_xerbla(int position, const char *routine, const char *form, ...) __attribute__((weak));
// Reference CBLAS's flag "the current call is row-major": its cblas_xerbla (and the handler of
// its test suite) reads it to map the positions of the column-major problem it passed to
// Fortran (m and n, lda and ldb swapped) back to the caller's.
extern "C" int RowMajorStrg __attribute__((weak));

// Whether handler is the program's own rather than a BLAS library's (one whose object also
// defines sgemm_ or cblas_sgemm: reference BLAS, OpenBLAS, loaded with the system BLAS). For
// the main program dladdr names argv[0], which dlopen does not find as a loaded object.
bool program_handler(void *handler) {
    if (!handler) return false;
    Dl_info where{};
    if (!dladdr(handler, &where) || !where.dli_fname) return true;
    void *object = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!object) return true;
    bool same_object = false;
    for (const char *routine : {"sgemm_", "cblas_sgemm"}) {
        void *gemm = dlsym(object, routine);
        Dl_info blas{};
        same_object = same_object || (gemm && dladdr(gemm, &blas) && blas.dli_fbase == where.dli_fbase);
    }
    dlclose(object);
    return !same_object;
}

bool program_xerbla() {
    static const bool own = program_handler(reinterpret_cast<void *>(xerbla_));
    return own;
}

bool program_cblas_xerbla() {
    static const bool own = program_handler(reinterpret_cast<void *>(cblas_xerbla));
    return own;
}

void report_fortran(const char *name, int info) {
    if (program_xerbla()) {
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
// and the message printed here is the one the reference handler prints. An error the Fortran
// checks find (from_fortran) goes to the program's own xerbla_ where it has one, as
// fortran_name and the Fortran INFO (position - 1): reference CBLAS's Fortran routine calls
// xerbla_, and only reference CBLAS's own xerbla_, which the program's replaces, passes it on
// to cblas_xerbla (as the program's cblas_xerbla, or as the message printed here).
void report_cblas(int position, bool row_major, bool from_fortran, const char *routine, const char *fortran_name,
                  const char *form, int value) {
    const bool to_xerbla = from_fortran && program_xerbla();
    if (program_cblas_xerbla() || to_xerbla) {
        // A process-wide flag, so threads reporting at once race on it; reference CBLAS writes
        // its own RowMajorStrg in every call and has the same race.
        if (&RowMajorStrg) RowMajorStrg = row_major ? 1 : 0;
        if (to_xerbla) report_fortran(fortran_name, position - 1);
        else cblas_xerbla(position, routine, form, value);
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

// The names a routine reports under: the Fortran routine's (as its xerbla_ call spells it), its
// symbol (for the failure policy's messages), reference CBLAS's own, and the one reference
// CBLAS's Fortran xerbla_ builds for errors the Fortran checks find.
struct routine_names {
    const char *fortran, *symbol, *cblas, *cblas_fortran;
};

// Per type: the names and gemm's entry point. gemm_sgemm and gemm_dgemm take their scalars
// by value, gemm_cgemm and gemm_zgemm by address (scalar_arg).
template <class T> struct typed;
template <> struct typed<float> {
    static constexpr routine_names name{"SGEMM ", "sgemm_", "cblas_sgemm", "cblas_sgemm "};
    static constexpr auto compute = gemm_sgemm;
};
template <> struct typed<double> {
    static constexpr routine_names name{"DGEMM ", "dgemm_", "cblas_dgemm", "cblas_dgemm "};
    static constexpr auto compute = gemm_dgemm;
};
template <> struct typed<std::complex<float>> {
    static constexpr routine_names name{"CGEMM ", "cgemm_", "cblas_cgemm", "cblas_cgemm "};
    static constexpr auto compute = gemm_cgemm;
};
template <> struct typed<std::complex<double>> {
    static constexpr routine_names name{"ZGEMM ", "zgemm_", "cblas_zgemm", "cblas_zgemm "};
    static constexpr auto compute = gemm_zgemm;
};

float scalar_arg(const float &x) { return x; }
double scalar_arg(const double &x) { return x; }
const void *scalar_arg(const std::complex<float> &x) { return &x; }
const void *scalar_arg(const std::complex<double> &x) { return &x; }

// Here and in cblas_gemm, alpha and beta arrive by address and are read only once the
// arguments have passed the checks, as reference BLAS reads them (an invalid call with a NULL
// scalar is reported, not dereferenced).
template <class T>
void fortran_gemm(const char *transa, const char *transb, const int *m, const int *n, const int *k, const T *alpha,
                  const T *a, const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc) {
    gemm_op_t ta = fortran_op(*transa), tb = fortran_op(*transb);
    if (int info = fortran_info(ta, tb, *m, *n, *k, *lda, *ldb, *ldc)) {
        report_fortran(typed<T>::name.fortran, info);
        return;
    }
    // Reference quick return: nothing to do, and C may not be read at all. A complex scalar
    // is zero or one only when both its parts are.
    if (*m == 0 || *n == 0 || ((*alpha == T(0) || *k == 0) && *beta == T(1))) return;
    gemm_status_t s = typed<T>::compute(GEMM_COL_MAJOR, ta, tb, *m, *n, *k, scalar_arg(*alpha), a, *lda, b, *ldb,
                                        scalar_arg(*beta), c, *ldc);
    if (s != GEMM_STATUS_SUCCESS)
        gemm_blas::on_failure<T>(typed<T>::name.symbol, s,
                                 {*transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc});
}

template <class T>
void cblas_gemm(int order, int ta, int tb, int m, int n, int k, const T *alpha, const T *a, int lda, const T *b,
                int ldb, const T *beta, T *c, int ldc) {
    if (cblas_error e = cblas_check(order, ta, tb, m, n, k, lda, ldb, ldc); e.position) {
        report_cblas(e.position, order == GEMM_ROW_MAJOR, e.from_fortran,
                     e.from_fortran ? typed<T>::name.cblas_fortran : typed<T>::name.cblas, typed<T>::name.fortran,
                     e.form, e.value);
        return;
    }
    if (m == 0 || n == 0 || ((*alpha == T(0) || k == 0) && *beta == T(1))) return;
    gemm_status_t s = typed<T>::compute(gemm_layout_t(order), gemm_op_t(ta), gemm_op_t(tb), m, n, k, scalar_arg(*alpha),
                                        a, lda, b, ldb, scalar_arg(*beta), c, ldc);
    if (s == GEMM_STATUS_SUCCESS) return;
    // As Fortran takes it: row-major C is column-major C^T = op(B)^T op(A)^T, and a row-major
    // operand is the column-major transpose (op(X)^T = op(X^T) for 'C' as for 'N' and 'T').
    char la = op_letter(ta), lb = op_letter(tb);
    if (order == GEMM_ROW_MAJOR)
        gemm_blas::on_failure<T>(typed<T>::name.cblas, s, {lb, la, n, m, k, *alpha, b, ldb, a, lda, *beta, c, ldc});
    else gemm_blas::on_failure<T>(typed<T>::name.cblas, s, {la, lb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc});
}

// CBLAS passes complex scalars and matrices as void *: interleaved real and imaginary parts,
// which std::complex is laid out as.
template <class T>
void cblas_complex_gemm(int order, int transa, int transb, int m, int n, int k, const void *alpha, const void *a,
                        int lda, const void *b, int ldb, const void *beta, void *c, int ldc) {
    cblas_gemm(order, transa, transb, m, n, k, static_cast<const T *>(alpha), static_cast<const T *>(a), lda,
               static_cast<const T *>(b), ldb, static_cast<const T *>(beta), static_cast<T *>(c), ldc);
}

}  // namespace

#define GEMM_BLAS_API extern "C" __attribute__((visibility("default")))

// The Fortran signature: the two character arguments' hidden lengths come last, as gfortran
// passes them. They are not read (only the first character counts), so C callers that omit
// them, as many do, are served as well.
GEMM_BLAS_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                          const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                          const float *beta, float *c, const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                          const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
                          const double *beta, double *c, const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void cgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                          const std::complex<float> *alpha, const std::complex<float> *a, const int *lda,
                          const std::complex<float> *b, const int *ldb, const std::complex<float> *beta,
                          std::complex<float> *c, const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void zgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                          const std::complex<double> *alpha, const std::complex<double> *a, const int *lda,
                          const std::complex<double> *b, const int *ldb, const std::complex<double> *beta,
                          std::complex<double> *c, const int *ldc, std::size_t, std::size_t) {
    fortran_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float *a,
                               int lda, const float *b, int ldb, float beta, float *c, int ldc) {
    cblas_gemm(order, transa, transb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

GEMM_BLAS_API void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *a,
                               int lda, const double *b, int ldb, double beta, double *c, int ldc) {
    cblas_gemm(order, transa, transb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

GEMM_BLAS_API void cblas_cgemm(int order, int transa, int transb, int m, int n, int k, const void *alpha, const void *a,
                               int lda, const void *b, int ldb, const void *beta, void *c, int ldc) {
    cblas_complex_gemm<std::complex<float>>(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

GEMM_BLAS_API void cblas_zgemm(int order, int transa, int transb, int m, int n, int k, const void *alpha, const void *a,
                               int lda, const void *b, int ldb, const void *beta, void *c, int ldc) {
    cblas_complex_gemm<std::complex<double>>(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
