// test_plan.cpp: gemm_plan_t. A plan is decided once under the selection in force and keeps
// that decision; a run checks what depends on its operands and refuses, C untouched, what the
// plan cannot serve. (Every backend's results through plans: test_correctness, api=plan.)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gemm/gemm.h"
#include "gemm/gemm.hpp"
#include "harness.hpp"

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

gemm_desc_t desc_of(int64_t m, int64_t n, int64_t k) {
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, n, k);
    return d;
}

// Row-major A (m x k), B stored n x k (op T), C m x n, tight, 64-byte aligned.
struct f32_operands {
    int64_t m, n, k;
    std::vector<float> a, b, c;
    f32_operands(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
        random_source rng(uint64_t(m * 1000003 + n * 1009 + k));
        a.resize(std::size_t(m * k));
        b.resize(std::size_t(n * k));
        c.resize(std::size_t(m * n));
        for (float &x : a) x = float(rng.uniform());
        for (float &x : b) x = float(rng.uniform());
        for (float &x : c) x = float(rng.uniform());
    }
    // alpha * A * B^T + beta * C0, in double.
    std::vector<double> expected(double alpha, double beta, const std::vector<float> &c0) const {
        std::vector<double> out(std::size_t(m * n));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double sum = 0;
                for (int64_t l = 0; l < k; ++l)
                    sum += double(a[std::size_t(i * k + l)]) * double(b[std::size_t(j * k + l)]);
                out[std::size_t(i * n + j)] =
                    alpha * sum + (beta != 0 ? beta * double(c0[std::size_t(i * n + j)]) : 0.0);
            }
        return out;
    }
};

// C of an f32 product against want, by the tolerance rule; C0 of f32_operands lies in [-1, 1],
// so 1 bounds every element's |C0|.
void check_close(const std::vector<float> &got, const std::vector<double> &want, int64_t k, double alpha, double beta) {
    REQUIRE(got.size() == want.size());
    gemm::tolerance_rule rule;
    rule.k = k;
    rule.alpha_size = std::fabs(alpha);
    rule.beta_size = std::fabs(beta);
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(std::fabs(double(got[i]) - want[i]) <= rule.element(std::fabs(want[i]), 1.0));
    }
}

gemm_plan_t make_plan(const gemm_desc_t &d) {
    gemm_plan_t p = nullptr;
    gemm_status_t s = gemm_plan_create(&d, &p);
    INFO(gemm_status_string(s) << ": " << gemm_last_error());
    REQUIRE(s == GEMM_STATUS_SUCCESS);
    REQUIRE(p != nullptr);
    return p;
}

std::string plan_backend(gemm_plan_t p, std::string *why = nullptr) {
    const char *backend = nullptr, *variant = nullptr, *reason = nullptr;
    REQUIRE(gemm_plan_get_backend(p, &backend, &variant, &reason) == GEMM_STATUS_SUCCESS);
    if (why) *why = reason;
    return backend;
}

}  // namespace

TEST_CASE("plan: made under the selection in force, it keeps its backend when the selection changes") {
    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    gemm_plan_t p = make_plan(desc_of(17, 9, 33));
    REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
    std::string why;
    CHECK(plan_backend(p, &why) == "cpu_ref");
    CHECK(contains(why, "forced by gemm_set_backend"));
    CHECK(contains(why, "(plan)"));
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);

    f32_operands x(17, 9, 33);
    std::vector<float> c0 = x.c;
    float alpha = -1.5f, beta = 0.5f;
    REQUIRE(gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, x.c.data()) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(gemm_last_error()).empty());
    check_close(x.c, x.expected(alpha, beta, c0), x.k, alpha, beta);
    gemm_plan_destroy(p);
}

TEST_CASE("plan: under auto it holds auto's choice for its class, and says why") {
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    gemm_plan_t p = make_plan(desc_of(64, 64, 64));
    std::string why;
    std::string backend = plan_backend(p, &why);
    CHECK_FALSE(backend.empty());
    CHECK(contains(why, "auto:"));
    CHECK(contains(why, "(plan)"));
    gemm_desc_t d = desc_of(64, 64, 64);
    CHECK(gemm_backend_supports(backend.c_str(), &d) == GEMM_STATUS_SUCCESS);
    gemm_plan_destroy(p);
}

