// test_result_check.cpp: the measurement engine's result check (dispatch/measure/result_check.cpp,
// compiled in: it is internal) on FP8 results as the tensor cores give them, within the
// tolerance rule's allowance for them and past it, and the rule of the other types unchanged.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dispatch/element.hpp"
#include "dispatch/measure/result_check.hpp"
#include "dispatch/measure/tolerance.hpp"

using namespace gemm;

namespace {

// How a case's FP8 operands are scaled. blocks: A's per row and block of k (vec128), B's per
// block of k and 128 columns (blk128), as a column-major call has them; blocks_swapped: the
// other way round, as the canonical problem of a row-major call has them.
enum class scales { none, tensor, blocks, blocks_swapped };

const char *scales_name(scales s) {
    switch (s) {
    case scales::none: return "none";
    case scales::tensor: return "tensor";
    case scales::blocks: return "blocks";
    case scales::blocks_swapped: return "blocks_swapped";
    }
    return "?";
}

struct fp8_case {
    int64_t m, n, k;
    dtype ab, c;
    scales mode;
    transpose op_a = transpose::t, op_b = transpose::n;
    double alpha = 1, beta = 0;
    bool d_scale = false;
    int64_t pad = 0;  // added to every leading dimension, the scales' included

    std::string describe() const {
        return std::string(dtype_name(ab)) + "->" + dtype_name(c) + " " + op_name(op_a) + op_name(op_b) + " " +
               std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " scales " + scales_name(mode) +
               " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) + (d_scale ? " d_scale" : "") +
               " pad " + std::to_string(pad);
    }
};

// A case's host operands, its problem (pointing into them) and the exact result: D in f64, and
// each element's sum of |scaled products| times |alpha| and the output scale.
struct fp8_operands {
    problem p;
    std::vector<uint8_t> a, b;
    std::vector<float> a_scale, b_scale;
    float d_scale = 1;
    std::vector<char> c0;                     // C's initial values; NaN where beta = 0
    std::vector<double> exact, abs_products;  // column-major m x n
};

// A positive scale between 1/16 and 16 that is not a power of two, so that it changes bits.
float random_scale(std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> mantissa(1.0, 1.5);
    return std::ldexp(float(mantissa(rng)), int(rng() % 9) - 4);
}

// Random FP8 values in [-1, 1], every binade and the subnormals: a random byte picks one of the
// codes whose value lies there (eight values from each rng() call).
class unit_fp8_values {
public:
    unit_fp8_values(dtype t, uint64_t seed) : rng_(seed) {
        std::vector<uint8_t> codes;
        for (int x = 0; x < 256; ++x)
            if (std::fabs(fp8_table(t)[std::size_t(x)]) <= 1.0f) codes.push_back(uint8_t(x));
        for (std::size_t x = 0; x < 256; ++x) pick_[x] = codes[x % codes.size()];
    }
    uint8_t next() {
        if (left_ == 0) bits_ = rng_(), left_ = 8;
        --left_;
        const uint8_t code = pick_[bits_ & 0xff];
        bits_ >>= 8;
        return code;
    }

private:
    std::mt19937_64 rng_;
    uint8_t pick_[256] = {};
    uint64_t bits_ = 0;
    int left_ = 0;
};

int64_t blocks_of(int64_t extent) { return (extent + scale_block - 1) / scale_block; }

// One operand's scales: per tensor, per outer index and block of k (vec128: the outer index
// fastest), or per 128 outer indices and block of k (blk128: the block of k fastest), the
// padding between columns NaN.
operand_scale make_scale(scale_kind kind, int64_t outer, int64_t k, int64_t pad, std::vector<float> &values,
                         std::mt19937_64 &rng) {
    operand_scale s;
    s.kind = kind;
    if (kind == scale_kind::none) return s;
    const int64_t k_blocks = std::max<int64_t>(1, blocks_of(k));
    const int64_t rows = kind == scale_kind::tensor ? 1 : kind == scale_kind::vec128 ? outer : k_blocks;
    s.ld = kind == scale_kind::tensor ? 0 : std::max<int64_t>(1, rows) + pad;
    const int64_t columns = kind == scale_kind::tensor ? 1 : kind == scale_kind::vec128 ? k_blocks : blocks_of(outer);
    values.assign(std::size_t(std::max<int64_t>(1, s.ld) * std::max<int64_t>(1, columns)), std::nanf(""));
    for (int64_t b = 0; b < columns; ++b)
        for (int64_t r = 0; r < rows; ++r) values[std::size_t(r + b * s.ld)] = random_scale(rng);
    s.values = values.data();
    return s;
}

// The scale of canonical op(A)(i, l) and op(B)(l, j), computed here from the layouts the API
// states (docs/FP8.md), apart from operand_scale::at.
double scale_of(const operand_scale &s, int64_t outer, int64_t l) {
    switch (s.kind) {
    case scale_kind::none: return 1.0;
    case scale_kind::tensor: return s.values[0];
    case scale_kind::vec128: return s.values[std::size_t(outer + (l / 128) * s.ld)];
    case scale_kind::blk128: return s.values[std::size_t(l / 128 + (outer / 128) * s.ld)];
    }
    return 1.0;
}

// o's problem points into o, which therefore stays where it is made.
void make_operands(const fp8_case &c, uint64_t seed, fp8_operands &o) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    unit_fp8_values values(c.ab, seed + 1);
    problem &p = o.p;
    p.op_a = c.op_a;
    p.op_b = c.op_b;
    p.m = c.m;
    p.n = c.n;
    p.k = c.k;
    p.ab_type = c.ab;
    p.c_type = c.c;
    p.compute_type = dtype::f32;
    p.alpha = c.alpha;
    p.beta = c.beta;
    p.lda = std::max<int64_t>(1, p.a_rows()) + c.pad;
    p.ldb = std::max<int64_t>(1, p.b_rows()) + c.pad;
    p.ldc = std::max<int64_t>(1, c.m) + c.pad;
    o.a.assign(std::size_t(p.lda * std::max<int64_t>(1, p.a_cols())), 0x7f);  // NaN in e4m3 and e5m2
    o.b.assign(std::size_t(p.ldb * std::max<int64_t>(1, p.b_cols())), 0x7f);
    for (int64_t col = 0; col < p.a_cols(); ++col)
        for (int64_t row = 0; row < p.a_rows(); ++row) o.a[std::size_t(row + col * p.lda)] = values.next();
    for (int64_t col = 0; col < p.b_cols(); ++col)
        for (int64_t row = 0; row < p.b_rows(); ++row) o.b[std::size_t(row + col * p.ldb)] = values.next();
    p.a = o.a.data();
    p.b = o.b.data();
    const bool swapped = c.mode == scales::blocks_swapped;
    const scale_kind a_kind = c.mode == scales::none     ? scale_kind::none
                              : c.mode == scales::tensor ? scale_kind::tensor
                              : swapped                  ? scale_kind::blk128
                                                         : scale_kind::vec128;
    const scale_kind b_kind = c.mode == scales::none     ? scale_kind::none
                              : c.mode == scales::tensor ? scale_kind::tensor
                              : swapped                  ? scale_kind::vec128
                                                         : scale_kind::blk128;
    p.scaling.a = make_scale(a_kind, c.m, c.k, c.pad, o.a_scale, rng);
    p.scaling.b = make_scale(b_kind, c.n, c.k, c.pad, o.b_scale, rng);
    if (c.d_scale) {
        o.d_scale = random_scale(rng);
        p.scaling.d_scale = &o.d_scale;
    }
    const std::size_t c_size = dtype_size(c.c);
    o.c0.assign(std::size_t(p.ldc * std::max<int64_t>(1, c.n)) * c_size, 0);
    for (int64_t e = 0; e < p.ldc * c.n; ++e) store_element(o.c0.data(), e, c.c, std::nan(""));
    for (int64_t j = 0; j < c.n && c.beta != 0.0; ++j)
        for (int64_t i = 0; i < c.m; ++i) store_element(o.c0.data(), i + j * p.ldc, c.c, uniform(rng));

