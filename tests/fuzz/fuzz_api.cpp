// fuzz_api.cpp: the whole C API (each call also through a plan made for it; gemm_ex_epilogue
// with epilogues of every kind, valid or not) and the drop-in BLAS under arguments drawn across
// the int64 range. Each call is first judged by an oracle written here from the documented rules (BLAS
// argument rules, operand spans within 2^63 bytes, the type rules): a call it calls invalid
// must fail and leave every buffer as it was; a valid one whose operands lie inside the
// buffers must succeed, compute what a plain loop computes, and write nothing else; a valid
// one reaching past the buffers is not made. Any disagreement aborts with the call printed.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "fuzz_main.hpp"
#include "gemm/gemm.hpp"
#include "raw_enum_calls.h"

namespace gemm_fuzz {
namespace {

__extension__ using int128 = __int128;  // exact arithmetic on products of two int64_t
constexpr int128 max_bytes = INT64_MAX;

// ---- what went wrong -----------------------------------------------------------------------

thread_local std::string call_text;  // the call being made, for the report

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz_api: %s\n  call: %s\n  gemm_last_error: %s\n", what, call_text.c_str(),
                 gemm_last_error());
    std::abort();
}

void require(bool ok, const char *what) {
    if (!ok) fail(what);
}

// ---- operands ------------------------------------------------------------------------------

// One operand buffer, allocated to its exact size so that AddressSanitizer sees any access
// past it, and a pointer into it (or NULL).
struct buffer {
    std::vector<unsigned char> bytes;
    unsigned char *memory = nullptr;
    std::size_t size = 0;
    std::size_t offset = 0;  // of the pointer, in bytes
    bool null = false;

    buffer() = default;
    buffer(const buffer &) = delete;
    buffer &operator=(const buffer &) = delete;
    ~buffer() { std::free(memory); }

    void *ptr() const { return null ? nullptr : memory + offset; }
    std::size_t room() const { return null ? 0 : size - offset; }
    bool unchanged() const { return size == 0 || std::memcmp(memory, bytes.data(), size) == 0; }
};

bool complex_type(int t) { return t == GEMM_C32 || t == GEMM_C64; }
// The real type of each part of a complex element (real, then imaginary).
int part_type(int t) { return t == GEMM_C32 ? GEMM_F32 : t == GEMM_C64 ? GEMM_F64 : t; }

std::size_t dtype_bytes(int t) {
    int r = part_type(t);
    return (complex_type(t) ? 2 : 1) * (r == GEMM_F64 ? 8 : r == GEMM_F32 ? 4 : 2);
}

// Element i of a real type.
double load(const void *base, int64_t i, int t) {
    switch (t) {
    case GEMM_F32: {
        float v;
        std::memcpy(&v, static_cast<const char *>(base) + i * 4, 4);
        return v;
    }
    case GEMM_F64: {
        double v;
        std::memcpy(&v, static_cast<const char *>(base) + i * 8, 8);
        return v;
    }
    case GEMM_F16: {
        uint16_t v;
        std::memcpy(&v, static_cast<const char *>(base) + i * 2, 2);
        return gemm::half::to_float(v);
    }
    default: {
        uint16_t v;
        std::memcpy(&v, static_cast<const char *>(base) + i * 2, 2);
        return gemm::bfloat16::to_float(v);
    }
    }
}

void store(void *base, int64_t i, int t, double value) {
    char *p = static_cast<char *>(base);
    if (t == GEMM_F32) {
        float v = float(value);
        std::memcpy(p + i * 4, &v, 4);
    } else if (t == GEMM_F64) std::memcpy(p + i * 8, &value, 8);
    else if (t == GEMM_F16) {
        uint16_t v = gemm::half::from_float(float(value));
        std::memcpy(p + i * 2, &v, 2);
    } else {
        uint16_t v = gemm::bfloat16::from_float(float(value));
        std::memcpy(p + i * 2, &v, 2);
    }
}

// Element i of any type, as a complex number (imaginary part 0 for real types).
std::complex<double> value_at(const void *base, int64_t i, int t) {
    if (!complex_type(t)) return load(base, i, t);
    return {load(base, 2 * i, part_type(t)), load(base, 2 * i + 1, part_type(t))};
}

// Fills with small exact values (or NaN for a C that beta = 0 must not read).
void make_buffer(buffer &b, byte_source &in, int type, bool nan_fill) {
    std::size_t element = dtype_bytes(type);
    std::size_t count = in.one_in(8) ? in.byte() % 4 : 8 * (in.byte() % 64);
    b.size = count * element;
    b.memory = static_cast<unsigned char *>(std::malloc(b.size ? b.size : 1));
    const int64_t parts = complex_type(type) ? 2 : 1;
    for (std::size_t i = 0; i < count * std::size_t(parts); ++i)
        store(b.memory, int64_t(i), part_type(type), nan_fill ? std::nan("") : double(int(in.byte() % 17) - 8) / 4.0);
    b.offset = count ? (in.byte() % 3 % count) * element : 0;
    b.null = in.one_in(24);
    b.bytes.assign(b.memory, b.memory + b.size);
}

// ---- the oracle ----------------------------------------------------------------------------

enum class entry {
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
constexpr int entry_count = 10;

struct api_call {
    entry e;
    int layout, ta, tb;
    int64_t m, n, k, lda, ldb, ldc, sa = 0, sb = 0, sc = 0, batch = 1;
    int at, bt, ct, compute;  // the typed entries' types, or gemm_ex's raw arguments
    double alpha, beta;
    double alpha_im, beta_im;  // complex compute types only
    bool null_alpha = false, null_beta = false;
};

bool is_ex(entry e) { return e == entry::ex || e == entry::ex_batched; }
bool batched(entry e) {
    return e == entry::sgemm_batched || e == entry::dgemm_batched || e == entry::ex_batched ||
           e == entry::cgemm_batched || e == entry::zgemm_batched;
}
// The typed entries' element type.
int typed_type(entry e) {
    switch (e) {
    case entry::dgemm:
    case entry::dgemm_batched: return GEMM_F64;
    case entry::cgemm:
    case entry::cgemm_batched: return GEMM_C32;
    case entry::zgemm:
    case entry::zgemm_batched: return GEMM_C64;
    default: return GEMM_F32;
    }
}
// Entries that take alpha and beta by pointer (gemm_ex's, and the complex ones).
bool scalars_by_pointer(entry e) { return is_ex(e) || complex_type(typed_type(e)); }

bool valid_op(int o) { return o == GEMM_OP_N || o == GEMM_OP_T || o == GEMM_OP_C; }
bool valid_type(int t) { return t >= GEMM_F32 && t <= GEMM_C64; }
// The one compute type the library accepts for A and B of type t.
int compute_for(int t) { return t == GEMM_F64 || complex_type(t) ? t : GEMM_F32; }

// Elements an operand spans from its pointer: lines of `length` elements ld apart, batch
// matrices stride apart. Exact: every term is below 2^126.
struct extent {
    int128 one = 0, all = 0;
};

extent span_of(const api_call &c, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    bool col = c.layout == GEMM_COL_MAJOR;
    int128 lines = col ? cols : rows, length = col ? rows : cols;
    extent e;
    e.one = (lines - 1) * ld + length;
    e.all = (int128(c.batch) - 1) * stride + e.one;
    return e;
}

// Whether some byte of the operand lies beyond 2^63 - 1 bytes from its pointer.
bool too_large(const extent &e, int type) {
    int128 most = max_bytes / int128(dtype_bytes(type));
    return e.one > most || e.all > most;
}

// A scalar as the library reads it: in the compute type (a complex one with its imaginary part).
std::complex<double> scalar_read(const api_call &c, double re, double im) {
    switch (c.compute) {
    case GEMM_F64: return re;
    case GEMM_C64: return {re, im};
    case GEMM_C32: return {double(float(re)), double(float(im))};
    default: return double(float(re));
    }
}
std::complex<double> alpha_read(const api_call &c) { return scalar_read(c, c.alpha, c.alpha_im); }
std::complex<double> beta_read(const api_call &c) { return scalar_read(c, c.beta, c.beta_im); }

// alpha and beta as a call passes them: pointers to the compute type's value (pairs, of which
// a real type reads the first).
struct scalar_args {
    float f[2][2];
    double d[2][2];
    explicit scalar_args(const api_call &c)
        : f{{float(c.alpha), float(c.alpha_im)}, {float(c.beta), float(c.beta_im)}}, d{{c.alpha, c.alpha_im},
                                                                                       {c.beta, c.beta_im}} {}
    const void *get(const api_call &c, int which) const {
        bool doubles = c.compute == GEMM_F64 || c.compute == GEMM_C64;
        return doubles ? static_cast<const void *>(d[which]) : f[which];
    }
};

enum class verdict {
    invalid,    // breaks an argument rule (BLAS's, the types', a needed pointer NULL)
    too_large,  // follows them, but an operand would span more than 2^63 - 1 bytes
    valid,
};

struct judgement {
    verdict kind = verdict::invalid;
    bool writes_c = false, reads_ab = false;
    int128 a_bytes = 0, b_bytes = 0, c_bytes = 0;  // from the pointers, for the buffers' check
};

// The verdict on c's arguments, given which of A, B and C are NULL.
judgement judge_pointers(const api_call &c, bool a_null, bool b_null, bool c_null) {
    judgement j;
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR) return j;
    if (!valid_op(c.ta) || !valid_op(c.tb) || c.m < 0 || c.n < 0 || c.k < 0) return j;
    bool col = c.layout == GEMM_COL_MAJOR, an = c.ta == GEMM_OP_N, bn = c.tb == GEMM_OP_N;
    int64_t a_rows = an ? c.m : c.k, a_cols = an ? c.k : c.m, b_rows = bn ? c.k : c.n, b_cols = bn ? c.n : c.k;
    auto least_ld = [col](int64_t rows, int64_t cols) { return std::max<int64_t>(1, col ? rows : cols); };
    if (c.lda < least_ld(a_rows, a_cols) || c.ldb < least_ld(b_rows, b_cols) || c.ldc < least_ld(c.m, c.n)) return j;
    if (c.batch < 0 || c.sa < 0 || c.sb < 0 || c.sc < 0) return j;
    if (!valid_type(c.at) || !valid_type(c.bt) || !valid_type(c.ct) || !valid_type(c.compute)) return j;
    if (c.bt != c.at || c.compute != compute_for(c.at)) return j;
    bool half = c.at == GEMM_F16 || c.at == GEMM_BF16;
    if (!(c.ct == c.at || (half && c.ct == GEMM_F32))) return j;
    if (c.null_alpha || c.null_beta) return j;
    j.writes_c = c.m > 0 && c.n > 0 && c.batch > 0;
    j.reads_ab = j.writes_c && c.k > 0 && alpha_read(c) != 0.0;
    if (j.reads_ab && (a_null || b_null)) return j;
    if (j.writes_c && c_null) return j;
    if (j.writes_c) {
        extent e = span_of(c, c.m, c.n, c.ldc, c.sc);
        if (too_large(e, c.ct)) return j.kind = verdict::too_large, j;
        if (c.batch > 1 && c.sc < e.one) return j;  // the C matrices overlap
        j.c_bytes = e.all * int128(dtype_bytes(c.ct));
    }
    if (j.reads_ab) {
        extent ea = span_of(c, a_rows, a_cols, c.lda, c.sa), eb = span_of(c, b_rows, b_cols, c.ldb, c.sb);
        if (too_large(ea, c.at) || too_large(eb, c.bt)) return j.kind = verdict::too_large, j;
        j.a_bytes = ea.all * int128(dtype_bytes(c.at));
        j.b_bytes = eb.all * int128(dtype_bytes(c.bt));
    }
    j.kind = verdict::valid;
    return j;
}

judgement judge(const api_call &c, const buffer &a, const buffer &b, const buffer &cb) {
    return judge_pointers(c, a.null, b.null, cb.null);
}

