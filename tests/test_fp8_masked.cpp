// test_fp8_masked.cpp: masked FP8 batches (gemm_ex_masked_scaled), the experts of a mixture
// of experts whose token counts arrive with the data: cpu_ref, cpu_omp and auto against a
// float64 loop over the dequantized inputs, each matrix computing its rows[i] rows and leaving
// the rest of its C and the bytes between the matrices untouched; and every refusal naming
// the parameter, C untouched.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fp8_grouped_case.hpp"
#include "harness.hpp"

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Five experts of up to m = 37 rows: none, all, one, and two between; per-tensor, block and no
// scales, each its own d_scale and amax_d; k = 131 (block scales change along k), n = 13.
masked_call expert_batch(gemm_layout_t layout, gemm_dtype_t ab, gemm_dtype_t ct, gemm_op_t ta, gemm_op_t tb, float beta,
                         bool share_b) {
    masked_call x;
    x.t.layout = layout;
    x.t.ab = ab;
    x.t.ct = ct;
    x.m = 37;
    x.rows = {0, 37, 1, 20, 36};
    x.share_b = share_b;
    const group_spec e = {ta, tb, 0, 13, 131, 1, GEMM_SCALE_TENSOR, 0.75f, beta, true, true};
    std::vector<group_spec> specs(x.rows.size(), e);
    specs[1].mode = GEMM_SCALE_BLOCK;
    specs[2].mode = GEMM_SCALE_NONE;
    specs[3].mode = GEMM_SCALE_BLOCK;
    specs[3].d_scale = false;
    specs[4].amax = false;
    x.t.groups = specs;
    x.build(specs, hash_text(x.t.describe()) + (share_b ? 1 : 0));
    return x;
}

// A small batch for the refusals: three matrices of up to 4 rows, per-tensor scales and amax_d.
masked_call small_batch() {
    masked_call x;
    x.m = 4;
    x.rows = {2, 4, 0};
    const group_spec e = {GEMM_OP_T, GEMM_OP_N, 0, 3, 5, 1, GEMM_SCALE_TENSOR, 1.0f, 0.0f, false, true};
    x.build(std::vector<group_spec>(3, e), 64);
    return x;
}

void expect_refused(masked_call &x, gemm_status_t status, const std::string &message, const int32_t *rows) {
    const gemm_status_t s = x.run(x.a.data(), x.b.data(), x.c.data(), rows, x.t.scalings.data());
    CHECK_MESSAGE(s == status, gemm_last_error());
    CHECK_MESSAGE(contains(gemm_last_error(), message), gemm_last_error());
    CHECK(x.untouched());
}

}  // namespace

TEST_CASE("fp8 masked: cpu_ref, cpu_omp and auto compute each matrix's rows and nothing else") {
    const gemm_op_t ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};
    const gemm_dtype_t cts[] = {GEMM_F32, GEMM_BF16, GEMM_F16};
    int cases = 0;
    for (const char *backend : {"cpu_ref", "cpu_omp", ""})
        for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
            for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
                for (gemm_op_t ta : ops)
                    for (gemm_op_t tb : ops) {
                        // beta 0 (C NaN) and not, B shared and not, each C type, in turn.
                        const int turn = cases++;
                        masked_call x =
                            expert_batch(layout, ab, cts[turn % 3], ta, tb, turn % 2 ? 0.5f : 0.0f, turn % 4 == 1);
                        INFO(backend << " " << x.t.describe() << (x.share_b ? " shared B" : ""));
                        REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
                        const gemm_status_t s = x.run();
                        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
                        REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, gemm_last_error());
                        x.take(x.c);
                        const std::string wrong = x.mismatch();
                        CHECK_MESSAGE(wrong.empty(), wrong);
                    }
}

