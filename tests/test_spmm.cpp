// test_spmm.cpp: gemm_spmm_csr and gemm_spmm_coo on host memory: cpu_ref against the test's
// own oracle, every other backend that serves them against cpu_ref's result and the oracle,
// over every dtype, layout, op pair, index type and base, awkward sizes (0, 1, primes, n = 1),
// empty rows, nnz = 0, unsorted input and COO duplicates, padded leading dimensions; beta = 0
// with NaN in C; alpha = 0 with NaN in A and B; validation refusing out-of-bounds and unsorted
// input; argument errors one by one (status, message naming the parameter, C untouched);
// forced backends that refuse; and, in its own CTest run, the GEMM_VERBOSE trace.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gemm/gemm.hpp"
#include "raw_enum_calls.h"
#include "spmm_case.hpp"

using namespace gemm_test;

namespace {

constexpr gemm_dtype_t all_types[] = {GEMM_F32, GEMM_F64, GEMM_C32, GEMM_C64};
constexpr gemm_layout_t all_layouts[] = {GEMM_COL_MAJOR, GEMM_ROW_MAJOR};
constexpr gemm_op_t all_ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};

// Forces a backend for the scope (auto for nullptr) and puts auto back after.
struct forced {
    explicit forced(const char *name) { status = gemm_set_backend(name); }
    ~forced() { gemm_set_backend(nullptr); }
    gemm_status_t status;
};

// m, n, k: empty each way, 1s, SpMV (n = 1) of prime sizes, primes, a column block's edge
// (16) and its neighbours for cpu_omp's accumulators, more rows than a chunk.
struct shape {
    int64_t m, n, k;
};
const shape shapes[] = {{0, 5, 3},   {5, 0, 3},   {4, 3, 0},   {1, 1, 1},  {13, 1, 7},
                        {7, 17, 11}, {31, 16, 5}, {2, 33, 19}, {37, 3, 23}};

// The alpha, beta pairs the cases take in turn: beta = 0 (C poisoned), 1, a general one;
// alpha = 0 (A and B not read); complex parts for complex types.
struct scalars {
    double alpha, alpha_imag, beta, beta_imag;
};
const scalars scalar_turns[] = {
    {1.0, 0.0, 0.0, 0.0}, {-1.5, 0.5, 0.5, -0.25}, {0.75, 0.0, 1.0, 0.0}, {0.0, 0.0, -0.5, 0.5}};

// A case of the matrix: the index type, base, sortedness, duplicates, padding and scalars
// cycle with a counter so that each combination of the others meets all of them.
spmm_case make_matrix_case(bool coo, gemm_dtype_t type, gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b,
                           const shape &s, int64_t turn) {
    spmm_case c;
    c.coo = coo;
    c.type = type;
    c.layout = layout;
    c.op_a = op_a;
    c.op_b = op_b;
    c.m = s.m;
    c.n = s.n;
    c.k = s.k;
    c.index64 = turn % 2 == 1;
    c.index_base = int(turn / 2 % 2);
    c.unsorted = turn % 3 != 0;
    c.duplicates = coo && turn % 5 < 3;
    c.density = turn % 7 == 0 ? 0.0 : 0.3;  // 0: nnz = 0
    const scalars &x = scalar_turns[turn % 4];
    c.alpha = x.alpha;
    c.beta = x.beta;
    c.alpha_imag = is_complex(type) ? x.alpha_imag : 0.0;
    c.beta_imag = is_complex(type) ? x.beta_imag : 0.0;
    set_spmm_leading_dims(c, turn % 3 == 1 ? 3 : 0);
    return c;
}

// What the matrix found on one backend.
struct tally {
    int64_t checked = 0, refused = 0;
};

