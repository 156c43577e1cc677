// test_skinny_view.cpp: how cuda_tiled's skinny kernels see a problem (backends/cuda_tiled/skinny/
// skinny_view.cpp, plain C++, so built and run without CUDA too): the orientation each op pair
// and shape takes (as stored for C of few columns, mirrored as C^T = op(B)^T op(A)^T for C of few
// rows; the narrow operand along k or along its short side), the reasons of every refusal, and a host model of the
// kernels' reads and stores through the view, against cpu_ref: both layouts, every op pair, f16 and bf16 with C in
// their type and in f32, beta = 0 (NaN in C) and not, leading dimensions larger than needed, strided batches (the
// weights shared too). The kernels themselves run only on a GPU (tests/gpu, "skinny").
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"
#include "harness.hpp"

using namespace gemm_test;
namespace ct = gemm::cuda_tiled;

namespace {

gemm::transpose op_of(gemm_op_t o) { return o == GEMM_OP_N ? gemm::transpose::n : gemm::transpose::t; }
gemm::dtype dtype_of(gemm_dtype_t t) {
    return t == GEMM_F16 ? gemm::dtype::f16 : t == GEMM_BF16 ? gemm::dtype::bf16 : gemm::dtype::f32;
}

// The canonical problem of case c on host buffers, by the API's rule written again: row-major
// storage is the column-major transpose, so a row-major call computes C^T = op(B)^T op(A)^T with
// A and B swapped, their ops kept, m and n swapped.
gemm::problem canonical(const gemm_case &c, const void *A, const void *B, void *C) {
    gemm::problem p;
    const bool col = c.layout == GEMM_COL_MAJOR;
    p.op_a = op_of(col ? c.transa : c.transb);
    p.op_b = op_of(col ? c.transb : c.transa);
    p.m = col ? c.m : c.n;
    p.n = col ? c.n : c.m;
    p.k = c.k;
    p.ab_type = dtype_of(c.ab_type);
    p.c_type = dtype_of(c.c_type);
    p.a = col ? A : B;
    p.lda = col ? c.lda : c.ldb;
    p.stride_a = col ? c.stride_a : c.stride_b;
    p.b = col ? B : A;
    p.ldb = col ? c.ldb : c.lda;
    p.stride_b = col ? c.stride_b : c.stride_a;
    p.c = C;
    p.ldc = c.ldc;
    p.stride_c = c.stride_c;
    p.batch = c.batch;
    p.alpha = c.alpha;
    p.beta = c.beta;
    return p;
}

// What a skinny kernel of form `form` computes for p through view v, element by element as the
// kernels address them: op(A) row i along k at a + i lda (along_k) or op(A) column l along m at
// a + l lda (a_along_m), op(B) column j along k at b + j ldb (op(B) = N) or row l along n at
// b + l ldb (T), C's element (i, j) at skinny_c_offset, read only where beta != 0. Sums in
// double, rounded into C's type.
void model_run(ct::operand_form form, const gemm::problem &p, const ct::skinny_view &v, gemm_dtype_t ab,
               gemm_dtype_t c_type) {
    for (int64_t mat = 0; mat < p.batch; ++mat)
        for (int64_t i = 0; i < v.m; ++i)
            for (int64_t j = 0; j < v.n; ++j) {
                double sum = 0.0;
                for (int64_t l = 0; l < p.k; ++l) {
                    const int64_t ai =
                        mat * v.stride_a + (form == ct::operand_form::along_k ? i * v.lda + l : i + l * v.lda);
                    const int64_t bi = mat * v.stride_b + (v.op_b == gemm::transpose::t ? l * v.ldb + j : j * v.ldb + l);
                    sum += load(v.a, ai, ab) * load(v.b, bi, ab);
                }
                const int64_t ci = mat * p.stride_c + ct::skinny_c_offset(v.c_transposed, i, j, p.ldc);
                double out = p.alpha * sum;
                if (p.beta != 0.0) out += p.beta * load(p.c, ci, c_type);
                store(p.c, ci, c_type, out);
            }
}

// The ops a kernel of each form reads, as the kernels hard-code op(A)'s (no op parameter); op(B)
// along k or n, the kernels' X_ALONG_N flag.
bool form_reads(ct::operand_form form, const ct::skinny_view &v) {
    const bool b_read = v.op_b == gemm::transpose::n || v.op_b == gemm::transpose::t;
    if (form == ct::operand_form::along_k) return v.op_a == gemm::transpose::t && b_read;
    return v.op_a == gemm::transpose::n && b_read;
}

struct shape {
    int64_t m, n, k, batch;  // column-major C is m x n (the row-major twin: n x m)
    double alpha, beta;
};

// C of few rows (m of 1, 7, 8, 9, 16, 31 and 32 with n past 32), few rows and columns, only few
// columns, and neither; k of 1, primes and a multiple of 8; batches strided, the weights shared.
constexpr shape shapes[] = {{1, 67, 33, 1, 1.0, 0.0},  {7, 41, 7, 1, 0.5, -1.0},   {8, 70, 40, 1, 1.0, 0.0},
                            {9, 33, 17, 3, 1.0, 0.5},  {16, 53, 1, 1, -1.0, 0.25}, {31, 37, 9, 2, 2.0, 0.0},
                            {32, 64, 24, 1, 1.0, 1.0}, {5, 3, 20, 1, 1.0, 0.5},    {33, 8, 12, 1, 1.0, 0.0},
                            {40, 40, 8, 1, 1.0, 0.0}};

// The case of sh in a layout and op pair: leading dimensions 3 past the least (5 for C), the
// shape with batch 2 sharing the operand of C's many columns (stride 0).
gemm_case case_of(const shape &sh, gemm_layout_t layout, gemm_op_t ta, gemm_op_t tb, gemm_dtype_t ab,
                  gemm_dtype_t c_type) {
    const bool col = layout == GEMM_COL_MAJOR;
    gemm_case c = make_case(ab, c_type, entry::ex, layout, ta, tb, col ? sh.m : sh.n, col ? sh.n : sh.m, sh.k, 3,
                            sh.alpha, sh.beta);
    c.ldc += 2;
    if (sh.batch > 1) set_batch(c, sh.batch, !col && sh.batch == 2, col && sh.batch == 2, 5);
    return c;
}

// The orientation line c should take for canonical p, written from the table in NOTES.md
// (Skinny kernels on C of few rows): along_k reads op(A) = T as stored and op(B) = N mirrored,
// a_along_m op(A) = N as stored and op(B) = T mirrored, as stored first. false when the line
// refuses p.
bool expected_orientation(const ct::kernel_config &c, const gemm::problem &p, ct::skinny_orientation &o) {
    const bool ta = p.op_a == gemm::transpose::t, tb = p.op_b == gemm::transpose::t;
    const bool along_k = c.operands == ct::operand_form::along_k;
    const bool reads_stored = along_k ? ta : !ta, reads_mirror = along_k ? !tb : tb;
    if (reads_stored && p.n <= c.bn) o = ct::skinny_orientation::as_stored;
    else if (reads_mirror && p.m <= c.bn) o = ct::skinny_orientation::mirrored;
    else return false;
    return true;
}

// What the refusal of line c must say for canonical p.
std::vector<std::string> expected_reasons(const ct::kernel_config &c, const gemm::problem &p) {
    const bool ta = p.op_a == gemm::transpose::t, tb = p.op_b == gemm::transpose::t;
    const bool along_k = c.operands == ct::operand_form::along_k;
    const bool reads_stored = along_k ? ta : !ta, reads_mirror = along_k ? !tb : tb;
    const std::string bn = std::to_string(c.bn);
    if (reads_stored && reads_mirror) return {"more than " + bn + " columns", "more than " + bn + " rows"};
    if (reads_stored) return {"more than " + bn + " columns"};
    if (reads_mirror) return {"more than " + bn + " rows", "mirror"};
    if (along_k) return {"not stored along k", "the _nn skinny kernels read this op pair"};
    return {"not stored along m or n", "the skinny kernels without _nn read this op pair"};
}

struct selection_guard {
    explicit selection_guard(const char *spec) { REQUIRE(gemm_set_backend(spec) == GEMM_STATUS_SUCCESS); }
    ~selection_guard() { gemm_set_backend(nullptr); }
};

}  // namespace