TEST_CASE("plan: gemm_plan_create refuses what a call or gemm_backend_supports would, and leaves *plan") {
    gemm_plan_t sentinel = reinterpret_cast<gemm_plan_t>(uintptr_t(0x1234));
    gemm_plan_t p = sentinel;
    gemm_desc_t d = desc_of(8, 8, 8);
    CHECK(gemm_plan_create(nullptr, &p) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_last_error_parameter() == 1);
    CHECK(gemm_plan_create(&d, nullptr) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_last_error_parameter() == 2);
    d.m = -1;
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_SIZE);
    CHECK(contains(gemm_last_error(), "m = -1"));
    d = desc_of(8, 8, 8);
    d.lda = 3;  // row-major A, no transpose: lda >= k = 8
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_LEADING_DIM);
    d = desc_of(8, 8, 8);
    d.struct_size = 8;
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_VALUE);
    d = desc_of(8, 8, 8);
    d.alignment = 12;
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_VALUE);
    d = desc_of(8, 8, 8);
    d.beta_zero = 2;  // a flag is 0 or 1
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "gemm_desc_t: beta_zero = 2 must be 0 or 1"));
    d = desc_of(8, 8, 8);
    d.aux = -1;
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "gemm_desc_t: aux = -1 must be 0 or 1"));
    d = desc_of(8, 8, 8);
    d.check_pointers = 3;
    CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "gemm_desc_t: check_pointers = 3 must be 0 or 1"));
    // A forced backend that cannot serve the class: the status a call forced onto it gets.
    gemm_desc_t on_device = desc_of(8, 8, 8);
    on_device.device = 0;
    REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
    CHECK(gemm_plan_create(&on_device, &p) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "cpu_omp"));
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(p == sentinel);
}

// A desc is checked as the strided call of its class: a negative stride (other than
// GEMM_DESC_TIGHT) is refused whatever the batch count, as gemm_sgemm_strided_batched refuses
// it. A refused desc names the desc's own position, as every refused argument names its.
TEST_CASE("plan: a refused desc names its position; a negative stride is refused at any batch count") {
    gemm_plan_t sentinel = reinterpret_cast<gemm_plan_t>(uintptr_t(0x1234));
    gemm_plan_t p = sentinel;
    float x = 0;
    for (int64_t batch : {int64_t(0), int64_t(1), int64_t(2)}) {
        INFO("batch_count " << batch);
        gemm_desc_t d = desc_of(4, 4, 4);
        d.batch_count = batch;
        d.stride_b = -5;
        CHECK(gemm_plan_create(&d, &p) == GEMM_STATUS_INVALID_STRIDE);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(std::string(gemm_last_error()) == "gemm_desc_t: stride_b = -5 must be >= 0 (or GEMM_DESC_TIGHT)");
        CHECK(gemm_sgemm_strided_batched(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 4, 4, 4, 1, &x, 4, 16, &x, 4, -5, 0, &x,
                                         4, 16, batch) == GEMM_STATUS_INVALID_STRIDE);
    }
    CHECK(p == sentinel);
    // The desc's position: 1 in gemm_plan_create and gemm_measure, 2 in gemm_backend_supports
    // and gemm_backend_variants; the struct_size rule and the desc's own fields alike.
    gemm_desc_t bad = desc_of(4, 4, 4);
    bad.k = -1;
    gemm_desc_t unsized = desc_of(4, 4, 4);
    unsized.struct_size = 8;
    gemm_desc_t unaligned = desc_of(4, 4, 4);
    unaligned.alignment = 12;
    const char *const *ids = nullptr;
    int64_t count = 0;
    for (const gemm_desc_t *d : {&bad, &unsized, &unaligned}) {
        INFO("desc with k " << d->k << ", struct_size " << d->struct_size << ", alignment " << d->alignment);
        CHECK(gemm_plan_create(d, &p) != GEMM_STATUS_SUCCESS);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(gemm_measure(d, nullptr, 0, nullptr, nullptr) != GEMM_STATUS_SUCCESS);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(gemm_backend_supports("cpu_ref", d) != GEMM_STATUS_SUCCESS);
        CHECK(gemm_last_error_parameter() == 2);
        CHECK(gemm_backend_variants("cpu_ref", d, &ids, &count) != GEMM_STATUS_SUCCESS);
        CHECK(gemm_last_error_parameter() == 2);
    }
    CHECK(p == sentinel);
}