bool inside_buffers(const judgement &j, const buffer &a, const buffer &b, const buffer &cb) {
    return j.c_bytes <= int128(cb.room()) && j.a_bytes <= int128(a.room()) && j.b_bytes <= int128(b.room());
}

// ---- the reference and the checks of a computed call ---------------------------------------

// Element (r, q) of a stored matrix, batch index bi.
int64_t at(const api_call &c, int64_t r, int64_t q, int64_t ld, int64_t stride, int64_t bi) {
    return bi * stride + (c.layout == GEMM_COL_MAJOR ? r + q * ld : r * ld + q);
}

// The fuzzer's bound is its own, not the measurement engine's rule (dispatch/measure/
// tolerance.hpp): that rule assumes operands in [-1, 1], while the fuzzer draws quarters in
// [-2, 2] (and scalars up to 8), so it bounds each entry by the worst case of its magnitudes,
// |alpha|·sum |a||b| + |beta·c0|, which holds for any values.
double unit_roundoff(int t) {
    t = part_type(t);
    return t == GEMM_F64   ? std::ldexp(1.0, -53)
           : t == GEMM_F32 ? std::ldexp(1.0, -24)
           : t == GEMM_F16 ? std::ldexp(1.0, -11)
                           : std::ldexp(1.0, -8);
}

// Matrix bi of a call (its operands bi strides past A, B, C0 and C) against a double loop
// (complex for complex types), entry by entry; marks the C elements it owns in `owned`, whose
// element `first` is C's first.
void check_matrix(const api_call &c, const void *A, const void *B, const void *C0, const void *C, int64_t bi,
                  std::vector<bool> &owned, int64_t first) {
    bool an = c.ta == GEMM_OP_N, bn = c.tb == GEMM_OP_N;
    bool conj_a = c.ta == GEMM_OP_C && complex_type(c.at), conj_b = c.tb == GEMM_OP_C && complex_type(c.bt);
    double u = unit_roundoff(c.compute), u_out = unit_roundoff(c.ct);
    double terms = double(c.k) * (complex_type(c.at) ? 2.0 : 1.0);  // a complex product adds two real ones
    std::complex<double> alpha = alpha_read(c), beta = beta_read(c);
    for (int64_t i = 0; i < c.m; ++i)
        for (int64_t q = 0; q < c.n; ++q) {
            std::complex<double> sum = 0;
            double magnitude = 0;
            for (int64_t l = 0; l < c.k && alpha != 0.0; ++l) {
                std::complex<double> x =
                    value_at(A, an ? at(c, i, l, c.lda, c.sa, bi) : at(c, l, i, c.lda, c.sa, bi), c.at);
                std::complex<double> y =
                    value_at(B, bn ? at(c, l, q, c.ldb, c.sb, bi) : at(c, q, l, c.ldb, c.sb, bi), c.bt);
                if (conj_a) x = std::conj(x);
                if (conj_b) y = std::conj(y);
                sum += x * y;
                magnitude += std::abs(x) * std::abs(y);
            }
            int64_t ci = at(c, i, q, c.ldc, c.sc, bi);
            owned[std::size_t(first + ci)] = true;
            std::complex<double> before = beta != 0.0 ? value_at(C0, ci, c.ct) : 0.0;
            std::complex<double> want = alpha * sum + beta * before;
            double bound = std::abs(alpha) * magnitude + std::abs(beta * before);
            std::complex<double> got = value_at(C, ci, c.ct);
            if (!std::isfinite(want.real()) || !std::isfinite(want.imag()))
                continue;  // NaN or Inf in a scalar or a kept C
            double tolerance = (2.0 * (terms + 2.0) * u + 2.0 * u_out) * bound + 1e-300;
            require(std::abs(got.real() - want.real()) <= tolerance && std::abs(got.imag() - want.imag()) <= tolerance,
                    "a computed entry differs from the reference");
        }
}

// Every element of cb's buffer that no matrix owns (owned counts from the buffer's start) as
// it was.
void check_unowned(const buffer &cb, const std::vector<bool> &owned, std::size_t element, const char *what) {
    for (std::size_t e = 0; e < owned.size(); ++e)
        if (!owned[e]) require(std::memcmp(cb.memory + e * element, cb.bytes.data() + e * element, element) == 0, what);
    std::size_t tail = owned.size() * element;
    if (tail < cb.size) require(std::memcmp(cb.memory + tail, cb.bytes.data() + tail, cb.size - tail) == 0, what);
}

// C as computed against a double loop, and every C byte no matrix of the batch owns unchanged.
void check_result(const api_call &c, const buffer &a, const buffer &b, const buffer &cb) {
    ++counters().computed;
    if (c.m == 0 || c.n == 0 || c.batch == 0) return require(cb.unchanged(), "C changed by an empty call");
    const std::size_t element = dtype_bytes(c.ct);
    std::vector<bool> owned(cb.size / element, false);
    const void *c0 = cb.bytes.data() + cb.offset;
    for (int64_t bi = 0; bi < c.batch; ++bi)
        check_matrix(c, a.ptr(), b.ptr(), c0, cb.ptr(), bi, owned, int64_t(cb.offset / element));
    check_unowned(cb, owned, element, "C changed outside its matrices");
}

double physical_memory_bytes() {
    static const double bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    return bytes;
}

// ---- the calls -----------------------------------------------------------------------------

gemm_status_t make_call(const api_call &c, const buffer &a, const buffer &b, buffer &cb) {
    float fa = float(c.alpha), fb = float(c.beta);
    scalar_args scalars(c);
    const void *alpha = scalars.get(c, 0), *beta = scalars.get(c, 1);
    if (c.null_alpha) alpha = nullptr;
    if (c.null_beta) beta = nullptr;
    switch (c.e) {
    case entry::sgemm:
        return raw_sgemm(c.layout, c.ta, c.tb, c.m, c.n, c.k, fa, static_cast<const float *>(a.ptr()), c.lda,
                         static_cast<const float *>(b.ptr()), c.ldb, fb, static_cast<float *>(cb.ptr()), c.ldc);
    case entry::dgemm:
        return raw_dgemm(c.layout, c.ta, c.tb, c.m, c.n, c.k, c.alpha, static_cast<const double *>(a.ptr()), c.lda,
                         static_cast<const double *>(b.ptr()), c.ldb, c.beta, static_cast<double *>(cb.ptr()), c.ldc);
    case entry::sgemm_batched:
        return raw_sgemm_strided_batched(c.layout, c.ta, c.tb, c.m, c.n, c.k, fa, static_cast<const float *>(a.ptr()),
                                         c.lda, c.sa, static_cast<const float *>(b.ptr()), c.ldb, c.sb, fb,
                                         static_cast<float *>(cb.ptr()), c.ldc, c.sc, c.batch);
    case entry::dgemm_batched:
        return raw_dgemm_strided_batched(c.layout, c.ta, c.tb, c.m, c.n, c.k, c.alpha,
                                         static_cast<const double *>(a.ptr()), c.lda, c.sa,
                                         static_cast<const double *>(b.ptr()), c.ldb, c.sb, c.beta,
                                         static_cast<double *>(cb.ptr()), c.ldc, c.sc, c.batch);
    case entry::ex:
        return raw_gemm_ex(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.at, c.lda, b.ptr(), c.bt, c.ldb, beta,
                           cb.ptr(), c.ct, c.ldc, c.compute);
    case entry::ex_batched:
        return raw_gemm_ex_strided_batched(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.at, c.lda, c.sa,
                                           b.ptr(), c.bt, c.ldb, c.sb, beta, cb.ptr(), c.ct, c.ldc, c.sc, c.batch,
                                           c.compute);
    case entry::cgemm:
        return raw_cgemm(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.lda, b.ptr(), c.ldb, beta, cb.ptr(),
                         c.ldc);
    case entry::zgemm:
        return raw_zgemm(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.lda, b.ptr(), c.ldb, beta, cb.ptr(),
                         c.ldc);
    case entry::cgemm_batched:
        return raw_cgemm_strided_batched(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.lda, c.sa, b.ptr(),
                                         c.ldb, c.sb, beta, cb.ptr(), c.ldc, c.sc, c.batch);
    case entry::zgemm_batched:
        return raw_zgemm_strided_batched(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, a.ptr(), c.lda, c.sa, b.ptr(),
                                         c.ldb, c.sb, beta, cb.ptr(), c.ldc, c.sc, c.batch);
    }
    return GEMM_STATUS_INTERNAL_ERROR;
}

std::string describe(const api_call &c, const buffer &a, const buffer &b, const buffer &cb) {
    static const char *names[] = {
        "sgemm", "dgemm", "sgemm_strided_batched", "dgemm_strided_batched", "ex", "ex_strided_batched",
        "cgemm", "zgemm", "cgemm_strided_batched", "zgemm_strided_batched"};
    char text[768];
    std::snprintf(
        text, sizeof text,
        "gemm_%s layout=%d ta=%d tb=%d m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld strides=%lld,%lld,%lld "
        "batch=%lld types=%d,%d,%d,%d alpha=%g%s%+gi beta=%g%s%+gi buffers(bytes,offset,null)=A(%zu,%zu,%d) "
        "B(%zu,%zu,%d) C(%zu,%zu,%d) backend=%s",
        names[int(c.e)], c.layout, c.ta, c.tb, (long long)c.m, (long long)c.n, (long long)c.k, (long long)c.lda,
        (long long)c.ldb, (long long)c.ldc, (long long)c.sa, (long long)c.sb, (long long)c.sc, (long long)c.batch, c.at,
        c.bt, c.ct, c.compute, c.alpha, c.null_alpha ? "(NULL)" : "", c.alpha_im, c.beta, c.null_beta ? "(NULL)" : "",
        c.beta_im, a.size, a.offset, a.null, b.size, b.offset, b.null, cb.size, cb.offset, cb.null, gemm_get_backend());
    return text;
}

constexpr int layouts[] = {GEMM_ROW_MAJOR, GEMM_COL_MAJOR};
constexpr int ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};
constexpr int types[] = {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16, GEMM_C32, GEMM_C64};
constexpr int type_count = int(sizeof types / sizeof types[0]);

// Half the calls are tame (small sizes, valid enums, leading dimensions and strides at or
// just above the least valid ones), so that many compute and have their results checked;
// the others draw every argument across the int64 range.
// With `shared`, the entry, layout and types are shared's (the groups of one grouped call);
// with `forced`, the entry is that one.
api_call draw_call(byte_source &in, const entry *forced = nullptr, const api_call *shared = nullptr) {
    api_call c{};
    const bool tame = in.one_in(2);
    auto size = [&] { return tame ? int64_t(in.byte() % 9) : in.size_value(); };
    c.e = shared ? shared->e : forced ? *forced : entry(in.byte() % entry_count);
    c.layout = shared ? shared->layout : tame ? layouts[in.byte() % 2] : in.enum_value(layouts, 2);
    c.ta = tame ? ops[in.byte() % 3] : in.enum_value(ops, 3);
    c.tb = tame ? ops[in.byte() % 3] : in.enum_value(ops, 3);
    c.m = size();
    c.n = size();
    c.k = size();
    // Leading dimensions near the least valid one, often.
    bool col = c.layout == GEMM_COL_MAJOR;
    auto near_least = [&](int64_t rows, int64_t cols) {
        int64_t least = std::max<int64_t>(1, col ? rows : cols);
        int64_t extra = int64_t(in.byte() % 3);
        if (!tame && in.one_in(3)) return in.size_value();
        return least > INT64_MAX - extra ? least : least + extra;
    };
    bool an = c.ta == GEMM_OP_N, bn = c.tb == GEMM_OP_N;
    c.lda = near_least(an ? c.m : c.k, an ? c.k : c.m);
    c.ldb = near_least(bn ? c.k : c.n, bn ? c.n : c.k);
    c.ldc = near_least(c.m, c.n);
    if (batched(c.e)) {
        c.batch = tame ? in.byte() % 4 : in.size_value();
        // A tame stride is one matrix's span or a little more (0 for a shared A or B).
        auto stride = [&](int64_t ld, int64_t rows, int64_t cols, bool may_share) {
            if (!tame) return in.size_value();
            if (may_share && in.one_in(4)) return int64_t(0);
            int64_t lines = col ? cols : rows, length = col ? rows : cols;
            return std::max<int64_t>(0, (lines - 1) * ld + length) + int64_t(in.byte() % 3);
        };
        c.sa = stride(c.lda, an ? c.m : c.k, an ? c.k : c.m, true);
        c.sb = stride(c.ldb, bn ? c.k : c.n, bn ? c.n : c.k, true);
        c.sc = stride(c.ldc, c.m, c.n, false);
    }
    if (shared) {
        c.at = shared->at, c.bt = shared->bt, c.ct = shared->ct, c.compute = shared->compute;
    } else if (is_ex(c.e) && tame) {
        c.at = c.bt = types[in.byte() % type_count];
        bool half = c.at == GEMM_F16 || c.at == GEMM_BF16;
        c.ct = half && in.one_in(2) ? GEMM_F32 : c.at;
        c.compute = compute_for(c.at);
    } else if (is_ex(c.e)) {
        c.at = in.enum_value(types, type_count);
        c.bt = in.one_in(16) ? in.enum_value(types, type_count) : c.at;
        c.ct = in.one_in(4) ? in.enum_value(types, type_count) : c.at;
        c.compute = in.one_in(16) ? in.enum_value(types, type_count) : compute_for(c.at);
        c.null_alpha = in.one_in(32);
        c.null_beta = in.one_in(32);
    } else {
        c.at = c.bt = c.ct = c.compute = typed_type(c.e);
        c.null_alpha = scalars_by_pointer(c.e) && !tame && in.one_in(32);
        c.null_beta = scalars_by_pointer(c.e) && !tame && in.one_in(32);
    }
    c.alpha = in.scalar();
    c.beta = in.scalar();
    if (complex_type(c.compute)) {
        c.alpha_im = in.scalar();
        c.beta_im = in.scalar();
    }
    return c;
}

