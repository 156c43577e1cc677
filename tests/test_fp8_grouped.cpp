// test_fp8_grouped.cpp: grouped FP8 (gemm_ex_grouped, gemm_ex_grouped_scaled), a mixture of
// experts' shape: cpu_ref, cpu_omp and auto against a float64 loop over the dequantized
// inputs on ragged groups with scales, d_scale and amax_d of their own; FP8 without scales
// equal to scales of 1; and every refusal naming the group, each C and amax untouched.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;
using namespace gemm_test::detail;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// What an amax_d no call wrote holds.
constexpr float amax_sentinel = 12345.0f;

// A scale between 1/4 and 3/2, not a power of two (a dropped scale shows in every bit), small
// enough that no sum here passes f16's range.
float scale_value(random_source &rng) {
    return std::ldexp(float(1.0 + 0.5 * std::fabs(rng.uniform())), int(rng.next() % 3) - 2);
}

// One group's shape, scalars and scaling as the test chooses them.
struct group_spec {
    gemm_op_t ta = GEMM_OP_N, tb = GEMM_OP_N;
    int64_t m = 0, n = 0, k = 0, size = 1;
    gemm_scale_mode_t mode = GEMM_SCALE_NONE;
    float alpha = 1, beta = 0;
    bool d_scale = false, amax = false;
};

// A grouped call's operands: every matrix's A, B and C (C prefilled: NaN where beta = 0, so
// that a read shows, else random), each group's scales (block arrays padded with NaN past
// their least leading dimension), d_scale and amax_d; and the arrays gemm_ex_grouped takes.
struct grouped_call {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_dtype_t ab = GEMM_F8_E4M3, ct = GEMM_F32;
    std::vector<group_spec> groups;

    std::vector<bytes> a, b, c, c0;
    std::vector<std::vector<float>> a_scales, b_scales;
    std::vector<float> d_scales, amaxes;
    std::vector<gemm_scaling_t> scalings;
    std::vector<gemm_op_t> ta, tb;
    std::vector<int64_t> m, n, k, lda, ldb, ldc, sizes;
    std::vector<float> alpha, beta;
    std::vector<const void *> pa, pb;
    std::vector<void *> pc;

