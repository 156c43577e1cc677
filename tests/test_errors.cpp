// test_errors.cpp: argument errors one by one (status, message naming the parameter, its
// position, C untouched), BLAS quick returns and the k = 0 / alpha = 0 / beta = 0 rules on every
// available backend, status strings, gemm_last_error and the version.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "harness.hpp"
#include "raw_enum_calls.h"

using namespace gemm_test;

namespace {

// ---- one call through any entry point ------------------------------------------------------

enum class entry_point {
    sgemm,
    dgemm,
    sgemm_batched,
    dgemm_batched,
    ex,
    ex_batched,
    cgemm,
    zgemm,
    cgemm_batched,
    zgemm_batched
};

constexpr entry_point all_entries[] = {entry_point::sgemm,         entry_point::dgemm, entry_point::sgemm_batched,
                                       entry_point::dgemm_batched, entry_point::ex,    entry_point::ex_batched,
                                       entry_point::cgemm,         entry_point::zgemm, entry_point::cgemm_batched,
                                       entry_point::zgemm_batched};

const char *entry_name(entry_point e) {
    switch (e) {
    case entry_point::sgemm: return "gemm_sgemm";
    case entry_point::dgemm: return "gemm_dgemm";
    case entry_point::sgemm_batched: return "gemm_sgemm_strided_batched";
    case entry_point::dgemm_batched: return "gemm_dgemm_strided_batched";
    case entry_point::ex: return "gemm_ex";
    case entry_point::ex_batched: return "gemm_ex_strided_batched";
    case entry_point::cgemm: return "gemm_cgemm";
    case entry_point::zgemm: return "gemm_zgemm";
    case entry_point::cgemm_batched: return "gemm_cgemm_strided_batched";
    case entry_point::zgemm_batched: return "gemm_zgemm_strided_batched";
    }
    return "?";
}

bool is_batched(entry_point e) {
    return e == entry_point::sgemm_batched || e == entry_point::dgemm_batched || e == entry_point::ex_batched ||
           e == entry_point::cgemm_batched || e == entry_point::zgemm_batched;
}
bool is_ex(entry_point e) { return e == entry_point::ex || e == entry_point::ex_batched; }
bool is_complex_entry(entry_point e) {
    return e == entry_point::cgemm || e == entry_point::zgemm || e == entry_point::cgemm_batched ||
           e == entry_point::zgemm_batched;
}
// Entry points that take alpha and beta by pointer (NULL is then an error).
bool scalars_by_pointer(entry_point e) { return is_ex(e) || is_complex_entry(e); }

enum class param {
    layout,
    transa,
    transb,
    m,
    n,
    k,
    alpha,
    a,
    a_type,
    lda,
    stride_a,
    b,
    b_type,
    ldb,
    stride_b,
    beta,
    c,
    c_type,
    ldc,
    stride_c,
    batch,
    compute
};

// Position of p in e's signature as gemm.h declares it (1 = layout), written out here from
// the header rather than taken from the library, so the test checks the library's table.
int position(entry_point e, param p) {
    using P = param;
    static const std::vector<P> typed = {P::layout, P::transa, P::transb, P::m,   P::n,    P::k, P::alpha,
                                         P::a,      P::lda,    P::b,      P::ldb, P::beta, P::c, P::ldc};
    static const std::vector<P> typed_batched = {P::layout,   P::transa, P::transb, P::m,        P::n,        P::k,
                                                 P::alpha,    P::a,      P::lda,    P::stride_a, P::b,        P::ldb,
                                                 P::stride_b, P::beta,   P::c,      P::ldc,      P::stride_c, P::batch};
    static const std::vector<P> ex = {P::layout, P::transa, P::transb, P::m,      P::n,   P::k,
                                      P::alpha,  P::a,      P::a_type, P::lda,    P::b,   P::b_type,
                                      P::ldb,    P::beta,   P::c,      P::c_type, P::ldc, P::compute};
    static const std::vector<P> ex_batched = {P::layout, P::transa,   P::transb,   P::m,      P::n,        P::k,
                                              P::alpha,  P::a,        P::a_type,   P::lda,    P::stride_a, P::b,
                                              P::b_type, P::ldb,      P::stride_b, P::beta,   P::c,        P::c_type,
                                              P::ldc,    P::stride_c, P::batch,    P::compute};
    const bool plain_typed =
        e == entry_point::sgemm || e == entry_point::dgemm || e == entry_point::cgemm || e == entry_point::zgemm;
    const std::vector<P> &sig = plain_typed                    ? typed
                                : e == entry_point::ex         ? ex
                                : e == entry_point::ex_batched ? ex_batched
                                                               : typed_batched;
    for (std::size_t i = 0; i < sig.size(); ++i)
        if (sig[i] == p) return int(i) + 1;
    return 0;
}

// Every argument of the widest entry point. Defaults are a valid col-major N N call with
// distinct m, n, k (so a message naming the wrong dimension shows) and least leading dims.
struct args {
    int layout = GEMM_COL_MAJOR;
    int transa = GEMM_OP_N, transb = GEMM_OP_N;
    int64_t m = 5, n = 7, k = 3;
    int64_t lda = 5, ldb = 3, ldc = 5;
    int64_t stride_a = 64, stride_b = 64, stride_c = 64, batch = 2;
    double alpha = 1.0, beta = 0.5;
    bool null_alpha = false, null_beta = false, null_a = false, null_b = false, null_c = false;
    // gemm_ex types as ints (an invalid value must reach the library unchanged); -1 = the
    // f32 default. Typed entry points ignore them.
    int a_type = GEMM_F32, b_type = GEMM_F32, c_type = GEMM_F32, compute = GEMM_F32;

