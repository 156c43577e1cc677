// harness.hpp: the cross-backend test harness: a GEMM case and its name, random operands with
// poisoned padding, a double-precision reference, the measurement engine's tolerance rule, and
// the comparison that also checks C outside its m x n windows. Doctest-free and independent
// of gemm.hpp, so any suite (host now, device later: copy the operands over, call, copy C
// back) can use it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dispatch/measure/tolerance.hpp"
#include "gemm/gemm.h"

namespace gemm_test {

using bytes = std::vector<unsigned char>;

// ---- element types ------------------------------------------------------------------------

// A complex element is two parts of its part_type, real then imaginary; buffers of complex
// type are read and written part by part: part p of element e is real element e * 2 + p.
inline bool is_complex(gemm_dtype_t t) { return t == GEMM_C32 || t == GEMM_C64; }
inline gemm_dtype_t part_type(gemm_dtype_t t) { return t == GEMM_C32 ? GEMM_F32 : t == GEMM_C64 ? GEMM_F64 : t; }
inline int64_t parts(gemm_dtype_t t) { return is_complex(t) ? 2 : 1; }

inline bool is_fp8(gemm_dtype_t t) { return t == GEMM_F8_E4M3 || t == GEMM_F8_E5M2; }

inline std::size_t dtype_size(gemm_dtype_t t) {
    gemm_dtype_t r = part_type(t);
    return std::size_t(parts(t)) * (r == GEMM_F64 ? 8 : r == GEMM_F32 ? 4 : is_fp8(r) ? 1 : 2);
}

inline const char *layout_name(gemm_layout_t l) { return l == GEMM_ROW_MAJOR ? "row" : "col"; }

inline char op_letter(gemm_op_t o) { return o == GEMM_OP_N ? 'N' : o == GEMM_OP_T ? 'T' : 'C'; }

// The tolerance is the measurement engine's rule, one function for both (a result the tuner
// accepts is one the tests accept).
using gemm::smallest_subnormal;
using gemm::unit_roundoff;

// 16-bit conversions written here rather than taken from gemm.hpp, so the oracle side of a
// comparison never shares code with the library under test.

// Exact value of an IEEE binary16 pattern, decoded from its fields.
inline double half_to_double(uint16_t h) {
    double sign = h & 0x8000 ? -1.0 : 1.0;
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) return mant ? std::nan("") : sign * HUGE_VAL;
    if (exp == 0) return sign * std::ldexp(double(mant), -24);
    return sign * std::ldexp(double(1024 + mant), exp - 25);
}

// v rounded to binary16, to nearest with ties to even (nearbyint in the default rounding mode).
inline uint16_t half_from_double(double v) {
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    double a = std::fabs(v);
    if (std::isnan(v)) return uint16_t(sign | 0x7e00);
    if (a >= 65520.0) return uint16_t(sign | 0x7c00);  // the midpoint to 2^16 and above: inf
    if (a < 0x1p-14) return uint16_t(sign | uint16_t(std::nearbyint(a * 0x1p24)));  // subnormal (or 0x400)
    int e;
    double f = std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
    double q = std::nearbyint((2.0 * f - 1.0) * 1024.0);
    if (q == 1024.0) {  // rounded up to the next power of two
        q = 0.0;
        ++e;
    }
    return uint16_t(sign | uint16_t((e - 1 + 15) << 10) | uint16_t(q));
}