    // Stored rows and columns of A (B) of group g in the layout, and its element (r, c).
    int64_t a_rows(const group_spec &s) const { return s.ta == GEMM_OP_N ? s.m : s.k; }
    int64_t a_cols(const group_spec &s) const { return s.ta == GEMM_OP_N ? s.k : s.m; }
    int64_t b_rows(const group_spec &s) const { return s.tb == GEMM_OP_N ? s.k : s.n; }
    int64_t b_cols(const group_spec &s) const { return s.tb == GEMM_OP_N ? s.n : s.k; }
    int64_t least_ld(int64_t rows, int64_t cols) const {
        return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? rows : cols);
    }
    int64_t index(int64_t r, int64_t col, int64_t ld) const {
        return layout == GEMM_COL_MAJOR ? r + col * ld : r * ld + col;
    }
    int64_t elements(int64_t rows, int64_t cols, int64_t ld) const {
        return rows == 0 || cols == 0 ? 0 : index(rows - 1, cols - 1, ld) + 1;
    }

    void build(uint64_t seed) {
        random_source rng(seed);
        int64_t item = 0;
        scalings.assign(groups.size(), gemm_scaling_t{});
        a_scales.assign(groups.size(), {});
        b_scales.assign(groups.size(), {});
        d_scales.assign(groups.size(), 1.0f);
        amaxes.assign(groups.size(), amax_sentinel);
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const group_spec &s = groups[g];
            ta.push_back(s.ta);
            tb.push_back(s.tb);
            m.push_back(s.m);
            n.push_back(s.n);
            k.push_back(s.k);
            sizes.push_back(s.size);
            alpha.push_back(s.alpha);
            beta.push_back(s.beta);
            // Leading dimensions larger than needed: a backend that assumes tight ones shows.
            lda.push_back(least_ld(a_rows(s), a_cols(s)) + 3);
            ldb.push_back(least_ld(b_rows(s), b_cols(s)) + 2);
            ldc.push_back(least_ld(s.m, s.n) + 1);
            for (int64_t i = 0; i < s.size; ++i, ++item) {
                bytes x(std::size_t(elements(a_rows(s), a_cols(s), lda[g])) + 1);
                for (auto &v : x) v = fp8_from_double(rng.uniform(), ab);
                bytes y(std::size_t(elements(b_rows(s), b_cols(s), ldb[g])) + 1);
                for (auto &v : y) v = fp8_from_double(rng.uniform(), ab);
                bytes z(std::size_t(elements(s.m, s.n, ldc[g]) + 1) * dtype_size(ct));
                for (int64_t e = 0; e * int64_t(dtype_size(ct)) < int64_t(z.size()); ++e)
                    if (s.beta == 0) store_poison(z.data(), e, ct);
                    else store(z.data(), e, ct, rng.uniform());
                a.push_back(std::move(x));
                b.push_back(std::move(y));
                c0.push_back(z);
                c.push_back(std::move(z));
            }
            gemm_scaling_t &x = scalings[g];
            gemm_scaling_init(&x);
            x.mode = s.mode;
            const int64_t kb = std::max<int64_t>(1, scale_blocks(s.k));
            if (s.mode == GEMM_SCALE_TENSOR) {
                a_scales[g] = {scale_value(rng)};
                b_scales[g] = {scale_value(rng)};
            } else if (s.mode == GEMM_SCALE_BLOCK) {
                x.ld_a_scale = std::max<int64_t>(1, s.m) + 1;
                x.ld_b_scale = std::max<int64_t>(1, scale_blocks(s.n)) + 1;
                a_scales[g].assign(std::size_t(x.ld_a_scale * kb), NAN);
                b_scales[g].assign(std::size_t(x.ld_b_scale * kb), NAN);
                for (int64_t l = 0; l < kb; ++l) {
                    for (int64_t i = 0; i < s.m; ++i) a_scales[g][std::size_t(i + l * x.ld_a_scale)] = scale_value(rng);
                    for (int64_t j = 0; j < scale_blocks(s.n); ++j)
                        b_scales[g][std::size_t(j + l * x.ld_b_scale)] = scale_value(rng);
                }
            }
            if (s.d_scale) d_scales[g] = scale_value(rng);
        }
        for (std::size_t g = 0; g < groups.size(); ++g) point(g);
        for (std::size_t i = 0; i < a.size(); ++i) {
            pa.push_back(a[i].data());
            pb.push_back(b[i].data());
            pc.push_back(c[i].data());
        }
    }

    // scalings[g]'s pointers at this call's storage (after a copy, or to undo a test's edit).
    void point(std::size_t g) {
        gemm_scaling_t &x = scalings[g];
        x.a_scale = a_scales[g].empty() ? nullptr : a_scales[g].data();
        x.b_scale = b_scales[g].empty() ? nullptr : b_scales[g].data();
        x.d_scale = groups[g].d_scale ? &d_scales[g] : nullptr;
        x.amax_d = groups[g].amax ? &amaxes[g] : nullptr;
    }

    gemm_status_t run(bool scaled, gemm_dtype_t ab_type, gemm_dtype_t c_type, gemm_dtype_t compute = GEMM_F32) {
        if (!scaled)
            return gemm_ex_grouped(layout, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(), pa.data(),
                                   ab_type, lda.data(), pb.data(), ab_type, ldb.data(), beta.data(), pc.data(), c_type,
                                   ldc.data(), int64_t(groups.size()), sizes.data(), compute);
        return gemm_ex_grouped_scaled(layout, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(),
                                      pa.data(), ab_type, lda.data(), pb.data(), ab_type, ldb.data(), beta.data(),
                                      pc.data(), c_type, ldc.data(), int64_t(groups.size()), sizes.data(), compute,
                                      scalings.data());
    }
    gemm_status_t run() { return run(true, ab, ct); }

    // Every C and amax_d as the call found them.
    bool untouched() const {
        for (float v : amaxes)
            if (v != amax_sentinel) return false;
        for (std::size_t i = 0; i < c.size(); ++i)
            if (std::memcmp(c[i].data(), c0[i].data(), c[i].size()) != 0) return false;
        return true;
    }

    std::string describe() const {
        std::ostringstream o;
        o << (layout == GEMM_ROW_MAJOR ? "row" : "col") << " " << gemm_dtype_name(ab) << "->" << gemm_dtype_name(ct);
        for (const group_spec &s : groups)
            o << " [" << op_letter(s.ta) << op_letter(s.tb) << " " << s.m << "x" << s.n << "x" << s.k << " x" << s.size
              << " mode " << int(s.mode) << " beta " << s.beta << (s.d_scale ? " d" : "") << (s.amax ? " amax" : "")
              << "]";
        return o.str();
    }
};