    // op(B) column by column, scaled; then op(A) a row at a time and its sums with each column,
    // in f64.
    std::vector<double> a(std::size_t(c.k)), b(std::size_t(c.n * c.k));
    for (int64_t j = 0; j < c.n; ++j)
        for (int64_t l = 0; l < c.k; ++l)
            b[std::size_t(j * c.k + l)] =
                load_element(o.b.data(), c.op_b == transpose::n ? l + j * p.ldb : j + l * p.ldb, c.ab) *
                scale_of(p.scaling.b, j, l);
    const double d = o.d_scale;
    o.exact.assign(std::size_t(c.m * c.n), 0.0);
    o.abs_products.assign(std::size_t(c.m * c.n), 0.0);
    for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t l = 0; l < c.k; ++l)
            a[std::size_t(l)] = load_element(o.a.data(), c.op_a == transpose::n ? i + l * p.lda : l + i * p.lda, c.ab) *
                                scale_of(p.scaling.a, i, l);
        for (int64_t j = 0; j < c.n; ++j) {
            double sum = 0, abs_sum = 0;
            for (int64_t l = 0; l < c.k; ++l) {
                const double product = a[std::size_t(l)] * b[std::size_t(j * c.k + l)];
                sum += product;
                abs_sum += std::fabs(product);
            }
            const double c0 = c.beta != 0.0 ? load_element(o.c0.data(), i + j * p.ldc, c.c) : 0.0;
            o.exact[std::size_t(i + j * c.m)] = d * (c.alpha * sum + c.beta * c0);
            o.abs_products[std::size_t(i + j * c.m)] = std::fabs(d * c.alpha) * abs_sum;
        }
    }
}

