// test_threads.cpp: concurrent calls: 8 threads with different shapes and dtypes under "auto"
// and under each available backend, switching the backend while others compute, and the
// thread-local gemm_last_error.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

constexpr int thread_count = 8;
constexpr int repetitions = 3;

// Thread t's case: its own shape, layout, ops and dtype, so concurrent calls differ in
// everything a backend might cache or share.
gemm_case thread_case(int t) {
    struct kind {
        gemm_dtype_t ab, c;
        entry api;
        bool batched;
    };
    constexpr kind kinds[] = {{GEMM_F32, GEMM_F32, entry::typed, false}, {GEMM_F64, GEMM_F64, entry::typed, false},
                              {GEMM_F32, GEMM_F32, entry::ex, true},     {GEMM_F16, GEMM_F32, entry::ex, false},
                              {GEMM_F64, GEMM_F64, entry::typed, true},  {GEMM_BF16, GEMM_BF16, entry::ex, false},
                              {GEMM_F32, GEMM_F32, entry::typed, true},  {GEMM_F16, GEMM_F16, entry::ex, true}};
    const kind &k = kinds[t % 8];
    gemm_case c;
    c.ab_type = k.ab;
    c.c_type = k.c;
    c.api = k.api;
    c.layout = t % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
    c.transa = t % 3 == 0 ? GEMM_OP_N : GEMM_OP_T;
    c.transb = t % 4 < 2 ? GEMM_OP_N : GEMM_OP_C;
    c.m = 31 + 7 * t;
    c.n = 17 + 5 * t;
    c.k = 33 + 3 * t;
    c.alpha = t % 2 ? -1.5 : 1.0;
    c.beta = t % 3 == 1 ? 0.5 : 0.0;
    set_leading_dims(c, t % 3);
    if (k.batched) set_batch(c, 2, t % 4 == 2, false, 1);
    return c;
}

// What one thread saw: its statuses and the first wrong result.
struct thread_outcome {
    int successes = 0;
    int not_supported = 0;
    std::string failure;  // empty when every call returned SUCCESS/NOT_SUPPORTED and matched
};

struct prepared {
    gemm_case c;
    operands o;
    reference ref;  // computed single-threaded before the threads start
};

std::vector<prepared> prepare_all() {
    std::vector<prepared> all;
    for (int t = 0; t < thread_count; ++t) {
        prepared p;
        p.c = thread_case(t);
        p.o = make_operands(p.c);
        p.ref = compute_reference(p.c, p.o);
        all.push_back(std::move(p));
    }
    return all;
}

void run_thread(const prepared &p, thread_outcome &out) {
    for (int rep = 0; rep < repetitions; ++rep) {
        run_result r = run_host(p.c, p.o);
        if (r.status == GEMM_STATUS_NOT_SUPPORTED) {
            ++out.not_supported;
            continue;
        }
        if (r.status != GEMM_STATUS_SUCCESS) {
            out.failure = std::string(gemm_status_string(r.status)) + " \"" + r.error + "\"";
            return;
        }
        comparison cmp = compare_result(p.c, p.o, r.c, p.ref.value);
        if (!cmp.ok) {
            out.failure = cmp.first;
            return;
        }
        ++out.successes;
    }
}

// Starts all threads, then releases them together so their calls overlap.
std::vector<thread_outcome> run_concurrently(const std::vector<prepared> &cases) {
    std::vector<thread_outcome> outcomes(cases.size());
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < cases.size(); ++t)
        threads.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            run_thread(cases[t], outcomes[t]);
        });
    go.store(true);
    for (std::thread &th : threads) th.join();
    return outcomes;
}

}  // namespace