inline double bf16_to_double(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

// v rounded to float, then to bfloat16 with ties to even (v is exact in float wherever used).
inline uint16_t bf16_from_double(double v) {
    float f = float(v);
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    if (std::isnan(f)) return uint16_t((x >> 16) | 0x40u);
    uint32_t rest = x & 0xffffu, kept = x >> 16;
    if (rest > 0x8000u || (rest == 0x8000u && (kept & 1u))) ++kept;  // may carry into inf: correct
    return uint16_t(kept);
}

// FP8 (OCP): e4m3 has 3 mantissa bits, bias 7, no infinities and one NaN (S.1111.111, so its
// largest value is 448); e5m2 has 2, bias 15, IEEE's infinities and NaNs (largest 57344).
// Decoded from the fields, independently of the library's table.
inline double fp8_to_double(uint8_t x, gemm_dtype_t t) {
    const bool e4 = t == GEMM_F8_E4M3;
    const int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15, emax = e4 ? 15 : 31;
    const int exp = (x >> mbits) & emax, mant = x & ((1 << mbits) - 1);
    const double sign = x & 0x80 ? -1.0 : 1.0;
    if (e4 && exp == emax && mant == 7) return std::nan("");
    if (!e4 && exp == emax) return mant ? std::nan("") : sign * HUGE_VAL;
    if (exp == 0) return sign * std::ldexp(double(mant), 1 - bias - mbits);
    return sign * std::ldexp(double((1 << mbits) + mant), exp - bias - mbits);
}

// v rounded to the nearest FP8 value, ties to even, by search over the 256 patterns (slow and
// obviously right); beyond the largest finite value it saturates (the tests place every value
// they mean); NaN stays NaN.
inline uint8_t fp8_from_double(double v, gemm_dtype_t t) {
    if (std::isnan(v)) return 0x7f;
    uint8_t best = 0;
    double best_diff = HUGE_VAL;
    for (int x = 0; x < 256; ++x) {
        const double y = fp8_to_double(uint8_t(x), t);
        if (std::isnan(y) || std::isinf(y) || (y == 0.0 && std::signbit(y) != std::signbit(v))) continue;
        const double d = std::fabs(y - v);
        if (d < best_diff || (d == best_diff && (x & 1) == 0)) {
            best = uint8_t(x);
            best_diff = d;
        }
    }
    return best;
}

// Element i of a buffer of real type t, as a double (exact for every type). Complex buffers
// are read part by part: load(base, e * 2 + p, part_type(t)).
inline double load(const void *base, int64_t i, gemm_dtype_t t) {
    const unsigned char *p = static_cast<const unsigned char *>(base) + std::size_t(i) * dtype_size(t);
    switch (t) {
    case GEMM_F32: {
        float v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    case GEMM_F64: {
        double v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    case GEMM_F16:
    case GEMM_BF16: {
        uint16_t h;
        std::memcpy(&h, p, sizeof h);
        return t == GEMM_F16 ? half_to_double(h) : bf16_to_double(h);
    }
    case GEMM_F8_E4M3:
    case GEMM_F8_E5M2: return fp8_to_double(*p, t);
    case GEMM_C32:
    case GEMM_C64: break;
    }
    return std::nan("");
}

// Stores v rounded to real type t.
inline void store(void *base, int64_t i, gemm_dtype_t t, double v) {
    unsigned char *p = static_cast<unsigned char *>(base) + std::size_t(i) * dtype_size(t);
    switch (t) {
    case GEMM_F32: {
        float f = float(v);
        std::memcpy(p, &f, sizeof f);
        return;
    }
    case GEMM_F64: std::memcpy(p, &v, sizeof v); return;
    case GEMM_F16:
    case GEMM_BF16: {
        uint16_t h = t == GEMM_F16 ? half_from_double(v) : bf16_from_double(v);
        std::memcpy(p, &h, sizeof h);
        return;
    }
    case GEMM_F8_E4M3:
    case GEMM_F8_E5M2: *p = fp8_from_double(v, t); return;
    case GEMM_C32:
    case GEMM_C64: return;
    }
}

// Part p of element e of a buffer of type t (p = 0 for real types).
inline double load_part(const void *base, int64_t e, int64_t p, gemm_dtype_t t) {
    return load(base, e * parts(t) + p, part_type(t));
}
inline void store_part(void *base, int64_t e, int64_t p, gemm_dtype_t t, double v) {
    store(base, e * parts(t) + p, part_type(t), v);
}

// A NaN with a recognizable payload, written into every element a backend must neither use
// nor write: padding of A, B and C, gaps between batch matrices, guard elements after C.
inline void store_poison(void *base, int64_t i, gemm_dtype_t t) {
    if (is_complex(t)) {
        store_poison(base, 2 * i, part_type(t));
        store_poison(base, 2 * i + 1, part_type(t));
        return;
    }
    unsigned char *p = static_cast<unsigned char *>(base) + std::size_t(i) * dtype_size(t);
    switch (t) {
    case GEMM_F32: {
        uint32_t v = 0x7fc0beefu;
        std::memcpy(p, &v, sizeof v);
        return;
    }
    case GEMM_F64: {
        uint64_t v = 0x7ff80000deadbeefull;
        std::memcpy(p, &v, sizeof v);
        return;
    }
    case GEMM_F16:
    case GEMM_BF16: {
        uint16_t v = t == GEMM_F16 ? 0x7e3bu : 0x7fbeu;
        std::memcpy(p, &v, sizeof v);
        return;
    }
    case GEMM_F8_E4M3:
    case GEMM_F8_E5M2: *p = 0x7f; return;  // NaN in both (e4m3 has no other)
    case GEMM_C32:
    case GEMM_C64: return;
    }
}

// ---- random numbers -----------------------------------------------------------------------

// splitmix64: the same stream on every platform and standard library (std::uniform_real_
// distribution is not), so a seed reproduces a case anywhere.
class random_source {
public:
    explicit random_source(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [-1, 1].
    double uniform() { return double(next() >> 11) * 0x1p-52 - 1.0; }

private:
    uint64_t state_;
};

// FNV-1a: seeds derived from a case's description, so a filtered rerun sees the same data.
inline uint64_t hash_text(const std::string &s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return h;
}

// ---- matrices as stored ----------------------------------------------------------------------

// A rows x cols matrix stored with leading dimension ld in a layout.
struct stored_matrix {
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t ld = 0;
    gemm_layout_t layout = GEMM_COL_MAJOR;

    bool col() const { return layout == GEMM_COL_MAJOR; }
    int64_t index(int64_t r, int64_t c) const { return col() ? r + c * ld : r * ld + c; }
    // BLAS: ld >= max(1, length of a stored column (col-major) or row (row-major)).
    int64_t min_ld() const { return std::max<int64_t>(1, col() ? rows : cols); }
    // Elements from the first to one past the last element of the matrix.
    int64_t footprint() const {
        if (rows == 0 || cols == 0) return 0;
        return ((col() ? cols : rows) - 1) * ld + (col() ? rows : cols);
    }
};

// Elements a buffer of batch matrices spans (stride 0: all share one matrix).
inline int64_t batch_span(const stored_matrix &s, int64_t stride, int64_t batch) {
    if (batch <= 0 || s.footprint() == 0) return 0;
    return (batch - 1) * stride + s.footprint();
}

// ---- a case -------------------------------------------------------------------------------

// Which entry points a case calls: gemm_sgemm/gemm_dgemm (typed), gemm_ex, or a plan made
// for the case (gemm_plan_create, gemm_plan_run, gemm_plan_destroy).
enum class entry { typed, ex, plan };

// One call: everything that determines its result, and so everything a failure must print.
struct gemm_case {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t transa = GEMM_OP_N;
    gemm_op_t transb = GEMM_OP_N;
    int64_t m = 0, n = 0, k = 0;
    int64_t lda = 1, ldb = 1, ldc = 1;
    double alpha = 1.0;
    double beta = 0.0;
    double alpha_imag = 0.0;  // complex types only
    double beta_imag = 0.0;
    int64_t batch = 1;
    int64_t stride_a = 0, stride_b = 0, stride_c = 0;
    bool strided_entry = false;  // call the *_strided_batched entry point
    gemm_dtype_t ab_type = GEMM_F32;
    gemm_dtype_t c_type = GEMM_F32;
    entry api = entry::typed;
    bool tf32 = false;            // f32 products may be formed from inputs cut to TF32 (GEMM_ALLOW_TF32=1)
    bool check_pointers = false;  // entry::plan: desc->check_pointers

    // The only compute type the library accepts for ab_type (f16/bf16 accumulate in f32).
    gemm_dtype_t compute_type() const { return ab_type == GEMM_F64 || is_complex(ab_type) ? ab_type : GEMM_F32; }
    // FP8: scales as gemm_ex_scaled takes them (entry::ex), or a plan run with them
    // (entry::plan); scaling_mode GEMM_SCALE_NONE with no output scale and no amax is gemm_ex.
    gemm_scale_mode_t scaling_mode = GEMM_SCALE_NONE;
    bool d_scale = false;                    // an output scale (the operands' d_scale)
    bool amax = false;                       // amax_d asked for
    int64_t ld_a_scale = 0, ld_b_scale = 0;  // GEMM_SCALE_BLOCK: 0 is the least
    bool scaled() const { return scaling_mode != GEMM_SCALE_NONE || d_scale || amax; }
    bool alpha_zero() const { return alpha == 0.0 && alpha_imag == 0.0; }
    bool beta_zero() const { return beta == 0.0 && beta_imag == 0.0; }

    stored_matrix a() const {
        bool n_ = transa == GEMM_OP_N;
        return {n_ ? m : k, n_ ? k : m, lda, layout};
    }
    stored_matrix b() const {
        bool n_ = transb == GEMM_OP_N;
        return {n_ ? k : n, n_ ? n : k, ldb, layout};
    }
    stored_matrix c() const { return {m, n, ldc, layout}; }

    // Element (i, l) of op(A) and (l, j) of op(B) as indices into the batch's matrix.
    int64_t op_a_index(int64_t i, int64_t l) const { return transa == GEMM_OP_N ? a().index(i, l) : a().index(l, i); }
    int64_t op_b_index(int64_t l, int64_t j) const { return transb == GEMM_OP_N ? b().index(l, j) : b().index(j, l); }

    // Everything needed to reproduce the call, as "key=value" words (filterable text).
    std::string describe() const {
        std::ostringstream s;
        s << "dtype=" << gemm_dtype_name(ab_type);
        if (c_type != ab_type) s << "->" << gemm_dtype_name(c_type);
        s << " api="
          << (api == entry::typed ? "typed"
              : api == entry::ex  ? "ex"
                                  : "plan")
          << (strided_entry ? "_strided" : "") << " layout=" << layout_name(layout) << " ops=" << op_letter(transa)
          << op_letter(transb) << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda << " ldb=" << ldb
          << " ldc=" << ldc << " alpha=" << alpha;
        if (is_complex(ab_type)) s << (alpha_imag < 0 ? "" : "+") << alpha_imag << "i";
        s << " beta=" << beta;
        if (is_complex(ab_type)) s << (beta_imag < 0 ? "" : "+") << beta_imag << "i";
        s << " batch=" << batch;
        if (scaling_mode != GEMM_SCALE_NONE) s << " scale=" << (scaling_mode == GEMM_SCALE_TENSOR ? "tensor" : "block");
        if (scaling_mode == GEMM_SCALE_BLOCK) s << " ld_a_scale=" << ld_a_scale << " ld_b_scale=" << ld_b_scale;
        if (d_scale) s << " d_scale";
        if (amax) s << " amax";
        if (strided_entry) s << " stride_a=" << stride_a << " stride_b=" << stride_b << " stride_c=" << stride_c;
        return s.str();
    }
};

// Sets lda, ldb and ldc to the least BLAS allows plus pad.
inline void set_leading_dims(gemm_case &c, int64_t pad) {
    c.lda = 1;
    c.ldb = 1;
    c.ldc = 1;
    c.lda = c.a().min_ld() + pad;
    c.ldb = c.b().min_ld() + pad;
    c.ldc = c.c().min_ld() + pad;
}

// alpha and beta, and for a complex case imaginary parts wherever the real part is not 0 (a
// backend that drops or swaps them, or conjugates the wrong operand, shows).
inline void set_scalars(gemm_case &c, double alpha, double beta, double alpha_imag = 0.75, double beta_imag = -0.5) {
    c.alpha = alpha;
    c.beta = beta;
    c.alpha_imag = is_complex(c.ab_type) && alpha != 0.0 ? alpha_imag : 0.0;
    c.beta_imag = is_complex(c.ab_type) && beta != 0.0 ? beta_imag : 0.0;
}

// One case of the given types and entry point, with the least leading dimensions plus pad.
inline gemm_case make_case(gemm_dtype_t ab, gemm_dtype_t ct, entry api, gemm_layout_t layout, gemm_op_t ta,
                           gemm_op_t tb, int64_t m, int64_t n, int64_t k, int64_t pad, double alpha, double beta) {
    gemm_case c;
    c.ab_type = ab;
    c.c_type = ct;
    c.api = api;
    c.layout = layout;
    c.transa = ta;
    c.transb = tb;
    c.m = m;
    c.n = n;
    c.k = k;
    set_scalars(c, alpha, beta);
    set_leading_dims(c, pad);
    return c;
}

// Strided batch: each stride is the matrix's footprint plus a gap, or 0 for A or B when
// shared (stride 0 reuses one matrix). Call after set_leading_dims.
inline void set_batch(gemm_case &c, int64_t batch, bool share_a, bool share_b, int64_t gap) {
    c.strided_entry = true;
    c.batch = batch;
    c.stride_a = share_a ? 0 : c.a().footprint() + gap;
    c.stride_b = share_b ? 0 : c.b().footprint() + gap;
    c.stride_c = c.c().footprint() + gap;
}

// ---- operands -----------------------------------------------------------------------------

// Host copies of A, B and the initial C. Everything outside the matrices is poison (NaN);
// C's windows hold NaN when beta = 0 (it must not be read) and random values otherwise.
struct operands {
    bytes a, b, c0;
    static constexpr int64_t c_guard = 8;  // poisoned elements after the last C
    // FP8 cases: the scales (host copies; block arrays with their padding NaN), the output
    // scale, and the largest |scaled op(A)(i, l)| * |scaled op(B)(l, j)| the tolerance needs.
    std::vector<float> a_scale, b_scale;
    float d_scale = 1.0f;
    double product_size = 1.0;

    const void *a_ptr() const { return a.empty() ? nullptr : a.data(); }
    const void *b_ptr() const { return b.empty() ? nullptr : b.data(); }
};

namespace detail {
// A random finite FP8 value of any magnitude: a random bit pattern, redrawn while NaN or Inf,
// so every binade and the subnormals turn up.
inline double random_fp8(gemm_dtype_t t, random_source &rng) {
    for (;;) {
        const double v = fp8_to_double(uint8_t(rng.next() >> 56), t);
        if (std::isfinite(v)) return v;
    }
}

inline void fill_matrices(bytes &buf, const stored_matrix &s, int64_t stride, int64_t batch, gemm_dtype_t t,
                          random_source &rng, bool full_range = false) {
    int64_t span = batch_span(s, stride, batch);
    buf.assign(std::size_t(span) * dtype_size(t), 0);
    for (int64_t e = 0; e < span; ++e) store_poison(buf.data(), e, t);
    bool nonzero = false;
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t r = 0; r < s.rows; ++r)
            for (int64_t c = 0; c < s.cols; ++c) {
                int64_t e = b * stride + s.index(r, c);
                for (int64_t p = 0; p < parts(t); ++p) {
                    store_part(buf.data(), e, p, t, full_range ? random_fp8(t, rng) : rng.uniform());
                    nonzero = nonzero || load_part(buf.data(), e, p, t) != 0.0;
                }
            }
    // Never all zero: a zero operand would hide a backend that ignores it.
    if (!nonzero && span > 0) store_part(buf.data(), s.index(0, 0), 0, t, 0.5);
    // Full range: the largest value and the smallest subnormal, where there is room.
    if (full_range && s.rows * s.cols >= 2) {
        store(buf.data(), s.index(0, 0), t, t == GEMM_F8_E4M3 ? -448.0 : 57344.0);
        store(buf.data(), s.index(s.rows - 1, s.cols - 1), t, t == GEMM_F8_E4M3 ? 0x1p-9 : -0x1p-16);
    }
}

// Blocks of 128 along k (and along n for B's block scales, stored the block of k fastest).
inline int64_t scale_blocks(int64_t extent) { return (extent + 127) / 128; }

// A positive scale that is not a power of two, between 1/16 and 16: scales that change
// every value's bits, so a backend that drops one shows.
inline float random_scale(random_source &rng) {
    return std::ldexp(float(1.0 + 0.5 * std::fabs(rng.uniform())), int(rng.next() % 9) - 4);
}

// The scales a scaled FP8 case takes (gemm_scaling_t's layouts): block arrays with their
// padding NaN, so a backend that reads past a block's row shows.
inline void fill_scales(const gemm_case &c, operands &o, random_source &rng) {
    if (c.scaling_mode == GEMM_SCALE_TENSOR) {
        o.a_scale = {random_scale(rng)};
        o.b_scale = {random_scale(rng)};
    } else if (c.scaling_mode == GEMM_SCALE_BLOCK) {
        const int64_t kb = std::max<int64_t>(1, scale_blocks(c.k)), nb = scale_blocks(c.n);
        const int64_t lda = c.ld_a_scale ? c.ld_a_scale : std::max<int64_t>(1, c.m);
        const int64_t ldb = c.ld_b_scale ? c.ld_b_scale : kb;
        o.a_scale.assign(std::size_t(lda * kb), std::nanf(""));
        o.b_scale.assign(std::size_t(ldb * std::max<int64_t>(1, nb)), std::nanf(""));
        for (int64_t b = 0; b < kb; ++b) {
            for (int64_t i = 0; i < c.m; ++i) o.a_scale[std::size_t(i + b * lda)] = random_scale(rng);
            for (int64_t j = 0; j < nb; ++j) o.b_scale[std::size_t(b + j * ldb)] = random_scale(rng);
        }
    }
    if (c.d_scale) o.d_scale = random_scale(rng);
}
}  // namespace detail

// The scale of op(A)(i, l) and op(B)(l, j) in a case's operands (1 without scaling).
inline double a_scale_at(const gemm_case &c, const operands &o, int64_t i, int64_t l) {
    if (c.scaling_mode == GEMM_SCALE_TENSOR) return o.a_scale[0];
    if (c.scaling_mode != GEMM_SCALE_BLOCK) return 1.0;
    const int64_t ld = c.ld_a_scale ? c.ld_a_scale : std::max<int64_t>(1, c.m);
    return o.a_scale[std::size_t(i + (l / 128) * ld)];
}
inline double b_scale_at(const gemm_case &c, const operands &o, int64_t l, int64_t j) {
    if (c.scaling_mode == GEMM_SCALE_TENSOR) return o.b_scale[0];
    if (c.scaling_mode != GEMM_SCALE_BLOCK) return 1.0;
    const int64_t ld = c.ld_b_scale ? c.ld_b_scale : std::max<int64_t>(1, detail::scale_blocks(c.k));
    return o.b_scale[std::size_t(l / 128 + (j / 128) * ld)];
}

namespace detail {}  // namespace detail

inline operands make_operands(const gemm_case &c, uint64_t seed) {
    random_source rng(seed);
    operands o;
    // FP8 values over the whole range, except into f16 C, whose range (65504) their products
    // would pass; they keep [-1, 1].
    const bool full_range = is_fp8(c.ab_type) && c.c_type != GEMM_F16;
    detail::fill_matrices(o.a, c.a(), c.stride_a, c.batch, c.ab_type, rng, full_range);
    detail::fill_matrices(o.b, c.b(), c.stride_b, c.batch, c.ab_type, rng, full_range);
    if (is_fp8(c.ab_type)) {
        detail::fill_scales(c, o, rng);
        double a_max = 0, b_max = 0;
        for (int64_t i = 0; i < c.m; ++i)
            for (int64_t l = 0; l < c.k; ++l)
                a_max = std::max(a_max,
                                 std::fabs(load(o.a.data(), c.op_a_index(i, l), c.ab_type) * a_scale_at(c, o, i, l)));
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t l = 0; l < c.k; ++l)
                b_max = std::max(b_max,
                                 std::fabs(load(o.b.data(), c.op_b_index(l, j), c.ab_type) * b_scale_at(c, o, l, j)));
        o.product_size = std::max(1.0, a_max * b_max);
    }
    stored_matrix cm = c.c();
    int64_t span = batch_span(cm, c.stride_c, c.batch) + operands::c_guard;
    o.c0.assign(std::size_t(span) * dtype_size(c.c_type), 0);
    for (int64_t e = 0; e < span; ++e) store_poison(o.c0.data(), e, c.c_type);
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t p = 0; p < parts(c.c_type); ++p)
                    store_part(o.c0.data(), b * c.stride_c + cm.index(i, j), p, c.c_type,
                               c.beta_zero() ? std::nan("") : rng.uniform());
    return o;
}

// Operands seeded from the case's description.
inline operands make_operands(const gemm_case &c) { return make_operands(c, hash_text(c.describe())); }

// ---- reference and tolerance ---------------------------------------------------------------

// Window elements are numbered batch by batch, column by column: (b * n + j) * m + i.
inline int64_t window_index(const gemm_case &c, int64_t b, int64_t i, int64_t j) { return (b * c.n + j) * c.m + i; }

// Element (i, j) of batch b's C in the C buffer.
inline int64_t c_element(const gemm_case &c, int64_t b, int64_t i, int64_t j) {
    return b * c.stride_c + c.c().index(i, j);
}

// Values are numbered part by part: part p of window element w is value w * parts + p, parts
// being 2 for complex C (real, imaginary) and 1 otherwise; magnitudes are per element (the
// tolerance does not use them: tests that bound an error by them say why).
struct reference {
    std::vector<double> value;      // alpha * op(A) op(B) + beta * C0, accumulated in double
    std::vector<double> magnitude;  // |alpha| * (|op(A)| |op(B)|) + |beta| * |C0|
    // Real types: sum over l of |scaled op(A)(i, l) * scaled op(B)(l, j)|, without alpha and
    // the output scale (tolerance_rule::element's abs_products: FP8's tensor-core allowance).
    std::vector<double> abs_products;
    double amax = 0;  // FP8: max |value| before the output scale
};

namespace detail {
inline reference real_reference(const gemm_case &c, const operands &o) {
    reference r;
    std::size_t count = std::size_t(c.batch * c.m * c.n);
    r.value.assign(count, 0.0);
    r.magnitude.assign(count, 0.0);
    r.abs_products.assign(count, 0.0);
    bool product = c.k > 0 && c.alpha != 0.0;  // otherwise A and B are not referenced
    std::vector<double> a(std::size_t(c.m * c.k)), bt(std::size_t(c.n * c.k));
    for (int64_t b = 0; b < c.batch; ++b) {
        if (product) {
            // op(A) row by row and op(B) column by column, so the inner loop is contiguous.
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t l = 0; l < c.k; ++l)
                    a[std::size_t(i * c.k + l)] =
                        load(o.a.data(), b * c.stride_a + c.op_a_index(i, l), c.ab_type) * a_scale_at(c, o, i, l);
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t l = 0; l < c.k; ++l)
                    bt[std::size_t(j * c.k + l)] =
                        load(o.b.data(), b * c.stride_b + c.op_b_index(l, j), c.ab_type) * b_scale_at(c, o, l, j);
        }
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) {
                double sum = 0.0, abs_sum = 0.0;
                for (int64_t l = 0; product && l < c.k; ++l) {
                    double p = a[std::size_t(i * c.k + l)] * bt[std::size_t(j * c.k + l)];
                    sum += p;
                    abs_sum += std::fabs(p);
                }
                double v = c.alpha * sum, mag = std::fabs(c.alpha) * abs_sum;
                if (c.beta != 0.0) {  // beta = 0: C0 is NaN and must not count
                    double c0 = load(o.c0.data(), c_element(c, b, i, j), c.c_type);
                    v += c.beta * c0;
                    mag += std::fabs(c.beta) * std::fabs(c0);
                }
                // amax: NaN once an element is NaN.
                if (!std::isnan(r.amax) && !(std::fabs(v) <= r.amax)) r.amax = std::fabs(v);
                std::size_t w = std::size_t(window_index(c, b, i, j));
                r.value[w] = v * o.d_scale;
                r.magnitude[w] = mag * o.d_scale;
                r.abs_products[w] = abs_sum;
            }
    }
    return r;
}