// Every case on `backend`: cpu_ref's result (forced) must match the oracle, the backend's must
// match both; a refusal (NOT_SUPPORTED) leaves C untouched and says why.
void run_matrix(const std::string &backend, tally &t) {
    int64_t turn = 0;
    for (bool coo : {false, true})
        for (gemm_dtype_t type : all_types)
            for (gemm_layout_t layout : all_layouts)
                for (gemm_op_t op_a : all_ops)
                    for (gemm_op_t op_b : all_ops)
                        for (const shape &s : shapes) {
                            const spmm_case c = make_matrix_case(coo, type, layout, op_a, op_b, s, turn++);
                            if (!case_selected(c.describe())) continue;
                            const spmm_operands o = make_spmm_operands(c);
                            INFO(std::string(backend) << ": " << c.describe());
                            bytes got = o.c0;
                            gemm_status_t st;
                            std::string error;
                            {
                                forced f(backend.c_str());
                                st = call_spmm(c, o, got.data());
                                error = gemm_last_error();
                            }
                            INFO(error);
                            if (st == GEMM_STATUS_NOT_SUPPORTED) {
                                ++t.refused;
                                CHECK(got == o.c0);
                                CHECK(error.find("cannot serve this sparse product") != std::string::npos);
                                continue;
                            }
                            REQUIRE(st == GEMM_STATUS_SUCCESS);
                            const spmm_expected want = expected_spmm(c, o);
                            const std::string wrong = compare_spmm(c, o, got, want);
                            CHECK_MESSAGE(wrong.empty(), wrong);
                            if (backend != "cpu_ref") {
                                // Against cpu_ref's own result, as the measurement engine judges.
                                bytes ref = o.c0;
                                forced f("cpu_ref");
                                REQUIRE(call_spmm(c, o, ref.data()) == GEMM_STATUS_SUCCESS);
                                spmm_expected from_ref = want;
                                for (int64_t j = 0; j < c.m * c.n; ++j) {
                                    const int64_t e = c.c_index(j % c.m, j / c.m);
                                    from_ref.value[std::size_t(j)] = {
                                        load_part(ref.data(), e, 0, c.type),
                                        is_complex(c.type) ? load_part(ref.data(), e, 1, c.type) : 0.0};
                                }
                                const std::string off = compare_spmm(c, o, got, from_ref);
                                CHECK_MESSAGE(off.empty(), "against cpu_ref: " << off);
                            }
                            ++t.checked;
                        }
}

}  // namespace

TEST_CASE("spmm: every backend that serves host memory against cpu_ref and the test's oracle") {
    std::map<std::string, tally> found;
    for (const std::string &name : available_backends()) {
        run_matrix(name, found[name]);
        MESSAGE(name << ": " << found[name].checked << " cases checked, " << found[name].refused << " refused");
    }
    run_matrix("auto", found["auto"]);
    // The oracle and our own host backend serve every case, as does auto; the others may refuse.
    CHECK(found["cpu_ref"].refused == 0);
    CHECK(found["cpu_ref"].checked > 0);
    CHECK(found["cpu_omp"].refused == 0);
    CHECK(found["cpu_omp"].checked == found["cpu_ref"].checked);
    CHECK(found["auto"].refused == 0);
    CHECK(found["auto"].checked == found["cpu_ref"].checked);
}

TEST_CASE("spmm: cpu_omp on sizes that take several threads, every form") {
    for (bool coo : {false, true})
        for (gemm_dtype_t type : {GEMM_F32, GEMM_C64})
            for (gemm_op_t op_a : all_ops)
                for (int64_t n : {1, 40}) {
                    spmm_case c;
                    c.coo = coo;
                    c.type = type;
                    c.layout = n == 1 ? GEMM_COL_MAJOR : GEMM_ROW_MAJOR;
                    c.op_a = op_a;
                    c.m = 1031;
                    c.n = n;
                    c.k = 997;
                    c.density = 0.02;
                    c.unsorted = true;
                    c.duplicates = coo;
                    c.alpha = -0.75;
                    c.beta = 0.5;
                    set_spmm_leading_dims(c, 2);
                    const spmm_operands o = make_spmm_operands(c);
                    INFO(c.describe());
                    bytes got = o.c0;
                    forced f("cpu_omp");
                    REQUIRE(call_spmm(c, o, got.data()) == GEMM_STATUS_SUCCESS);
                    CHECK(compare_spmm(c, o, got, expected_spmm(c, o)) == "");
                }
}