// The element type a buffer is filled in: the call's, or f32 when the call's is no type.
int fill_type(int t) { return valid_type(t) ? t : GEMM_F32; }

thread_local bool forced_backend = false;  // set by fuzz_backend_choice

// ---- the same call through a plan ----------------------------------------------------------

// A copy of C's buffer as it was before any call: the same size, bytes, offset and NULL-ness.
void clone_original(const buffer &from, buffer &to) {
    to.size = from.size;
    to.memory = static_cast<unsigned char *>(std::malloc(from.size ? from.size : 1));
    if (from.size) std::memcpy(to.memory, from.bytes.data(), from.size);  // data() of an empty vector may be NULL
    to.bytes = from.bytes;
    to.offset = from.offset;
    to.null = from.null;
}

// The call made again through a plan made for it: a desc of the call's arguments (batch 1
// and no strides for the unbatched entries; alignment 1 and beta not promised 0, so the
// run refuses nothing the call would not). It must refuse what the call refused, C left as
// it was, and compute what the call computes. Two documented differences: a desc's leading
// dimension 0 and stride -1 mean the least and GEMM_DESC_TIGHT, so calls with those (or any
// negative stride, which batch 1 would ignore) are not made again; and a plan is made for
// alpha != 0, so with alpha = 0 it may refuse A and B spans the call never reads.
void plan_twin(const api_call &c, const judgement &j, const buffer &a, const buffer &b, const buffer &original_c) {
    if (c.lda == 0 || c.ldb == 0 || c.ldc == 0 || c.sa < 0 || c.sb < 0 || c.sc < 0) return;
    bool batched_entry = batched(c.e);
    buffer cb;
    clone_original(original_c, cb);
    ++counters().plan_calls;
    gemm_plan_t plan = nullptr;
    gemm_status_t s = raw_plan_create(c.layout, c.ta, c.tb, c.m, c.n, c.k, c.at, c.bt, c.ct, c.compute, c.lda, c.ldb,
                                      c.ldc, batched_entry ? c.batch : 1, batched_entry ? c.sa : 0,
                                      batched_entry ? c.sb : 0, batched_entry ? c.sc : 0, -1, 1, 0, &plan);
    bool created = s == GEMM_STATUS_SUCCESS;
    require(created == (plan != nullptr), "gemm_plan_create's status and *plan disagree");
    if (created) {
        scalar_args scalars(c);
        const void *alpha = scalars.get(c, 0), *beta = scalars.get(c, 1);
        s = gemm_plan_run(plan, c.null_alpha ? nullptr : alpha, a.ptr(), b.ptr(), c.null_beta ? nullptr : beta,
                          cb.ptr());
        gemm_plan_destroy(plan);
    }
    require(a.unchanged() && b.unchanged(), "A or B changed by a plan");
    if (j.kind != verdict::valid || s != GEMM_STATUS_SUCCESS) {
        bool allowed = j.kind != verdict::valid || (!created && alpha_read(c) == 0.0 && c.k > 0) ||
                       (s == GEMM_STATUS_NOT_SUPPORTED && forced_backend);
        require(allowed, j.kind != verdict::valid ? "a plan served an invalid call" : "a plan refused a valid call");
        require(s != GEMM_STATUS_SUCCESS, "a plan served an invalid call");
        require(*gemm_last_error() != '\0', "a refused plan left no message");
        require(cb.unchanged(), "C changed by a refused plan");
        return;
    }
    require(*gemm_last_error() == '\0', "a successful plan run left a message");
    check_result(c, a, b, cb);
}

void fuzz_api_call(byte_source &in) {
    api_call c = draw_call(in);
    buffer a, b, cb;
    make_buffer(a, in, fill_type(c.at), false);
    make_buffer(b, in, fill_type(c.bt), false);
    make_buffer(cb, in, fill_type(c.ct), beta_read(c) == 0.0 && in.one_in(2));
    call_text = describe(c, a, b, cb);
    judgement j = judge(c, a, b, cb);
    if (j.kind == verdict::valid && !inside_buffers(j, a, b, cb)) {
        ++counters().skipped;
        return;  // valid, and would reach past the buffers: a caller's bug, not ours to make
    }
    plan_twin(c, j, a, b, cb);
    ++counters().api_calls;
    gemm_status_t s = make_call(c, a, b, cb);
    require(a.unchanged() && b.unchanged(), "A or B changed");
    if (j.kind != verdict::valid) {
        require(s != GEMM_STATUS_SUCCESS, "an invalid call succeeded");
        require(j.kind != verdict::too_large || s == GEMM_STATUS_INVALID_SIZE,
                "a call whose operands cannot exist failed with another status than INVALID_SIZE");
        require(*gemm_last_error() != '\0', "a failed call left no message");
        require(cb.unchanged(), "C changed by a refused call");
        return;
    }
    if (s == GEMM_STATUS_NOT_SUPPORTED && forced_backend) {  // the forced backend may not serve it
        require(cb.unchanged(), "C changed by a call its backend refused");
        return;
    }
    require(s == GEMM_STATUS_SUCCESS, "a valid call failed");
    require(*gemm_last_error() == '\0', "a successful call left a message");
    check_result(c, a, b, cb);
}

// ---- pointer-array and grouped batches -----------------------------------------------------

// A gemm_*_batched call (one group) or a gemm_ex_grouped call: each group's shape and scalars
// as an api_call of entry ex (batch = the group's size, no strides), and where its matrices lie:
// element offsets into one A, one B and one C buffer (-1: a NULL pointer).
struct pointer_call {
    char form = 'x';  // 's', 'd', 'c', 'z': gemm_<x>gemm_batched; 'x': gemm_ex_batched; 'g': gemm_ex_grouped
    std::vector<api_call> groups;
    int64_t group_count = 1;  // as passed: groups.size(), 0 or negative
    int null_array = -1;      // gemm_ex_grouped: which of its 11 per-group arrays is NULL (-1: none)
    bool null_a = false, null_b = false, null_c = false;  // the arrays of the matrices' pointers
    std::vector<int64_t> a_at, b_at, c_at;                // per matrix, in elements
    int64_t total = 0;  // matrices, when group_count > 0 and the sizes sum within int64
    bool sizes_ok = true;
};

// The most matrices a call is made with: arrays of this many pointers are built.
constexpr int64_t most_matrices = 64;
// The most elements a drawn buffer holds: a valid call that needs more is not made.
constexpr int128 most_elements = 1 << 14;

// Elements one matrix of group g spans from its pointer (0 when that is out of reach).
int128 elements_of(const api_call &g, int64_t rows, int64_t cols, int64_t ld) {
    if (rows <= 0 || cols <= 0 || ld < 1) return 0;
    api_call one = g;
    one.batch = 1;
    extent e = span_of(one, rows, cols, ld, 0);
    return e.one > most_elements ? 0 : e.one;
}
int128 a_elements(const api_call &g) {
    bool an = g.ta == GEMM_OP_N;
    return elements_of(g, an ? g.m : g.k, an ? g.k : g.m, g.lda);
}
int128 b_elements(const api_call &g) {
    bool bn = g.tb == GEMM_OP_N;
    return elements_of(g, bn ? g.k : g.n, bn ? g.n : g.k, g.ldb);
}
int128 c_elements(const api_call &g) { return elements_of(g, g.m, g.n, g.ldc); }

bool layout_and_types_valid(const api_call &c) {
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR) return false;
    if (!valid_type(c.at) || !valid_type(c.bt) || !valid_type(c.ct) || !valid_type(c.compute)) return false;
    bool half = c.at == GEMM_F16 || c.at == GEMM_BF16;
    return c.bt == c.at && c.compute == compute_for(c.at) && (c.ct == c.at || (half && c.ct == GEMM_F32));
}

pointer_call draw_pointer_call(byte_source &in) {
    pointer_call p;
    static const char forms[] = {'s', 'd', 'c', 'z', 'x', 'g'};
    p.form = forms[in.byte() % 6];
    static const entry typed[] = {entry::sgemm, entry::dgemm, entry::cgemm, entry::zgemm};
    const entry e = p.form == 'x' || p.form == 'g' ? entry::ex : typed[std::strchr("sdcz", p.form) - "sdcz"];
    const int count = p.form == 'g' ? 1 + in.byte() % 3 : 1;
    for (int g = 0; g < count; ++g) {
        api_call c = g == 0 ? draw_call(in, &e) : draw_call(in, nullptr, &p.groups[0]);
        c.batch = in.one_in(16) ? in.size_value() : in.byte() % 4;
        c.sa = c.sb = c.sc = 0;
        if (p.form == 'g') c.null_alpha = c.null_beta = false;  // its scalars are arrays: null_array

        p.groups.push_back(c);
    }
    p.group_count = count;
    if (p.form == 'g' && in.one_in(16)) p.group_count = in.one_in(2) ? 0 : -1 - int64_t(in.byte() % 3);
    if (p.form == 'g' && in.one_in(32)) p.null_array = in.byte() % 11;
    p.null_a = in.one_in(32);
    p.null_b = in.one_in(32);
    p.null_c = in.one_in(32);
    // Matrix offsets: A and B anywhere near the start (matrices may share them), C one after
    // another with small gaps, now and then overlapping the one before.
    for (const api_call &g : p.groups) {
        if (g.batch < 0) p.sizes_ok = false;
        else if (p.total > INT64_MAX - g.batch) p.sizes_ok = false;
        else p.total += g.batch;
    }
    if (!p.sizes_ok || p.total > most_matrices) return p;
    int64_t cursor = in.byte() % 3;
    for (const api_call &g : p.groups)
        for (int64_t i = 0; i < g.batch; ++i) {
            p.a_at.push_back(in.one_in(24) ? -1 : int64_t(in.byte() % 3));
            p.b_at.push_back(in.one_in(24) ? -1 : int64_t(in.byte() % 3));
            if (in.one_in(24)) {
                p.c_at.push_back(-1);
                continue;
            }
            int64_t at_c = cursor;
            if (!p.c_at.empty() && in.one_in(8)) at_c = std::max<int64_t>(0, cursor - 1 - int64_t(in.byte() % 4));
            p.c_at.push_back(at_c);
            cursor = at_c + int64_t(c_elements(g)) + int64_t(in.byte() % 3 == 0 ? 0 : 1 + in.byte() % 2);
        }
    return p;
}