// Complex numbers as (re, im) pairs with the textbook product: std::complex's operator*
// handles infinities through a slow library call on every product.
struct cpair {
    double re = 0, im = 0;
};
inline cpair mul(cpair x, cpair y) { return {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re}; }
inline double magnitude_of(cpair x) { return std::hypot(x.re, x.im); }

// Element (i, l) of op(A) or (l, j) of op(B), conjugated for GEMM_OP_C.
inline cpair op_element(const bytes &buf, int64_t e, gemm_op_t op, gemm_dtype_t t) {
    cpair v{load_part(buf.data(), e, 0, t), load_part(buf.data(), e, 1, t)};
    if (op == GEMM_OP_C) v.im = -v.im;
    return v;
}

inline reference complex_reference(const gemm_case &c, const operands &o) {
    reference r;
    std::size_t count = std::size_t(c.batch * c.m * c.n);
    r.value.assign(2 * count, 0.0);
    r.magnitude.assign(count, 0.0);
    const bool product = c.k > 0 && !c.alpha_zero();
    const cpair alpha{c.alpha, c.alpha_imag}, beta{c.beta, c.beta_imag};
    std::vector<cpair> a(std::size_t(c.m * c.k)), bt(std::size_t(c.n * c.k));
    for (int64_t b = 0; b < c.batch; ++b) {
        if (product) {
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t l = 0; l < c.k; ++l)
                    a[std::size_t(i * c.k + l)] =
                        op_element(o.a, b * c.stride_a + c.op_a_index(i, l), c.transa, c.ab_type);
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t l = 0; l < c.k; ++l)
                    bt[std::size_t(j * c.k + l)] =
                        op_element(o.b, b * c.stride_b + c.op_b_index(l, j), c.transb, c.ab_type);
        }
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) {
                cpair sum;
                double abs_sum = 0.0;
                for (int64_t l = 0; product && l < c.k; ++l) {
                    cpair x = a[std::size_t(i * c.k + l)], y = bt[std::size_t(j * c.k + l)], p = mul(x, y);
                    sum.re += p.re;
                    sum.im += p.im;
                    abs_sum += magnitude_of(x) * magnitude_of(y);
                }
                cpair v = mul(alpha, sum);
                double mag = magnitude_of(alpha) * abs_sum;
                if (!c.beta_zero()) {  // beta = 0: C0 is NaN and must not count
                    int64_t e = c_element(c, b, i, j);
                    cpair c0{load_part(o.c0.data(), e, 0, c.c_type), load_part(o.c0.data(), e, 1, c.c_type)};
                    cpair bc = mul(beta, c0);
                    v.re += bc.re;
                    v.im += bc.im;
                    mag += magnitude_of(beta) * magnitude_of(c0);
                }
                std::size_t w = std::size_t(window_index(c, b, i, j));
                r.value[2 * w] = v.re;
                r.value[2 * w + 1] = v.im;
                r.magnitude[w] = mag;
            }
    }
    return r;
}
}  // namespace detail