TEST_CASE("spmm: beta = 0 writes C without reading it, alpha = 0 reads neither A nor B") {
    for (const char *backend : {"cpu_ref", "cpu_omp", "auto"})
        for (bool coo : {false, true})
            for (gemm_dtype_t type : all_types)
                for (gemm_op_t op_a : all_ops) {
                    forced f(backend);
                    REQUIRE(f.status == GEMM_STATUS_SUCCESS);
                    spmm_case c;
                    c.coo = coo;
                    c.type = type;
                    c.op_a = op_a;
                    c.m = 9;
                    c.n = 5;
                    c.k = 7;
                    c.alpha = 1.25;
                    set_spmm_leading_dims(c, 1);
                    const spmm_operands o = make_spmm_operands(c);  // beta = 0: C poisoned (NaN)
                    INFO(std::string(backend) << ": " << c.describe());
                    bytes got = o.c0;
                    REQUIRE(call_spmm(c, o, got.data()) == GEMM_STATUS_SUCCESS);
                    CHECK(compare_spmm(c, o, got, expected_spmm(c, o)) == "");

                    // alpha = 0, beta = 0: zeros, whatever A and B hold, and with them NULL.
                    c.alpha = 0.0;
                    spmm_operands poisoned = make_spmm_operands(c);
                    for (int64_t p = 0; p < poisoned.nnz(); ++p) store_poison(poisoned.values.data(), p, type);
                    for (std::size_t e = 0; e < poisoned.b.size() / dtype_size(type); ++e)
                        store_poison(poisoned.b.data(), int64_t(e), type);
                    const spmm_expected zeros = expected_spmm(c, make_spmm_operands(c));
                    bytes z = poisoned.c0;
                    REQUIRE(call_spmm(c, poisoned, z.data()) == GEMM_STATUS_SUCCESS);
                    CHECK(compare_spmm(c, poisoned, z, zeros) == "");
                    bytes z_null = poisoned.c0;
                    REQUIRE(call_spmm(c, poisoned, nullptr, nullptr, nullptr, nullptr, z_null.data()) ==
                            GEMM_STATUS_SUCCESS);
                    CHECK(z_null == z);
                }
}

TEST_CASE("spmm: duplicates add up and unsorted rows compute as stored") {
    // The 3 x 3 [[1+2, 0, 4], [0, 0, 0], [5, 0, 0]] in COO with (0, 0) twice and the entries
    // out of order, and in CSR with row 0's columns reversed, times the identity.
    const int32_t coo_rows[] = {2, 0, 0, 0}, coo_cols[] = {0, 2, 0, 0};
    const double coo_values[] = {5, 4, 1, 2};
    const int32_t offsets[] = {0, 2, 2, 3}, csr_cols[] = {2, 0, 0};
    const double csr_values[] = {4, 3, 5};
    const double eye[] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, alpha = 1, beta = 0;
    const double want[] = {3, 0, 5, 0, 0, 0, 4, 0, 0};  // column-major
    for (const char *backend : {"cpu_ref", "cpu_omp"}) {
        forced f(backend);
        INFO(backend);
        double c[9];
        gemm_coo_t coo;
        gemm_coo_init(&coo, 3, 3, 4, GEMM_INDEX_I32, coo_rows, coo_cols, coo_values);
        REQUIRE(gemm_spmm_coo(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 3, 3, &alpha, &coo, eye, 3, &beta, c, 3,
                              GEMM_F64) == GEMM_STATUS_SUCCESS);
        CHECK(std::memcmp(c, want, sizeof c) == 0);
        gemm_csr_t csr;
        gemm_csr_init(&csr, 3, 3, 3, GEMM_INDEX_I32, offsets, csr_cols, csr_values);
        std::fill(c, c + 9, NAN);
        REQUIRE(gemm_spmm_csr(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 3, 3, &alpha, &csr, eye, 3, &beta, c, 3,
                              GEMM_F64) == GEMM_STATUS_SUCCESS);
        CHECK(std::memcmp(c, want, sizeof c) == 0);
    }
}

