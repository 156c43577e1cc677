// test_omatcopy.cpp: gemm_omatcopy on host memory: every backend that serves it against the
// test's own oracle (cpu_ref, the library's oracle, included) over every dtype, layout and op,
// awkward sizes and padded leading dimensions; alpha = 0 with NaN in A; argument errors one by
// one (status, message naming the parameter, B untouched); forced backends that refuse; the
// C++ overloads; and, in its own CTest runs, GEMM_BACKEND and the GEMM_VERBOSE trace.
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
#include "omatcopy_case.hpp"
#include "raw_enum_calls.h"

using namespace gemm_test;

namespace {

constexpr gemm_dtype_t all_types[] = {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16, GEMM_C32, GEMM_C64};
constexpr gemm_layout_t all_layouts[] = {GEMM_COL_MAJOR, GEMM_ROW_MAJOR};
constexpr gemm_op_t all_ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};

bool has_backend(const std::string &name) {
    for (const std::string &n : available_backends())
        if (n == name) return true;
    return false;
}

// Forces a backend for the scope (auto for nullptr) and puts auto back after.
struct forced {
    explicit forced(const char *name) { status = gemm_set_backend(name); }
    ~forced() { gemm_set_backend(nullptr); }
    gemm_status_t status;
};

// Awkward shapes: empty both ways, 1, a tile edge and its neighbours (32, 64), primes,
// rectangles both ways, a single row and column.
const std::pair<int64_t, int64_t> shapes[] = {{0, 5},  {5, 0},  {1, 1},  {31, 33}, {33, 31}, {64, 64},
                                              {65, 7}, {7, 65}, {1, 97}, {97, 1},  {67, 131}};

// What the matrix found on one backend.
struct tally {
    int64_t checked = 0, refused = 0;
};

// Every case on `backend`: a refusal (NOT_SUPPORTED) leaves B untouched and says why; any
// other status than success fails, as does a B other than the oracle's.
void run_matrix(const std::string &backend, tally &t) {
    for (gemm_dtype_t type : all_types)
        for (gemm_layout_t layout : all_layouts)
            for (gemm_op_t op : all_ops)
                for (const auto &shape : shapes)
                    for (int64_t pad : {0, 3})
                        for (double alpha : {1.0, 0.0, -1.5})
                            for (double alpha_imag : {0.0, 0.25}) {
                                if (alpha_imag != 0.0 && (!is_complex(type) || alpha == 0.0)) continue;
                                const omatcopy_case c = make_omatcopy_case(type, layout, op, shape.first, shape.second,
                                                                           pad, alpha, alpha_imag);
                                const omatcopy_operands o = make_omatcopy_operands(c);
                                bytes b = o.b0;
                                const gemm_status_t s = call_omatcopy(c, o.a.data(), b.data());
                                INFO(backend << ": " << c.describe() << ": " << gemm_last_error());
                                if (s == GEMM_STATUS_NOT_SUPPORTED) {
                                    ++t.refused;
                                    CHECK(b == o.b0);
                                    CHECK(std::string(gemm_last_error()).find("cannot serve this transpose") !=
                                          std::string::npos);
                                    continue;
                                }
                                REQUIRE(s == GEMM_STATUS_SUCCESS);
                                const std::string wrong = compare_b(c, b, expected_b(c, o));
                                CHECK_MESSAGE(wrong.empty(), wrong);
                                ++t.checked;
                            }
}

}  // namespace

TEST_CASE("omatcopy: every backend that serves host memory against the test's oracle") {
    std::map<std::string, tally> found;
    for (const std::string &name : available_backends()) {
        forced f(name.c_str());
        REQUIRE(f.status == GEMM_STATUS_SUCCESS);
        run_matrix(name, found[name]);
        MESSAGE(name << ": " << found[name].checked << " cases checked, " << found[name].refused << " refused");
    }
    // The oracle and our own host backend serve every case; the others may refuse.
    CHECK(found["cpu_ref"].refused == 0);
    CHECK(found["cpu_ref"].checked > 0);
    CHECK(found["cpu_omp"].refused == 0);
    CHECK(found["cpu_omp"].checked == found["cpu_ref"].checked);
}