// A tensor-core result: each element off the exact one by up to 2^-8 of its sum of |scaled
// products| (half the allowance), in a deterministic pattern of both signs, rounded to C's
// type; the padding NaN.
std::vector<char> tensor_core_result(const fp8_operands &o) {
    const problem &p = o.p;
    std::vector<char> c(o.c0.size());
    for (int64_t e = 0; e < p.ldc * p.n; ++e) store_element(c.data(), e, p.c_type, std::nan(""));
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            const std::size_t w = std::size_t(i + j * p.m);
            const double share = double((i * 7 + j * 13) % 17 - 8) / 8.0;  // -1 ... 1
            store_element(c.data(), i + j * p.ldc, p.c_type, o.exact[w] + share * 0x1p-8 * o.abs_products[w]);
        }
    return c;
}

check_outcome judge(const result_check &check, const fp8_operands &o, std::vector<char> &got) {
    problem r = o.p;
    r.c = got.data();
    return check.judge(r);
}

check_outcome judge(const fp8_operands &o, std::vector<char> &got) {
    result_check check;
    check.prepare(o.p, o.c0.data(), false);
    return judge(check, o, got);
}

bool vector_checked(const fp8_case &c) {
    return double(c.m) * double(c.n) * double(c.k) > result_check::full_check_limit;
}

// Element (i, j) of a result moved to the exact value plus `share` of its sum of |products|.
void move_element(const fp8_operands &o, std::vector<char> &got, int64_t i, int64_t j, double share) {
    const std::size_t w = std::size_t(i + j * o.p.m);
    store_element(got.data(), i + j * o.p.ldc, o.p.c_type, o.exact[w] + share * o.abs_products[w]);
}

// The cases: k = 4096 and ragged shapes (a ragged last block of k, more than one block of
// columns), every scaling, both FP8 types into f32 and bf16, alpha, beta and an output scale.
// The vector check's cases have few columns: its row i adds the allowance of every element of
// the row, times |t_j|, so an error of one element shows where it passes that sum.
std::vector<fp8_case> fp8_cases() {
    return {
        {131, 97, 4096, dtype::e4m3, dtype::f32, scales::tensor, transpose::t, transpose::n, 1.5, 0.5, true, 3},
        {61, 37, 4096, dtype::e5m2, dtype::bf16, scales::blocks, transpose::t, transpose::n, 1.0, 0.0, false, 0},
        {37, 131, 4097, dtype::e4m3, dtype::bf16, scales::blocks_swapped, transpose::n, transpose::t, -0.75, 0.0, true,
         5},
        {29, 17, 389, dtype::e4m3, dtype::f32, scales::none, transpose::n, transpose::n, 1.0, -1.0, false, 1},
        {1, 1, 4096, dtype::e5m2, dtype::f32, scales::blocks, transpose::t, transpose::n, 1.0, 0.0, false, 0},
        // Nothing to sum (D = d_scale·beta·C0), and nothing to write.
        {19, 7, 0, dtype::e4m3, dtype::f32, scales::tensor, transpose::t, transpose::n, 1.0, 0.5, true, 1},
        {0, 5, 4096, dtype::e5m2, dtype::bf16, scales::blocks, transpose::t, transpose::n, 1.0, 0.0, false, 0},
        // The vector check (m·n·k > 2^27).
        {2053, 16, 4096, dtype::e4m3, dtype::bf16, scales::blocks, transpose::t, transpose::n, 1.0, 0.0, true, 2},
        {8209, 4, 4099, dtype::e5m2, dtype::f32, scales::tensor, transpose::t, transpose::n, 2.0, 0.5, false, 0},
        {32771, 1, 4096, dtype::e4m3, dtype::f32, scales::blocks_swapped, transpose::n, transpose::n, 1.0, 0.0, true, 0},
    };
}

// A case, its operands and the check prepared on them, made once for the test cases below:
// the references of the vector check's narrow shapes cost as much as a full product.
struct prepared_case {
    fp8_case c;
    fp8_operands o;
    result_check check;
};