namespace {

// A small valid case to break one argument of at a time: 4 x 5 CSR and COO, f32, col-major.
struct small_call {
    spmm_case c;
    spmm_operands o;
    small_call(bool coo) {
        c.coo = coo;
        c.m = 4;
        c.n = 3;
        c.k = 5;
        c.alpha = 1.0;
        c.beta = 0.5;
        set_spmm_leading_dims(c, 0);
        o = make_spmm_operands(c);
    }
};

// The entry point on o's arrays with a descriptor edited by `edit`, every other argument
// overridable; C must come back untouched.
template <class Edit>
gemm_status_t call_edited(const small_call &s, bytes &out, Edit edit, int layout = GEMM_COL_MAJOR, int op_a = GEMM_OP_N,
                          int op_b = GEMM_OP_N, int64_t m = 4, int64_t n = 3, int64_t k = 5, int64_t ldb = 5,
                          int64_t ldc = 4, int type = GEMM_F32, bool null_alpha = false, bool null_beta = false,
                          bool null_b = false, bool null_c = false) {
    const float alpha = 1.0f, beta = 0.5f;
    const void *a = nullptr;
    gemm_csr_t csr = csr_of(s.c, s.o, s.o.row_array.data(), s.o.col_array.data(), s.o.values.data());
    gemm_coo_t coo = coo_of(s.c, s.o, s.o.row_array.data(), s.o.col_array.data(), s.o.values.data());
    if (s.c.coo) {
        edit(coo);
        a = &coo;
    } else {
        edit(csr);
        a = &csr;
    }
    return raw_spmm(s.c.coo, layout, op_a, op_b, m, n, k, null_alpha ? nullptr : &alpha, a,
                    null_b ? nullptr : s.o.b.data(), ldb, null_beta ? nullptr : &beta, null_c ? nullptr : out.data(),
                    ldc, type);
}

// status, position and message of the last call, and C untouched.
void expect_error(gemm_status_t got, gemm_status_t status, int position, const std::string &message, const bytes &out,
                  const bytes &before) {
    INFO(gemm_last_error());
    CHECK(got == status);
    CHECK(gemm_last_error_parameter() == position);
    CHECK(std::string(gemm_last_error()).find(message) != std::string::npos);
    CHECK(out == before);
}

const auto no_edit = [](auto &) {};

}  // namespace