TEST_CASE("omatcopy: auto on host memory, large enough for several threads and tiles") {
    for (gemm_dtype_t type : all_types)
        for (gemm_op_t op : {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C})
            for (gemm_layout_t layout : all_layouts) {
                const omatcopy_case c = make_omatcopy_case(type, layout, op, 517, 389, 5, -0.75, 0.5);
                const omatcopy_operands o = make_omatcopy_operands(c);
                bytes b = o.b0;
                INFO(c.describe());
                REQUIRE(call_omatcopy(c, o.a.data(), b.data()) == GEMM_STATUS_SUCCESS);
                const std::string wrong = compare_b(c, b, expected_b(c, o));
                CHECK_MESSAGE(wrong.empty(), wrong);
            }
}

TEST_CASE("omatcopy: alpha = 0 writes zeros without reading A (NaN in A, A NULL)") {
    for (const char *backend : {"cpu_ref", "cpu_omp", "auto"})
        for (gemm_dtype_t type : all_types)
            for (gemm_op_t op : all_ops) {
                forced f(backend);
                REQUIRE(f.status == GEMM_STATUS_SUCCESS);
                const omatcopy_case c = make_omatcopy_case(type, GEMM_ROW_MAJOR, op, 37, 70, 2, 0.0);
                const omatcopy_operands o = make_omatcopy_operands(c, true);
                INFO(backend << ": " << c.describe());
                bytes b = o.b0;
                REQUIRE(call_omatcopy(c, o.a.data(), b.data()) == GEMM_STATUS_SUCCESS);
                const bytes want = expected_b(c, o);
                CHECK(compare_b(c, b, want) == "");
                bytes b_null = o.b0;
                REQUIRE(call_omatcopy(c, nullptr, b_null.data()) == GEMM_STATUS_SUCCESS);
                CHECK(b_null == want);
            }
}

TEST_CASE("omatcopy: alpha = 1 copies bits exactly, NaN and infinities included") {
    for (gemm_dtype_t type : all_types)
        for (gemm_op_t op : all_ops)
            for (const char *backend : {"cpu_ref", "cpu_omp"}) {
                forced f(backend);
                const omatcopy_case c = make_omatcopy_case(type, GEMM_COL_MAJOR, op, 9, 4, 1, 1.0);
                omatcopy_operands o = make_omatcopy_operands(c);
                store_part(o.a.data(), c.a_index(2, 1), 0, c.type, HUGE_VAL);
                store_part(o.a.data(), c.a_index(3, 2), 0, c.type, -HUGE_VAL);
                bytes b = o.b0;
                INFO(backend << ": " << c.describe());
                REQUIRE(call_omatcopy(c, o.a.data(), b.data()) == GEMM_STATUS_SUCCESS);
                CHECK(compare_b(c, b, expected_b(c, o)) == "");
                const int64_t at = op == GEMM_OP_N ? c.b_index(2, 1) : c.b_index(1, 2);
                CHECK(load_part(b.data(), at, 0, c.type) == HUGE_VAL);
            }
}

namespace {

// One argument error: status, the position gemm_last_error_parameter names, a piece of the
// message, and B untouched.
struct bad_call {
    const char *what;
    int layout, trans;
    int64_t rows, cols, lda, ldb;
    bool null_alpha, null_a, null_b;
    int type;
    gemm_status_t status;
    int position;
    const char *message;
};

}  // namespace