inline reference compute_reference(const gemm_case &c, const operands &o) {
    return is_complex(c.ab_type) ? detail::complex_reference(c, o) : detail::real_reference(c, o);
}

// The tolerance rule (dispatch/measure/tolerance.hpp) for the case's class and scalars.
inline gemm::tolerance_rule tolerance_of(const gemm_case &c) {
    gemm::tolerance_rule r;
    r.ab_type = c.ab_type;
    r.c_type = c.c_type;
    r.k = c.k;
    r.tf32 = c.tf32;
    r.alpha_size = std::hypot(c.alpha, c.alpha_imag);
    r.beta_size = std::hypot(c.beta, c.beta_imag);
    return r;
}

// The m x n windows of a C buffer, in window order, part by part (as reference::value).
inline std::vector<double> window_values(const gemm_case &c, const bytes &cbuf) {
    const int64_t np = parts(c.c_type);
    std::vector<double> v(std::size_t(c.batch * c.m * c.n * np));
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t p = 0; p < np; ++p)
                    v[std::size_t(window_index(c, b, i, j) * np + p)] =
                        load_part(cbuf.data(), c_element(c, b, i, j), p, c.c_type);
    return v;
}

struct comparison {
    bool ok = true;
    int64_t wrong = 0;    // window elements outside the tolerance, NaN included
    int64_t touched = 0;  // elements outside the windows that changed
    std::string first;    // the first problem found, in words
};