TEST_CASE("plan: a run refuses what it cannot serve, C untouched, naming gemm_plan_run's parameter") {
    gemm_desc_t d = desc_of(5, 7, 3);
    d.beta_zero = 1;
    gemm_plan_t p = make_plan(d);
    f32_operands x(5, 7, 3);
    const std::vector<float> c0 = x.c;
    float alpha = 1, zero = 0, half = 0.5f;
    // Each refused run: its status, the parameter it names and its message.
    auto expect = [](gemm_status_t got, gemm_status_t want, int parameter, const std::string &text) {
        std::string message = gemm_last_error();
        INFO(message);
        CHECK(got == want);
        CHECK(gemm_last_error_parameter() == parameter);
        CHECK(contains(message, text));
    };
    const float *a = x.a.data(), *b = x.b.data();
    float *c = x.c.data();
    expect(gemm_plan_run(nullptr, &alpha, a, b, &zero, c), GEMM_STATUS_INVALID_POINTER, 1, "parameter 1: plan is NULL");
    expect(gemm_plan_run(p, nullptr, a, b, &zero, c), GEMM_STATUS_INVALID_POINTER, 2, "parameter 2: alpha is NULL");
    expect(gemm_plan_run(p, &alpha, nullptr, b, &zero, c), GEMM_STATUS_INVALID_POINTER, 3, "parameter 3: A is NULL");
    expect(gemm_plan_run(p, &alpha, a, nullptr, &zero, c), GEMM_STATUS_INVALID_POINTER, 4, "parameter 4: B is NULL");
    expect(gemm_plan_run(p, &alpha, a, b, nullptr, c), GEMM_STATUS_INVALID_POINTER, 5, "parameter 5: beta is NULL");
    expect(gemm_plan_run(p, &alpha, a, b, &zero, nullptr), GEMM_STATUS_INVALID_POINTER, 6, "parameter 6: C is NULL");
    expect(gemm_plan_run(p, &alpha, a, b, &half, c), GEMM_STATUS_INVALID_VALUE, 5,
           "parameter 5: beta = 0.5 but the plan was made for beta = 0");
    // 4 bytes past a 64-byte boundary: not a multiple of the plan's 16.
    alignas(64) float shifted[5 * 3 + 1] = {};
    std::memcpy(shifted + 1, a, x.a.size() * sizeof(float));
    expect(gemm_plan_run(p, &alpha, shifted + 1, b, &zero, c), GEMM_STATUS_INVALID_VALUE, 3,
           "is not a multiple of the plan's alignment, 16 bytes (desc->alignment)");
    CHECK(x.c == c0);  // every refused run left C as it was

    // alpha = 0: A and B are not read, so they may be NULL; C = beta * C (beta 0 here).
    REQUIRE(gemm_plan_run(p, &zero, nullptr, nullptr, &zero, x.c.data()) == GEMM_STATUS_SUCCESS);
    for (float v : x.c) CHECK(v == 0.0f);
    gemm_plan_destroy(p);
    gemm_plan_destroy(nullptr);  // allowed, does nothing
}

// A destroyed plan's memory is freed: its handle is judged without reading through it
// (AddressSanitizer reports a read of the freed plan), and refused every time.
TEST_CASE("plan: a destroyed plan is refused, never read") {
    gemm_plan_t p = make_plan(desc_of(3, 2, 4));
    gemm_plan_destroy(p);
    f32_operands x(3, 2, 4);
    const std::vector<float> c0 = x.c;
    float alpha = 1, beta = 0;
    const char *stale = "parameter 1: plan is not a live gemm_plan_t (destroyed?)";
    for (int attempt = 0; attempt < 2; ++attempt) {
        CHECK(gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, x.c.data()) == GEMM_STATUS_INVALID_VALUE);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(std::string(gemm_last_error()) == stale);
        gemm_epilogue_t e;
        gemm_epilogue_init(&e);
        CHECK(gemm_plan_run_epilogue(p, &alpha, x.a.data(), x.b.data(), &beta, x.c.data(), &e) ==
              GEMM_STATUS_INVALID_VALUE);
        const char *backend = nullptr;
        CHECK(gemm_plan_get_backend(p, &backend, nullptr, nullptr) == GEMM_STATUS_INVALID_VALUE);
        CHECK(backend == nullptr);
        gemm_plan_destroy(p);  // a second destroy does nothing, not even to the last error
        CHECK(std::string(gemm_last_error()) == stale);
    }
    CHECK(x.c == c0);
}

