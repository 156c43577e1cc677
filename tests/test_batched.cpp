// test_batched.cpp: pointer-array batches (gemm_*_batched, gemm_ex_batched) and grouped calls
// (gemm_ex_grouped) on host memory: every matrix against the harness's double reference on
// every available backend (padding and guard elements untouched), over dtypes, layouts, ops,
// scalars and odd sizes; and their argument errors, each naming the matrix or group and
// leaving every C as it was.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "raw_enum_calls.h"

#include "harness.hpp"

using namespace gemm_test;

namespace {

// The matrices of one group: each its own operands (seeded by its index), C buffer and
// reference.
struct group_data {
    gemm_case shape;
    std::vector<operands> ops;
    std::vector<bytes> c;  // C buffers, starting as ops[i].c0
    std::vector<reference> refs;

    group_data(const gemm_case &s, int64_t count, uint64_t seed) : shape(s) {
        for (int64_t i = 0; i < count; ++i) {
            ops.push_back(make_operands(s, seed + uint64_t(i) * 7919));
            c.push_back(ops.back().c0);
            refs.push_back(compute_reference(s, ops.back()));
        }
    }
    void reset() {
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = ops[i].c0;
    }
    bool untouched() const {
        for (std::size_t i = 0; i < c.size(); ++i)
            if (c[i] != ops[i].c0) return false;
        return true;
    }
};

struct pointer_arrays {
    std::vector<const void *> a, b;
    std::vector<void *> c;
    void add(group_data &g) {
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            a.push_back(g.ops[i].a_ptr());
            b.push_back(g.ops[i].b_ptr());
            c.push_back(g.c[i].empty() ? nullptr : g.c[i].data());
        }
    }
};

// The scalars of a case in its compute type, as pairs (a real type reads the first).
struct scalar_pair {
    float f[2];
    double d[2];
    explicit scalar_pair(double re, double im) : f{float(re), float(im)}, d{re, im} {}
    const void *get(gemm_dtype_t compute) const {
        return compute == GEMM_F64 || compute == GEMM_C64 ? static_cast<const void *>(d) : f;
    }
};

// One batch through the entry point `typed` picks: gemm_[sdcz]gemm_batched or gemm_ex_batched.
gemm_status_t call_batched(const gemm_case &c, const pointer_arrays &p, int64_t count, bool typed) {
    scalar_pair alpha(c.alpha, c.alpha_imag), beta(c.beta, c.beta_imag);
    const gemm_dtype_t t = c.ab_type;
    if (typed && t == GEMM_F32)
        return gemm_sgemm_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, float(c.alpha),
                                  reinterpret_cast<const float *const *>(p.a.data()), c.lda,
                                  reinterpret_cast<const float *const *>(p.b.data()), c.ldb, float(c.beta),
                                  reinterpret_cast<float *const *>(p.c.data()), c.ldc, count);
    if (typed && t == GEMM_F64)
        return gemm_dgemm_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha,
                                  reinterpret_cast<const double *const *>(p.a.data()), c.lda,
                                  reinterpret_cast<const double *const *>(p.b.data()), c.ldb, c.beta,
                                  reinterpret_cast<double *const *>(p.c.data()), c.ldc, count);
    if (typed && is_complex(t))
        return (t == GEMM_C32 ? gemm_cgemm_batched : gemm_zgemm_batched)(c.layout, c.transa, c.transb, c.m, c.n, c.k,
                                                                         alpha.get(t), p.a.data(), c.lda, p.b.data(),
                                                                         c.ldb, beta.get(t), p.c.data(), c.ldc, count);
    return gemm_ex_batched(c.layout, c.transa, c.transb, c.m, c.n, c.k, alpha.get(c.compute_type()), p.a.data(),
                           c.ab_type, c.lda, p.b.data(), c.ab_type, c.ldb, beta.get(c.compute_type()), p.c.data(),
                           c.c_type, c.ldc, count, c.compute_type());
}