TEST_CASE("spmm: argument errors name the parameter and leave C untouched") {
    for (bool coo : {false, true}) {
        const small_call s(coo);
        INFO(std::string(coo ? "coo" : "csr"));
        bytes out = s.o.c0;
        REQUIRE(call_edited(s, out, no_edit) == GEMM_STATUS_SUCCESS);  // the case itself is valid
        out = s.o.c0;
        const bytes &c0 = s.o.c0;
        expect_error(call_edited(s, out, no_edit, 100), GEMM_STATUS_INVALID_LAYOUT, 1,
                     "parameter 1: layout = 100 must be GEMM_ROW_MAJOR (101) or GEMM_COL_MAJOR (102)", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, 110), GEMM_STATUS_INVALID_OP, 2,
                     "parameter 2: op_a = 110 must be", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, 0), GEMM_STATUS_INVALID_OP, 3,
                     "parameter 3: op_b = 0 must be", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, -1), GEMM_STATUS_INVALID_SIZE,
                     4, "parameter 4: m = -1 must be >= 0", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, -2),
                     GEMM_STATUS_INVALID_SIZE, 5, "parameter 5: n = -2 must be >= 0", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, -3),
                     GEMM_STATUS_INVALID_SIZE, 6, "parameter 6: k = -3 must be >= 0", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 5), GEMM_STATUS_INVALID_SIZE, 8,
                     "parameter 8: A->rows = 4 must equal m = 5 (op_a = N: A is m x k)", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 6, 6),
                     GEMM_STATUS_INVALID_SIZE, 8, "parameter 8: A->cols = 5 must equal k = 6 (op_a = N: A is m x k)",
                     out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 4),
                     GEMM_STATUS_INVALID_LEADING_DIM, 10,
                     "parameter 10: ldb = 4 must be >= max(1, k = 5) for column-major B (op_b = N: B is k x n)", out,
                     c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 4, 3, 5, 5),
                     GEMM_STATUS_INVALID_SIZE, 8, "A->rows = 4 must equal k = 5", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 4, 3, 5, 2),
                     GEMM_STATUS_INVALID_LEADING_DIM, 10,
                     "parameter 10: ldb = 2 must be >= max(1, n = 3) for column-major B (op_b = T or C: B is n x k)",
                     out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 2),
                     GEMM_STATUS_INVALID_LEADING_DIM, 10,
                     "parameter 10: ldb = 2 must be >= max(1, n = 3) for row-major", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 3),
                     GEMM_STATUS_INVALID_LEADING_DIM, 13,
                     "parameter 13: ldc = 3 must be >= max(1, m = 4) for column-major C", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 2),
                     GEMM_STATUS_INVALID_LEADING_DIM, 13,
                     "parameter 13: ldc = 2 must be >= max(1, n = 3) for row-major C", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, 9),
                     GEMM_STATUS_INVALID_DTYPE, 14, "parameter 14: dtype = 9 is not a gemm_dtype_t", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, GEMM_F16),
                     GEMM_STATUS_NOT_SUPPORTED, 14,
                     "parameter 14: dtype = f16: sparse products compute f32, f64, c32 and c64", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, GEMM_F32, true),
                     GEMM_STATUS_INVALID_POINTER, 7, "parameter 7: alpha is NULL", out, c0);
        expect_error(
            call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, GEMM_F32, false, true),
            GEMM_STATUS_INVALID_POINTER, 11, "parameter 11: beta is NULL", out, c0);
        expect_error(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, GEMM_F32, false,
                                 false, true),
                     GEMM_STATUS_INVALID_POINTER, 9, "parameter 9: B is NULL", out, c0);
        CHECK(call_edited(s, out, no_edit, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, 5, 4, GEMM_F32, false, false,
                          false, true) == GEMM_STATUS_INVALID_POINTER);
        CHECK(std::string(gemm_last_error()) == "parameter 12: C is NULL");
        // The descriptor's fields.
        CHECK(raw_spmm(coo, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, &s.c.alpha, nullptr, s.o.b.data(), 5,
                       &s.c.beta, out.data(), 4, GEMM_F32) == GEMM_STATUS_INVALID_POINTER);
        CHECK(std::string(gemm_last_error()) == "parameter 8: A is NULL");
        expect_error(call_edited(s, out, [](auto &a) { a.struct_size = 8; }), GEMM_STATUS_INVALID_VALUE, 8,
                     "parameter 8: A->struct_size = 8 is smaller than this library's", out, c0);
        expect_error(call_edited(s, out,
                                 [coo](auto &a) {
                                     if (coo) raw_coo_index_type(reinterpret_cast<gemm_coo_t *>(&a), 7);
                                     else raw_csr_index_type(reinterpret_cast<gemm_csr_t *>(&a), 7);
                                 }),
                     GEMM_STATUS_INVALID_VALUE, 8,
                     "parameter 8: A->index_type = 7 must be GEMM_INDEX_I32 (0) or GEMM_INDEX_I64 (1)", out, c0);
        expect_error(call_edited(s, out, [](auto &a) { a.index_base = 2; }), GEMM_STATUS_INVALID_VALUE, 8,
                     "parameter 8: A->index_base = 2 must be 0 or 1", out, c0);
        expect_error(call_edited(s, out, [](auto &a) { a.validate = 3; }), GEMM_STATUS_INVALID_VALUE, 8,
                     "parameter 8: A->validate = 3 must be 0 or 1", out, c0);
        expect_error(call_edited(s, out, [](auto &a) { a.nnz = -1; }), GEMM_STATUS_INVALID_SIZE, 8,
                     "parameter 8: A->nnz = -1 must be >= 0", out, c0);
        expect_error(call_edited(s, out, [](auto &a) { a.values = nullptr; }), GEMM_STATUS_INVALID_POINTER, 8,
                     "parameter 8: A->values is NULL", out, c0);
        expect_error(call_edited(s, out, [](auto &a) { a.col_indices = nullptr; }), GEMM_STATUS_INVALID_POINTER, 8,
                     "parameter 8: A->col_indices is NULL", out, c0);
        // C overlapping what the product reads.
        bytes shared = s.o.b;
        shared.resize(std::max(shared.size(), out.size()));
        const float one = 1.0f, half = 0.5f;
        gemm_csr_t csr = csr_of(s.c, s.o, s.o.row_array.data(), s.o.col_array.data(), s.o.values.data());
        gemm_coo_t coo_a = coo_of(s.c, s.o, s.o.row_array.data(), s.o.col_array.data(), s.o.values.data());
        const bytes before = shared;
        expect_error(raw_spmm(coo, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 5, &one,
                              coo ? static_cast<const void *>(&coo_a) : &csr, shared.data(), 5, &half, shared.data(), 4,
                              GEMM_F32),
                     GEMM_STATUS_INVALID_VALUE, 12, "parameter 12: C overlaps B", shared, before);
    }
}