    std::string describe() const {
        return "layout=" + std::to_string(layout) + " transa=" + std::to_string(transa) +
               " transb=" + std::to_string(transb) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k) + " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
               " ldc=" + std::to_string(ldc) + " strides=" + std::to_string(stride_a) + "," + std::to_string(stride_b) +
               "," + std::to_string(stride_c) + " batch=" + std::to_string(batch) + " types=" + std::to_string(a_type) +
               "," + std::to_string(b_type) + "," + std::to_string(c_type) + "," + std::to_string(compute);
    }
};

// Operand storage large enough for every call below (m, n, k <= 8, ld <= 9, batch <= 2 at
// stride 64), as pairs of doubles so every type fits. C holds a byte pattern to compare
// against.
struct buffers {
    std::vector<double> a = std::vector<double>(512, 0.25);
    std::vector<double> b = std::vector<double>(512, -0.5);
    std::vector<unsigned char> c = std::vector<unsigned char>(512 * sizeof(double));
    buffers() {
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<unsigned char>(i * 37u + 11u);
    }
};

gemm_status_t invoke(entry_point e, const args &x, buffers &buf) {
    auto layout = static_cast<gemm_layout_t>(x.layout);  // callers keep these within the enums' range
    auto ta = static_cast<gemm_op_t>(x.transa), tb = static_cast<gemm_op_t>(x.transb);
    const void *a = x.null_a ? nullptr : buf.a.data();
    const void *b = x.null_b ? nullptr : buf.b.data();
    void *c = x.null_c ? nullptr : buf.c.data();
    float alpha_f = float(x.alpha), beta_f = float(x.beta);
    switch (e) {
    case entry_point::sgemm:
        return gemm_sgemm(layout, ta, tb, x.m, x.n, x.k, alpha_f, static_cast<const float *>(a), x.lda,
                          static_cast<const float *>(b), x.ldb, beta_f, static_cast<float *>(c), x.ldc);
    case entry_point::dgemm:
        return gemm_dgemm(layout, ta, tb, x.m, x.n, x.k, x.alpha, static_cast<const double *>(a), x.lda,
                          static_cast<const double *>(b), x.ldb, x.beta, static_cast<double *>(c), x.ldc);
    case entry_point::sgemm_batched:
        return gemm_sgemm_strided_batched(layout, ta, tb, x.m, x.n, x.k, alpha_f, static_cast<const float *>(a), x.lda,
                                          x.stride_a, static_cast<const float *>(b), x.ldb, x.stride_b, beta_f,
                                          static_cast<float *>(c), x.ldc, x.stride_c, x.batch);
    case entry_point::dgemm_batched:
        return gemm_dgemm_strided_batched(layout, ta, tb, x.m, x.n, x.k, x.alpha, static_cast<const double *>(a), x.lda,
                                          x.stride_a, static_cast<const double *>(b), x.ldb, x.stride_b, x.beta,
                                          static_cast<double *>(c), x.ldc, x.stride_c, x.batch);
    case entry_point::cgemm:
    case entry_point::zgemm:
    case entry_point::cgemm_batched:
    case entry_point::zgemm_batched: {
        const bool z = e == entry_point::zgemm || e == entry_point::zgemm_batched;
        // An imaginary part wherever the real one is not 0 (alpha = 0 must stay 0).
        const double alpha_im = x.alpha != 0.0 ? 0.25 : 0.0, beta_im = x.beta != 0.0 ? 0.25 : 0.0;
        const float af[2] = {float(x.alpha), float(alpha_im)}, bf[2] = {float(x.beta), float(beta_im)};
        const double ad[2] = {x.alpha, alpha_im}, bd[2] = {x.beta, beta_im};
        const void *alpha = x.null_alpha ? nullptr : z ? static_cast<const void *>(ad) : af;
        const void *beta = x.null_beta ? nullptr : z ? static_cast<const void *>(bd) : bf;
        if (!is_batched(e))
            return (z ? gemm_zgemm : gemm_cgemm)(layout, ta, tb, x.m, x.n, x.k, alpha, a, x.lda, b, x.ldb, beta, c,
                                                 x.ldc);
        return (z ? gemm_zgemm_strided_batched : gemm_cgemm_strided_batched)(layout, ta, tb, x.m, x.n, x.k, alpha, a,
                                                                             x.lda, x.stride_a, b, x.ldb, x.stride_b,
                                                                             beta, c, x.ldc, x.stride_c, x.batch);
    }
    case entry_point::ex:
    case entry_point::ex_batched: {
        // alpha and beta in the compute type the call names (double only for f64).
        const void *alpha = &alpha_f, *beta = &beta_f;
        if (x.compute == GEMM_F64) {
            alpha = &x.alpha;
            beta = &x.beta;
        }
        if (x.null_alpha) alpha = nullptr;
        if (x.null_beta) beta = nullptr;
        if (e == entry_point::ex)
            return raw_gemm_ex(x.layout, x.transa, x.transb, x.m, x.n, x.k, alpha, a, x.a_type, x.lda, b, x.b_type,
                               x.ldb, beta, c, x.c_type, x.ldc, x.compute);
        return raw_gemm_ex_strided_batched(x.layout, x.transa, x.transb, x.m, x.n, x.k, alpha, a, x.a_type, x.lda,
                                           x.stride_a, b, x.b_type, x.ldb, x.stride_b, beta, c, x.c_type, x.ldc,
                                           x.stride_c, x.batch, x.compute);
    }
    }
    return GEMM_STATUS_INTERNAL_ERROR;
}