TEST_CASE("skinny_view: the form each op pair takes as stored and mirrored") {
    using gemm::transpose;
    CHECK(ct::skinny_form_as_stored(transpose::t, transpose::n) == ct::operand_form::along_k);
    CHECK(ct::skinny_form_as_stored(transpose::n, transpose::n) == ct::operand_form::a_along_m);
    CHECK_FALSE(ct::skinny_form_as_stored(transpose::n, transpose::t));
    CHECK_FALSE(ct::skinny_form_as_stored(transpose::t, transpose::t));
    CHECK(ct::skinny_form_mirrored(transpose::t, transpose::n) == ct::operand_form::along_k);
    CHECK(ct::skinny_form_mirrored(transpose::t, transpose::t) == ct::operand_form::a_along_m);
    CHECK_FALSE(ct::skinny_form_mirrored(transpose::n, transpose::n));
    CHECK_FALSE(ct::skinny_form_mirrored(transpose::n, transpose::t));
    CHECK_FALSE(ct::skinny_form_mirrored(transpose::c, transpose::n));
    // Every real op pair has a reading both ways; X along n where op(B) = T as stored, op(A) = N
    // mirrored. The default rule's forms above take X along k only.
    for (transpose a : {transpose::n, transpose::t})
        for (transpose b : {transpose::n, transpose::t}) {
            const std::optional<ct::skinny_reading> s = ct::skinny_reading_as_stored(a, b),
                                                    m = ct::skinny_reading_mirrored(a, b);
            REQUIRE((s && m));
            CHECK(s->form == (a == transpose::t ? ct::operand_form::along_k : ct::operand_form::a_along_m));
            CHECK(s->x_along_n == (b == transpose::t));
            CHECK(m->form == (b == transpose::n ? ct::operand_form::along_k : ct::operand_form::a_along_m));
            CHECK(m->x_along_n == (a == transpose::n));
        }
    CHECK_FALSE(ct::skinny_reading_as_stored(transpose::t, transpose::c));
    CHECK_FALSE(ct::skinny_reading_mirrored(transpose::n, transpose::c));
    // The mirror swaps the operands and their extents and flips both ops; C stays the caller's.
    gemm::problem p;
    p.op_a = transpose::t;
    p.op_b = transpose::n;
    p.m = 3;
    p.n = 1000;
    int a = 0, b = 0;
    p.a = &a;
    p.b = &b;
    p.lda = 16;
    p.ldb = 24;
    p.stride_a = 100;
    p.stride_b = 0;
    const ct::skinny_view v = ct::skinny_view_of(p, ct::skinny_orientation::mirrored);
    CHECK((v.op_a == transpose::t && v.op_b == transpose::n && v.m == 1000 && v.n == 3));
    CHECK((v.a == &b && v.b == &a && v.lda == 24 && v.ldb == 16 && v.stride_a == 0 && v.stride_b == 100));
    CHECK(v.c_transposed);
    CHECK(ct::skinny_c_offset(true, 5, 2, 7) == 37);
    CHECK(ct::skinny_c_offset(false, 5, 2, 7) == 19);
}