namespace detail {
// An element of C, both parts (the imaginary one 0 for real types).
struct element_value {
    double re = 0, im = 0;
    double size() const { return std::hypot(re, im); }
};

inline element_value element_at(const bytes &buf, int64_t e, gemm_dtype_t t) {
    return {load_part(buf.data(), e, 0, t), is_complex(t) ? load_part(buf.data(), e, 1, t) : 0.0};
}

inline std::string wrong_element_text(const gemm_case &c, int64_t b, int64_t i, int64_t j, element_value got,
                                      element_value want, double diff, double bound) {
    std::ostringstream s;
    s.precision(17);
    s << "C(i=" << i << ", j=" << j << ", batch " << b << ") = " << got.re;
    if (is_complex(c.c_type)) s << (got.im < 0 ? "" : "+") << got.im << "i";
    s << ", expected " << want.re;
    if (is_complex(c.c_type)) s << (want.im < 0 ? "" : "+") << want.im << "i";
    s << ", |diff| = " << diff << " > tolerance " << bound;
    return s.str();
}
}  // namespace detail

// Checks C's windows against expected (within the tolerance rule, no NaN; a complex element by
// |got - expected|, as the measurement engine judges it) and that every byte of the buffer
// outside the windows (ldc padding, gaps, guard) is as it was in o.c0.
inline comparison compare_result(const gemm_case &c, const operands &o, const bytes &got,
                                 const std::vector<double> &expected) {
    comparison r;
    std::size_t es = dtype_size(c.c_type);
    int64_t elements = int64_t(o.c0.size() / es);
    std::vector<char> in_window(std::size_t(elements), 0);
    gemm::tolerance_rule rule = tolerance_of(c);
    rule.product_size = o.product_size;
    rule.alpha_size *= std::fabs(o.d_scale);
    rule.beta_size *= std::fabs(o.d_scale);
    const std::size_t np = std::size_t(parts(c.c_type));
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) {
                int64_t e = c_element(c, b, i, j);
                in_window[std::size_t(e)] = 1;
                const std::size_t v = std::size_t(window_index(c, b, i, j)) * np;
                const detail::element_value want{expected[v], np == 2 ? expected[v + 1] : 0.0};
                const detail::element_value g = detail::element_at(got, e, c.c_type);
                const double c0_size = c.beta_zero() ? 0.0 : detail::element_at(o.c0, e, c.c_type).size();
                const double bound = rule.element(want.size(), c0_size),
                             diff = std::hypot(g.re - want.re, g.im - want.im);
                if (diff <= bound) continue;  // false for NaN
                if (r.wrong++ == 0) r.first = detail::wrong_element_text(c, b, i, j, g, want, diff, bound);
            }
    for (int64_t e = 0; e < elements; ++e) {
        if (in_window[std::size_t(e)]) continue;
        if (std::memcmp(got.data() + std::size_t(e) * es, o.c0.data() + std::size_t(e) * es, es) == 0) continue;
        if (r.touched++ == 0 && r.first.empty())
            r.first = "element " + std::to_string(e) + " of the C buffer, outside every m x n window, was written";
    }
    r.ok = r.wrong == 0 && r.touched == 0;
    if (!r.ok)
        r.first += " (" + std::to_string(r.wrong) + " wrong values, " + std::to_string(r.touched) +
                   " elements outside C's windows changed)";
    return r;
}