// op(A)(i, l) of matrix `item` of group g, dequantized (with its scale).
double op_a(const grouped_call &t, std::size_t g, std::size_t item, int64_t i, int64_t l) {
    const group_spec &s = t.groups[g];
    const int64_t e = s.ta == GEMM_OP_N ? t.index(i, l, t.lda[g]) : t.index(l, i, t.lda[g]);
    double scale = 1.0;
    if (s.mode == GEMM_SCALE_TENSOR) scale = t.a_scales[g][0];
    if (s.mode == GEMM_SCALE_BLOCK) scale = t.a_scales[g][std::size_t(i + (l / 128) * t.scalings[g].ld_a_scale)];
    return scale * fp8_to_double(t.a[item][std::size_t(e)], t.ab);
}

double op_b(const grouped_call &t, std::size_t g, std::size_t item, int64_t l, int64_t j) {
    const group_spec &s = t.groups[g];
    const int64_t e = s.tb == GEMM_OP_N ? t.index(l, j, t.ldb[g]) : t.index(j, l, t.ldb[g]);
    double scale = 1.0;
    if (s.mode == GEMM_SCALE_TENSOR) scale = t.b_scales[g][0];
    if (s.mode == GEMM_SCALE_BLOCK) scale = t.b_scales[g][std::size_t(j / 128 + (l / 128) * t.scalings[g].ld_b_scale)];
    return scale * fp8_to_double(t.b[item][std::size_t(e)], t.ab);
}

// The largest relative rounding of one result into C's type.
double c_rounding(gemm_dtype_t t) { return t == GEMM_BF16 ? 0x1p-8 : t == GEMM_F16 ? 0x1p-11 : 0x1p-23; }

// Checks every C of t (computed) against the float64 loop, every element outside the m x n
// windows untouched, and each group's amax_d: max |D| over the group's matrices before
// d_scale, the sentinel where the group writes no C or asks for none.
void check_result(const grouped_call &t) {
    std::size_t item = 0;
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
        const group_spec &s = t.groups[g];
        const double d = s.d_scale ? double(t.d_scales[g]) : 1.0;
        double amax = 0.0, amax_bound = 0.0;
        for (int64_t x = 0; x < s.size; ++x, ++item) {
            const bytes &got = t.c[item], &before = t.c0[item];
            std::vector<bool> inside(got.size() / dtype_size(t.ct), false);
            for (int64_t j = 0; j < s.n; ++j)
                for (int64_t i = 0; i < s.m; ++i) {
                    double sum = 0.0, size = 0.0;
                    for (int64_t l = 0; l < s.k; ++l) {
                        const double p = op_a(t, g, item, i, l) * op_b(t, g, item, l, j);
                        sum += p;
                        size += std::fabs(p);
                    }
                    const int64_t e = t.index(i, j, t.ldc[g]);
                    inside[std::size_t(e)] = true;
                    const double c0 = s.beta == 0 ? 0.0 : load(before.data(), e, t.ct);
                    const double want = double(s.alpha) * sum + double(s.beta) * c0;
                    amax = std::max(amax, std::fabs(want));
                    const double v = load(got.data(), e, t.ct);
                    // f32 sums of scaled values (each scaled value one f32 rounding), then
                    // d_scale and one rounding into C's type.
                    const double sums = (std::fabs(s.alpha) * size + std::fabs(s.beta * c0)) * double(s.k + 4) * 0x1p-22;
                    amax_bound = std::max(amax_bound, sums);
                    const double bound = d * sums + std::fabs(d * want) * c_rounding(t.ct) + 1e-30;
                    REQUIRE_MESSAGE(std::isfinite(v), t.describe() << ": group " << g << " C[" << item << "](" << i
                                                                   << ", " << j << ") = " << v);
                    CHECK_MESSAGE(std::fabs(v - d * want) <= bound,
                                  t.describe() << ": group " << g << " C[" << item << "](" << i << ", " << j
                                               << ") = " << v << ", want " << d * want);
                }
            for (std::size_t e = 0; e < inside.size(); ++e)
                if (!inside[e])
                    CHECK_MESSAGE(std::memcmp(got.data() + e * dtype_size(t.ct), before.data() + e * dtype_size(t.ct),
                                              dtype_size(t.ct)) == 0,
                                  t.describe() << ": C[" << item << "] element " << e << " outside the window written");
        }
        const bool written = s.amax && s.m > 0 && s.n > 0 && s.size > 0;
        if (!written) {
            CHECK_MESSAGE(t.amaxes[g] == amax_sentinel, t.describe() << ": group " << g << " amax_d written");
            continue;
        }
        // amax is of the f32 sums: within their rounding of the f64 maximum.
        CHECK_MESSAGE(std::fabs(double(t.amaxes[g]) - amax) <= amax_bound + amax * 0x1p-23 + 1e-30,
                      t.describe() << ": group " << g << " amax_d = " << t.amaxes[g] << ", want " << amax);
    }
}