struct pointer_judgement {
    verdict kind = verdict::invalid;
    bool makeable = true;  // the call reads no more matrices' pointers than were drawn
    bool inside = true;    // every operand the call uses lies inside its buffer
};

// Buffer lengths in elements, for the judgement of what lies inside them.
struct pointer_rooms {
    int128 a = 0, b = 0, c = 0;
};

// The documented rules of gemm_*_batched and gemm_ex_grouped, in the library's order: the
// group count and arrays, each group's arguments (as a call's, its size as a batch count),
// the sum of the sizes, the arrays of pointers the groups need, each matrix's pointers and
// spans (as a call's), no two C matrices sharing a byte.
pointer_judgement judge_pointer_call(const pointer_call &p, const pointer_rooms &room) {
    pointer_judgement j;
    if (p.group_count < 0) return j;
    if (p.group_count == 0) {  // nothing to compute, but the shared arguments still hold
        if (layout_and_types_valid(p.groups[0])) j.kind = verdict::valid;
        return j;
    }
    if (p.null_array >= 0) return j;
    bool need_ab = false, need_c = false;
    for (const api_call &g : p.groups) {
        api_call one = g;
        one.batch = 1;
        judgement args = judge_pointers(one, false, false, false);
        if (g.batch < 0 || args.kind == verdict::invalid) return j;
        need_c = need_c || (g.batch > 0 && args.writes_c);
        need_ab = need_ab || (g.batch > 0 && args.reads_ab);
    }
    if (!p.sizes_ok) return j;  // more than 2^63 - 1 matrices
    if (p.total == 0) return j.kind = verdict::valid, j;
    if (p.total > most_matrices) return j.makeable = false, j;
    if ((need_ab && (p.null_a || p.null_b)) || (need_c && p.null_c)) return j;
    std::vector<std::pair<int128, int128>> c_extents;
    std::size_t item = 0;
    for (const api_call &g : p.groups)
        for (int64_t i = 0; i < g.batch; ++i, ++item) {
            api_call one = g;
            one.batch = 1;
            const bool a_null = p.null_a || p.a_at[item] < 0, b_null = p.null_b || p.b_at[item] < 0,
                       c_null = p.null_c || p.c_at[item] < 0;
            judgement m = judge_pointers(one, a_null, b_null, c_null);
            if (m.kind != verdict::valid) return j.kind = m.kind, j;
            const int128 ab = dtype_bytes(g.at), cb = dtype_bytes(g.ct);
            if (m.writes_c) {
                j.inside = j.inside && p.c_at[item] * cb + m.c_bytes <= room.c * cb;
                c_extents.push_back({p.c_at[item], p.c_at[item] + m.c_bytes / cb});
            }
            if (m.reads_ab)
                j.inside = j.inside && p.a_at[item] * ab + m.a_bytes <= room.a * ab &&
                           p.b_at[item] * ab + m.b_bytes <= room.b * ab;
        }
    std::sort(c_extents.begin(), c_extents.end());
    for (std::size_t i = 1; i < c_extents.size(); ++i)
        if (c_extents[i].first < c_extents[i - 1].second) return j;  // two C matrices overlap
    j.kind = verdict::valid;
    return j;
}

std::string describe_pointer_call(const pointer_call &p) {
    std::string text = std::string("pointer form ") + p.form + " group_count=" + std::to_string(p.group_count) +
                       " null_array=" + std::to_string(p.null_array) + " null A,B,C arrays=" + std::to_string(p.null_a) +
                       std::to_string(p.null_b) + std::to_string(p.null_c);
    buffer none;
    for (const api_call &g : p.groups) text += "\n  group: " + describe(g, none, none, none);
    text += "\n  matrices (A, B, C offsets):";
    for (std::size_t i = 0; i < p.a_at.size(); ++i)
        text +=
            " (" + std::to_string(p.a_at[i]) + "," + std::to_string(p.b_at[i]) + "," + std::to_string(p.c_at[i]) + ")";
    return text;
}

// The buffers of a pointer call, each exactly as long as its farthest matrix reaches.
struct pointer_operands {
    buffer a, b, c;
    std::vector<const void *> a_ptrs, b_ptrs;
    std::vector<void *> c_ptrs;
};

void fill_buffer(buffer &b, byte_source &in, int type, std::size_t count, bool nan_fill) {
    const std::size_t element = dtype_bytes(type);
    b.size = count * element;
    b.memory = static_cast<unsigned char *>(std::malloc(b.size ? b.size : 1));
    const int64_t parts = complex_type(type) ? 2 : 1;
    for (std::size_t i = 0; i < count * std::size_t(parts); ++i)
        store(b.memory, int64_t(i), part_type(type), nan_fill ? std::nan("") : double(int(in.byte() % 17) - 8) / 4.0);
    b.bytes.assign(b.memory, b.memory + b.size);
}

pointer_rooms make_pointer_operands(const pointer_call &p, byte_source &in, pointer_operands &x) {
    pointer_rooms room;
    std::size_t item = 0;
    bool beta_zero = true;
    for (const api_call &g : p.groups) {
        beta_zero = beta_zero && beta_read(g) == 0.0;
        for (int64_t i = 0; i < g.batch && item < p.a_at.size(); ++i, ++item) {
            room.a = std::max(room.a, p.a_at[item] + std::max<int128>(1, a_elements(g)));
            room.b = std::max(room.b, p.b_at[item] + std::max<int128>(1, b_elements(g)));
            room.c = std::max(room.c, p.c_at[item] + std::max<int128>(1, c_elements(g)));
        }
    }
    const api_call &first = p.groups[0];
    fill_buffer(x.a, in, fill_type(first.at), std::size_t(room.a), false);
    fill_buffer(x.b, in, fill_type(first.bt), std::size_t(room.b), false);
    fill_buffer(x.c, in, fill_type(first.ct), std::size_t(room.c), beta_zero && in.one_in(2));
    const std::size_t ae = dtype_bytes(fill_type(first.at)), ce = dtype_bytes(fill_type(first.ct));
    for (std::size_t i = 0; i < p.a_at.size(); ++i) {
        x.a_ptrs.push_back(p.a_at[i] < 0 ? nullptr : x.a.memory + std::size_t(p.a_at[i]) * ae);
        x.b_ptrs.push_back(p.b_at[i] < 0 ? nullptr : x.b.memory + std::size_t(p.b_at[i]) * ae);
        x.c_ptrs.push_back(p.c_at[i] < 0 ? nullptr : x.c.memory + std::size_t(p.c_at[i]) * ce);
    }
    return room;
}

// Bytes that hold the groups' alpha (or beta) values in the compute type, as gemm_ex_grouped
// reads them: one value (a pair for complex types) per group.
std::vector<unsigned char> scalar_array(const pointer_call &p, int which) {
    std::vector<unsigned char> bytes;
    for (const api_call &g : p.groups) {
        scalar_args s(g);
        const bool doubles = g.compute == GEMM_F64 || g.compute == GEMM_C64;
        const std::size_t size = (doubles ? 8 : 4) * (complex_type(g.compute) ? 2 : 1);
        const auto *from = static_cast<const unsigned char *>(s.get(g, which));
        bytes.insert(bytes.end(), from, from + size);
    }
    return bytes;
}

// gemm_ex_grouped's per-group arrays, as the call passes them (one of them NULL, maybe).
struct group_arrays {
    std::vector<int> ta, tb;
    std::vector<int64_t> m, n, k, lda, ldb, ldc, size;
    std::vector<unsigned char> alpha, beta;

    explicit group_arrays(const pointer_call &p) : alpha(scalar_array(p, 0)), beta(scalar_array(p, 1)) {
        for (const api_call &g : p.groups) {
            ta.push_back(g.ta), tb.push_back(g.tb), m.push_back(g.m), n.push_back(g.n), k.push_back(g.k);
            lda.push_back(g.lda), ldb.push_back(g.ldb), ldc.push_back(g.ldc), size.push_back(g.batch);
        }
    }
    bool operator==(const group_arrays &o) const {
        return ta == o.ta && tb == o.tb && m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb &&
               ldc == o.ldc && size == o.size && alpha == o.alpha && beta == o.beta;
    }
};

gemm_status_t make_pointer_call(const pointer_call &p, pointer_operands &x, group_arrays &arrays) {
    const api_call &g = p.groups[0];
    const void *const *a = p.null_a ? nullptr : x.a_ptrs.data();
    const void *const *b = p.null_b ? nullptr : x.b_ptrs.data();
    void *const *c = p.null_c ? nullptr : x.c_ptrs.data();
    if (p.form != 'g') {
        scalar_args s(g);
        const void *alpha = g.null_alpha ? nullptr : s.get(g, 0), *beta = g.null_beta ? nullptr : s.get(g, 1);
        return raw_gemm_batched(p.form, g.layout, g.ta, g.tb, g.m, g.n, g.k, alpha, a, g.at, g.lda, b, g.bt, g.ldb,
                                beta, c, g.ct, g.ldc, g.batch, g.compute);
    }
    auto given = [&p](int index, auto *data) { return p.null_array == index ? nullptr : data; };
    return raw_gemm_ex_grouped(g.layout, given(0, arrays.ta.data()), given(1, arrays.tb.data()),
                               given(2, arrays.m.data()), given(3, arrays.n.data()), given(4, arrays.k.data()),
                               given(5, arrays.alpha.data()), a, g.at, given(6, arrays.lda.data()), b, g.bt,
                               given(7, arrays.ldb.data()), given(8, arrays.beta.data()), c, g.ct,
                               given(9, arrays.ldc.data()), p.group_count, given(10, arrays.size.data()), g.compute);
}

// Every matrix of a computed pointer call against a double loop; C elements outside them
// unchanged.
void check_pointer_result(const pointer_call &p, const pointer_operands &x) {
    ++counters().pointer_computed;
    const std::size_t element = dtype_bytes(p.groups[0].ct);
    std::vector<bool> owned(x.c.size / element, false);
    std::size_t item = 0;
    for (const api_call &g : p.groups) {
        api_call one = g;
        one.batch = 1;
        for (int64_t i = 0; i < g.batch && p.group_count > 0; ++i, ++item) {
            if (g.m == 0 || g.n == 0) continue;
            const int64_t first = p.c_at[item];
            check_matrix(one, x.a_ptrs[item], x.b_ptrs[item], x.c.bytes.data() + std::size_t(first) * element,
                         x.c_ptrs[item], 0, owned, first);
        }
    }
    check_unowned(x.c, owned, element, "C changed outside its matrices");
}

void fuzz_pointer_call(byte_source &in) {
    const pointer_call p = draw_pointer_call(in);
    pointer_operands x;
    const pointer_rooms room = make_pointer_operands(p, in, x);
    call_text = describe_pointer_call(p);
    const pointer_judgement j = judge_pointer_call(p, room);
    if (!j.makeable || (j.kind == verdict::valid && !j.inside)) {
        ++counters().skipped;
        return;  // it would read more pointers than were drawn, or past a buffer
    }
    ++counters().pointer_calls;
    group_arrays arrays(p);
    const group_arrays arrays_before = arrays;
    const std::vector<const void *> a_before = x.a_ptrs, b_before = x.b_ptrs;
    const std::vector<void *> c_before = x.c_ptrs;
    gemm_status_t s = make_pointer_call(p, x, arrays);
    require(x.a.unchanged() && x.b.unchanged(), "A or B changed");
    require(arrays == arrays_before && x.a_ptrs == a_before && x.b_ptrs == b_before && x.c_ptrs == c_before,
            "an array of the call's arguments changed");
    if (j.kind != verdict::valid) {
        require(s != GEMM_STATUS_SUCCESS, "an invalid pointer-array or grouped call succeeded");
        require(*gemm_last_error() != '\0', "a failed call left no message");
        require(x.c.unchanged(), "C changed by a refused call");
        return;
    }
    if (s == GEMM_STATUS_NOT_SUPPORTED && forced_backend) {
        require(x.c.unchanged(), "C changed by a call its backend refused");
        return;
    }
    require(s == GEMM_STATUS_SUCCESS, "a valid pointer-array or grouped call failed");
    require(*gemm_last_error() == '\0', "a successful call left a message");
    check_pointer_result(p, x);
}