// Whether an FP8 case's amax (max |D| before the output scale) is the reference's within the
// tolerance of an element of that size (NaN only where the reference is NaN); "" when it is,
// else what is wrong.
inline std::string amax_mismatch(const gemm_case &c, const operands &o, float got, double want) {
    if (std::isnan(want)) return std::isnan(got) ? "" : "amax_d = " + std::to_string(got) + ", expected NaN";
    gemm::tolerance_rule rule = tolerance_of(c);
    rule.product_size = o.product_size;
    double c0_max = 0;
    if (!c.beta_zero())
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i)
                c0_max = std::max(c0_max, std::fabs(load(o.c0.data(), c_element(c, 0, i, j), c.c_type)));
    const double bound = rule.element(want, c0_max);
    if (std::fabs(double(got) - want) <= bound) return "";
    std::ostringstream s;
    s.precision(17);
    s << "amax_d = " << got << ", expected " << want << " (tolerance " << bound << ")";
    return s.str();
}

// ---- calling the library -------------------------------------------------------------------

// The largest power of two, up to 256, that every non-null pointer is a multiple of.
inline int common_alignment(const void *A, const void *B, const void *C) {
    int alignment = 256;
    for (const void *p : {A, B, static_cast<const void *>(C)})
        while (p && reinterpret_cast<uintptr_t>(p) % uintptr_t(alignment) != 0) alignment /= 2;
    return alignment;
}