// Ragged groups of a mixture of experts: an empty one (m = 0), one of a single element,
// primes, k not a multiple of 128 (and past it, so block scales change along k), n past 128
// (B's block scales change along n), groups of one matrix and of several; each group its own
// ops, scaling mode, beta (0 with C NaN, or not), d_scale and amax_d.
std::vector<group_spec> ragged_groups(gemm_op_t ta, gemm_op_t tb) {
    std::vector<group_spec> g(6);
    g[0] = {ta, tb, 0, 5, 7, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, true, true};
    g[1] = {ta, tb, 1, 1, 1, 1, GEMM_SCALE_NONE, 1.0f, 0.0f, false, true};
    g[2] = {tb, ta, 7, 13, 131, 3, GEMM_SCALE_BLOCK, 0.75f, 0.0f, true, true};
    g[3] = {ta, tb, 17, 3, 257, 1, GEMM_SCALE_TENSOR, -1.5f, 0.5f, false, true};
    g[4] = {tb, tb, 5, 129, 65, 2, GEMM_SCALE_BLOCK, 1.0f, -2.0f, true, false};
    g[5] = {ta, ta, 3, 2, 0, 2, GEMM_SCALE_BLOCK, 1.0f, 1.5f, true, true};  // k = 0: D = d_scale * beta * C
    return g;
}

}  // namespace

TEST_CASE("fp8 grouped: cpu_ref, cpu_omp and auto against f64 on ragged groups, every layout and op pair") {
    const gemm_op_t ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};
    int cases = 0;
    for (const char *backend : {"cpu_ref", "cpu_omp", ""})
        for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (gemm_op_t ta : ops)
                    for (gemm_op_t tb : ops) {
                        // Each C type in turn, so every one meets every layout.
                        const gemm_dtype_t cts[] = {GEMM_F32, GEMM_BF16, GEMM_F16};
                        grouped_call t;
                        t.layout = layout;
                        t.ab = ab;
                        t.ct = cts[(cases++) % 3];
                        t.groups = ragged_groups(ta, tb);
                        t.build(hash_text(t.describe()));
                        INFO(backend << " " << t.describe());
                        REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
                        const gemm_status_t s = t.run();
                        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
                        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
                        check_result(t);
                    }
}

TEST_CASE("fp8 grouped: amax_d of a group is NaN when any of its matrices' D is, the others' stay finite") {
    for (const char *backend : {"cpu_ref", "cpu_omp"}) {
        grouped_call t;
        t.groups = {{GEMM_OP_N, GEMM_OP_N, 3, 4, 5, 3, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, true},
                    {GEMM_OP_T, GEMM_OP_N, 2, 2, 3, 2, GEMM_SCALE_NONE, 1.0f, 0.0f, false, true}};
        t.build(7);
        t.a[1][0] = 0x7f;  // a NaN in the middle matrix of group 0
        REQUIRE(gemm_set_backend(backend) == GEMM_STATUS_SUCCESS);
        REQUIRE_MESSAGE(t.run() == GEMM_STATUS_SUCCESS, gemm_last_error());
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        CHECK_MESSAGE(std::isnan(t.amaxes[0]), backend);
        CHECK_MESSAGE(std::isfinite(t.amaxes[1]), backend);
        CHECK(t.amaxes[1] > 0.0f);
    }
}