// The call must fail with `want`, gemm_last_error() must start with "parameter P: <text>"
// where P is p's position in e, gemm_last_error_parameter() must be P, C byte-for-byte
// unchanged.
void expect_error(entry_point e, const args &x, gemm_status_t want, param p, const std::string &text) {
    buffers buf;
    std::vector<unsigned char> before = buf.c;
    gemm_status_t s = invoke(e, x, buf);
    int pos = position(e, p);
    std::string msg = gemm_last_error();
    std::string prefix = "parameter " + std::to_string(pos) + ": " + text;
    INFO(std::string(entry_name(e)) << " " << x.describe() << " -> " << std::string(gemm_status_string(s)) << " \""
                                    << msg << "\"");
    REQUIRE(pos > 0);
    CHECK(s == want);
    CHECK_MESSAGE(msg.rfind(prefix, 0) == 0, "expected the message to start with \"" << prefix << "\"");
    CHECK(gemm_last_error_parameter() == pos);
    CHECK_MESSAGE(buf.c == before, "C was modified by a failing call");
}

void expect_success(entry_point e, const args &x) {
    buffers buf;
    gemm_status_t s = invoke(e, x, buf);
    INFO(std::string(entry_name(e)) << " " << x.describe() << " -> \"" << std::string(gemm_last_error()) << "\"");
    CHECK(s == GEMM_STATUS_SUCCESS);
    CHECK(std::string(gemm_last_error()).empty());
    CHECK(gemm_last_error_parameter() == 0);
}

// The typed entry points fix the dtypes; make ex calls use the matching ones.
args for_entry(entry_point e, args x) {
    if (e == entry_point::dgemm || e == entry_point::dgemm_batched)
        x.a_type = x.b_type = x.c_type = x.compute = GEMM_F64;
    if (e == entry_point::cgemm || e == entry_point::cgemm_batched)
        x.a_type = x.b_type = x.c_type = x.compute = GEMM_C32;
    if (e == entry_point::zgemm || e == entry_point::zgemm_batched)
        x.a_type = x.b_type = x.c_type = x.compute = GEMM_C64;
    return x;
}

}  // namespace

// ---- argument errors, one at a time --------------------------------------------------------

TEST_CASE("errors param=layout") {
    for (entry_point e : all_entries)
        for (int bad : {0, 100, 103, 111}) {
            args x;
            x.layout = bad;
            expect_error(e, x, GEMM_STATUS_INVALID_LAYOUT, param::layout, "layout = " + std::to_string(bad));
        }
}

TEST_CASE("errors param=transa,transb") {
    for (entry_point e : all_entries)
        for (int bad : {0, 101, 110, 114}) {
            args x;
            x.transa = bad;
            expect_error(e, x, GEMM_STATUS_INVALID_OP, param::transa, "transa = " + std::to_string(bad));
            args y;
            y.transb = bad;
            expect_error(e, y, GEMM_STATUS_INVALID_OP, param::transb, "transb = " + std::to_string(bad));
        }
}

TEST_CASE("errors param=m,n,k negative") {
    for (entry_point e : all_entries) {
        args x;
        x.m = -1;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::m, "m = -1");
        args y;
        y.n = -3;
        expect_error(e, y, GEMM_STATUS_INVALID_SIZE, param::n, "n = -3");
        args z;
        z.k = -2;
        expect_error(e, z, GEMM_STATUS_INVALID_SIZE, param::k, "k = -2");
    }
}

TEST_CASE("errors param=lda,ldb,ldc every layout and op") {
    // BLAS: ld >= max(1, rows as stored) column-major, max(1, columns as stored) row-major.
    // One below the least is an error naming the dimension; the least itself is accepted.
    struct dims {
        int64_t m, n, k;
    };
    for (dims d : {dims{5, 7, 3}, dims{0, 4, 6}, dims{4, 6, 0}}) {
        for (int layout : {GEMM_ROW_MAJOR, GEMM_COL_MAJOR})
            for (int op : {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C})
                for (entry_point e : all_entries) {
                    bool col = layout == GEMM_COL_MAJOR, n_ = op == GEMM_OP_N;
                    const char *lay = col ? "column-major" : "row-major";
                    // A is m x k when N, k x m otherwise; B is k x n when N, n x k otherwise.
                    bool a_m = col == n_;  // stored length is m (else k)
                    int64_t need_a = std::max<int64_t>(1, a_m ? d.m : d.k);
                    bool b_k = col == n_;  // stored length is k (else n)
                    int64_t need_b = std::max<int64_t>(1, b_k ? d.k : d.n);
                    int64_t need_c = std::max<int64_t>(1, col ? d.m : d.n);

                    args base = for_entry(e, args{});
                    base.layout = layout;
                    base.transa = base.transb = op;
                    base.m = d.m;
                    base.n = d.n;
                    base.k = d.k;
                    base.lda = need_a;
                    base.ldb = need_b;
                    base.ldc = need_c;
                    base.stride_a = base.stride_b = base.stride_c = 64;
                    expect_success(e, base);

                    // The message names the dimension the rule reads; its value is checked
                    // separately for nonzero sizes (see the zero-size case below).
                    auto text = [&](const char *ld, int64_t value, const char *dim, int64_t size, const char *which) {
                        std::string t = std::string(ld) + " = " + std::to_string(value) + " must be >= max(1, " + dim;
                        return size > 0 ? t + " = " + std::to_string(size) + ") for " + lay + " " + which : t;
                    };
                    args x = base;
                    x.lda = need_a - 1;
                    expect_error(e, x, GEMM_STATUS_INVALID_LEADING_DIM, param::lda,
                                 text("lda", x.lda, a_m ? "m" : "k", a_m ? d.m : d.k, "A"));
                    args y = base;
                    y.ldb = need_b - 1;
                    expect_error(e, y, GEMM_STATUS_INVALID_LEADING_DIM, param::ldb,
                                 text("ldb", y.ldb, b_k ? "k" : "n", b_k ? d.k : d.n, "B"));
                    args z = base;
                    z.ldc = need_c - 1;
                    expect_error(e, z, GEMM_STATUS_INVALID_LEADING_DIM, param::ldc,
                                 text("ldc", z.ldc, col ? "m" : "n", col ? d.m : d.n, "C"));
                }
    }
}