// Every matrix of g against its reference.
void check_group(const group_data &g, const std::string &where) {
    for (std::size_t i = 0; i < g.c.size(); ++i) {
        comparison cmp = compare_result(g.shape, g.ops[i], g.c[i], g.refs[i].value);
        CHECK_MESSAGE(cmp.ok, where << " matrix " << i << " " << g.shape.describe() << ": " << cmp.first);
    }
}

struct type_case {
    gemm_dtype_t ab, c;
};
constexpr type_case types[] = {{GEMM_F32, GEMM_F32}, {GEMM_F64, GEMM_F64}, {GEMM_C32, GEMM_C32},
                               {GEMM_C64, GEMM_C64}, {GEMM_F16, GEMM_F32}, {GEMM_BF16, GEMM_BF16}};

// Runs body(backend) under every available backend, counting the ones that served.
template <class F> void on_every_backend(F body) {
    for (const std::string &name : available_backends()) {
        REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
        body(name);
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

}  // namespace

TEST_CASE("batched pointer arrays: every matrix against the reference, every backend") {
    struct shape {
        int64_t m, n, k, pad, count;
    };
    constexpr shape shapes[] = {{5, 7, 3, 0, 3}, {17, 1, 33, 2, 4}, {1, 31, 9, 1, 2}, {16, 17, 64, 0, 5}};
    int64_t served = 0;
    for (const type_case &t : types)
        for (int i = 0; i < 8; ++i) {
            const shape &s = shapes[i % 4];
            gemm_layout_t layout = i % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
            gemm_op_t ta = i % 3 == 0 ? GEMM_OP_N : i % 3 == 1 ? GEMM_OP_T : GEMM_OP_C;
            gemm_op_t tb = i % 4 < 2 ? GEMM_OP_N : GEMM_OP_C;
            gemm_case c = make_case(t.ab, t.c, entry::ex, layout, ta, tb, s.m, s.n, s.k, s.pad, i % 4 == 3 ? -1.5 : 1.0,
                                    i % 3 == 0 ? 0.0 : 0.5);
            group_data g(c, s.count, 100 + uint64_t(i));
            pointer_arrays p;
            p.add(g);
            const bool typed_entry = t.ab == t.c && (t.ab == GEMM_F32 || t.ab == GEMM_F64 || is_complex(t.ab));
            on_every_backend([&](const std::string &name) {
                for (bool typed : {false, true}) {
                    if (typed && !typed_entry) continue;
                    g.reset();
                    gemm_status_t st = call_batched(c, p, s.count, typed);
                    if (st == GEMM_STATUS_NOT_SUPPORTED) {
                        CHECK(g.untouched());  // refused before anything ran
                        continue;
                    }
                    REQUIRE_MESSAGE(st == GEMM_STATUS_SUCCESS, name << " " << c.describe() << ": " << gemm_last_error());
                    check_group(g, "backend=" + name + (typed ? " typed" : " ex"));
                    ++served;
                }
            });
        }
    MESSAGE(served << " batches served and checked");
    CHECK(served > 0);
}

namespace {

// One gemm_ex_grouped call of the groups (each group_data a group), in their layout and types.
gemm_status_t call_grouped(std::vector<group_data> &groups) {
    const gemm_case &first = groups[0].shape;
    const gemm_dtype_t compute = first.compute_type();
    std::vector<gemm_op_t> ta, tb;
    std::vector<int64_t> m, n, k, lda, ldb, ldc, size;
    std::vector<float> alpha_f, beta_f;
    std::vector<double> alpha_d, beta_d;
    pointer_arrays p;
    for (group_data &g : groups) {
        const gemm_case &c = g.shape;
        ta.push_back(c.transa), tb.push_back(c.transb), m.push_back(c.m), n.push_back(c.n), k.push_back(c.k);
        lda.push_back(c.lda), ldb.push_back(c.ldb), ldc.push_back(c.ldc), size.push_back(int64_t(g.ops.size()));
        for (auto [re, im, f, d] : {std::tuple{c.alpha, c.alpha_imag, &alpha_f, &alpha_d},
                                    std::tuple{c.beta, c.beta_imag, &beta_f, &beta_d}}) {
            f->push_back(float(re)), d->push_back(re);
            if (is_complex(compute)) f->push_back(float(im)), d->push_back(im);
        }
        p.add(g);
    }
    const bool doubles = compute == GEMM_F64 || compute == GEMM_C64;
    const void *alpha = doubles ? static_cast<const void *>(alpha_d.data()) : alpha_f.data();
    const void *beta = doubles ? static_cast<const void *>(beta_d.data()) : beta_f.data();
    return gemm_ex_grouped(first.layout, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha, p.a.data(),
                           first.ab_type, lda.data(), p.b.data(), first.ab_type, ldb.data(), beta, p.c.data(),
                           first.c_type, ldc.data(), int64_t(groups.size()), size.data(), compute);
}

}  // namespace

TEST_CASE("batched grouped: groups of their own shapes, ops and scalars, empty groups, every backend") {
    for (const type_case &t : types) {
        const gemm_layout_t row = GEMM_ROW_MAJOR;
        std::vector<group_data> groups;
        groups.emplace_back(make_case(t.ab, t.c, entry::ex, row, GEMM_OP_N, GEMM_OP_T, 7, 5, 3, 1, 1.0, 0.0), 3, 1);
        groups.emplace_back(make_case(t.ab, t.c, entry::ex, row, GEMM_OP_C, GEMM_OP_N, 2, 9, 17, 0, -1.5, 0.5), 0, 2);
        groups.emplace_back(make_case(t.ab, t.c, entry::ex, row, GEMM_OP_T, GEMM_OP_C, 33, 4, 1, 2, 0.5, 1.0), 2, 3);
        groups.emplace_back(make_case(t.ab, t.c, entry::ex, row, GEMM_OP_N, GEMM_OP_N, 0, 4, 5, 0, 1.0, 0.0), 2, 4);
        groups.emplace_back(make_case(t.ab, t.c, entry::ex, row, GEMM_OP_T, GEMM_OP_T, 3, 3, 0, 1, 1.0, 2.0), 1, 5);
        on_every_backend([&](const std::string &name) {
            for (group_data &g : groups) g.reset();
            gemm_status_t s = call_grouped(groups);
            if (s == GEMM_STATUS_NOT_SUPPORTED) {
                for (const group_data &g : groups) CHECK(g.untouched());
                CHECK(std::string(gemm_last_error()).rfind("group ", 0) == 0);  // names the group it refused
                return;
            }
            REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, name << " " << gemm_dtype_name(t.ab) << ": " << gemm_last_error());
            for (std::size_t gi = 0; gi < groups.size(); ++gi)
                check_group(groups[gi], "backend=" + name + " group " + std::to_string(gi));
        });
    }
}