TEST_CASE("omatcopy: argument errors name the parameter and leave B untouched") {
    const int col = GEMM_COL_MAJOR, row = GEMM_ROW_MAJOR, n = GEMM_OP_N, t = GEMM_OP_T;
    const bad_call calls[] = {
        {"layout", 100, n, 4, 5, 4, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LAYOUT, 1,
         "parameter 1: layout = 100 must be GEMM_ROW_MAJOR (101) or GEMM_COL_MAJOR (102)"},
        {"trans", col, 110, 4, 5, 4, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_OP, 2,
         "parameter 2: trans = 110 must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)"},
        {"rows", col, n, -1, 5, 4, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_SIZE, 3,
         "parameter 3: rows = -1 must be >= 0"},
        {"cols", col, n, 4, -2, 4, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_SIZE, 4,
         "parameter 4: cols = -2 must be >= 0"},
        {"lda col-major", col, n, 4, 5, 3, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 7,
         "parameter 7: lda = 3 must be >= max(1, rows = 4) for column-major A"},
        {"lda row-major", row, n, 4, 5, 4, 5, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 7,
         "parameter 7: lda = 4 must be >= max(1, cols = 5) for row-major A"},
        {"lda 0 for an empty A", col, n, 0, 5, 0, 1, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 7,
         "parameter 7: lda = 0 must be >= max(1, rows = 0)"},
        {"ldb col-major N", col, n, 4, 5, 4, 3, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 9,
         "parameter 9: ldb = 3 must be >= max(1, rows = 4) for column-major B"},
        {"ldb col-major T", col, t, 4, 5, 4, 4, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 9,
         "parameter 9: ldb = 4 must be >= max(1, cols = 5) for column-major B = alpha * op(A) (cols x rows)"},
        {"ldb row-major T", row, t, 4, 5, 5, 3, false, false, false, GEMM_F32, GEMM_STATUS_INVALID_LEADING_DIM, 9,
         "parameter 9: ldb = 3 must be >= max(1, rows = 4) for row-major B"},
        {"dtype", col, n, 4, 5, 4, 4, false, false, false, 9, GEMM_STATUS_INVALID_DTYPE, 10,
         "parameter 10: dtype = 9 is not a gemm_dtype_t"},
        {"dtype FP8", col, n, 4, 5, 4, 4, false, false, false, GEMM_F8_E4M3, GEMM_STATUS_NOT_SUPPORTED, 10,
         "parameter 10: dtype = e4m3: gemm_omatcopy takes f32, f64, f16, bf16, c32 and c64"},
        {"alpha NULL", col, n, 4, 5, 4, 4, true, false, false, GEMM_F32, GEMM_STATUS_INVALID_POINTER, 5,
         "parameter 5: alpha is NULL"},
        {"alpha NULL, empty", col, n, 0, 5, 1, 1, true, false, false, GEMM_F32, GEMM_STATUS_INVALID_POINTER, 5,
         "parameter 5: alpha is NULL"},
        {"A NULL", col, n, 4, 5, 4, 4, false, true, false, GEMM_F32, GEMM_STATUS_INVALID_POINTER, 6,
         "parameter 6: A is NULL"},
        {"B NULL", col, n, 4, 5, 4, 4, false, false, true, GEMM_F32, GEMM_STATUS_INVALID_POINTER, 8,
         "parameter 8: B is NULL"},
        {"lda beyond the address range", col, n, 4, 5, int64_t(1) << 62, 4, false, false, false, GEMM_F32,
         GEMM_STATUS_INVALID_SIZE, 7, "parameter 7: lda = 4611686018427387904 makes A span more than 2^63 - 1 bytes"},
    };
    std::vector<float> a(64, 1.0f), b0(64, 7.0f);
    const float alpha = 2.0f;
    for (const bad_call &x : calls) {
        INFO(x.what);
        std::vector<float> b = b0;
        const gemm_status_t s =
            raw_omatcopy(x.layout, x.trans, x.rows, x.cols, x.null_alpha ? nullptr : &alpha,
                         x.null_a ? nullptr : a.data(), x.lda, x.null_b ? nullptr : b.data(), x.ldb, x.type);
        CHECK(s == x.status);
        CHECK(gemm_last_error_parameter() == x.position);
        INFO("message: " << gemm_last_error());
        CHECK(std::string(gemm_last_error()).find(x.message) != std::string::npos);
        CHECK(b == b0);
    }
}