// A thread remembers the plan it found live last (gemm_plan_api.cpp, live_plans): a plan it
// ran, then destroyed here or on another thread, is refused all the same, and destroying
// another plan leaves a live one running.
TEST_CASE("plan: a plan destroyed after it ran is refused on the thread that ran it") {
    f32_operands x(3, 2, 4);
    float alpha = 1, beta = 0;
    const char *stale = "parameter 1: plan is not a live gemm_plan_t (destroyed?)";
    auto run = [&](gemm_plan_t p) { return gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, x.c.data()); };
    gemm_plan_t p = make_plan(desc_of(3, 2, 4)), other = make_plan(desc_of(3, 2, 4));
    REQUIRE(run(p) == GEMM_STATUS_SUCCESS);
    gemm_plan_destroy(other);
    CHECK(run(p) == GEMM_STATUS_SUCCESS);
    gemm_plan_destroy(p);
    CHECK(run(p) == GEMM_STATUS_INVALID_VALUE);
    CHECK(std::string(gemm_last_error()) == stale);

    gemm_plan_t q = make_plan(desc_of(3, 2, 4));
    gemm_status_t before = GEMM_STATUS_INTERNAL_ERROR, after = GEMM_STATUS_SUCCESS;
    std::string after_error;
    std::mutex m;
    std::condition_variable turn;
    int stage = 0;  // 1: the thread ran q; 2: q is destroyed
    std::thread runner([&] {
        before = run(q);
        std::unique_lock lock(m);
        stage = 1;
        turn.notify_all();
        turn.wait(lock, [&] { return stage == 2; });
        after = run(q);
        after_error = gemm_last_error();
    });
    {
        std::unique_lock lock(m);
        turn.wait(lock, [&] { return stage == 1; });
        gemm_plan_destroy(q);
        stage = 2;
        turn.notify_all();
    }
    runner.join();
    CHECK(before == GEMM_STATUS_SUCCESS);
    CHECK(after == GEMM_STATUS_INVALID_VALUE);
    CHECK(after_error == stale);
}

TEST_CASE("plan: beta = 0 writes C without reading it") {
    gemm_desc_t d = desc_of(6, 4, 5);
    d.beta_zero = 1;
    gemm_plan_t p = make_plan(d);
    f32_operands x(6, 4, 5);
    std::vector<float> nan_c(x.c.size(), std::nanf(""));
    float alpha = 2, beta = 0;
    REQUIRE(gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, nan_c.data()) == GEMM_STATUS_SUCCESS);
    check_close(nan_c, x.expected(alpha, 0, x.c), x.k, alpha, 0);
    gemm_plan_destroy(p);
}

// A run that asks where its operands lie computes what one that trusts its desc does.
TEST_CASE("plan: a plan that checks its pointers computes the same C") {
    f32_operands x(7, 5, 9);
    const float alpha = 0.5f, beta = -1.0f;
    std::vector<std::vector<float>> results;
    for (int check : {0, 1}) {
        gemm_desc_t d = desc_of(7, 5, 9);
        d.check_pointers = check;
        gemm_plan_t p = make_plan(d);
        std::vector<float> c = x.c;
        REQUIRE(gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, c.data()) == GEMM_STATUS_SUCCESS);
        check_close(c, x.expected(alpha, beta, x.c), x.k, alpha, beta);
        results.push_back(c);
        gemm_plan_destroy(p);
    }
    CHECK(results[0] == results[1]);
}

TEST_CASE("plan: an empty class has no backend and its runs compute nothing") {
    gemm_plan_t p = make_plan(desc_of(0, 5, 3));
    const char *backend = "x", *variant = "x", *why = "x";
    REQUIRE(gemm_plan_get_backend(p, &backend, &variant, &why) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(backend).empty());
    CHECK(std::string(variant).empty());
    CHECK(std::string(why).empty());
    float alpha = 1, beta = 0;
    CHECK(gemm_plan_run(p, &alpha, nullptr, nullptr, &beta, nullptr) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_plan_get_backend(nullptr, &backend, nullptr, nullptr) == GEMM_STATUS_INVALID_POINTER);
    gemm_plan_destroy(p);
}