TEST_CASE("spmm: empty C, k = 0 and alpha = 0 need no A arrays") {
    for (bool coo : {false, true}) {
        const small_call s(coo);
        bytes out = s.o.c0;
        // m = 0: nothing written, C may be NULL.
        CHECK(call_edited(
                  s, out, [](auto &a) { a.rows = 0; }, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 0, 3, 5, 5, 1, GEMM_F32,
                  false, false, false, true) == GEMM_STATUS_SUCCESS);
        // nnz = 0 with NULL arrays: C = beta * C.
        bytes scaled = s.o.c0;
        REQUIRE(call_edited(s, scaled, [](auto &a) {
                    a.nnz = 0;
                    a.values = nullptr;
                    a.col_indices = nullptr;
                }) == GEMM_STATUS_SUCCESS);
        for (int64_t e = 0; e < s.c.m * s.c.n; ++e)
            CHECK(load_part(scaled.data(), e, 0, GEMM_F32) == 0.5f * load_part(s.o.c0.data(), e, 0, GEMM_F32));
    }
}

TEST_CASE("spmm: validation refuses out-of-bounds and unsorted input, naming it; without it unsorted input computes") {
    const double alpha = 1, beta = 0, b[6] = {1, 2, 3, 4, 5, 6};
    const std::vector<double> c0(6, -7.0);
    struct csr_input {
        const char *what;
        std::vector<int32_t> offsets, cols;
        const char *message;
        bool computes_unvalidated;
    };
    const csr_input csr_inputs[] = {
        {"sorted", {0, 2, 2, 3}, {0, 2, 1}, nullptr, true},
        {"unsorted row", {0, 2, 2, 3}, {2, 0, 1}, "A->col_indices[1] = 0 follows 2 in row 0: a row's columns", true},
        {"repeated column", {0, 2, 2, 3}, {1, 1, 1}, "A->col_indices[1] = 1 follows 1 in row 0", true},
        {"column out of bounds", {0, 2, 2, 3}, {0, 3, 1}, "A->col_indices[1] = 3 (row 0) is out of bounds", false},
        {"negative column", {0, 2, 2, 3}, {0, -1, 1}, "A->col_indices[1] = -1 (row 0) is out of bounds", false},
        {"first offset", {1, 2, 2, 3}, {0, 2, 1}, "A->row_offsets[0] = 1 must be index_base = 0", false},
        {"decreasing offsets", {0, 2, 1, 3}, {0, 2, 1}, "A->row_offsets[2] = 1 must lie in [row_offsets[1] = 2", false},
        {"last offset", {0, 2, 2, 2}, {0, 2, 1}, "A->row_offsets[3] = 2 must be nnz + index_base = 3", false},
    };
    for (const char *backend : {"cpu_ref", "cpu_omp"})
        for (const csr_input &in : csr_inputs) {
            forced f(backend);
            INFO(std::string(backend) << ": " << std::string(in.what));
            gemm_csr_t a;
            const double values[] = {1, 10, 100};
            gemm_csr_init(&a, 3, 3, 3, GEMM_INDEX_I32, in.offsets.data(), in.cols.data(), values);
            a.validate = 1;
            std::vector<double> c = c0;
            const gemm_status_t s = gemm_spmm_csr(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 2, 3, &alpha, &a, b, 3,
                                                  &beta, c.data(), 3, GEMM_F64);
            if (!in.message) {
                CHECK(s == GEMM_STATUS_SUCCESS);
                continue;
            }
            CHECK(s == GEMM_STATUS_INVALID_VALUE);
            CHECK(gemm_last_error_parameter() == 8);
            CHECK(std::string(gemm_last_error()).find(in.message) != std::string::npos);
            CHECK(std::string(gemm_last_error()).find("validate = 1)") != std::string::npos);
            CHECK(c == c0);
            if (in.computes_unvalidated) {
                a.validate = 0;
                REQUIRE(gemm_spmm_csr(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 2, 3, &alpha, &a, b, 3, &beta, c.data(),
                                      3, GEMM_F64) == GEMM_STATUS_SUCCESS);
                // Row 0 = values[0] B(col[0], :) + values[1] B(col[1], :); row 1 empty; row 2.
                const auto bb = [&](int32_t l, int j) { return b[l + 3 * j]; };
                for (int j = 0; j < 2; ++j) {
                    CHECK(c[std::size_t(0 + 3 * j)] == 1 * bb(in.cols[0], j) + 10 * bb(in.cols[1], j));
                    CHECK(c[std::size_t(1 + 3 * j)] == 0.0);
                    CHECK(c[std::size_t(2 + 3 * j)] == 100 * bb(in.cols[2], j));
                }
            }
        }
    struct coo_input {
        const char *what;
        std::vector<int64_t> rows, cols;
        const char *message;
    };
    const coo_input coo_inputs[] = {
        {"sorted", {1, 1, 3}, {1, 3, 2}, nullptr},
        {"rows unsorted", {1, 3, 1}, {1, 2, 3}, "entry 2 at (row_indices, col_indices) = (1, 3) follows (3, 2)"},
        {"columns unsorted", {1, 1, 3}, {3, 1, 2}, "entry 1 at (row_indices, col_indices) = (1, 1) follows (1, 3)"},
        {"duplicate", {1, 1, 3}, {2, 2, 2}, "unsorted or duplicate"},
        {"row out of bounds", {1, 1, 4}, {1, 3, 2}, "A->row_indices[2] = 4 is out of bounds: rows lie in [1, 3]"},
        {"row below the base", {0, 1, 3}, {1, 3, 2}, "A->row_indices[0] = 0 is out of bounds: rows lie in [1, 3]"},
        {"column out of bounds", {1, 1, 3}, {1, 4, 2}, "A->col_indices[1] = 4 is out of bounds: columns lie in [1, 3]"},
    };
    for (const char *backend : {"cpu_ref", "cpu_omp"})
        for (const coo_input &in : coo_inputs) {
            forced f(backend);
            INFO(std::string(backend) << ": " << std::string(in.what));
            gemm_coo_t a;
            const double values[] = {1, 10, 100};
            gemm_coo_init(&a, 3, 3, 3, GEMM_INDEX_I64, in.rows.data(), in.cols.data(), values);
            a.index_base = 1;
            a.validate = 1;
            std::vector<double> c = c0;
            const gemm_status_t s = gemm_spmm_coo(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 2, 3, &alpha, &a, b, 2,
                                                  &beta, c.data(), 2, GEMM_F64);
            if (!in.message) {
                CHECK(s == GEMM_STATUS_SUCCESS);
                continue;
            }
            CHECK(s == GEMM_STATUS_INVALID_VALUE);
            CHECK(gemm_last_error_parameter() == 8);
            CHECK(std::string(gemm_last_error()).find(in.message) != std::string::npos);
            CHECK(c == c0);
        }
}