const std::vector<std::unique_ptr<prepared_case>> &prepared_cases() {
    static const std::vector<std::unique_ptr<prepared_case>> cases = [] {
        std::vector<std::unique_ptr<prepared_case>> made;
        for (const fp8_case &c : fp8_cases()) {
            auto p = std::make_unique<prepared_case>();
            p->c = c;
            make_operands(c, uint64_t(c.m * 1000003 + c.n * 1009 + c.k), p->o);
            p->check.prepare(p->o.p, p->o.c0.data(), false);
            made.push_back(std::move(p));
        }
        return made;
    }();
    return cases;
}

}  // namespace

TEST_CASE("result_check: the tolerance rule's FP8 allowance is 2^-7 of the sum of |scaled products|") {
    CHECK(tensor_core_fp8_share == std::ldexp(1.0, -7));
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2}) {
        tolerance_rule r;
        r.ab_type = ab;
        r.c_type = GEMM_BF16;
        r.k = 4096;
        r.alpha_size = 3.0;
        CHECK(r.tensor_cores(1000.0) == 3.0 * 1000.0 * std::ldexp(1.0, -7));
        CHECK(r.element(5.0, 0.0, 1000.0) == r.element(5.0, 0.0) + r.tensor_cores(1000.0));
        CHECK(r.element(5.0, 0.0, 1000.0) > r.element(5.0, 0.0));
    }
}

// Every other type's bound is the f32 rule's, bit for bit: the expression below is the rule as
// it stands without the allowance, and an abs_products argument changes nothing.
TEST_CASE("result_check: other types' bounds are unchanged, bit for bit") {
    auto f32_rule = [](const tolerance_rule &r, double value_size, double c0_size) {
        const double u = r.compute_roundoff(), u_out = unit_roundoff(r.c_type);
        const double terms = double(r.k) * (r.ab_type == GEMM_C32 || r.ab_type == GEMM_C64 ? 2.0 : 1.0) + 16.0;
        const double products =
            u * terms + (r.tf32 && r.ab_type == GEMM_F32 ? std::ldexp(1.0, -11) * std::sqrt(terms) : 0.0);
        return 4.0 * r.alpha_size * r.product_size * products + 2.0 * u_out * value_size +
               4.0 * u * r.beta_size * c0_size + 2.0 * u_out * (value_size + r.beta_size * c0_size) +
               2.0 * smallest_subnormal(r.c_type);
    };
    const gemm_dtype_t types[][2] = {{GEMM_F32, GEMM_F32},  {GEMM_F64, GEMM_F64}, {GEMM_F16, GEMM_F16},
                                     {GEMM_BF16, GEMM_F32}, {GEMM_C32, GEMM_C32}, {GEMM_C64, GEMM_C64}};
    for (const auto &t : types)
        for (int64_t k : {0, 1, 37, 4096})
            for (bool tf32 : {false, true}) {
                tolerance_rule r;
                r.ab_type = t[0];
                r.c_type = t[1];
                r.k = k;
                r.tf32 = tf32;
                r.alpha_size = 1.5;
                r.beta_size = 0.5;
                INFO(int(t[0]) << " -> " << int(t[1]) << " k " << k << " tf32 " << tf32);
                for (double v : {0.0, 1e-30, 0.75, 123.0}) {
                    CHECK(r.element(v, 0.25) == f32_rule(r, v, 0.25));
                    CHECK(r.element(v, 0.25, 1e6) == r.element(v, 0.25));
                }
                CHECK(r.tensor_cores(1e6) == 0.0);
            }
    // FP8 without abs_products: the f32 rule alone.
    tolerance_rule fp8;
    fp8.ab_type = GEMM_F8_E4M3;
    fp8.c_type = GEMM_BF16;
    fp8.k = 4096;
    fp8.product_size = 40.0;
    CHECK(fp8.element(3.0, 0.0) == f32_rule(fp8, 3.0, 0.0));
}

TEST_CASE("result_check: FP8 tensor-core results within the allowance pass both checks") {
    bool saw_full = false, saw_vector = false;
    for (const auto &prepared : prepared_cases()) {
        const fp8_case &c = prepared->c;
        const fp8_operands &o = prepared->o;
        INFO(c.describe());
        std::vector<char> got = tensor_core_result(o);
        const check_outcome out = judge(prepared->check, o, got);
        CHECK(std::string(out.method) == (vector_checked(c) ? "vector" : "reference"));
        CHECK_MESSAGE(out.result == check_outcome::verdict::ok,
                      out.detail << " (worst ratio " << out.worst_ratio << ")");
        (vector_checked(c) ? saw_vector : saw_full) = true;
        // The exact values rounded once to C's type are the f32 rule's, far inside.
        std::vector<char> exact(o.c0.size());
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) move_element(o, exact, i, j, 0.0);
        const check_outcome exact_out = judge(prepared->check, o, exact);
        CHECK(exact_out.result == check_outcome::verdict::ok);
        if (c.m > 0 && c.n > 0 && c.k > 0) CHECK(exact_out.worst_ratio < out.worst_ratio);
    }
    CHECK(saw_full);
    CHECK(saw_vector);
}