// The message names the dimension's own value, also when it is 0 (the bound is max(1, 0)).
TEST_CASE("errors ld message shows a zero dimension as 0") {
    args x;
    x.m = 0;
    x.lda = 0;
    x.ldc = 1;
    expect_error(entry_point::sgemm, x, GEMM_STATUS_INVALID_LEADING_DIM, param::lda,
                 "lda = 0 must be >= max(1, m = 0) for column-major A");
}

TEST_CASE("errors param=A,B,C,alpha,beta NULL") {
    for (entry_point e : all_entries) {
        args x = for_entry(e, args{});
        x.null_a = true;
        expect_error(e, x, GEMM_STATUS_INVALID_POINTER, param::a, "A is NULL");
        args y = for_entry(e, args{});
        y.null_b = true;
        expect_error(e, y, GEMM_STATUS_INVALID_POINTER, param::b, "B is NULL");
        args z = for_entry(e, args{});
        z.null_c = true;
        expect_error(e, z, GEMM_STATUS_INVALID_POINTER, param::c, "C is NULL");
        if (!scalars_by_pointer(e)) continue;
        args u = args{};
        u.null_alpha = true;
        expect_error(e, u, GEMM_STATUS_INVALID_POINTER, param::alpha, "alpha is NULL");
        args v = args{};
        v.null_beta = true;
        expect_error(e, v, GEMM_STATUS_INVALID_POINTER, param::beta, "beta is NULL");
    }
}

// The two enum_value cases pass int values no enumerator has, as a C caller may. The enums
// span the whole int range (gemm.h), so the library reads them without undefined behaviour;
// CTest runs these cases as their own test, errors.enum_value, so that a regression caught
// by UBSan (a sanitizer build aborts on it) does not hide the rest.
TEST_CASE("errors enum_value param=a_type,b_type,c_type,compute_type invalid values") {
    // Values no gemm_dtype_t has, as a C caller may pass them: no name, and an error naming the
    // parameter.
    for (int bad : {8, 9, 99}) CHECK(raw_dtype_name(bad) == nullptr);
    for (entry_point e : {entry_point::ex, entry_point::ex_batched})
        for (int bad : {8, 9, 99}) {
            args a;
            a.a_type = bad;
            expect_error(e, a, GEMM_STATUS_INVALID_DTYPE, param::a_type, "a_type = " + std::to_string(bad));
            args b;
            b.b_type = bad;
            expect_error(e, b, GEMM_STATUS_INVALID_DTYPE, param::b_type, "b_type = " + std::to_string(bad));
            args c;
            c.c_type = bad;
            expect_error(e, c, GEMM_STATUS_INVALID_DTYPE, param::c_type, "c_type = " + std::to_string(bad));
            args d;
            d.compute = bad;
            expect_error(e, d, GEMM_STATUS_INVALID_DTYPE, param::compute, "compute_type = " + std::to_string(bad));
        }
}

TEST_CASE("errors enum_value outside the enums' range") {
    // -1 and 1000 name no enumerator; a C caller can still pass them, and the library must
    // answer with an error, not undefined behaviour (UBSan's enum check).
    buffers buf;
    float alpha = 1.0f, beta = 0.0f;
    std::vector<unsigned char> before = buf.c;
    const float *a = reinterpret_cast<const float *>(buf.a.data());
    const float *b = reinterpret_cast<const float *>(buf.b.data());
    float *c = reinterpret_cast<float *>(buf.c.data());
    for (int bad : {-1, 1000}) {
        INFO("value " << bad);
        CHECK(raw_sgemm(bad, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) == GEMM_STATUS_INVALID_LAYOUT);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(raw_sgemm(GEMM_COL_MAJOR, bad, GEMM_OP_N, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) ==
              GEMM_STATUS_INVALID_OP);
        CHECK(gemm_last_error_parameter() == 2);
        CHECK(raw_gemm_ex(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &alpha, a, bad, 2, b, GEMM_F32, 2, &beta, c,
                          GEMM_F32, 2, GEMM_F32) == GEMM_STATUS_INVALID_DTYPE);
        CHECK(gemm_last_error_parameter() == 9);
        CHECK(raw_gemm_ex(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &alpha, a, GEMM_F32, 2, b, GEMM_F32, 2, &beta,
                          c, GEMM_F32, 2, bad) == GEMM_STATUS_INVALID_DTYPE);
        CHECK(gemm_last_error_parameter() == 18);
        const char *text = raw_status_string(bad);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 0);
        CHECK(raw_dtype_name(bad) == nullptr);
    }
    CHECK(buf.c == before);
}