TEST_CASE("omatcopy: overlapping A and B are refused; with alpha = 0 A is not read and may be B") {
    std::vector<float> buffer(200, 3.0f);
    const std::vector<float> before = buffer;
    const float one = 1.0f, zero = 0.0f;
    // B starts inside A's span.
    CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, 8, 8, &one, buffer.data(), 8, buffer.data() + 63, 8, GEMM_F32) ==
          GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_last_error_parameter() == 8);
    CHECK(std::string(gemm_last_error()).find("B overlaps A") != std::string::npos);
    CHECK(buffer == before);
    // A starts inside B's span (A after B).
    CHECK(gemm_omatcopy(GEMM_ROW_MAJOR, GEMM_OP_N, 8, 8, &one, buffer.data() + 10, 8, buffer.data(), 8, GEMM_F32) ==
          GEMM_STATUS_INVALID_VALUE);
    CHECK(buffer == before);
    // Adjacent, not overlapping: A's span ends where B's begins.
    CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, 8, 8, &one, buffer.data(), 8, buffer.data() + 64, 8, GEMM_F32) ==
          GEMM_STATUS_SUCCESS);
    // alpha = 0: A is not read, so B may be A.
    CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, 8, 8, &zero, buffer.data(), 8, buffer.data(), 8, GEMM_F32) ==
          GEMM_STATUS_SUCCESS);
    for (int i = 0; i < 64; ++i) CHECK(buffer[std::size_t(i)] == 0.0f);
}

TEST_CASE("omatcopy: empty calls return at once, NULL operands allowed, B untouched") {
    const float alpha = 1.0f;
    std::vector<float> b(4, 5.0f);
    CHECK(gemm_omatcopy(GEMM_ROW_MAJOR, GEMM_OP_T, 0, 7, &alpha, nullptr, 7, nullptr, 1, GEMM_F32) ==
          GEMM_STATUS_SUCCESS);
    CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_N, 3, 0, &alpha, nullptr, 3, b.data(), 3, GEMM_F32) ==
          GEMM_STATUS_SUCCESS);
    CHECK(b == std::vector<float>(4, 5.0f));
    CHECK(std::string(gemm_last_error()).empty());
}

TEST_CASE("omatcopy: a forced backend that cannot serve it fails with its reason, never another") {
    std::vector<float> a(12, 1.0f), b(12, 9.0f);
    const float alpha = 1.0f;
    if (has_backend("cblas")) {
        forced f("cblas");
        REQUIRE(f.status == GEMM_STATUS_SUCCESS);
        CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, 3, 4, &alpha, a.data(), 3, b.data(), 4, GEMM_F32) ==
              GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error()) ==
              "backend 'cblas' (forced by gemm_set_backend) cannot serve this transpose (gemm_omatcopy): no transpose "
              "kernel");
        CHECK(b == std::vector<float>(12, 9.0f));
    } else {
        MESSAGE("cblas is unavailable here: its refusal is not checked");
    }
    // A GEMM variant pinned with the backend does not apply to a transpose: the backend's own
    // kernel runs.
    forced pinned("cpu_omp:generic_f32_8x4");
    REQUIRE(pinned.status == GEMM_STATUS_SUCCESS);
    CHECK(gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, 3, 4, &alpha, a.data(), 3, b.data(), 4, GEMM_F32) ==
          GEMM_STATUS_SUCCESS);
    CHECK(b[0] == 1.0f);
}