// Past the allowance: a 16 x 16 block of zeros (a tile a kernel never computed) and one
// element off by 2^-5 of its sum of |scaled products|, four times the allowance.
TEST_CASE("result_check: FP8 results with a zeroed block or an element past the allowance are WRONG") {
    for (const auto &prepared : prepared_cases()) {
        const fp8_case &c = prepared->c;
        const fp8_operands &o = prepared->o;
        INFO(c.describe());
        const std::string method = vector_checked(c) ? "vector" : "reference";
        // The block where the shape holds one: at the far corner, so a ragged edge is in it.
        if (c.m >= 16 && c.n >= 16) {
            std::vector<char> got = tensor_core_result(o);
            for (int64_t j = c.n - 16; j < c.n; ++j)
                for (int64_t i = c.m - 16; i < c.m; ++i) store_element(got.data(), i + j * o.p.ldc, c.c, 0.0);
            const check_outcome out = judge(prepared->check, o, got);
            CHECK(std::string(out.method) == method);
            CHECK_MESSAGE(out.result == check_outcome::verdict::wrong,
                          "zeroed block judged ok: worst ratio " << out.worst_ratio);
            CHECK(!out.detail.empty());
        }
        // The one element: the vector check sees it where its row's allowance, the sum over the
        // row's columns, is not far above the element's own (few columns).
        if ((vector_checked(c) && c.n > 1) || c.m == 0 || c.k == 0) continue;
        for (double sign : {1.0, -1.0}) {
            std::vector<char> got = tensor_core_result(o);
            move_element(o, got, c.m / 2, c.n / 3, sign * 0x1p-5);
            const check_outcome out = judge(prepared->check, o, got);
            CHECK_MESSAGE(out.result == check_outcome::verdict::wrong,
                          "element off by 2^-5 judged ok: worst ratio " << out.worst_ratio);
        }
    }
}

// The same results in f32, bf16 and f16 products: no allowance, so an element off by 2^-8 of
// its sum of |products| (inside FP8's allowance) is WRONG in both checks, and the exact values
// rounded once pass.
TEST_CASE("result_check: other types get no tensor-core allowance") {
    struct other_case {
        int64_t m, n, k;
        dtype ab, c;
    };
    const other_case cases[] = {{67, 53, 4096, dtype::f32, dtype::f32},
                                {41, 29, 1031, dtype::bf16, dtype::f32},
                                {2053, 16, 4096, dtype::f16, dtype::f32},
                                {1031, 37, 4099, dtype::f32, dtype::f32}};
    for (const other_case &oc : cases) {
        fp8_case c{oc.m, oc.n, oc.k, dtype::e4m3, oc.c, scales::none, transpose::t, transpose::n};
        INFO(c.describe() << " as " << dtype_name(oc.ab));
        fp8_operands o;
        make_operands(c, 99, o);
        // The FP8 values stored as the other type (each is exact in f16, bf16 and f32).
        std::vector<uint8_t> converted(o.a.size() * dtype_size(oc.ab)), converted_b(o.b.size() * dtype_size(oc.ab));
        for (std::size_t e = 0; e < o.a.size(); ++e)
            store_element(converted.data(), int64_t(e), oc.ab, load_element(o.a.data(), int64_t(e), dtype::e4m3));
        for (std::size_t e = 0; e < o.b.size(); ++e)
            store_element(converted_b.data(), int64_t(e), oc.ab, load_element(o.b.data(), int64_t(e), dtype::e4m3));
        o.p.ab_type = oc.ab;
        o.p.a = converted.data();
        o.p.b = converted_b.data();
        const std::string method = vector_checked(c) ? "vector" : "reference";
        std::vector<char> got(o.c0.size());
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) move_element(o, got, i, j, 0.0);
        const check_outcome exact = judge(o, got);
        CHECK(std::string(exact.method) == method);
        CHECK_MESSAGE(exact.result == check_outcome::verdict::ok, exact.detail);
        move_element(o, got, c.m / 2, c.n / 3, 0x1p-8);
        const check_outcome off = judge(o, got);
        CHECK(off.result == check_outcome::verdict::wrong);
    }
}