TEST_CASE("skinny_view: every skinny line's orientation and refusals, and its kernel's model against cpu_ref") {
    int64_t modelled = 0, refused = 0, mirrored = 0, along_n = 0, along_n_mirrored = 0;
    for (const shape &sh : shapes)
        for (gemm_layout_t layout : {GEMM_COL_MAJOR, GEMM_ROW_MAJOR})
            for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
                for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T})
                    for (auto [ab, c_type] : {std::pair{GEMM_F16, GEMM_F16}, std::pair{GEMM_F16, GEMM_F32},
                                              std::pair{GEMM_BF16, GEMM_BF16}, std::pair{GEMM_BF16, GEMM_F32}}) {
                        const gemm_case c = case_of(sh, layout, ta, tb, ab, c_type);
                        const operands o = make_operands(c);
                        std::vector<double> expected;
                        for (const ct::kernel_config &line : ct::kernel_table) {
                            if (line.family != ct::kernel_family::skinny) continue;
                            const std::string where = c.describe() + " line " + std::to_string(line.bm) + "x" +
                                                      std::to_string(line.bn) +
                                                      (line.operands == ct::operand_form::a_along_m ? "_nn" : "");
                            bytes got = o.c0;
                            const gemm::problem p = canonical(c, o.a_ptr(), o.b_ptr(), got.data());
                            ct::skinny_orientation want{}, orientation{};
                            const std::string why = ct::skinny_orientation_for(line, p, orientation);
                            if (!expected_orientation(line, p, want)) {
                                CHECK_MESSAGE(!why.empty(), where);
                                for (const std::string &part : expected_reasons(line, p))
                                    CHECK_MESSAGE(why.find(part) != std::string::npos, where << ": " << why);
                                ++refused;
                                continue;
                            }
                            REQUIRE_MESSAGE(why.empty(), where << ": " << why);
                            CHECK_MESSAGE(orientation == want, where);
                            const ct::skinny_view v = ct::skinny_view_of(p, orientation);
                            CHECK_MESSAGE(form_reads(line.operands, v), where);
                            CHECK_MESSAGE(v.n <= line.bn, where);
                            if (expected.empty()) {
                                selection_guard sel("cpu_ref");
                                const run_result r = run_host(c, o);
                                REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, r.error);
                                expected = window_values(c, r.c);
                            }
                            model_run(line.operands, p, v, ab, c_type);
                            const comparison cmp = compare_result(c, o, got, expected);
                            CHECK_MESSAGE(cmp.ok, where << ": " << cmp.first);
                            ++modelled;
                            if (orientation == ct::skinny_orientation::mirrored) ++mirrored;
                            if (v.op_b == gemm::transpose::t) {
                                ++along_n;
                                if (orientation == ct::skinny_orientation::mirrored) ++along_n_mirrored;
                            }
                        }
                    }
    MESSAGE(modelled << " model runs checked (" << mirrored << " mirrored, " << along_n << " with X along n, "
                     << along_n_mirrored << " of them mirrored), " << refused << " refusals");
    CHECK(mirrored > 0);
    CHECK(modelled > mirrored);
    CHECK(along_n > along_n_mirrored);
    CHECK(along_n_mirrored > 0);
}