TEST_CASE("fp8 grouped: gemm_ex_grouped with FP8, NULL scalings and scales of 1 give the same C") {
    for (const char *backend : {"cpu_ref", "cpu_omp"})
        for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR}) {
            grouped_call t;
            t.layout = layout;
            t.ct = GEMM_BF16;
            t.groups = {{GEMM_OP_N, GEMM_OP_T, 5, 7, 130, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, false},
                        {GEMM_OP_T, GEMM_OP_N, 1, 3, 2, 1, GEMM_SCALE_TENSOR, 2.0f, 0.5f, false, false}};
            t.build(11);
            for (auto &x : t.a_scales) x = {1.0f};
            for (auto &x : t.b_scales) x = {1.0f};
            for (std::size_t g = 0; g < t.groups.size(); ++g) t.point(g);
            INFO(backend << " " << t.describe());
            REQUIRE(gemm_set_backend(backend) == GEMM_STATUS_SUCCESS);
            grouped_call plain = t, null_scalings = t;
            plain.pc.clear();
            null_scalings.pc.clear();
            for (auto &c : plain.c) plain.pc.push_back(c.data());
            for (auto &c : null_scalings.c) null_scalings.pc.push_back(c.data());
            REQUIRE_MESSAGE(t.run() == GEMM_STATUS_SUCCESS, gemm_last_error());
            REQUIRE_MESSAGE(plain.run(false, t.ab, t.ct) == GEMM_STATUS_SUCCESS, gemm_last_error());
            REQUIRE_MESSAGE(gemm_ex_grouped_scaled(layout, t.ta.data(), t.tb.data(), t.m.data(), t.n.data(), t.k.data(),
                                                   t.alpha.data(), t.pa.data(), t.ab, t.lda.data(), t.pb.data(), t.ab,
                                                   t.ldb.data(), t.beta.data(), null_scalings.pc.data(), t.ct,
                                                   t.ldc.data(), 2, t.sizes.data(), GEMM_F32,
                                                   nullptr) == GEMM_STATUS_SUCCESS,
                            gemm_last_error());
            REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
            for (std::size_t i = 0; i < t.c.size(); ++i) {
                CHECK(t.c[i] == plain.c[i]);
                CHECK(t.c[i] == null_scalings.c[i]);
                CHECK(t.c[i] != t.c0[i]);
            }
        }
}

namespace {

// Three groups, every one computing (group 1 of one matrix), in a column-major e4m3 call
// into f32: what each refusal below edits.
grouped_call refusal_call() {
    grouped_call t;
    t.groups = {{GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 2, GEMM_SCALE_TENSOR, 1.0f, 0.0f, true, true},
                {GEMM_OP_T, GEMM_OP_N, 2, 3, 130, 1, GEMM_SCALE_BLOCK, 1.0f, 0.5f, false, true},
                {GEMM_OP_N, GEMM_OP_T, 4, 2, 3, 2, GEMM_SCALE_BLOCK, 1.0f, 0.0f, false, false}};
    t.build(3);
    return t;
}

// t run (as edited) is refused with status and a message holding `what`, nothing written.
void expect_refused(grouped_call &t, gemm_status_t status, const std::string &what, bool scaled = true,
                    gemm_dtype_t ab = GEMM_F8_E4M3, gemm_dtype_t ct = GEMM_F32) {
    const gemm_status_t s = t.run(scaled, ab, ct);
    CHECK_MESSAGE(s == status, what << ": got " << gemm_status_string(s) << ": " << gemm_last_error());
    CHECK_MESSAGE(contains(gemm_last_error(), what), "want '" << what << "' in: " << gemm_last_error());
    CHECK_MESSAGE(t.untouched(), what << ": a C or amax_d was written");
}

}  // namespace