TEST_CASE("errors dtype combinations not supported") {
    // Valid dtype values in a combination gemm_ex does not serve: NOT_SUPPORTED naming the
    // parameter that breaks the rule (b must equal a; compute f64 for f64, else f32; C is
    // a's type, or f32 for f16/bf16).
    struct combo {
        int a, b, c, compute;
        param p;
        const char *text;
    };
    const combo combos[] = {
        {GEMM_F32, GEMM_F64, GEMM_F32, GEMM_F32, param::b_type, "b_type = f64"},
        {GEMM_F16, GEMM_BF16, GEMM_F32, GEMM_F32, param::b_type, "b_type = bf16"},
        {GEMM_F32, GEMM_F32, GEMM_F32, GEMM_F64, param::compute, "compute_type = f64"},
        {GEMM_F64, GEMM_F64, GEMM_F64, GEMM_F32, param::compute, "compute_type = f32"},
        {GEMM_F16, GEMM_F16, GEMM_F16, GEMM_F16, param::compute, "compute_type = f16"},
        {GEMM_BF16, GEMM_BF16, GEMM_F32, GEMM_F64, param::compute, "compute_type = f64"},
        {GEMM_F32, GEMM_F32, GEMM_F64, GEMM_F32, param::c_type, "c_type = f64"},
        {GEMM_F32, GEMM_F32, GEMM_F16, GEMM_F32, param::c_type, "c_type = f16"},
        {GEMM_F64, GEMM_F64, GEMM_F32, GEMM_F64, param::c_type, "c_type = f32"},
        {GEMM_F16, GEMM_F16, GEMM_BF16, GEMM_F32, param::c_type, "c_type = bf16"},
        {GEMM_BF16, GEMM_BF16, GEMM_F16, GEMM_F32, param::c_type, "c_type = f16"},
    };
    for (entry_point e : {entry_point::ex, entry_point::ex_batched})
        for (const combo &k : combos) {
            args x;
            x.a_type = k.a;
            x.b_type = k.b;
            x.c_type = k.c;
            x.compute = k.compute;
            expect_error(e, x, GEMM_STATUS_NOT_SUPPORTED, k.p, k.text);
        }
}

TEST_CASE("errors param=batch_count,stride_a,stride_b,stride_c") {
    for (entry_point e : all_entries) {
        if (!is_batched(e)) continue;
        args base = for_entry(e, args{});
        args x = base;
        x.batch = -1;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::batch, "batch_count = -1");
        x = base;
        x.stride_a = -1;
        expect_error(e, x, GEMM_STATUS_INVALID_STRIDE, param::stride_a, "stride_a = -1");
        x = base;
        x.stride_b = -5;
        expect_error(e, x, GEMM_STATUS_INVALID_STRIDE, param::stride_b, "stride_b = -5");
        x = base;
        x.stride_c = -2;
        expect_error(e, x, GEMM_STATUS_INVALID_STRIDE, param::stride_c, "stride_c = -2");

        // C matrices must not overlap: col-major 5 x 7 with ldc 6 spans 6 * 6 + 5 = 41
        // elements; row-major spans (5 - 1) * ldc + 7.
        for (int layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
            args y = base;
            y.layout = layout;
            y.transa = y.transb = GEMM_OP_T;  // row-major N N would need other lda/ldb
            y.lda = layout == GEMM_COL_MAJOR ? 3 : 5;
            y.ldb = layout == GEMM_COL_MAJOR ? 7 : 3;
            y.ldc = layout == GEMM_COL_MAJOR ? 6 : 8;
            int64_t footprint = layout == GEMM_COL_MAJOR ? 6 * 6 + 5 : 4 * 8 + 7;
            y.stride_c = footprint - 1;
            expect_error(e, y, GEMM_STATUS_INVALID_STRIDE, param::stride_c,
                         "stride_c = " + std::to_string(footprint - 1) + " must be >= " + std::to_string(footprint));
            y.stride_c = footprint;  // touching, not overlapping
            expect_success(e, y);
            y.stride_c = 0;  // one matrix: nothing to overlap with
            y.batch = 1;
            expect_success(e, y);
            y.batch = 0;  // no matrix at all
            expect_success(e, y);
        }
        // Stride 0 for A and B is valid: one matrix shared by the batch.
        args z = base;
        z.stride_a = z.stride_b = 0;
        expect_success(e, z);
    }
}