// ---- gemm_ex_epilogue ----------------------------------------------------------------------

// The epilogue's arguments as drawn: enums as ints, which pointers are given.
struct epilogue_draw {
    bool given = true;        // the epilogue pointer itself
    int64_t struct_size = 0;  // this header's, 8 (too small) or 64 more (a newer header's)
    int activation = 0, axis = 0;
    bool bias = false, grad = false, aux = false;
    bool aux_on_c = false;  // aux pointed at C (they overlap whenever C is written)
    int64_t ld_aux = 1;
};

bool backward(const epilogue_draw &e) {
    return e.activation == GEMM_ACTIVATION_RELU_BACKWARD || e.activation == GEMM_ACTIVATION_GELU_BACKWARD;
}

epilogue_draw draw_epilogue(byte_source &in, const api_call &c) {
    epilogue_draw e;
    const bool tame = in.one_in(2) || !in.one_in(4);
    e.given = !in.one_in(32);
    e.struct_size = int64_t(sizeof(gemm_epilogue_t));
    if (in.one_in(32)) e.struct_size = in.one_in(2) ? 8 : e.struct_size + 64;
    e.activation = tame ? in.byte() % 5 : int(in.byte()) - 128;
    e.axis = tame ? in.byte() % 3 : int(in.byte() % 5) - 1;
    // Mostly the pointers the activation needs, now and then one more or one less.
    const bool needs_aux = backward(e) || in.one_in(2), needs_vector = e.axis != GEMM_BIAS_NONE;
    e.aux = in.one_in(16) ? !needs_aux : needs_aux;
    e.bias = !backward(e) && (in.one_in(16) ? !needs_vector : needs_vector);
    e.grad = backward(e) && (in.one_in(16) ? !needs_vector : needs_vector);
    if (in.one_in(32)) e.bias = !e.bias;
    if (in.one_in(32)) e.grad = !e.grad;
    e.aux_on_c = e.aux && in.one_in(24);
    // Near the least valid one, often just below it; sizes reach INT64_MAX, so no overflow.
    const int64_t least = std::max<int64_t>(1, c.layout == GEMM_COL_MAJOR ? c.m : c.n);
    const int64_t extra = int64_t(in.byte() % 3), below = in.one_in(16) ? 1 : 0;
    e.ld_aux = in.one_in(16) ? in.size_value() : (least > INT64_MAX - extra ? least : least + extra) - below;
    return e;
}

// The epilogue's rules on a call whose gemm_ex arguments judge() found valid or too large:
// the struct, its enums, real types, which pointers are given, ld_aux; then aux's span
// (checked after C's, before A's and B's) and its overlap with C.
verdict judge_epilogue(const api_call &c, const epilogue_draw &e, const judgement &base, int128 &aux_bytes) {
    if (!e.given || e.struct_size < int64_t(sizeof(gemm_epilogue_t))) return verdict::invalid;
    if (e.activation < 0 || e.activation > 4 || e.axis < 0 || e.axis > 2) return verdict::invalid;
    if (complex_type(c.at)) return verdict::invalid;
    const bool bwd = backward(e), vector = bwd ? e.grad : e.bias;
    if ((bwd && e.bias) || (!bwd && e.grad) || (e.axis == GEMM_BIAS_NONE && vector)) return verdict::invalid;
    if (base.writes_c && ((e.axis != GEMM_BIAS_NONE && !vector) || (bwd && !e.aux))) return verdict::invalid;
    if (e.aux && e.ld_aux < std::max<int64_t>(1, c.layout == GEMM_COL_MAJOR ? c.m : c.n)) return verdict::invalid;
    if (!base.writes_c) return base.kind;
    const extent ce = span_of(c, c.m, c.n, c.ldc, 0);
    if (too_large(ce, c.ct)) return verdict::too_large;
    if (e.aux) {
        const extent ae = span_of(c, c.m, c.n, e.ld_aux, 0);
        if (too_large(ae, c.ct)) return verdict::too_large;
        if (e.aux_on_c) return verdict::invalid;
        aux_bytes = ae.one * int128(dtype_bytes(c.ct));
    }
    return base.kind;
}

double gelu(double z) { return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z))); }
double gelu_slope(double z) {
    const double s = std::sqrt(2.0 / M_PI), t = std::tanh(s * (z + 0.044715 * z * z * z));
    return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * z * z);
}

// C, aux and bias_grad of a computed call against the epilogue's definition on a double loop,
// and nothing else written (bias, A and B unchanged; C's and aux's padding; bias_grad's tail).
void check_epilogue_result(const api_call &c, const epilogue_draw &e, const buffer &a, const buffer &b,
                           const buffer &cb, const buffer &bias, const buffer &aux, const buffer &grad) {
    ++counters().epilogue_computed;
    require(bias.unchanged(), "the bias changed");
    if (c.m == 0 || c.n == 0)
        return require(cb.unchanged() && aux.unchanged() && grad.unchanged(), "an empty call wrote something");
    const bool an = c.ta == GEMM_OP_N, bn = c.tb == GEMM_OP_N, bwd = backward(e);
    const double u = unit_roundoff(c.compute), u_out = unit_roundoff(c.ct);
    const double alpha = alpha_read(c).real(), beta = beta_read(c).real();
    const void *c0 = cb.bytes.data() + cb.offset, *aux0 = aux.null ? nullptr : aux.bytes.data() + aux.offset;
    std::vector<bool> c_owned(cb.room() / dtype_bytes(c.ct), false), aux_owned(aux.room() / dtype_bytes(c.ct), false);
    const int64_t length = e.axis == GEMM_BIAS_ROWS ? c.m : c.n;
    std::vector<double> sums(std::size_t(length), 0.0), magnitudes(std::size_t(length), 0.0);
    bool finite = std::isfinite(alpha) && std::isfinite(beta);
    for (int64_t i = 0; i < c.m; ++i)
        for (int64_t q = 0; q < c.n; ++q) {
            double sum = 0, magnitude = 0;
            for (int64_t l = 0; l < c.k && alpha != 0.0; ++l) {
                const double x =
                    value_at(a.ptr(), an ? at(c, i, l, c.lda, 0, 0) : at(c, l, i, c.lda, 0, 0), c.at).real();
                const double y =
                    value_at(b.ptr(), bn ? at(c, l, q, c.ldb, 0, 0) : at(c, q, l, c.ldb, 0, 0), c.bt).real();
                sum += x * y;
                magnitude += std::fabs(x * y);
            }
            // ld_aux is the call's only where aux is given (else it may be anything).
            const int64_t ci = at(c, i, q, c.ldc, 0, 0), ai = e.aux ? at(c, i, q, e.ld_aux, 0, 0) : 0;
            c_owned[std::size_t(ci)] = true;
            const double before = beta != 0.0 ? value_at(c0, ci, c.ct).real() : 0.0;
            double z = alpha * sum + beta * before, bound = std::fabs(alpha) * magnitude + std::fabs(beta * before);
            const int64_t along = e.axis == GEMM_BIAS_ROWS ? i : q;
            double want = z, slope = 1.0;
            if (!bwd && e.bias) {
                const double v = value_at(bias.ptr(), along, c.ct).real();
                z += v;
                bound += std::fabs(v);
            }
            const double z_tolerance = (2.0 * (double(c.k) + 3.0) * u + 3.0 * u_out) * bound + 1e-300;
            if (bwd) {
                const double saved = value_at(aux0, ai, c.ct).real();
                slope = e.activation == GEMM_ACTIVATION_RELU_BACKWARD ? (saved > 0 ? 1.0 : 0.0) : gelu_slope(saved);
                want = z * slope;
            } else {
                if (e.aux) {
                    aux_owned[std::size_t(ai)] = true;
                    if (std::isfinite(z))
                        require(std::fabs(value_at(aux.ptr(), ai, c.ct).real() - z) <= z_tolerance,
                                "aux differs from the reference");
                }
                want = e.activation == GEMM_ACTIVATION_RELU   ? std::max(z, 0.0)
                       : e.activation == GEMM_ACTIVATION_GELU ? gelu(z)
                                                              : z;
                slope = e.activation == GEMM_ACTIVATION_GELU ? 1.13 : 1.0;
            }
            const double got = value_at(cb.ptr(), ci, c.ct).real();
            finite = finite && std::isfinite(want);
            if (std::isfinite(want))
                require(std::fabs(got - want) <= std::fabs(slope) * (z_tolerance + 2.0 * u_out * bound) +
                                                     16.0 * u * std::fabs(z) + 2.0 * u_out * std::fabs(want) + 1e-300,
                        "a computed entry differs from the reference");
            if (length > 0) sums[std::size_t(along)] += got, magnitudes[std::size_t(along)] += std::fabs(got);
        }
    // The bias gradient: the sums of C as written.
    const bool sums_written = bwd && e.axis != GEMM_BIAS_NONE;
    const int64_t terms = e.axis == GEMM_BIAS_ROWS ? c.n : c.m;
    for (int64_t v = 0; sums_written && finite && v < length; ++v) {
        const double got = value_at(grad.ptr(), v, c.ct).real(), want = sums[std::size_t(v)];
        require(std::fabs(got - want) <=
                    2.0 * double(terms + 2) * u * magnitudes[std::size_t(v)] + 2.0 * u_out * std::fabs(want) + 1e-300,
                "bias_grad differs from the sums of C");
    }
    const std::size_t element = dtype_bytes(c.ct);
    auto outside_unchanged = [&](const buffer &buf, const std::vector<bool> &owned, const char *what) {
        for (std::size_t i = 0; i < owned.size(); ++i)
            if (!owned[i])
                require(std::memcmp(buf.memory + buf.offset + i * element, buf.bytes.data() + buf.offset + i * element,
                                    element) == 0,
                        what);
        require(std::memcmp(buf.memory, buf.bytes.data(), buf.offset) == 0, what);
    };
    outside_unchanged(cb, c_owned, "C changed outside its matrix");
    if (!aux.null) outside_unchanged(aux, aux_owned, "aux changed where the call does not write it");
    if (!grad.null && grad.size > 0) {
        std::vector<bool> written(grad.room() / element, false);
        for (int64_t v = 0; sums_written && v < length; ++v) written[std::size_t(v)] = true;
        outside_unchanged(grad, written, "bias_grad changed past its values");
    }
}

// What an epilogue call writes: C, aux and bias_grad.
struct epilogue_outputs {
    buffer c, aux, grad;
};