TEST_CASE("plan: a strided batch with GEMM_DESC_TIGHT strides equals one run per matrix") {
    const int64_t m = 7, n = 5, k = 9, batch = 3;
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F64, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, m, n, k);
    d.batch_count = batch;
    gemm_plan_t batched = make_plan(d);
    gemm_desc_t one;
    gemm_desc_init(&one, GEMM_F64, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, m, n, k);
    one.alignment = 8;  // matrix i of the batch starts i * 63 doubles in
    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    gemm_plan_t single = make_plan(one);
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    random_source rng(11);
    std::vector<double> a(std::size_t(k * m * batch)), b(std::size_t(k * n * batch)), c(std::size_t(m * n * batch));
    for (double &v : a) v = rng.uniform();
    for (double &v : b) v = rng.uniform();
    for (double &v : c) v = rng.uniform();
    std::vector<double> expected = c;
    double alpha = 0.75, beta = -2;
    REQUIRE(gemm_plan_run(batched, &alpha, a.data(), b.data(), &beta, c.data()) == GEMM_STATUS_SUCCESS);
    for (int64_t i = 0; i < batch; ++i)
        REQUIRE(gemm_plan_run(single, &alpha, a.data() + i * k * m, b.data() + i * k * n, &beta,
                              expected.data() + i * m * n) == GEMM_STATUS_SUCCESS);
    for (std::size_t i = 0; i < c.size(); ++i) CHECK(c[i] == doctest::Approx(expected[i]).epsilon(1e-12));
    gemm_plan_destroy(batched);
    gemm_plan_destroy(single);
}

TEST_CASE("plan: threads may run one plan at once") {
    const int64_t m = 33, n = 17, k = 65;
    gemm_plan_t p = make_plan(desc_of(m, n, k));
    f32_operands x(m, n, k);
    const std::vector<double> want = x.expected(1.0, 0.0, x.c);
    constexpr int threads = 4, runs = 50;
    std::vector<int> wrong(threads, 0), failed(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::vector<float> c(std::size_t(m * n));
            float alpha = 1, beta = 0;
            for (int r = 0; r < runs; ++r) {
                std::fill(c.begin(), c.end(), std::nanf(""));
                if (gemm_plan_run(p, &alpha, x.a.data(), x.b.data(), &beta, c.data()) != GEMM_STATUS_SUCCESS)
                    ++failed[t];
                for (std::size_t i = 0; i < c.size(); ++i)
                    if (!(std::fabs(double(c[i]) - want[i]) <= 1e-3)) {
                        ++wrong[t];
                        break;
                    }
            }
        });
    for (std::thread &t : pool) t.join();
    for (int t = 0; t < threads; ++t) {
        CHECK(failed[t] == 0);
        CHECK(wrong[t] == 0);
    }
    gemm_plan_destroy(p);
}

TEST_CASE("plan: the C++ gemm::plan owns its plan, moves it, and checks the scalars' type") {
    gemm::plan empty;
    CHECK_FALSE(empty);
    CHECK(empty.run(1.0f, nullptr, nullptr, 0.0f, nullptr).code == GEMM_STATUS_INVALID_POINTER);
    gemm::plan p;
    gemm_desc_t bad = desc_of(4, 4, 4);
    bad.k = -2;
    gemm::status refused = p.create(bad);
    CHECK(refused.code == GEMM_STATUS_INVALID_SIZE);
    CHECK(contains(refused.message, "k = -2"));
    CHECK_FALSE(p);
    REQUIRE(p.create(desc_of(4, 3, 2)).ok());
    CHECK_FALSE(p.backend().empty());
    CHECK(contains(p.why(), "(plan)"));
    gemm::plan moved = std::move(p);
    CHECK_FALSE(p);
    REQUIRE(moved);
    f32_operands x(4, 3, 2);
    std::vector<float> c0 = x.c;
    CHECK(moved.run(1.0, x.a.data(), x.b.data(), 0.0, x.c.data()).code == GEMM_STATUS_INVALID_VALUE);
    CHECK(x.c == c0);
    REQUIRE(moved.run(1.0f, x.a.data(), x.b.data(), 1.0f, x.c.data()).ok());
    check_close(x.c, x.expected(1.0, 1.0, c0), x.k, 1.0, 1.0);
}