TEST_CASE("errors sizes whose operands would span more than 2^63 bytes") {
    // Each operand's span ((lines - 1) * ld + line length, then (batch - 1) * stride + that,
    // in bytes) is computed without wrapping; a call whose operands cannot exist is refused
    // before a backend indexes them, with C untouched. The sizes are valid one by one. The
    // leading dimension (stride) is named when the matrix (batch) would fit packed tight, else
    // the size that counts its lines (matrices).
    constexpr int64_t big = int64_t(1) << 61;
    for (entry_point e : all_entries) {
        args base = for_entry(e, args{});
        // C: m = 1, n = 2^61 columns 8 apart: a span that wraps in 64 bits would pass the overlap
        // check, so it must be refused as a size.
        args x = base;
        x.m = 1, x.n = big, x.k = 0, x.lda = 1, x.ldb = 1, x.ldc = 8, x.stride_c = 0;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::n, "n = " + std::to_string(big) + " makes C span");
        // Row-major C counts rows, so m is named.
        x = base;
        x.layout = GEMM_ROW_MAJOR, x.m = big, x.n = 1, x.k = 0, x.lda = 1, x.ldb = 1, x.ldc = 8;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::m, "m = " + std::to_string(big) + " makes C span");
        // A: k = 2^62 columns of m = 5 (B, k x 7 with ldb = k, would not fit either).
        x = base;
        x.k = x.ldb = int64_t(1) << 62;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::k, "k = " + std::to_string(x.k) + " makes A span");
        // B transposed is stored n x k: k = 3 columns 2^61 apart, 21 elements packed.
        x = base;
        x.transb = GEMM_OP_T, x.k = 3, x.ldb = big, x.n = 7;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::ldb, "ldb = " + std::to_string(big) + " makes B span");
        // In bytes, not elements: 2^62 + 5 elements fit, 4 (or more) times as many bytes do
        // not; 9 packed columns would, so ldc is named.
        x = base;
        x.n = 9, x.ldc = int64_t(1) << 59;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::ldc, "ldc = " + std::to_string(x.ldc) + " makes C span");
        x.ldc = INT64_MAX;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::ldc, "ldc = " + std::to_string(x.ldc) + " makes C span");
        if (!is_batched(e)) continue;
        // The batch: each matrix fits, all of them do not.
        x = base;
        x.batch = int64_t(1) << 62, x.stride_c = 64;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::batch, "batch_count = " + std::to_string(x.batch));
        x = base;
        x.batch = 3, x.stride_a = INT64_MAX / 2;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::stride_a,
                     "stride_a = " + std::to_string(x.stride_a) + " makes the 3 A matrices span");
    }
}

TEST_CASE("errors first error wins in BLAS order") {
    // Several bad arguments: the report names the earliest, as reference BLAS's xerbla does.
    for (entry_point e : all_entries) {
        args x = for_entry(e, args{});
        x.m = -1;
        x.lda = 0;
        x.null_c = true;
        expect_error(e, x, GEMM_STATUS_INVALID_SIZE, param::m, "m = -1");
        args y = for_entry(e, args{});
        y.ldb = 0;
        y.ldc = 0;
        expect_error(e, y, GEMM_STATUS_INVALID_LEADING_DIM, param::ldb, "ldb = 0");
    }
}

// ---- BLAS semantics of degenerate calls -----------------------------------------------------

TEST_CASE("semantics quick return m=0 or n=0 or batch=0") {
    // Nothing to compute: success, C untouched (even with beta = 0), NULL pointers accepted.
    for (entry_point e : all_entries) {
        for (int which = 0; which < 3; ++which) {
            if (which == 2 && !is_batched(e)) continue;
            args x = for_entry(e, args{});
            x.beta = 0.0;
            if (which == 0) x.m = 0;
            if (which == 1) x.n = 0;
            if (which == 2) x.batch = 0;
            x.lda = x.ldc = std::max<int64_t>(1, x.m);
            INFO(std::string(entry_name(e)) << " m=" << x.m << " n=" << x.n << " batch=" << x.batch);
            buffers buf;
            std::vector<unsigned char> before = buf.c;
            CHECK(invoke(e, x, buf) == GEMM_STATUS_SUCCESS);
            CHECK(buf.c == before);
            x.null_a = x.null_b = x.null_c = true;
            CHECK(invoke(e, x, buf) == GEMM_STATUS_SUCCESS);
            CHECK(std::string(gemm_last_error()).empty());
        }
    }
}

TEST_CASE("semantics NULL A and B accepted when not referenced") {
    // k = 0 or alpha = 0: A and B are not read, so NULL is valid (C = beta * C).
    for (entry_point e : all_entries) {
        args x = for_entry(e, args{});
        x.k = 0;
        x.lda = 5;
        x.ldb = 1;
        x.null_a = x.null_b = true;
        expect_success(e, x);
        args y = for_entry(e, args{});
        y.alpha = 0.0;
        y.null_a = y.null_b = true;
        expect_success(e, y);
    }
}