// The epilogue call made again through a plan whose desc carries the call's epilogue
// (activation, bias axis, aux for a forward one that saves its input, ld_aux), run with
// gemm_plan_run_epilogue. It must refuse what the call refused, write nothing then, and
// compute what the call computes; with the differences plan_twin allows (leading dimensions
// of 0 mean the least in a desc; a plan is made for alpha != 0). An ld_aux the call ignores
// (no aux) is part of the desc's class, so the twin is made only with an ld_aux that a desc
// takes; and a backward run needs its aux even for an empty class, which a call may leave
// out. Now and then the run's epilogue differs from the desc's, or gemm_plan_run runs a plan
// with an epilogue: both must be refused.
void plan_epilogue_twin(const api_call &c, const epilogue_draw &e, const epilogue_draw &as_made, verdict kind,
                        const buffer &a, const buffer &b, const buffer &bias, const buffer &c0, const buffer &aux0,
                        const buffer &grad0, byte_source &in) {
    const int64_t least_aux = std::max<int64_t>(1, c.layout == GEMM_COL_MAJOR ? c.m : c.n);
    if (c.lda == 0 || c.ldb == 0 || c.ldc == 0 || e.ld_aux < least_aux) return;
    const bool forward_aux = as_made.aux && !backward(e);
    raw_desc d{
        c.layout, c.ta, c.tb, c.m, c.n, c.k, c.at, c.bt,         c.ct,   c.compute,           c.lda,   c.ldb, c.ldc,
        1,        0,    0,    0,   -1,  1,   0,    e.activation, e.axis, forward_aux ? 1 : 0, e.ld_aux};
    epilogue_outputs o;
    clone_original(c0, o.c);
    clone_original(aux0, o.aux);
    clone_original(grad0, o.grad);
    const int mutation = in.one_in(8) ? 1 + in.byte() % 5 : 0;
    ++counters().epilogue_plan_calls;
    gemm_plan_t plan = nullptr;
    gemm_status_t s = raw_plan_create_desc(&d, &plan);
    const bool created = s == GEMM_STATUS_SUCCESS;
    require(created == (plan != nullptr), "gemm_plan_create's status and *plan disagree");
    const bool has_epilogue = e.activation != GEMM_ACTIVATION_NONE || e.axis != GEMM_BIAS_NONE || forward_aux;
    epilogue_draw run = as_made;
    switch (mutation) {
    case 1: run.activation = (run.activation + 1) % 5; break;
    case 2: run.axis = (run.axis + 1) % 3; break;
    case 3: run.ld_aux = e.ld_aux == INT64_MAX ? e.ld_aux - 1 : e.ld_aux + 1; break;
    case 4: run.aux = backward(e) ? run.aux : !run.aux; break;  // a backward one needs its aux
    default: break;
    }
    const bool plain_run = mutation == 5 && has_epilogue;
    // An aux the call did not have points at aux's memory however short (the run must refuse it).
    void *aux_ptr = !run.aux ? nullptr : as_made.aux_on_c ? o.c.ptr() : o.aux.null ? o.aux.memory : o.aux.ptr();
    if (created) {
        scalar_args scalars(c);
        const void *alpha = c.null_alpha ? nullptr : scalars.get(c, 0),
                   *beta = c.null_beta ? nullptr : scalars.get(c, 1);
        if (plain_run) s = gemm_plan_run(plan, alpha, a.ptr(), b.ptr(), beta, o.c.ptr());
        else
            s = raw_plan_run_epilogue(plan, alpha, a.ptr(), b.ptr(), beta, o.c.ptr(), e.given, e.struct_size,
                                      run.activation, run.axis, bias.ptr(), o.grad.ptr(), aux_ptr, run.ld_aux);
        gemm_plan_destroy(plan);
    }
    require(a.unchanged() && b.unchanged() && bias.unchanged(), "A, B or the bias changed by a plan");
    // A backward run reads aux whatever the class's size: a plan's run needs it even where an
    // empty call (m or n 0) may leave it out.
    const bool differs =
        (mutation >= 1 && mutation <= 3) || plain_run || (mutation == 4 && !backward(e)) || (backward(e) && !run.aux);
    const bool unchanged = o.c.unchanged() && o.aux.unchanged() && o.grad.unchanged();
    if (created && differs) {
        require(s != GEMM_STATUS_SUCCESS, "a plan ran an epilogue other than its desc's");
        require(unchanged, "a refused plan run wrote something");
        return;
    }
    if (kind != verdict::valid || s != GEMM_STATUS_SUCCESS) {
        const bool allowed = kind != verdict::valid || (!created && alpha_read(c) == 0.0 && c.k > 0) ||
                             (s == GEMM_STATUS_NOT_SUPPORTED && forced_backend);
        require(allowed, kind != verdict::valid ? "a plan served an invalid epilogue call"
                                                : "a plan refused a valid epilogue call");
        require(s != GEMM_STATUS_SUCCESS, "a plan served an invalid epilogue call");
        require(*gemm_last_error() != '\0', "a refused plan left no message");
        require(unchanged, "a refused plan wrote something");
        return;
    }
    require(*gemm_last_error() == '\0', "a successful plan run left a message");
    check_epilogue_result(c, as_made, a, b, o.c, bias, o.aux, o.grad);
}

void fuzz_epilogue_call(byte_source &in) {
    api_call c = draw_call(in);
    c.e = entry::ex;
    c.batch = 1;
    c.sa = c.sb = c.sc = 0;
    const epilogue_draw e = draw_epilogue(in, c);
    buffer a, b, cb, bias, aux, grad;
    make_buffer(a, in, fill_type(c.at), false);
    make_buffer(b, in, fill_type(c.bt), false);
    make_buffer(cb, in, fill_type(c.ct), beta_read(c) == 0.0 && in.one_in(2));
    make_buffer(bias, in, fill_type(c.ct), false);
    make_buffer(aux, in, fill_type(c.ct), false);
    make_buffer(grad, in, fill_type(c.ct), false);
    // The pointers the draw gives (a NULL make_buffer drew stands too: it is one of the cases).
    bias.null = bias.null || !e.bias;
    grad.null = grad.null || !e.grad;
    aux.null = aux.null || !e.aux;
    void *aux_ptr = e.aux_on_c && !cb.null ? cb.ptr() : aux.ptr();
    epilogue_draw as_made = e;
    as_made.bias = !bias.null;
    as_made.grad = !grad.null;
    as_made.aux = aux_ptr != nullptr;
    as_made.aux_on_c = e.aux_on_c && !cb.null;
    call_text = describe(c, a, b, cb) + " epilogue(given=" + std::to_string(e.given) +
                " size=" + std::to_string(e.struct_size) + " act=" + std::to_string(e.activation) +
                " axis=" + std::to_string(e.axis) + " bias=" + std::to_string(as_made.bias) +
                " grad=" + std::to_string(as_made.grad) + " aux=" + std::to_string(as_made.aux) +
                (as_made.aux_on_c ? "(on C)" : "") + " ld_aux=" + std::to_string(e.ld_aux) + ")";
    judgement j = judge(c, a, b, cb);
    int128 aux_bytes = 0;
    const verdict kind = j.kind == verdict::invalid ? verdict::invalid : judge_epilogue(c, as_made, j, aux_bytes);
    const int64_t length = e.axis == GEMM_BIAS_ROWS ? c.m : c.n;
    const int128 vector_bytes = int128(std::max<int64_t>(length, 0)) * int128(dtype_bytes(fill_type(c.ct)));
    if (kind == verdict::valid && (!inside_buffers(j, a, b, cb) || (as_made.aux && aux_bytes > int128(aux.room())) ||
                                   (as_made.bias && vector_bytes > int128(bias.room())) ||
                                   (as_made.grad && vector_bytes > int128(grad.room())))) {
        ++counters().skipped;
        return;
    }
    plan_epilogue_twin(c, e, as_made, kind, a, b, bias, cb, aux, grad, in);
    ++counters().epilogue_calls;
    scalar_args scalars(c);
    gemm_status_t s = raw_gemm_ex_epilogue(
        c.layout, c.ta, c.tb, c.m, c.n, c.k, c.null_alpha ? nullptr : scalars.get(c, 0), a.ptr(), c.at, c.lda, b.ptr(),
        c.bt, c.ldb, c.null_beta ? nullptr : scalars.get(c, 1), cb.ptr(), c.ct, c.ldc, c.compute, e.given,
        e.struct_size, e.activation, e.axis, bias.ptr(), grad.ptr(), aux_ptr, e.ld_aux);
    require(a.unchanged() && b.unchanged() && bias.unchanged(), "A, B or the bias changed");
    if (kind != verdict::valid) {
        require(s != GEMM_STATUS_SUCCESS, "an invalid epilogue call succeeded");
        require(kind != verdict::too_large || s == GEMM_STATUS_INVALID_SIZE,
                "an epilogue call whose operands cannot exist failed with another status than INVALID_SIZE");
        require(*gemm_last_error() != '\0', "a failed call left no message");
        require(cb.unchanged() && aux.unchanged() && grad.unchanged(), "a refused epilogue call wrote something");
        return;
    }
    if (s == GEMM_STATUS_NOT_SUPPORTED && forced_backend) {
        require(cb.unchanged() && aux.unchanged() && grad.unchanged(), "a call its backend refused wrote something");
        return;
    }
    require(s == GEMM_STATUS_SUCCESS, "a valid epilogue call failed");
    check_epilogue_result(c, as_made, a, b, cb, bias, aux, grad);
}

// ---- the drop-in BLAS ----------------------------------------------------------------------

// The drop-in's entry points, found at run time so that this program links the library only.
template <class T>
using fortran_fn = void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *,
                            const int *, const T *, const int *, const T *, T *, const int *, std::size_t, std::size_t);
template <class T>
using cblas_fn = void (*)(int, int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int);
// cblas_cgemm and cblas_zgemm: scalars and matrices by void pointer.
using cblas_complex_fn = void (*)(int, int, int, int, int, int, const void *, const void *, int, const void *, int,
                                  const void *, void *, int);

struct drop_in {
    fortran_fn<float> sgemm = nullptr;
    fortran_fn<double> dgemm = nullptr;
    fortran_fn<std::complex<float>> cgemm = nullptr;
    fortran_fn<std::complex<double>> zgemm = nullptr;
    cblas_fn<float> cblas_sgemm = nullptr;
    cblas_fn<double> cblas_dgemm = nullptr;
    cblas_complex_fn cblas_cgemm = nullptr, cblas_zgemm = nullptr;

    bool complete() const {
        return sgemm && dgemm && cgemm && zgemm && cblas_sgemm && cblas_dgemm && cblas_cgemm && cblas_zgemm;
    }
};

const drop_in &blas() {
    static const drop_in d = [] {
        drop_in found;
        void *h = dlopen(GEMM_FUZZ_BLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!h) return found;
        found.sgemm = reinterpret_cast<fortran_fn<float>>(dlsym(h, "sgemm_"));
        found.dgemm = reinterpret_cast<fortran_fn<double>>(dlsym(h, "dgemm_"));
        found.cblas_sgemm = reinterpret_cast<cblas_fn<float>>(dlsym(h, "cblas_sgemm"));
        found.cblas_dgemm = reinterpret_cast<cblas_fn<double>>(dlsym(h, "cblas_dgemm"));
        found.cgemm = reinterpret_cast<fortran_fn<std::complex<float>>>(dlsym(h, "cgemm_"));
        found.zgemm = reinterpret_cast<fortran_fn<std::complex<double>>>(dlsym(h, "zgemm_"));
        found.cblas_cgemm = reinterpret_cast<cblas_complex_fn>(dlsym(h, "cblas_cgemm"));
        found.cblas_zgemm = reinterpret_cast<cblas_complex_fn>(dlsym(h, "cblas_zgemm"));
        return found;
    }();
    return d;
}

thread_local int handler_calls = 0;  // reports the drop-in made to the error handlers below, on this thread

// The reference BLAS checks alone: layout, transposes, sizes, leading dimensions.
bool blas_rules_hold(const api_call &c) {
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR) return false;
    if (!valid_op(c.ta) || !valid_op(c.tb) || c.m < 0 || c.n < 0 || c.k < 0) return false;
    bool col = c.layout == GEMM_COL_MAJOR, an = c.ta == GEMM_OP_N, bn = c.tb == GEMM_OP_N;
    auto least_ld = [col](int64_t rows, int64_t cols) { return std::max<int64_t>(1, col ? rows : cols); };
    return c.lda >= least_ld(an ? c.m : c.k, an ? c.k : c.m) && c.ldb >= least_ld(bn ? c.k : c.n, bn ? c.n : c.k) &&
           c.ldc >= least_ld(c.m, c.n);
}

// The drop-in's four types: sgemm_, dgemm_, cgemm_, zgemm_ and their cblas_ forms.
constexpr int types_of_blas[] = {GEMM_F32, GEMM_F64, GEMM_C32, GEMM_C64};

// BLAS's 32-bit arguments from the 64-bit draw: the low bits, so boundaries stay boundaries.
int narrow(int64_t v) { return int(int32_t(uint32_t(uint64_t(v)))); }