TEST_CASE("omatcopy: C++ overloads") {
    const std::vector<std::complex<float>> a = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}};  // 2 x 3 row-major
    std::vector<std::complex<float>> b(6);
    gemm::status s = gemm::omatcopy<std::complex<float>>(gemm::layout::row_major, gemm::op::c, 2, 3,
                                                         std::complex<float>(2, 0), a.data(), 3, b.data(), 2);
    REQUIRE(s.ok());
    // B (3 x 2, row-major) = 2 * A^H: B(i, j) = 2 * conj(A(j, i)).
    CHECK(b[0] == std::complex<float>(2, -4));
    CHECK(b[1] == std::complex<float>(14, -16));
    CHECK(b[5] == std::complex<float>(22, -24));

    std::vector<gemm::half> h = {gemm::half(1.0f), gemm::half(2.0f), gemm::half(3.0f), gemm::half(4.0f)};
    std::vector<gemm::half> ht(4);
    gemm::matrix_view<const gemm::half> av{h.data(), 2, 2, 2, gemm::layout::col_major};
    gemm::matrix_view<gemm::half> bv{ht.data(), 2, 2, 2, gemm::layout::col_major};
    REQUIRE(gemm::omatcopy<gemm::half>(0.5f, av, gemm::op::t, bv).ok());
    CHECK(float(ht[1]) == 1.5f);  // B(1, 0) = A(0, 1) / 2
    gemm::matrix_view<gemm::half> wrong{ht.data(), 1, 2, 2, gemm::layout::col_major};
    CHECK(gemm::omatcopy<gemm::half>(0.5f, av, gemm::op::t, wrong).code == GEMM_STATUS_INVALID_SIZE);
}

// Run by CTest with GEMM_VERBOSE=2 (omatcopy.env_verbose2).
TEST_SUITE("env_verbose2" * doctest::skip()) {
    TEST_CASE("omatcopy trace: auto's choice and why, then the backends passed over") {
        const omatcopy_case c = make_omatcopy_case(GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_T, 33, 20, 1, 2.0);
        const omatcopy_operands o = make_omatcopy_operands(c);
        bytes b = o.b0;
        std::vector<std::string> lines;
        {
            stderr_capture capture;
            CHECK(call_omatcopy(c, o.a.data(), b.data()) == GEMM_STATUS_SUCCESS);
            lines = capture.lines();
        }
        REQUIRE(lines.size() >= 2);
        INFO("trace: " << lines[0]);
        CHECK(lines[0].find("backend=cpu_omp variant=tiles_f32_64x64 call=omatcopy dtype=f32 layout=row trans=T "
                            "rows=33 cols=20 lda=21 ldb=34 space=host why=\"auto: built-in rule") != std::string::npos);
        CHECK(lines[0].find(" gbs=") != std::string::npos);
        bool ref_skipped = false;
        for (const std::string &l : lines)
            ref_skipped |= l.find("  skipped cpu_ref: lower in the preference order") != std::string::npos;
        CHECK(ref_skipped);
    }
}

// Run by CTest with GEMM_BACKEND=cblas (omatcopy.env_backend_cblas): cblas, forced from the
// environment, refuses; nothing else runs the call.
TEST_SUITE("env_backend_cblas" * doctest::skip()) {
    TEST_CASE("omatcopy: GEMM_BACKEND names a backend without a transpose") {
        std::vector<double> a(6, 1.0), b(6, 4.0);
        const double alpha = 1.0;
        const gemm_status_t s =
            gemm_omatcopy(GEMM_ROW_MAJOR, GEMM_OP_T, 2, 3, &alpha, a.data(), 3, b.data(), 2, GEMM_F64);
        if (s == GEMM_STATUS_BACKEND_UNAVAILABLE) {
            MESSAGE("cblas is unavailable here: " << gemm_last_error());
            CHECK(b == std::vector<double>(6, 4.0));
            return;
        }
        CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error())
                  .find("backend 'cblas' (forced by GEMM_BACKEND) cannot serve this "
                        "transpose (gemm_omatcopy)") != std::string::npos);
        CHECK(b == std::vector<double>(6, 4.0));
    }
}