namespace {

struct dtype_config {
    const char *name;
    gemm_dtype_t ab, c;
    entry api;
};
constexpr dtype_config dtype_configs[] = {
    {"f32 typed", GEMM_F32, GEMM_F32, entry::typed}, {"f64 typed", GEMM_F64, GEMM_F64, entry::typed},
    {"f32 ex", GEMM_F32, GEMM_F32, entry::ex},       {"f16 ex", GEMM_F16, GEMM_F16, entry::ex},
    {"f16->f32 ex", GEMM_F16, GEMM_F32, entry::ex},  {"bf16 ex", GEMM_BF16, GEMM_BF16, entry::ex},
    {"bf16->f32 ex", GEMM_BF16, GEMM_F32, entry::ex}};

// "auto", then every available backend.
std::vector<std::string> auto_and_backends() {
    std::vector<std::string> names = available_backends();
    names.insert(names.begin(), "auto");
    return names;
}

// Runs c (with operands o) on "auto" and on every available backend; each result must match
// the harness's reference (which never reads A/B when k = 0 or alpha = 0, nor C when beta = 0).
void check_on_every_backend(const gemm_case &c, const operands &o, skip_tally &skips) {
    reference ref = compute_reference(c, o);
    for (const std::string &name : auto_and_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        run_result r = run_host(c, o);
        if (r.status == GEMM_STATUS_NOT_SUPPORTED) {
            skips.add(name, c);
            continue;
        }
        INFO("backend=" << name << " " << c.describe() << ": " << r.error);
        CHECK(r.status == GEMM_STATUS_SUCCESS);
        comparison cmp = compare_result(c, o, r.c, ref.value);
        CHECK_MESSAGE(cmp.ok, cmp.first);
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

gemm_case small_case(const dtype_config &d, gemm_layout_t layout, int64_t k, double alpha, double beta) {
    gemm_case c;
    c.ab_type = d.ab;
    c.c_type = d.c;
    c.api = d.api;
    c.layout = layout;
    c.transa = GEMM_OP_T;
    c.m = 9;
    c.n = 4;
    c.k = k;
    c.alpha = alpha;
    c.beta = beta;
    set_leading_dims(c, 2);
    return c;
}

}  // namespace

TEST_CASE("semantics k=0 gives C = beta C with A and B NULL, every backend") {
    skip_tally skips;
    for (const dtype_config &d : dtype_configs)
        for (gemm_layout_t layout : {GEMM_ROW_MAJOR, GEMM_COL_MAJOR})
            for (double beta : {0.0, 0.5, 1.0}) {
                gemm_case c = small_case(d, layout, 0, 1.0, beta);
                operands o = make_operands(c);
                REQUIRE(o.a_ptr() == nullptr);  // k = 0: A and B have no elements, passed as NULL
                REQUIRE(o.b_ptr() == nullptr);
                check_on_every_backend(c, o, skips);
            }
    MESSAGE(skips.summary());
}

TEST_CASE("semantics alpha=0 does not read A or B, every backend") {
    // A and B entirely NaN: any read that reaches C shows up as NaN.
    skip_tally skips;
    for (const dtype_config &d : dtype_configs)
        for (gemm_layout_t layout : {GEMM_ROW_MAJOR, GEMM_COL_MAJOR})
            for (double beta : {0.0, 0.5, 1.0}) {
                gemm_case c = small_case(d, layout, 5, 0.0, beta);
                operands o = make_operands(c);
                std::size_t es = dtype_size(c.ab_type);
                for (std::size_t e = 0; e < o.a.size() / es; ++e)
                    store(o.a.data(), int64_t(e), c.ab_type, std::nan(""));
                for (std::size_t e = 0; e < o.b.size() / es; ++e)
                    store(o.b.data(), int64_t(e), c.ab_type, std::nan(""));
                check_on_every_backend(c, o, skips);
            }
    MESSAGE(skips.summary());
}

// k = 0 or alpha = 0: A's and B's strides are neither checked (but for their sign: gemm.h) nor
// used, however far apart they would put the matrices (a backend that offset its pointers by
// them would compute an address past the int64 range: UBSan runs this in the sanitizer build).
TEST_CASE("semantics strides of A and B that are not read may be any non-negative value, every backend") {
    const int64_t m = 5, n = 3, batch = 4, far = INT64_MAX / 3;
    const std::vector<float> a(64, std::nanf("")), b(64, std::nanf(""));
    int checked = 0;
    for (const std::string &name : auto_and_backends())
        for (int64_t k : {int64_t(0), int64_t(4)}) {
            REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
            std::vector<float> c(std::size_t(m * n * batch));
            for (std::size_t i = 0; i < c.size(); ++i) c[i] = float(i);
            const float alpha = k == 0 ? 1.0f : 0.0f, beta = 0.5f;
            const gemm_status_t st =
                gemm_sgemm_strided_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, alpha, a.data(), m, far,
                                           b.data(), std::max<int64_t>(k, 1), far, beta, c.data(), m, m * n, batch);
            const std::string where = name + " k=" + std::to_string(k);
            if (st == GEMM_STATUS_NOT_SUPPORTED) continue;
            REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, where << ": " << gemm_last_error());
            for (std::size_t i = 0; i < c.size(); ++i)
                REQUIRE_MESSAGE(c[i] == 0.5f * float(i), where << ": C[" << i << "] = " << c[i]);
            ++checked;
        }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(checked >= 4);  // auto and cpu_ref, both k
}

// k = 1: A (op N) and B (op T) are one stored line each, so their leading dimensions may be as
// large as the checks allow (the span is the line); a backend must not step a pointer to the
// next line, which lies past the address range (UBSan runs this in the sanitizer build).
TEST_CASE("semantics one line of A and B with leading dimensions near the int64 range, every backend") {
    const int64_t m = 67, n = 45, ld = int64_t(3) << 60;  // 3 * 2^62 bytes apart
    std::vector<float> a(static_cast<std::size_t>(m)), b(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3;
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = float(j % 5) * 0.5f - 1;
    int checked = 0;
    for (const std::string &name : auto_and_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        std::vector<float> c(std::size_t(m * n), 1.0f);
        const gemm_status_t st = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, m, n, 1, 2.0f, a.data(), ld, b.data(),
                                            ld, 0.5f, c.data(), m);
        if (st == GEMM_STATUS_NOT_SUPPORTED) continue;
        REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, name << ": " << gemm_last_error());
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                CHECK_MESSAGE(c[std::size_t(i + j * m)] == 2.0f * a[std::size_t(i)] * b[std::size_t(j)] + 0.5f,
                              name << ": C(" << i << "," << j << ")");
        ++checked;
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(checked >= 2);  // auto and cpu_ref
}

TEST_CASE("semantics beta=0 does not read C (NaN in C must not leak), every backend") {
    skip_tally skips;
    for (const dtype_config &d : dtype_configs)
        for (gemm_layout_t layout : {GEMM_ROW_MAJOR, GEMM_COL_MAJOR})
            for (double alpha : {1.0, -1.5, 0.0}) {
                gemm_case c = small_case(d, layout, 6, alpha, 0.0);
                operands o = make_operands(c);  // beta = 0: C's windows are NaN
                REQUIRE(std::isnan(load(o.c0.data(), 0, c.c_type)));
                check_on_every_backend(c, o, skips);
            }
    MESSAGE(skips.summary());
}