TEST_CASE("spmm: a forced backend without sparse kernels refuses with its reason, never another") {
    const small_call s(false);
    for (const std::string &name : available_backends()) {
        if (name == "cpu_ref" || name == "cpu_omp") continue;
        forced f(name.c_str());
        INFO(name);
        bytes out = s.o.c0;
        const gemm_status_t st = call_spmm(s.c, s.o, out.data());
        CHECK(st == GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error()).find("backend '" + name + "' (") != std::string::npos);
        // GEMM-only backends say they have no sparse kernel; the GPU ones, where a device is,
        // that they take no host pointers.
        const std::string error = gemm_last_error();
        CHECK(error.find(") cannot serve this sparse product (gemm_spmm_csr): ") != std::string::npos);
        CHECK((error.find("no sparse kernel") != std::string::npos || error.find("host pointers") != std::string::npos));
        CHECK(out == s.o.c0);
    }
}

TEST_CASE("spmm: the C++ overloads take T's scalars and report the library's status") {
    // y = A x for A = [[0, 2], [3, 0]] in CSR and in COO (one-based), complex and real.
    const int32_t offsets[] = {0, 1, 2}, cols[] = {1, 0}, rows_1[] = {1, 2}, cols_1[] = {2, 1};
    using z = std::complex<double>;
    const z values[] = {{2, 1}, {3, 0}}, x[] = {{1, 0}, {0, 10}};
    z y[2] = {{-1, -1}, {-1, -1}};
    gemm_csr_t csr;
    gemm_csr_init(&csr, 2, 2, 2, GEMM_INDEX_I32, offsets, cols, values);
    const gemm::status s =
        gemm::spmm<z>(gemm::layout::col_major, gemm::op::n, gemm::op::n, 2, 1, 2, z(1), csr, x, 2, z(0), y, 2);
    CHECK(s.code == GEMM_STATUS_SUCCESS);
    CHECK(y[0] == z(2, 1) * z(0, 10));
    CHECK(y[1] == z(3, 0));
    const float fvalues[] = {2, 3}, fx[] = {1, 10};
    float fy[2] = {-1, -1};
    gemm_coo_t coo;
    gemm_coo_init(&coo, 2, 2, 2, GEMM_INDEX_I32, rows_1, cols_1, fvalues);
    coo.index_base = 1;
    CHECK(gemm::spmm<float>(gemm::layout::row_major, gemm::op::n, gemm::op::n, 2, 1, 2, 1.0f, coo, fx, 1, 0.0f, fy, 1)
              .code == GEMM_STATUS_SUCCESS);
    CHECK(fy[0] == 20.0f);
    CHECK(fy[1] == 3.0f);
    const gemm::status bad =
        gemm::spmm<float>(gemm::layout::row_major, gemm::op::n, gemm::op::n, 2, 1, 2, 1.0f, coo, fx, 1, 0.0f, fy, 0);
    CHECK(bad.code == GEMM_STATUS_INVALID_LEADING_DIM);
    CHECK(bad.message.find("parameter 13: ldc = 0") != std::string::npos);
}

