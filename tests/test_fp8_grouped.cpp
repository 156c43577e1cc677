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

#include "fp8_grouped_case.hpp"
#include "harness.hpp"

using namespace gemm_test;
using namespace gemm_test::detail;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

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
                        const std::string wrong = grouped_mismatch(t);
                        CHECK_MESSAGE(wrong.empty(), wrong);
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