TEST_CASE("batched grouped: enough small matrices for one parallel region (cpu_omp), every backend") {
    // 14 matrices of about 0.3 to 0.5 MFLOP: work for every thread of a small machine, each
    // matrix small enough to go whole to one thread; a group that only scales C among them.
    for (const type_case &t : {types[0], types[3]}) {
        std::vector<group_data> groups;
        groups.emplace_back(
            make_case(t.ab, t.c, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 64, 64, 64, 0, 1.0, 0.0), 4, 11);
        groups.emplace_back(
            make_case(t.ab, t.c, entry::ex, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_C, 48, 80, 37, 3, -0.5, 1.0), 5, 12);
        groups.emplace_back(
            make_case(t.ab, t.c, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_T, 33, 20, 0, 1, 1.0, 0.5), 2, 13);
        groups.emplace_back(
            make_case(t.ab, t.c, entry::ex, GEMM_COL_MAJOR, GEMM_OP_C, GEMM_OP_N, 17, 9, 130, 0, 2.0, 0.0), 3, 14);
        on_every_backend([&](const std::string &name) {
            for (group_data &g : groups) g.reset();
            gemm_status_t s = call_grouped(groups);
            REQUIRE_MESSAGE(s == GEMM_STATUS_SUCCESS, name << " " << gemm_dtype_name(t.ab) << ": " << gemm_last_error());
            for (std::size_t gi = 0; gi < groups.size(); ++gi)
                check_group(groups[gi], "backend=" + name + " group " + std::to_string(gi));
        });
    }
}