// The case through a plan made for it: its desc has the case's shape, leading dimensions and
// strides, the pointers' alignment, device (-1: host) and beta_zero when beta is 0.
inline gemm_status_t call_plan(const gemm_case &c, const void *alpha, const void *A, const void *B, const void *beta,
                               void *C, int device, const gemm_scaling_t *scaling) {
    gemm_desc_t d;
    gemm_desc_init(&d, c.ab_type, c.layout, c.transa, c.transb, c.m, c.n, c.k);
    d.c_type = c.c_type;
    d.compute_type = c.compute_type();
    d.lda = c.lda;
    d.ldb = c.ldb;
    d.ldc = c.ldc;
    if (c.strided_entry) {
        d.batch_count = c.batch;
        d.stride_a = c.stride_a;
        d.stride_b = c.stride_b;
        d.stride_c = c.stride_c;
    }
    d.device = device;
    d.alignment = common_alignment(A, B, C);
    d.beta_zero = c.beta_zero();
    d.check_pointers = c.check_pointers;
    d.scale_mode = c.scaling_mode;
    gemm_plan_t plan = nullptr;
    gemm_status_t s = gemm_plan_create(&d, &plan);
    if (s != GEMM_STATUS_SUCCESS) return s;
    s = is_fp8(c.ab_type) ? gemm_plan_run_scaled(plan, alpha, A, B, beta, C, scaling)
                          : gemm_plan_run(plan, alpha, A, B, beta, C);
    gemm_plan_destroy(plan);  // leaves the run's error message in place
    return s;
}

// Makes the call the case describes on the given pointers (host, or device memory of device);
// scaling: an FP8 case's scales, in the same memory (NULL: gemm_ex, or a plan run without).
inline gemm_status_t call_gemm(const gemm_case &c, const void *A, const void *B, void *C, int device = -1,
                               const gemm_scaling_t *scaling = nullptr) {
    if (c.api == entry::typed && c.ab_type == GEMM_F32) {
        auto a = static_cast<const float *>(A), b = static_cast<const float *>(B);
        auto cc = static_cast<float *>(C);
        float alpha = float(c.alpha), beta = float(c.beta);
        if (c.strided_entry)
            return gemm_sgemm_strided_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, a, c.lda, c.stride_a,
                                              b, c.ldb, c.stride_b, beta, cc, c.ldc, c.stride_c, c.batch);
        return gemm_sgemm(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, a, c.lda, b, c.ldb, beta, cc, c.ldc);
    }
    if (c.api == entry::typed && c.ab_type == GEMM_F64) {
        auto a = static_cast<const double *>(A), b = static_cast<const double *>(B);
        auto cc = static_cast<double *>(C);
        if (c.strided_entry)
            return gemm_dgemm_strided_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, a, c.lda,
                                              c.stride_a, b, c.ldb, c.stride_b, c.beta, cc, c.ldc, c.stride_c, c.batch);
        return gemm_dgemm(c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, a, c.lda, b, c.ldb, c.beta, cc, c.ldc);
    }
    // Other entry points: alpha and beta in the compute type, a complex one as a pair.
    const float alpha_f[2] = {float(c.alpha), float(c.alpha_imag)}, beta_f[2] = {float(c.beta), float(c.beta_imag)};
    const double alpha_d[2] = {c.alpha, c.alpha_imag}, beta_d[2] = {c.beta, c.beta_imag};
    const bool doubles = c.compute_type() == GEMM_F64 || c.compute_type() == GEMM_C64;
    const void *alpha = doubles ? static_cast<const void *>(alpha_d) : alpha_f;
    const void *beta = doubles ? static_cast<const void *>(beta_d) : beta_f;
    if (c.api == entry::typed && is_complex(c.ab_type)) {
        bool z = c.ab_type == GEMM_C64;
        if (c.strided_entry)
            return (z ? gemm_zgemm_strided_batched : gemm_cgemm_strided_batched)(
                c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, A, c.lda, c.stride_a, B, c.ldb, c.stride_b, beta, C,
                c.ldc, c.stride_c, c.batch);
        return (z ? gemm_zgemm : gemm_cgemm)(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, A, c.lda, B, c.ldb,
                                             beta, C, c.ldc);
    }
    if (c.api == entry::plan) return call_plan(c, alpha, A, B, beta, C, device, scaling);
    if (scaling)
        return gemm_ex_scaled(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, A, c.ab_type, c.lda, B, c.ab_type,
                              c.ldb, beta, C, c.c_type, c.ldc, c.compute_type(), scaling);
    if (c.strided_entry)
        return gemm_ex_strided_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, A, c.ab_type, c.lda,
                                       c.stride_a, B, c.ab_type, c.ldb, c.stride_b, beta, C, c.c_type, c.ldc,
                                       c.stride_c, c.batch, c.compute_type());
    return gemm_ex(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha, A, c.ab_type, c.lda, B, c.ab_type, c.ldb, beta,
                   C, c.c_type, c.ldc, c.compute_type());
}

struct run_result {
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string error;  // gemm_last_error() right after the call
    bytes c;            // C after the call
    float amax = -1;    // FP8 cases with amax: what amax_d received (-1: untouched)
};

// Per-tensor scales a and b, with an output scale d and amax where not NULL.
inline gemm_scaling_t tensor_scaling(const float *a, const float *b, const float *d = nullptr, float *amax = nullptr) {
    gemm_scaling_t x;
    gemm_scaling_init(&x);
    x.mode = GEMM_SCALE_TENSOR;
    x.a_scale = a;
    x.b_scale = b;
    x.d_scale = d;
    x.amax_d = amax;
    return x;
}