TEST_CASE("fp8 grouped errors: bad scalings[g] refused naming the group and field, every C untouched") {
    for (const char *backend : {"cpu_ref", "cpu_omp", ""}) {
        INFO(backend);
        REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
        {
            grouped_call t = refusal_call();
            t.scalings[1].struct_size = 8;
            expect_refused(t, GEMM_STATUS_INVALID_VALUE, "group 1: parameter 21: scalings[1].struct_size = 8");
        }
        {
            grouped_call t = refusal_call();
            t.scalings[2].struct_size = 2 * int64_t(sizeof(gemm_scaling_t));
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 2: parameter 21: scalings[2].struct_size = " +
                               std::to_string(2 * sizeof(gemm_scaling_t)) + " must equal scalings[0].struct_size");
        }
        {
            grouped_call t = refusal_call();
            int raw = 3;  // not a gemm_scale_mode_t, as a C caller may pass it
            std::memcpy(&t.scalings[2].mode, &raw, sizeof raw);
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 2: parameter 21: scalings[2].mode = 3 is not a gemm_scale_mode_t");
        }
        {
            grouped_call t = refusal_call();
            t.scalings[1].b_scale = nullptr;
            expect_refused(t, GEMM_STATUS_INVALID_POINTER,
                           "group 1: parameter 21: scalings[1].b_scale is NULL but mode is GEMM_SCALE_BLOCK");
        }
        {
            grouped_call t = refusal_call();
            t.scalings[0].a_scale = nullptr;
            expect_refused(t, GEMM_STATUS_INVALID_POINTER,
                           "group 0: parameter 21: scalings[0].a_scale is NULL but mode is GEMM_SCALE_TENSOR");
        }
        {
            grouped_call t = refusal_call();
            t.scalings[0].mode = GEMM_SCALE_NONE;  // a_scale still set
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 0: parameter 21: scalings[0].a_scale is set but mode is GEMM_SCALE_NONE");
        }
        {
            // ld_a_scale is judged against the group's own m: 3 serves group 1 (m = 2), not
            // group 2 (m = 4).
            grouped_call t = refusal_call();
            t.scalings[1].ld_a_scale = 3;
            t.scalings[2].ld_a_scale = 3;
            expect_refused(t, GEMM_STATUS_INVALID_LEADING_DIM,
                           "group 2: parameter 21: scalings[2].ld_a_scale = 3 must be 0 (the least) or >= max(1, m "
                           "= 4)");
        }
        {
            grouped_call t = refusal_call();
            t.scalings[2].ld_b_scale = -1;
            expect_refused(t, GEMM_STATUS_INVALID_LEADING_DIM, "group 2: parameter 21: scalings[2].ld_b_scale = -1");
        }
        {
            grouped_call t = refusal_call();  // amax_d inside the group's own second C
            t.scalings[0].amax_d = reinterpret_cast<float *>(t.c[1].data()) + 1;
            expect_refused(t, GEMM_STATUS_INVALID_VALUE, "group 0: parameter 21: scalings[0].amax_d and C overlap");
        }
        {
            grouped_call t = refusal_call();  // amax_d inside another group's C
            t.scalings[1].amax_d = reinterpret_cast<float *>(t.c[0].data()) + 2;
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 1: parameter 21: scalings[1].amax_d and C[0] overlap: both are written");
        }
        {
            grouped_call t = refusal_call();  // two groups' amax_d in one float
            t.scalings[1].amax_d = t.scalings[0].amax_d;
            expect_refused(t, GEMM_STATUS_INVALID_VALUE, "amax_d overlap: both are written");
        }
        {
            grouped_call t = refusal_call();  // a scale read from another group's C
            t.scalings[1].d_scale = reinterpret_cast<const float *>(t.c[3].data());
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 1: parameter 21: scalings[1].d_scale and C[3] overlap: one is written while the "
                           "other is read");
        }
        {
            grouped_call t = refusal_call();  // a group's scale is another group's amax_d
            t.scalings[2].d_scale = t.scalings[1].amax_d;
            expect_refused(t, GEMM_STATUS_INVALID_VALUE,
                           "group 2: parameter 21: scalings[2].d_scale and scalings[1].amax_d overlap");
        }
        {
            grouped_call t = refusal_call();  // scales with types that take none
            expect_refused(t, GEMM_STATUS_NOT_SUPPORTED,
                           "parameter 9: a_type = f32: scales take FP8 types (GEMM_F8_E4M3, GEMM_F8_E5M2)", true,
                           GEMM_F32, GEMM_F32);
            CHECK(!contains(gemm_last_error(), "group"));
        }
        {
            grouped_call t = refusal_call();  // ... even with no group
            const gemm_status_t s =
                gemm_ex_grouped_scaled(GEMM_COL_MAJOR, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                       GEMM_F16, nullptr, nullptr, GEMM_F16, nullptr, nullptr, nullptr, GEMM_F32,
                                       nullptr, 0, nullptr, GEMM_F32, t.scalings.data());
            CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
            CHECK(contains(gemm_last_error(), "a_type = f16: scales take FP8 types"));
        }
        {
            grouped_call t = refusal_call();
            expect_refused(t, GEMM_STATUS_NOT_SUPPORTED, "c_type = e5m2: FP8 is an input type only", false,
                           GEMM_F8_E5M2, GEMM_F8_E5M2);
        }
        {
            grouped_call t = refusal_call();
            const gemm_status_t s = t.run(true, GEMM_F8_E4M3, GEMM_BF16, GEMM_F16);
            CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
            CHECK(contains(gemm_last_error(), "compute_type = f16 is not supported for a_type = e4m3"));
            CHECK(t.untouched());
        }
        {
            // The last group's matrix refused: the earlier groups are not computed either.
            grouped_call t = refusal_call();
            t.pa[4] = nullptr;
            expect_refused(t, GEMM_STATUS_INVALID_POINTER, "group 2: parameter 8: A[4] is NULL");
        }
        {
            // A group that writes no C needs no scales; the others compute.
            grouped_call t = refusal_call();
            t.sizes[1] = 0;
            t.groups[1].size = 0;
            t.scalings[1].a_scale = t.scalings[1].b_scale = nullptr;
            t.pa.erase(t.pa.begin() + 2);
            t.pb.erase(t.pb.begin() + 2);
            t.pc.erase(t.pc.begin() + 2);
            CHECK_MESSAGE(t.run() == GEMM_STATUS_SUCCESS, gemm_last_error());
            CHECK(t.amaxes[1] == amax_sentinel);
            CHECK(t.amaxes[0] != amax_sentinel);
        }
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }
}