TEST_CASE("fp8 masked: a matrix of no rows writes amax_d 0; m, n or batch_count 0 computes nothing") {
    masked_call x = small_batch();
    x.t.amaxes[2] = 7.0f;
    REQUIRE_MESSAGE(x.run() == GEMM_STATUS_SUCCESS, gemm_last_error());
    CHECK(x.t.amaxes[2] == 0.0f);
    // Nothing to compute: rows is not read and may be NULL.
    masked_call y = small_batch();
    const group_spec &s = y.t.groups[0];
    for (int64_t m : {int64_t(0), int64_t(4)}) {
        const int64_t n = m == 0 ? s.n : 0;
        CHECK(gemm_ex_masked_scaled(y.t.layout, s.ta, s.tb, m, n, s.k, &s.alpha, y.a.data(), y.t.ab, y.t.lda[0],
                                    y.stride_a, y.b.data(), y.t.ab, y.t.ldb[0], y.stride_b, &s.beta, y.c.data(), y.t.ct,
                                    y.t.ldc[0], y.stride_c, 3, nullptr, GEMM_F32,
                                    y.t.scalings.data()) == GEMM_STATUS_SUCCESS);
    }
    CHECK(gemm_ex_masked_scaled(y.t.layout, s.ta, s.tb, 4, s.n, s.k, &s.alpha, y.a.data(), y.t.ab, y.t.lda[0],
                                y.stride_a, y.b.data(), y.t.ab, y.t.ldb[0], y.stride_b, &s.beta, y.c.data(), y.t.ct,
                                y.t.ldc[0], y.stride_c, 0, nullptr, GEMM_F32, nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(y.untouched());
}

TEST_CASE("fp8 masked errors: each refused naming the parameter, every C and amax_d untouched") {
    for (const char *backend : {"cpu_ref", "cpu_omp", ""}) {
        INFO(backend);
        REQUIRE(gemm_set_backend(*backend ? backend : nullptr) == GEMM_STATUS_SUCCESS);
        {
            masked_call x = small_batch();
            expect_refused(x, GEMM_STATUS_INVALID_POINTER, "parameter 22: rows is NULL", nullptr);
        }
        for (int32_t bad : {-1, 5}) {
            masked_call x = small_batch();
            x.rows[1] = bad;
            expect_refused(x, GEMM_STATUS_INVALID_VALUE,
                           "parameter 22: rows[1] = " + std::to_string(bad) + " must be in [0, m = 4]", x.rows.data());
        }
        {
            // The row counts inside C: read while C is written.
            masked_call x = small_batch();
            expect_refused(x, GEMM_STATUS_INVALID_VALUE, "parameter 22: rows and C[1] overlap",
                           reinterpret_cast<const int32_t *>(x.c.data() + x.stride_c * dtype_size(x.t.ct)));
        }
        {
            masked_call x = small_batch();
            x.t.scalings[1].a_scale = nullptr;
            expect_refused(x, GEMM_STATUS_INVALID_POINTER,
                           "matrix 1: parameter 24: scalings[1].a_scale is NULL but mode is GEMM_SCALE_TENSOR",
                           x.rows.data());
        }
        {
            masked_call x = small_batch();
            x.t.scalings[2].struct_size = 8;
            expect_refused(x, GEMM_STATUS_INVALID_VALUE, "parameter 24: scalings[2].struct_size", x.rows.data());
        }
        {
            // Two matrices' amax_d in one float.
            masked_call x = small_batch();
            x.t.scalings[1].amax_d = x.t.scalings[0].amax_d;
            expect_refused(x, GEMM_STATUS_INVALID_VALUE, "overlap", x.rows.data());
        }
        {
            masked_call x = small_batch();
            x.stride_a = -1;
            expect_refused(x, GEMM_STATUS_INVALID_STRIDE, "parameter 11: stride_a = -1 must be >= 0", x.rows.data());
        }
        {
            // C matrices that overlap: stride_c less than one C.
            masked_call x = small_batch();
            x.stride_c = 1;
            const gemm_status_t s = x.run();
            CHECK(s != GEMM_STATUS_SUCCESS);
            CHECK_MESSAGE(contains(gemm_last_error(), "C"), gemm_last_error());
            CHECK(x.untouched());
        }
        {
            masked_call x = small_batch();
            const group_spec &s = x.t.groups[0];
            const float one = 1.0f, zero = 0.0f;
            CHECK(gemm_ex_masked_scaled(x.t.layout, s.ta, s.tb, 4, s.n, s.k, &one, x.a.data(), GEMM_F32, 5, x.stride_a,
                                        x.b.data(), GEMM_F32, 5, x.stride_b, &zero, x.c.data(), GEMM_F32, x.t.ldc[0],
                                        x.stride_c, 3, x.rows.data(), GEMM_F32, nullptr) == GEMM_STATUS_NOT_SUPPORTED);
            CHECK_MESSAGE(contains(gemm_last_error(), "parameter 9: a_type = f32: masked batches take FP8 types"),
                          gemm_last_error());
            CHECK(x.untouched());
        }
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }
}