void fuzz_drop_in(byte_source &in) {
    const drop_in &d = blas();
    require(d.complete(), "libgemm_blas or its symbols not found");
    // BLAS has no status to return a forced backend's refusal in: auto serves every call.
    if (forced_backend) {
        gemm_set_backend(nullptr);
        forced_backend = false;
    }
    const int type = types_of_blas[in.byte() % 4];
    const bool cblas_entry = in.one_in(2);
    api_call c = draw_call(in);
    c.e = type == GEMM_F64   ? entry::dgemm
          : type == GEMM_C32 ? entry::cgemm
          : type == GEMM_C64 ? entry::zgemm
                             : entry::sgemm;  // describe()
    c.batch = 1, c.sa = c.sb = c.sc = 0;
    c.null_alpha = c.null_beta = false;
    c.at = c.bt = c.ct = c.compute = type;
    if (complex_type(type)) c.alpha_im = in.scalar(), c.beta_im = in.scalar();
    c.m = narrow(c.m), c.n = narrow(c.n), c.k = narrow(c.k);
    c.lda = narrow(c.lda), c.ldb = narrow(c.ldb), c.ldc = narrow(c.ldc);
    static const char letters[] = "NTCntcX?";
    char fa = letters[in.byte() % 8], fb = letters[in.byte() % 8];
    if (!cblas_entry) {  // Fortran: column-major, the transposes as letters
        c.layout = GEMM_COL_MAJOR;
        auto op_of = [](char l) {
            return l == 'N' || l == 'n'   ? GEMM_OP_N
                   : l == 'T' || l == 't' ? GEMM_OP_T
                   : l == 'C' || l == 'c' ? GEMM_OP_C
                                          : 0;
        };
        c.ta = op_of(fa);
        c.tb = op_of(fb);
    }
    buffer a, b, cb;
    make_buffer(a, in, c.at, false);
    make_buffer(b, in, c.bt, false);
    make_buffer(cb, in, c.ct, beta_read(c) == 0.0 && in.one_in(2));
    call_text = std::string(cblas_entry ? "cblas_" : "fortran ") + describe(c, a, b, cb);
    judgement j = judge(c, a, b, cb);
    // BLAS checks sizes, not pointers: a NULL or short buffer is the caller's bug there, and
    // a call past 2^63 bytes cannot be made with real buffers. Neither is made.
    bool blas_valid = blas_rules_hold(c);
    if (blas_valid && (j.kind != verdict::valid || !inside_buffers(j, a, b, cb))) {
        ++counters().skipped;
        return;
    }
    ++counters().blas_calls;
    int m = int(c.m), n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb), ldc = int(c.ldc);
    int reports = handler_calls;
    if (complex_type(type)) {
        const std::complex<float> af(float(c.alpha), float(c.alpha_im)), bf(float(c.beta), float(c.beta_im));
        const std::complex<double> ad(c.alpha, c.alpha_im), bd(c.beta, c.beta_im);
        using zf = std::complex<float>;
        using zd = std::complex<double>;
        const bool z = type == GEMM_C64;
        const void *alpha = z ? static_cast<const void *>(&ad) : &af, *beta = z ? static_cast<const void *>(&bd) : &bf;
        if (cblas_entry)
            (z ? d.cblas_zgemm : d.cblas_cgemm)(c.layout, c.ta, c.tb, m, n, k, alpha, a.ptr(), lda, b.ptr(), ldb, beta,
                                                cb.ptr(), ldc);
        else if (z)
            d.zgemm(&fa, &fb, &m, &n, &k, &ad, static_cast<const zd *>(a.ptr()), &lda, static_cast<const zd *>(b.ptr()),
                    &ldb, &bd, static_cast<zd *>(cb.ptr()), &ldc, 1, 1);
        else
            d.cgemm(&fa, &fb, &m, &n, &k, &af, static_cast<const zf *>(a.ptr()), &lda, static_cast<const zf *>(b.ptr()),
                    &ldb, &bf, static_cast<zf *>(cb.ptr()), &ldc, 1, 1);
    } else if (type == GEMM_F64) {
        double alpha = c.alpha, beta = c.beta;
        if (cblas_entry)
            d.cblas_dgemm(c.layout, c.ta, c.tb, m, n, k, alpha, static_cast<const double *>(a.ptr()), lda,
                          static_cast<const double *>(b.ptr()), ldb, beta, static_cast<double *>(cb.ptr()), ldc);
        else
            d.dgemm(&fa, &fb, &m, &n, &k, &alpha, static_cast<const double *>(a.ptr()), &lda,
                    static_cast<const double *>(b.ptr()), &ldb, &beta, static_cast<double *>(cb.ptr()), &ldc, 1, 1);
    } else {
        float alpha = float(c.alpha), beta = float(c.beta);
        if (cblas_entry)
            d.cblas_sgemm(c.layout, c.ta, c.tb, m, n, k, alpha, static_cast<const float *>(a.ptr()), lda,
                          static_cast<const float *>(b.ptr()), ldb, beta, static_cast<float *>(cb.ptr()), ldc);
        else
            d.sgemm(&fa, &fb, &m, &n, &k, &alpha, static_cast<const float *>(a.ptr()), &lda,
                    static_cast<const float *>(b.ptr()), &ldb, &beta, static_cast<float *>(cb.ptr()), &ldc, 1, 1);
    }
    require(a.unchanged() && b.unchanged(), "A or B changed by the drop-in");
    if (!blas_valid) {
        require(handler_calls == reports + 1, "the drop-in did not report an invalid call once");
        require(cb.unchanged(), "C changed by a call the drop-in refused");
        return;
    }
    require(handler_calls == reports, "the drop-in refused a valid call");
    check_result(c, a, b, cb);
}

// ---- the rest of the API ---------------------------------------------------------------------

// Whether gemm_tune must refuse r before timing anything: an argument rule broken, or operands
// that cannot fit this machine's memory (their tight size, in double: it may exceed 2^64).
bool tune_must_fail(const raw_tune_request &r) {
    bool enums = (r.layout == GEMM_ROW_MAJOR || r.layout == GEMM_COL_MAJOR) && valid_op(r.transa) &&
                 valid_op(r.transb) && valid_type(r.ab_type) && valid_type(r.c_type);
    if (!enums || r.m < 0 || r.n < 0 || r.k < 0 || r.batch_count < 1 || r.ld_padding < -1) return true;
    if (!std::isfinite(r.budget_ms) || std::string(r.backends) == "nosuch") return true;
    bool half = r.ab_type == GEMM_F16 || r.ab_type == GEMM_BF16;
    if (!(r.c_type == r.ab_type || (half && r.c_type == GEMM_F32))) return true;
    double m = double(r.m), n = double(r.n), k = double(r.k);
    double tight = ((m * k + k * n) * double(dtype_bytes(r.ab_type)) + 3 * m * n * double(dtype_bytes(r.c_type))) *
                   double(r.batch_count);
    return tight > 4 * physical_memory_bytes();
}

void fuzz_tune(byte_source &in) {
    raw_tune_request r{};
    r.ab_type = in.enum_value(types, type_count);
    r.c_type = in.one_in(4) ? in.enum_value(types, type_count) : r.ab_type;
    r.layout = in.enum_value(layouts, 2);
    r.transa = in.enum_value(ops, 3);
    r.transb = in.enum_value(ops, 3);
    r.m = in.size_value();
    r.n = in.size_value();
    r.k = in.size_value();
    r.batch_count = in.size_value();
    r.ld_padding = in.one_in(2) ? 0 : in.size_value();
    r.misaligned = in.byte() % 2;
    r.beta_zero = in.byte() % 2;
    r.device = -1;
    r.budget_ms = in.one_in(8) ? HUGE_VAL : 1;
    r.backends = in.one_in(8) ? "nosuch" : "cpu_omp";
    // A request that tunes takes a second or more (test_tuner covers those): only requests
    // that must be refused are made.
    if (!tune_must_fail(r)) {
        ++counters().skipped;
        return;
    }
    ++counters().tune_calls;
    call_text = "gemm_tune ab_type=" + std::to_string(r.ab_type) + " c_type=" + std::to_string(r.c_type) +
                " layout=" + std::to_string(r.layout) + " ops=" + std::to_string(r.transa) + "," +
                std::to_string(r.transb) + " m=" + std::to_string(r.m) + " n=" + std::to_string(r.n) +
                " k=" + std::to_string(r.k) + " batch=" + std::to_string(r.batch_count) +
                " ld_padding=" + std::to_string(r.ld_padding) + " budget_ms=" + std::to_string(r.budget_ms) +
                " backends=" + r.backends;
    gemm_tune_report_t report;
    std::memset(&report, 0, sizeof report);
    gemm_status_t s = raw_tune(in.one_in(64) ? nullptr : &r, 1, in.one_in(64) ? nullptr : &report);
    require(s != GEMM_STATUS_SUCCESS, "gemm_tune accepted a request it must refuse");
    require(*gemm_last_error() != '\0', "a refused request left no message");
    require(report.stored == 0, "a refused request stored");
}

// ---- gemm_measure, gemm_tune_key and gemm_tune_verify --------------------------------------

// These time for a fraction of a second at least (a host warm-up alone lasts 150 ms), so one
// draw in 64 makes a call that times (on problems of 1 to 4 in each dimension); the others are
// refused before anything is timed, or time nothing.
bool draw_timed(byte_source &in) { return in.byte() % 64 == 0; }

thread_local std::vector<std::string> stored_keys;  // keys this thread stored with gemm_tune_key

// A valid key of a tiny host class: align=16 only with ld=padded, whose leading dimensions
// are padded to 16 bytes (a tight key's depend on its sizes; misaligned_key draws those).
std::string tiny_key(byte_source &in, int64_t least_m = 1) {
    static const char *type_words[] = {"f32 f32", "f64 f64", "f16 f32", "bf16 bf16", "c32 c32"};
    static const char *op_words[] = {"NN", "NT", "TN", "TT"};
    const bool padded = in.one_in(2);
    const bool aligned = padded && in.one_in(2);
    return std::string(type_words[in.byte() % 5]) + " " + op_words[in.byte() % 4] + " " +
           std::to_string(least_m + in.byte() % 4) + " " + std::to_string(1 + in.byte() % 4) + " " +
           std::to_string(1 + in.byte() % 4) + " batch=1 ld=" + (padded ? "padded" : "tight") +
           (aligned ? " align=16" : " align=elem") + " space=host beta=" + (in.one_in(2) ? "0" : "any");
}

// A key no call has: align=16 with ld=tight where A's tight leading dimension (m f32 values,
// m of 1 to 3) is not a multiple of 16 bytes. gemm_tune_key and gemm_tune_verify refuse it.
std::string misaligned_key(byte_source &in) {
    return "f32 f32 NN " + std::to_string(1 + in.byte() % 3) + " " + std::to_string(1 + in.byte() % 4) + " " +
           std::to_string(1 + in.byte() % 4) + " batch=1 ld=tight align=16 space=host beta=0";
}

// A flag argument other than 0 or 1, which every flag parameter refuses.
int bad_flag(byte_source &in) {
    static const int flags[] = {-3, -1, 2, 7, 9, 255};
    return flags[in.byte() % 6];
}