// An FP8 case's gemm_scaling_t over the given scale pointers (host or device copies of o's),
// or NULL when the case has no scales.
inline const gemm_scaling_t *scaling_of(const gemm_case &c, gemm_scaling_t &x, const float *a_scale,
                                        const float *b_scale, const float *d_scale, float *amax) {
    if (!c.scaled()) return nullptr;
    gemm_scaling_init(&x);
    x.mode = c.scaling_mode;
    x.a_scale = c.scaling_mode != GEMM_SCALE_NONE ? a_scale : nullptr;
    x.b_scale = c.scaling_mode != GEMM_SCALE_NONE ? b_scale : nullptr;
    x.ld_a_scale = c.ld_a_scale;
    x.ld_b_scale = c.ld_b_scale;
    x.d_scale = c.d_scale ? d_scale : nullptr;
    x.amax_d = c.amax ? amax : nullptr;
    return &x;
}

// Runs the case on host operands with the backend selection in force.
inline run_result run_host(const gemm_case &c, const operands &o) {
    run_result r;
    r.c = o.c0;
    gemm_scaling_t x;
    const gemm_scaling_t *scaling = scaling_of(c, x, o.a_scale.data(), o.b_scale.data(), &o.d_scale, &r.amax);
    r.status = call_gemm(c, o.a_ptr(), o.b_ptr(), r.c.empty() ? nullptr : r.c.data(), -1, scaling);
    r.error = gemm_last_error();
    return r;
}

// ---- backends, filters, skips --------------------------------------------------------------

struct backend_entry {
    std::string name;
    bool available = false;
    std::string reason;
};

inline std::vector<backend_entry> all_backends() {
    std::vector<backend_entry> all;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) != GEMM_STATUS_SUCCESS) continue;
        all.push_back({info.name, info.available != 0, info.reason});
    }
    return all;
}

// Every backend this machine can run, found through the C API: a backend that becomes
// available (or is added to the build) is tested without touching the tests.
inline std::vector<std::string> available_backends() {
    std::vector<std::string> names;
    for (const backend_entry &b : all_backends())
        if (b.available) names.push_back(b.name);
    return names;
}

// GEMM_TEST_FILTER: when set, only cases whose description contains it run (to rerun the
// one a failure printed).
inline bool case_selected(const std::string &description) {
    const char *f = std::getenv("GEMM_TEST_FILTER");
    return !f || !*f || description.find(f) != std::string::npos;
}

// Counts the cases each backend declined with GEMM_STATUS_NOT_SUPPORTED, so skips are visible.
class skip_tally {
public:
    void add(const std::string &backend, const gemm_case &c) {
        std::string key = backend + " dtype=" + gemm_dtype_name(c.ab_type);
        if (c.c_type != c.ab_type) key += std::string("->") + gemm_dtype_name(c.c_type);
        ++counts_[key];
    }
    bool empty() const { return counts_.empty(); }
    // Cases `backend` (a name as run, "cpu_omp" or "cpu_omp:id") declined, of any dtype.
    int64_t of(const std::string &backend) const {
        int64_t n = 0;
        for (const auto &[key, count] : counts_)
            if (key.rfind(backend + " dtype=", 0) == 0) n += count;
        return n;
    }
    std::string summary() const {
        std::string s;
        for (const auto &[key, count] : counts_)
            s += (s.empty() ? "" : "; ") + key + ": " + std::to_string(count) + " cases";
        return "skipped (backend returned GEMM_STATUS_NOT_SUPPORTED): " + (s.empty() ? "none" : s);
    }

private:
    std::map<std::string, int64_t> counts_;
};

// gemm_tune_key(key) on backends with the result stored into a tune cache that was empty:
// "" when it succeeded and the cache now holds exactly that key, else what went wrong. A
// winner whose timings stayed disturbed is not stored (the tuner's rule; other tests running
// beside this one disturb them), so such a tuning is tried again, five times at most.
inline std::string tune_key_as_only_entry(const char *key, const char *backends, gemm_tune_report_t &report) {
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (gemm_tune_key(key, -1, 20, backends, 1, &report) != GEMM_STATUS_SUCCESS)
            return std::string("gemm_tune_key: ") + gemm_last_error();
        if (report.stored == 1 || !report.disturbed) break;
    }
    if (report.stored != 1)
        return std::string("the winner was not stored") + (report.disturbed ? " (timings disturbed five times)" : "");
    const gemm_tune_entry_t *entries = nullptr;
    int64_t count = 0;
    if (gemm_tune_cache_entries(&entries, &count) != GEMM_STATUS_SUCCESS)
        return std::string("gemm_tune_cache_entries: ") + gemm_last_error();
    if (count != 1) return "the cache holds " + std::to_string(count) + " entries, not 1";
    if (std::string(entries[0].key) != key) return std::string("the cache holds '") + entries[0].key + "'";
    return "";
}

// Sends file descriptor 2 into a temporary file until lines() is called, to read back what
// the library wrote to stderr.
class stderr_capture {
public:
    stderr_capture() {
        std::fflush(stderr);
        file_ = std::tmpfile();
        saved_ = dup(2);
        if (file_ && saved_ >= 0) dup2(fileno(file_), 2);
    }
    ~stderr_capture() {
        restore();
        if (file_) std::fclose(file_);
    }
    stderr_capture(const stderr_capture &) = delete;
    stderr_capture &operator=(const stderr_capture &) = delete;

    std::vector<std::string> lines() {
        restore();
        std::vector<std::string> out;
        if (!file_) return out;
        std::rewind(file_);
        std::string line;
        for (int ch; (ch = std::fgetc(file_)) != EOF;) {
            if (ch == '\n') {
                out.push_back(line);
                line.clear();
            } else {
                line += char(ch);
            }
        }
        if (!line.empty()) out.push_back(line);
        return out;
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        dup2(saved_, 2);
        close(saved_);
        saved_ = -1;
    }
    std::FILE *file_ = nullptr;
    int saved_ = -1;
};

}  // namespace gemm_test