// Run by CTest with GEMM_VERBOSE=2 (spmm.env_verbose2).
TEST_SUITE("env_verbose2" * doctest::skip()) {
    TEST_CASE("spmm trace: auto's choice and why, then the backends passed over") {
        small_call s(true);
        s.c.layout = GEMM_ROW_MAJOR;
        s.c.op_a = GEMM_OP_T;
        s.c.m = 5;
        s.c.k = 4;
        set_spmm_leading_dims(s.c, 1);
        s.o = make_spmm_operands(s.c);
        bytes out = s.o.c0;
        std::vector<std::string> lines;
        {
            stderr_capture capture;
            CHECK(call_spmm(s.c, s.o, out.data()) == GEMM_STATUS_SUCCESS);
            lines = capture.lines();
        }
        CHECK(compare_spmm(s.c, s.o, out, expected_spmm(s.c, s.o)) == "");
        REQUIRE(lines.size() >= 2);
        INFO("trace: " << lines[0]);
        CHECK(lines[0].find("backend=cpu_omp variant=coo_scatter_f32 call=spmm_coo dtype=f32 layout=row op_a=T "
                            "op_b=N m=5 n=3 k=4 nnz=" +
                            std::to_string(s.o.nnz()) +
                            " index=i32 base=0 ldb=4 ldc=4 space=host why=\"auto: built-in rule") != std::string::npos);
        CHECK(lines[0].find(" gflops=") != std::string::npos);
        bool ref_skipped = false;
        for (const std::string &l : lines)
            ref_skipped |= l.find("  skipped cpu_ref: lower in the preference order") != std::string::npos;
        CHECK(ref_skipped);
    }
}