namespace {

// The call must fail with want, its message start with prefix, its parameter be position,
// and no C change.
void expect_refused(gemm_status_t got, gemm_status_t want, const std::string &prefix, int position,
                    const std::vector<group_data *> &groups) {
    std::string message = gemm_last_error();
    CHECK_MESSAGE(got == want, "status " << int(got) << ", expected " << int(want) << ": " << message);
    CHECK_MESSAGE(message.rfind(prefix, 0) == 0, "message \"" << message << "\" should start with \"" << prefix << "\"");
    CHECK(gemm_last_error_parameter() == position);
    for (const group_data *g : groups) CHECK(g->untouched());
}

}  // namespace

TEST_CASE("batched errors: each names its matrix or group, and nothing is computed") {
    gemm_case c = make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 2, 0, 1.0, 0.0);
    group_data g(c, 4, 9);
    pointer_arrays p;
    p.add(g);

    SUBCASE("a NULL matrix pointer, after valid ones") {
        pointer_arrays q = p;
        q.a[2] = nullptr;
        expect_refused(call_batched(c, q, 4, true), GEMM_STATUS_INVALID_POINTER, "parameter 8: A[2] is NULL", 8, {&g});
        q = p;
        q.c[3] = nullptr;
        expect_refused(call_batched(c, q, 4, false), GEMM_STATUS_INVALID_POINTER, "parameter 15: C[3] is NULL", 15,
                       {&g});
    }
    SUBCASE("overlapping C matrices") {
        pointer_arrays q = p;
        q.c[3] = static_cast<char *>(q.c[1]) + sizeof(float);  // C[1] shifted by one element
        expect_refused(call_batched(c, q, 4, true), GEMM_STATUS_INVALID_VALUE, "parameter 13: C[1] and C[3] overlap",
                       13, {&g});
    }
    SUBCASE("batch_count and the arrays") {
        expect_refused(call_batched(c, p, -1, true), GEMM_STATUS_INVALID_SIZE, "parameter 15: batch_count = -1", 15,
                       {&g});
        expect_refused(call_batched(c, p, -1, false), GEMM_STATUS_INVALID_SIZE, "parameter 18: batch_count = -1", 18,
                       {&g});
        pointer_arrays none;
        none.a.assign(4, nullptr);
        CHECK(gemm_sgemm_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 2, 1.0f, nullptr, 4, nullptr, 2, 0.0f,
                                 reinterpret_cast<float *const *>(p.c.data()), 4, 4) == GEMM_STATUS_INVALID_POINTER);
        CHECK(std::string(gemm_last_error()) == "parameter 8: A is NULL (the array of the matrices' pointers)");
        // Nothing to compute: NULL arrays are fine (batch_count 0, or alpha 0 for A and B).
        CHECK(gemm_sgemm_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 2, 1.0f, nullptr, 4, nullptr, 2, 0.0f,
                                 nullptr, 4, 0) == GEMM_STATUS_SUCCESS);
        CHECK(gemm_sgemm_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 2, 0.0f, nullptr, 4, nullptr, 2, 0.0f,
                                 reinterpret_cast<float *const *>(p.c.data()), 4, 4) == GEMM_STATUS_SUCCESS);
        for (const bytes &cb : g.c) CHECK(load(cb.data(), 0, GEMM_F32) == 0.0);  // C = 0 * C0 (C0 NaN, not read)
    }
    SUBCASE("a leading dimension") {
        gemm_case bad = c;
        bad.lda = 3;
        expect_refused(call_batched(bad, p, 4, false), GEMM_STATUS_INVALID_LEADING_DIM, "parameter 10: lda = 3", 10,
                       {&g});
    }
}