TEST_CASE("threads 8 concurrent callers, auto and each available backend") {
    std::vector<prepared> cases = prepare_all();
    std::vector<std::string> selections = available_backends();
    selections.insert(selections.begin(), "auto");
    for (const std::string &sel : selections) {
        REQUIRE(gemm_set_backend(sel.c_str()) == GEMM_STATUS_SUCCESS);
        std::vector<thread_outcome> outcomes = run_concurrently(cases);
        int declined = 0;
        for (std::size_t t = 0; t < cases.size(); ++t) {
            INFO("backend=" << sel << " thread " << t << ": " << cases[t].c.describe());
            CHECK_MESSAGE(outcomes[t].failure.empty(), outcomes[t].failure);
            CHECK(outcomes[t].successes + outcomes[t].not_supported == repetitions);
            // A backend declines a dtype consistently, never sometimes.
            CHECK((outcomes[t].not_supported == 0 || outcomes[t].not_supported == repetitions));
            declined += outcomes[t].not_supported ? 1 : 0;
        }
        if (sel == "auto") CHECK(declined == 0);  // auto always finds cpu_ref at least
        if (declined)
            MESSAGE("backend=" << sel << ": " << declined << " of " << cases.size()
                               << " threads' dtypes skipped (GEMM_STATUS_NOT_SUPPORTED)");
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

TEST_CASE("threads backend switched by another thread while calls run") {
    // One thread keeps switching between "auto" and every available backend; the others
    // compute f32/f64, which every backend serves. Each call must use one whole selection.
    std::vector<prepared> cases;
    for (int t = 0; t < 6; ++t) {
        prepared p;
        p.c = thread_case(t % 2 ? 1 : 0);  // f32 and f64 typed
        p.c.m += t;
        set_leading_dims(p.c, 1);
        p.o = make_operands(p.c);
        p.ref = compute_reference(p.c, p.o);
        cases.push_back(std::move(p));
    }
    std::vector<std::string> selections = available_backends();
    selections.push_back("auto");
    std::atomic<bool> done{false};
    std::atomic<int> switch_failures{0};
    std::thread switcher([&] {
        for (std::size_t i = 0; !done.load(); ++i)
            if (gemm_set_backend(selections[i % selections.size()].c_str()) != GEMM_STATUS_SUCCESS) ++switch_failures;
    });
    std::vector<thread_outcome> outcomes = run_concurrently(cases);
    done.store(true);
    switcher.join();
    CHECK(switch_failures.load() == 0);
    for (std::size_t t = 0; t < cases.size(); ++t) {
        INFO("thread " << t << ": " << cases[t].c.describe());
        CHECK_MESSAGE(outcomes[t].failure.empty(), outcomes[t].failure);
        CHECK(outcomes[t].successes == repetitions);
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

TEST_CASE("threads gemm_last_error is thread-local") {
    // Thread 1 fails (lda), thread 2 then succeeds and fails differently (ldc); each must
    // still see its own message, and the main thread's state is untouched by both.
    std::vector<float> a(64, 1.0f), b(64, 1.0f), c1(64, 0.0f), c2(64, 0.0f);
    std::mutex mu;
    std::condition_variable cv;
    int step = 0;
    auto wait_for = [&](int s) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return step >= s; });
    };
    auto advance = [&] {
        std::lock_guard<std::mutex> lock(mu);
        ++step;
        cv.notify_all();
    };
    std::string t1_after, t2_success, t2_after;
    int t1_param = -1, t2_param = -1;

    REQUIRE(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4, 0.0f, c1.data(),
                       4) == GEMM_STATUS_SUCCESS);
    std::thread t1([&] {
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4, 1.0f, a.data(), 2, b.data(), 4, 0.0f, c1.data(), 4);
        advance();  // step 1: t1 has failed
        wait_for(2);
        t1_after = gemm_last_error();
        t1_param = gemm_last_error_parameter();
    });
    std::thread t2([&] {
        wait_for(1);
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4, 0.0f, c2.data(), 4);
        t2_success = gemm_last_error();
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4, 0.0f, c2.data(), 3);
        t2_after = gemm_last_error();
        t2_param = gemm_last_error_parameter();
        advance();  // step 2: t2 has succeeded and failed
    });
    t1.join();
    t2.join();
    CHECK(t2_success.empty());  // t1's failure does not show in t2
    CHECK(t1_after.rfind("parameter 9: lda = 2", 0) == 0);
    CHECK(t1_param == 9);
    CHECK(t2_after.rfind("parameter 14: ldc = 3", 0) == 0);
    CHECK(t2_param == 14);
    CHECK(std::string(gemm_last_error()).empty());  // the main thread's last call succeeded
    CHECK(gemm_last_error_parameter() == 0);
}