TEST_CASE("fp8 grouped: scalings built with a larger gemm_scaling_t are read at their own stride") {
    // A caller built with a newer gemm.h: each struct 16 bytes larger, those bytes 0.
    struct newer {
        gemm_scaling_t x;
        int64_t later[2];
    };
    grouped_call t = refusal_call();
    grouped_call plain = t;
    plain.pc.clear();
    for (auto &c : plain.c) plain.pc.push_back(c.data());
    for (std::size_t g = 0; g < plain.groups.size(); ++g) plain.point(g);
    std::vector<newer> wide(t.scalings.size());
    for (std::size_t g = 0; g < wide.size(); ++g) {
        std::memset(&wide[g], 0, sizeof wide[g]);
        wide[g].x = t.scalings[g];
        wide[g].x.struct_size = int64_t(sizeof(newer));
    }
    REQUIRE_MESSAGE(plain.run() == GEMM_STATUS_SUCCESS, gemm_last_error());
    const float amax0 = plain.amaxes[0];
    t.amaxes[0] = amax_sentinel;
    REQUIRE_MESSAGE(gemm_ex_grouped_scaled(GEMM_COL_MAJOR, t.ta.data(), t.tb.data(), t.m.data(), t.n.data(), t.k.data(),
                                           t.alpha.data(), t.pa.data(), t.ab, t.lda.data(), t.pb.data(), t.ab,
                                           t.ldb.data(), t.beta.data(), t.pc.data(), t.ct, t.ldc.data(), 3,
                                           t.sizes.data(), GEMM_F32, &wide[0].x) == GEMM_STATUS_SUCCESS,
                    gemm_last_error());
    for (std::size_t i = 0; i < t.c.size(); ++i) CHECK(t.c[i] == plain.c[i]);
    CHECK(t.amaxes[0] == amax0);
    wide[1].later[0] = 1;  // a field this library does not have, set
    CHECK(gemm_ex_grouped_scaled(GEMM_COL_MAJOR, t.ta.data(), t.tb.data(), t.m.data(), t.n.data(), t.k.data(),
                                 t.alpha.data(), t.pa.data(), t.ab, t.lda.data(), t.pb.data(), t.ab, t.ldb.data(),
                                 t.beta.data(), t.pc.data(), t.ct, t.ldc.data(), 3, t.sizes.data(), GEMM_F32,
                                 &wide[0].x) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "group 1: parameter 21: scalings[1].struct_size"));
}

TEST_CASE("fp8 grouped: pointer-array and strided batches still refuse FP8") {
    std::vector<uint8_t> a(16, 0x38), b(16, 0x38);
    std::vector<float> c(16, 7.0f), c2(16, 7.0f);
    const void *pa[] = {a.data(), a.data()}, *pb[] = {b.data(), b.data()};
    void *pc[] = {c.data(), c2.data()};
    const float alpha = 1, beta = 0;
    CHECK(gemm_ex_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &alpha, pa, GEMM_F8_E4M3, 2, pb, GEMM_F8_E4M3,
                          2, &beta, pc, GEMM_F32, 2, 2, GEMM_F32) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "or groups (gemm_ex_grouped, gemm_ex_grouped_scaled), not a batch"));
    CHECK(c[0] == 7.0f);
    CHECK(c2[0] == 7.0f);
}