TEST_CASE("batched grouped errors: the group is named, every group checked before any runs") {
    gemm_case c0 = make_case(GEMM_F64, GEMM_F64, entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 3, 2, 0, 1.0, 0.0);
    gemm_case c1 = make_case(GEMM_F64, GEMM_F64, entry::ex, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 5, 2, 3, 0, 1.0, 0.5);
    group_data g0(c0, 2, 1), g1(c1, 2, 2);
    pointer_arrays p;
    p.add(g0);
    p.add(g1);
    gemm_op_t ta[2] = {c0.transa, c1.transa}, tb[2] = {c0.transb, c1.transb};
    int64_t m[2] = {c0.m, c1.m}, n[2] = {c0.n, c1.n}, k[2] = {c0.k, c1.k};
    int64_t lda[2] = {c0.lda, c1.lda}, ldb[2] = {c0.ldb, c1.ldb}, ldc[2] = {c0.ldc, c1.ldc}, size[2] = {2, 2};
    double alpha[2] = {1.0, 1.0}, beta[2] = {0.0, 0.5};
    auto grouped = [&](int64_t count) {
        return gemm_ex_grouped(GEMM_COL_MAJOR, ta, tb, m, n, k, alpha, p.a.data(), GEMM_F64, lda, p.b.data(), GEMM_F64,
                               ldb, beta, p.c.data(), GEMM_F64, ldc, count, size, GEMM_F64);
    };
    REQUIRE(grouped(2) == GEMM_STATUS_SUCCESS);  // the arguments as given are valid
    check_group(g0, "group 0");
    check_group(g1, "group 1");
    g0.reset();
    g1.reset();

    SUBCASE("k < 0 in group 1") {
        k[1] = -1;
        expect_refused(grouped(2), GEMM_STATUS_INVALID_SIZE, "group 1: parameter 6: k = -1 must be >= 0", 6, {&g0, &g1});
    }
    SUBCASE("lda too small in group 1") {
        lda[1] = 2;
        expect_refused(grouped(2), GEMM_STATUS_INVALID_LEADING_DIM, "group 1: parameter 10: lda = 2", 10, {&g0, &g1});
    }
    SUBCASE("an invalid op in group 0") {
        ta[0] = gemm_op_t(7);
        expect_refused(grouped(2), GEMM_STATUS_INVALID_OP, "group 0: parameter 2: transa = 7", 2, {&g0, &g1});
    }
    SUBCASE("group_size < 0") {
        size[1] = -3;
        expect_refused(grouped(2), GEMM_STATUS_INVALID_SIZE, "group 1: parameter 19: group_size = -3", 19, {&g0, &g1});
    }
    SUBCASE("group_count < 0, and a NULL array") {
        expect_refused(grouped(-1), GEMM_STATUS_INVALID_SIZE, "parameter 18: group_count = -1", 18, {&g0, &g1});
        CHECK(gemm_ex_grouped(GEMM_COL_MAJOR, nullptr, tb, m, n, k, alpha, p.a.data(), GEMM_F64, lda, p.b.data(),
                              GEMM_F64, ldb, beta, p.c.data(), GEMM_F64, ldc, 2, size,
                              GEMM_F64) == GEMM_STATUS_INVALID_POINTER);
        CHECK(std::string(gemm_last_error()).rfind("parameter 2: transa is NULL", 0) == 0);
        CHECK(grouped(0) == GEMM_STATUS_SUCCESS);
    }
    // The arguments no group owns are checked however many groups there are, none included,
    // as a call of no matrix (m = 0) is checked for all of its arguments.
    SUBCASE("an invalid layout or type, with groups and without") {
        for (int64_t count : {2, 0}) {
            INFO("group_count " << count);
            CHECK(gemm_ex_grouped(gemm_layout_t(7), ta, tb, m, n, k, alpha, p.a.data(), GEMM_F64, lda, p.b.data(),
                                  GEMM_F64, ldb, beta, p.c.data(), GEMM_F64, ldc, count, size,
                                  GEMM_F64) == GEMM_STATUS_INVALID_LAYOUT);
            CHECK(std::string(gemm_last_error()).rfind("parameter 1: layout = 7", 0) == 0);
            CHECK(gemm_last_error_parameter() == 1);
            // A dtype no enumerator has (every value of gemm_dtype_t's range is one), passed as C
            // passes ints.
            const int raw_ta[2] = {ta[0], ta[1]}, raw_tb[2] = {tb[0], tb[1]};
            CHECK(raw_gemm_ex_grouped(GEMM_COL_MAJOR, raw_ta, raw_tb, m, n, k, alpha, p.a.data(), 9, lda, p.b.data(),
                                      GEMM_F64, ldb, beta, p.c.data(), GEMM_F64, ldc, count, size,
                                      GEMM_F64) == GEMM_STATUS_INVALID_DTYPE);
            CHECK(gemm_last_error_parameter() == 9);
            CHECK(raw_gemm_ex_grouped(GEMM_COL_MAJOR, raw_ta, raw_tb, m, n, k, alpha, p.a.data(), GEMM_F64, lda,
                                      p.b.data(), GEMM_F64, ldb, beta, p.c.data(), GEMM_F64, ldc, count, size,
                                      9) == GEMM_STATUS_INVALID_DTYPE);
            CHECK(gemm_last_error_parameter() == 20);
            // A type pair no backend computes: what gemm_ex refuses at m = 0 too.
            CHECK(gemm_ex_grouped(GEMM_COL_MAJOR, ta, tb, m, n, k, alpha, p.a.data(), GEMM_F64, lda, p.b.data(),
                                  GEMM_F32, ldb, beta, p.c.data(), GEMM_F64, ldc, count, size,
                                  GEMM_F64) == GEMM_STATUS_NOT_SUPPORTED);
            CHECK(gemm_last_error_parameter() == 12);
        }
        // No groups, so no group arrays to read: NULL arrays stay valid.
        CHECK(gemm_ex_grouped(GEMM_ROW_MAJOR, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, GEMM_F32,
                              nullptr, nullptr, GEMM_F32, nullptr, nullptr, nullptr, GEMM_F32, nullptr, 0, nullptr,
                              GEMM_F32) == GEMM_STATUS_SUCCESS);
        CHECK(g0.untouched());
        CHECK(g1.untouched());
    }
    SUBCASE("a C of group 1 overlapping one of group 0") {
        p.c[3] = p.c[0];
        expect_refused(grouped(2), GEMM_STATUS_INVALID_VALUE, "parameter 15: C[0] and C[3] overlap", 15, {&g0, &g1});
    }
}