// A key that breaks the grammar gemm_tune_cache_entries writes: one word replaced, a word
// added, words missing.
std::string broken_key(byte_source &in) {
    std::vector<std::string> words;
    std::istringstream text(tiny_key(in));
    for (std::string w; text >> w;) words.push_back(w);
    static const char *bad[] = {"f33",     "f99",     "NX",      "x",          "x",     "x",
                                "batch=x", "ld=wide", "align=7", "space=moon", "beta=2"};
    const unsigned choice = in.byte() % 14;
    if (choice < 11) words[choice] = bad[choice];
    if (choice == 11) words.push_back("junk");
    if (choice == 12) words.resize(in.byte() % 5);
    if (choice == 13) words.back() += "x";
    std::string out;
    for (const std::string &w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// The stored entry of key, if any (the listing's key text is the key's canonical form, which
// these keys are).
const gemm_tune_entry_t *entry_of(const std::string &key) {
    const gemm_tune_entry_t *entries = nullptr;
    int64_t count = 0;
    require(gemm_tune_cache_entries(&entries, &count) == GEMM_STATUS_SUCCESS, "gemm_tune_cache_entries failed");
    for (int64_t i = 0; i < count; ++i)
        if (key == entries[i].key) return &entries[i];
    return nullptr;
}

void fuzz_tune_key(byte_source &in) {
    const bool timed = draw_timed(in);
    const unsigned fault = timed ? 0 : 1 + in.byte() % 7;
    std::string key = fault == 1 ? broken_key(in) : fault == 7 ? misaligned_key(in) : tiny_key(in);
    if (fault == 2) key.replace(key.find("space=host"), 10, "space=device");  // with device -1
    const double budget = fault == 3 ? std::nan("") : 1.0;
    const char *backends = fault == 4 ? "nosuch" : "cpu_ref";
    const int store = fault == 6 ? bad_flag(in) : in.byte() % 2;
    gemm_tune_report_t report;
    std::memset(&report, 0, sizeof report);
    call_text = "gemm_tune_key '" + key + "' budget=" + std::to_string(budget) + " backends=" + backends +
                " store=" + std::to_string(store) + (fault == 5 ? " report=NULL" : "");
    ++counters().measure_calls;
    gemm_status_t s = gemm_tune_key(key.c_str(), -1, budget, backends, store, fault == 5 ? nullptr : &report);
    if (fault) {
        require(s != GEMM_STATUS_SUCCESS, "gemm_tune_key accepted what it must refuse");
        require(*gemm_last_error() != '\0', "a refused call left no message");
        require(report.stored == 0, "a refused gemm_tune_key stored");
        return;
    }
    require(s == GEMM_STATUS_SUCCESS, "gemm_tune_key failed on a valid key");
    require(report.backend && *report.backend, "gemm_tune_key reported no winner");
    // A winner whose timings stayed disturbed (a busy machine) is reported and never stored.
    require(report.stored == (store && !report.disturbed),
            "gemm_tune_key's report.stored differs from its store argument and report.disturbed");
    ++counters().timed_calls;
    if (!report.stored) return;
    const gemm_tune_entry_t *e = entry_of(key);
    require(e != nullptr, "a key gemm_tune_key stored is not among gemm_tune_cache_entries");
    stored_keys.push_back(key);
}

void fuzz_tune_verify(byte_source &in) {
    const bool timed = draw_timed(in) && !stored_keys.empty();
    // Keys with m of 1000 or more are never stored: they have no entry.
    const unsigned fault = timed ? 0 : 1 + in.byte() % 5;
    std::string key = timed        ? stored_keys[in.byte() % stored_keys.size()]
                      : fault == 1 ? broken_key(in)
                      : fault == 5 ? misaligned_key(in)
                                   : tiny_key(in, 1000);
    const double budget = fault == 3 ? std::nan("") : 1.0;
    // Entries are removed only with one thread: another's check of its own store would fail.
    const int remove = fault == 4 ? bad_flag(in) : several_threads() ? 0 : in.byte() % 2;
    gemm_tune_verdict_t verdict;
    std::memset(&verdict, 0, sizeof verdict);
    call_text = "gemm_tune_verify '" + key + "' budget=" + std::to_string(budget) + " remove=" + std::to_string(remove);
    ++counters().measure_calls;
    gemm_status_t s = gemm_tune_verify(key.c_str(), -1, budget, remove, &verdict);
    if (fault) {
        require(s != GEMM_STATUS_SUCCESS, "gemm_tune_verify accepted what it must refuse");
        require(*gemm_last_error() != '\0', "a refused call left no message");
        require(verdict.removed == 0, "a refused gemm_tune_verify removed an entry");
        return;
    }
    // An entry this thread stored may have been removed by an earlier verify of it.
    const bool had_entry = s == GEMM_STATUS_SUCCESS;
    if (!had_entry) {
        require(s == GEMM_STATUS_INVALID_VALUE && entry_of(key) == nullptr, "gemm_tune_verify failed on a stored key");
        return;
    }
    ++counters().timed_calls;
    require(verdict.removed == (remove == 1 && verdict.holds == 0), "gemm_tune_verify removed other than it says");
    require((entry_of(key) == nullptr) == (verdict.removed == 1), "the entry's presence disagrees with removed");
}

void fuzz_measure(byte_source &in) {
    const bool timed = draw_timed(in);
    const unsigned fault = timed ? 0 : in.byte() % 19;  // 0: valid, timing nothing or no backend that runs
    const bool f64 = in.one_in(2);
    raw_desc d{GEMM_COL_MAJOR,
               GEMM_OP_N,
               GEMM_OP_N,
               1 + in.byte() % 4,
               1 + in.byte() % 4,
               1 + in.byte() % 4,
               f64 ? GEMM_F64 : GEMM_F32,
               f64 ? GEMM_F64 : GEMM_F32,
               f64 ? GEMM_F64 : GEMM_F32,
               f64 ? GEMM_F64 : GEMM_F32,
               0,
               0,
               0,
               1,
               GEMM_DESC_TIGHT,
               GEMM_DESC_TIGHT,
               GEMM_DESC_TIGHT,
               -1,
               16,
               0,
               GEMM_ACTIVATION_NONE,
               GEMM_BIAS_NONE,
               0,
               0};
    gemm_measure_options_t o;
    gemm_measure_options_init(&o);
    o.budget_ms = 1;
    o.min_samples = 1;
    o.max_samples = 2;
    o.rounds = 1;
    o.warmup_samples = 0;
    const char *names[] = {"cpu_ref", "cpu_omp", "nosuch"};
    const char *with_null[] = {"cpu_ref", nullptr};
    const char *const *backends = names;
    int64_t count = timed ? 1 + in.byte() % 2 : fault == 0 ? (in.one_in(2) ? 0 : 1) : 2;
    if (fault == 0 && count == 1) backends = names + 2;  // only "nosuch": nothing runs
    gemm_measurement_t reports[3];
    gemm_measurement_t *out = reports;
    const raw_desc *desc = &d;
    switch (fault) {
    case 1: d.m = -1; break;
    case 2: d.a_type = 99; break;
    case 3: o.budget_ms = in.one_in(2) ? 0 : std::nan(""); break;
    case 4: o.min_samples = 0; break;
    case 5: o.max_samples = 0; break;
    case 6: o.rounds = 0; break;
    case 7: o.warmup_samples = -1; break;
    case 8: o.alpha = std::nan(""); break;
    case 9: o.check = 2; break;
    case 10: o.pinned = 3; break;
    case 11: o.struct_size = 8; break;
    case 12: count = -1; break;
    case 13: backends = nullptr; break;
    case 14: out = nullptr; break;
    case 15: desc = nullptr; break;
    case 16: d.beta_zero = 1, o.beta = 0.5; break;
    case 17: d.batch_count = 2, d.stride_c = 0; break;
    case 18: backends = with_null; break;  // count 2: a NULL name is refused
    default: break;
    }
    call_text = "gemm_measure fault=" + std::to_string(fault) + " timed=" + std::to_string(timed) +
                " m,n,k=" + std::to_string(d.m) + "," + std::to_string(d.n) + "," + std::to_string(d.k) +
                " count=" + std::to_string(count);
    std::memset(reports, 0, sizeof reports);
    ++counters().measure_calls;
    gemm_status_t s = raw_measure(desc, backends, count, &o, out);
    if (fault) {
        require(s != GEMM_STATUS_SUCCESS, "gemm_measure accepted what it must refuse");
        require(*gemm_last_error() != '\0', "a refused call left no message");
        return;
    }
    require(s == GEMM_STATUS_SUCCESS, "gemm_measure failed on valid arguments");
    if (timed) ++counters().timed_calls;
    for (int64_t i = 0; i < count; ++i) {
        const gemm_measurement_t &r = reports[i];
        require(r.backend && std::string(r.backend) == backends[i], "a report names another backend");
        if (backends[i] == names[2]) {
            require(r.status != GEMM_STATUS_SUCCESS && r.error && *r.error && !r.timed,
                    "an unknown backend was measured");
            continue;
        }
        require(r.status == GEMM_STATUS_SUCCESS && r.checked == 1 && r.correct == 1 && r.timed == 1 &&
                    r.median_us > 0 && r.samples >= 1,
                "a host backend's measurement failed, was wrong or untimed");
    }
}

// Not with several threads: the selection is the process's, and the others' oracles would
// not know it.
void fuzz_backend_choice(byte_source &in) {
    if (several_threads()) return;
    static const char *names[] = {nullptr,    "auto",   "cpu_ref",        "cpu_omp",
                                  "cblas",    "nosuch", "cpu_omp:nosuch", "",
                                  "cpu_ref:", ":",      "cuda_tiled",     "cpu_omp:avx512f_f32_32x12"};
    const char *name = names[in.byte() % (sizeof names / sizeof names[0])];
    gemm_status_t s = gemm_set_backend(name);
    forced_backend = std::string(gemm_get_backend()) != "auto";
    (void)s;
}

void fuzz_queries(byte_source &in) {
    int64_t index = in.size_value();
    gemm_backend_info_t info;
    gemm_status_t s = gemm_backend_get_info(index, in.one_in(8) ? nullptr : &info);
    require(s == GEMM_STATUS_SUCCESS || *gemm_last_error(), "gemm_backend_get_info failed without a message");
    const char *text = raw_status_string(int(int32_t(uint32_t(in.u64()))));
    require(text && *text, "gemm_status_string gave no text");
}

}  // namespace

void fuzz_one(const uint8_t *data, std::size_t size) {
    byte_source in(data, size);
    while (!in.empty()) {
        uint8_t what = in.byte();
        if (what < 115) fuzz_api_call(in);
        else if (what < 130) fuzz_pointer_call(in);
        else if (what < 150) fuzz_epilogue_call(in);
        else if (what < 215) fuzz_drop_in(in);
        else if (what < 235) fuzz_tune(in);
        else if (what < 245) fuzz_backend_choice(in);
        else if (what < 253) fuzz_queries(in);
        else if (what == 253) fuzz_measure(in);
        else if (what == 254) fuzz_tune_key(in);
        else fuzz_tune_verify(in);
    }
}

// Of 10^5 calls a run makes about 55 % through the API (most of those again through a plan),
// 8 % pointer-array and grouped calls, 8 % through gemm_ex_epilogue and 22 % through the
// drop-in, about 1 % measure, tune-key and verify calls, and computes and checks about a
// quarter; the floors are a tenth of that or less (none for runs too short to count).
std::string shortfall(const fuzz_counters &c, uint64_t made) {
    std::string text;
    auto floor = [&](uint64_t got, uint64_t one_in, const char *what) {
        if (got < made / one_in)
            text += (text.empty() ? "" : "; ") + std::to_string(got) + " " + what + ", under 1 in " +
                    std::to_string(one_in) + " of " + std::to_string(made) + " calls";
    };
    floor(c.api_calls, 16, "API calls");
    floor(c.plan_calls, 16, "calls through a plan");
    floor(c.blas_calls, 50, "drop-in calls");
    floor(c.computed, 64, "calls computed and checked");
    floor(c.epilogue_calls, 160, "epilogue calls");
    floor(c.epilogue_computed, 1600, "epilogue calls computed and checked");
    floor(c.epilogue_plan_calls, 1600, "epilogue calls through a plan");
    floor(c.pointer_calls, 200, "pointer-array and grouped calls");
    floor(c.pointer_computed, 2000, "pointer-array and grouped calls computed and checked");
    floor(c.measure_calls, 2000, "measure, tune-key and verify calls");
    if (made >= 100000 && c.timed_calls == 0) text += std::string(text.empty() ? "" : "; ") + "no call that timed";
    return text;
}

}  // namespace gemm_fuzz

// The program's own BLAS error handlers, as test suites define them: the drop-in reports to
// these instead of printing, and this program counts the reports.
extern "C" void xerbla_(const char *, const int *, std::size_t) { ++gemm_fuzz::handler_calls; }
extern "C" void cblas_xerbla(int, const char *, const char *, ...) { ++gemm_fuzz::handler_calls; }