// ---- status strings, last error, version, backend info -----------------------------------

TEST_CASE("status strings are non-empty, distinct and start with the code's name") {
    struct named {
        gemm_status_t code;
        const char *name;
    };
    const named all[] = {
        {GEMM_STATUS_SUCCESS, "GEMM_STATUS_SUCCESS"},
        {GEMM_STATUS_INVALID_LAYOUT, "GEMM_STATUS_INVALID_LAYOUT"},
        {GEMM_STATUS_INVALID_OP, "GEMM_STATUS_INVALID_OP"},
        {GEMM_STATUS_INVALID_SIZE, "GEMM_STATUS_INVALID_SIZE"},
        {GEMM_STATUS_INVALID_LEADING_DIM, "GEMM_STATUS_INVALID_LEADING_DIM"},
        {GEMM_STATUS_INVALID_STRIDE, "GEMM_STATUS_INVALID_STRIDE"},
        {GEMM_STATUS_INVALID_POINTER, "GEMM_STATUS_INVALID_POINTER"},
        {GEMM_STATUS_INVALID_DTYPE, "GEMM_STATUS_INVALID_DTYPE"},
        {GEMM_STATUS_INVALID_VALUE, "GEMM_STATUS_INVALID_VALUE"},
        {GEMM_STATUS_MIXED_MEMORY_SPACES, "GEMM_STATUS_MIXED_MEMORY_SPACES"},
        {GEMM_STATUS_NOT_SUPPORTED, "GEMM_STATUS_NOT_SUPPORTED"},
        {GEMM_STATUS_UNKNOWN_BACKEND, "GEMM_STATUS_UNKNOWN_BACKEND"},
        {GEMM_STATUS_BACKEND_UNAVAILABLE, "GEMM_STATUS_BACKEND_UNAVAILABLE"},
        {GEMM_STATUS_INVALID_CONFIG, "GEMM_STATUS_INVALID_CONFIG"},
        {GEMM_STATUS_ALLOC_FAILED, "GEMM_STATUS_ALLOC_FAILED"},
        {GEMM_STATUS_EXECUTION_FAILED, "GEMM_STATUS_EXECUTION_FAILED"},
        {GEMM_STATUS_INTERNAL_ERROR, "GEMM_STATUS_INTERNAL_ERROR"},
    };
    std::set<std::string> seen;
    for (const named &s : all) {
        const char *text = gemm_status_string(s.code);
        REQUIRE(text != nullptr);
        INFO(s.name << " -> \"" << text << "\"");
        CHECK(std::strlen(text) > std::strlen(s.name));
        CHECK(std::string(text).rfind(std::string(s.name) + ":", 0) == 0);
        CHECK(seen.insert(text).second);
    }
    // INVALID_SIZE stands for a negative size and for an operand too large to address.
    CHECK(std::string(gemm_status_string(GEMM_STATUS_INVALID_SIZE)).find("too large") != std::string::npos);
    // A value no status has (in gaps, and beyond): still a non-empty text, never NULL.
    for (int unknown : {10, 24, 77}) {
        const char *text = raw_status_string(unknown);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 0);
        CHECK(seen.count(text) == 0);
    }
}

TEST_CASE("last error is empty after a success and names the parameter after a failure") {
    std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
    CHECK(gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a.data(), 1, b.data(), 2, 0.0f, c.data(),
                     2) == GEMM_STATUS_INVALID_LEADING_DIM);
    CHECK(std::string(gemm_last_error()).rfind("parameter 9: lda = 1", 0) == 0);
    CHECK(gemm_last_error_parameter() == 9);
    CHECK(gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(),
                     2) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(gemm_last_error()).empty());
    CHECK(gemm_last_error_parameter() == 0);
    CHECK(c[0] == 2.0f);
}

TEST_CASE("version matches GEMM_VERSION_MAJOR/MINOR/PATCH") {
    std::string want = std::to_string(GEMM_VERSION_MAJOR) + "." + std::to_string(GEMM_VERSION_MINOR) + "." +
                       std::to_string(GEMM_VERSION_PATCH);
    REQUIRE(gemm_version() != nullptr);
    CHECK(std::string(gemm_version()) == want);
}

TEST_CASE("backend info: errors and contents") {
    int64_t count = gemm_backend_count();
    REQUIRE(count >= 1);
    gemm_backend_info_t info{};
    CHECK(gemm_backend_get_info(-1, &info) == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_last_error_parameter() == 1);
    CHECK(gemm_backend_get_info(count, &info) == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_last_error_parameter() == 1);
    CHECK(gemm_backend_get_info(0, nullptr) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_last_error_parameter() == 2);
    std::set<std::string> names;
    for (int64_t i = 0; i < count; ++i) {
        REQUIRE(gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS);
        REQUIRE(info.name != nullptr);
        REQUIRE(info.reason != nullptr);
        REQUIRE(info.detail != nullptr);
        INFO(std::string(info.name) << ": available=" << info.available << " reason=\"" << std::string(info.reason)
                                    << "\"");
        CHECK(names.insert(info.name).second);
        CHECK((info.available == 0 || info.available == 1));
        // An unavailable backend says why; an available one has nothing to explain.
        CHECK((info.available == 1) == (std::strlen(info.reason) == 0));
        std::string name = info.name;
        CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos);
    }
    CHECK(names.count("cpu_ref") == 1);
}

TEST_CASE("stream: host calls default to NULL and accept a set stream per thread") {
    CHECK(gemm_get_stream() == nullptr);
    CHECK(gemm_set_stream(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_get_stream() == nullptr);
}