// ---- auto's tune cache and pointer-array batches: one process with its own cache and record file

namespace {

std::vector<std::string> read_lines(const char *path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST_SUITE("env_tuned" * doctest::skip()) {
    TEST_CASE("batched tuned: a pointer batch is recorded as form=pointers, tuned as one, and hits only as one") {
        const char *cache = std::getenv("GEMM_TUNE_CACHE");
        const char *record = std::getenv("GEMM_RECORD");
        REQUIRE(cache);
        REQUIRE(record);
        std::remove(cache);
        std::remove(record);
        // Row-major 20 x 24 (NN) is the canonical column-major 24 x 20 with A and B swapped.
        gemm_case c =
            make_case(GEMM_F32, GEMM_F32, entry::ex, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 20, 24, 16, 0, 1.0, 0.0);
        const char *key = "f32 f32 NN 24 20 16 batch=5 ld=tight align=16 space=host beta=0 form=pointers";
        group_data g(c, 5, 900);
        pointer_arrays p;
        p.add(g);
        auto traced_batch = [&] {
            g.reset();
            stderr_capture capture;
            REQUIRE_MESSAGE(call_batched(c, p, 5, true) == GEMM_STATUS_SUCCESS, gemm_last_error());
            check_group(g, "tuned");
            return capture.lines();
        };
        // Untuned: the built-in rule, and the class goes to the record file.
        std::vector<std::string> lines = traced_batch();
        REQUIRE(lines.size() == 5);  // host backends run the matrices one by one
        CHECK(lines[0].find("shape not tuned") != std::string::npos);
        std::vector<std::string> recorded = read_lines(record);
        CHECK(std::find(recorded.begin(), recorded.end(), key) != recorded.end());

        // A grouped call keys each group as a pointer batch of its size, a group of one too.
        {
            std::vector<group_data> groups;
            groups.emplace_back(c, 2, 950);
            groups.emplace_back(c, 1, 960);
            stderr_capture capture;
            REQUIRE_MESSAGE(call_grouped(groups) == GEMM_STATUS_SUCCESS, gemm_last_error());
            for (const group_data &group : groups) check_group(group, "grouped");
        }
        recorded = read_lines(record);
        for (const char *grouped : {"f32 f32 NN 24 20 16 batch=2 ld=tight align=16 space=host beta=0 form=pointers",
                                    "f32 f32 NN 24 20 16 batch=1 ld=tight align=16 space=host beta=0 form=pointers"})
            CHECK_MESSAGE(std::find(recorded.begin(), recorded.end(), grouped) != recorded.end(), grouped);

        // Tuned by its key: measured as five matrices through pointer arrays, checked, stored.
        gemm_tune_report_t report;
        const std::string tuned = tune_key_as_only_entry(key, "cpu_omp,cblas", report);
        REQUIRE_MESSAGE(tuned.empty(), tuned);
        lines = traced_batch();
        REQUIRE(lines.size() == 5);
        for (const std::string &line : lines) {
            INFO("trace: " << line);
            CHECK(line.find("why=\"auto: tune cache hit\"") != std::string::npos);
            CHECK(line.find(std::string("backend=") + report.backend) != std::string::npos);
        }
        // A strided batch of the same shape is another class: not served by the entry.
        {
            stderr_capture capture;
            std::vector<float> a(5 * 20 * 16, 0.5f), b(5 * 16 * 24, 0.25f), cs(5 * 20 * 24);
            REQUIRE(gemm_sgemm_strided_batched(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 20, 24, 16, 1.0f, a.data(), 16,
                                               20 * 16, b.data(), 24, 16 * 24, 0.0f, cs.data(), 24, 20 * 24,
                                               5) == GEMM_STATUS_SUCCESS);
            CHECK(cs[0] == doctest::Approx(16 * 0.125f));
            lines = capture.lines();
        }
        REQUIRE(lines.size() == 1);
        CHECK(lines[0].find("tune cache hit") == std::string::npos);
        // form=pointers takes no epilogue, and is the only form a key names.
        CHECK(gemm_tune_key("f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0 epilogue=relu form=pointers",
                            -1, 20, nullptr, 0, &report) == GEMM_STATUS_INVALID_VALUE);
        CHECK(gemm_tune_key("f32 f32 NN 8 8 8 batch=2 ld=tight align=16 space=host beta=0 form=strided", -1, 20,
                            nullptr, 0, &report) == GEMM_STATUS_INVALID_VALUE);
        // Types no call has (C of f32 for f64 A and B, of f64 for f32 ones) are no class: refused
        // before anything is timed or stored.
        for (const char *mistyped : {"f64 f32 NN 3 3 2 batch=1 ld=tight align=elem space=host beta=0",
                                     "f32 f64 TT 3 3 2 batch=1 ld=tight align=elem space=host beta=0",
                                     "c32 f32 NN 3 3 2 batch=1 ld=tight align=elem space=host beta=0"}) {
            INFO(mistyped);
            CHECK(gemm_tune_key(mistyped, -1, 1, "cpu_ref", 1, &report) == GEMM_STATUS_INVALID_VALUE);
            CHECK(std::string(gemm_last_error()).find("parameter 1") != std::string::npos);
            gemm_tune_verdict_t verdict;
            CHECK(gemm_tune_verify(mistyped, -1, 1, 0, &verdict) == GEMM_STATUS_INVALID_VALUE);
        }
        std::remove(cache);
        std::remove(record);
    }
}
