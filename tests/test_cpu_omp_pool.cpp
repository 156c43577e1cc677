// test_cpu_omp_pool.cpp: the promises of cpu_omp's worker pool, through the public API: many
// application threads calling at once, a call in a child right after fork() while the parent's
// pool is busy, any OMP_NUM_THREADS (CTest runs this suite with 1, the default and more than
// the cores). Every result is checked against the double-precision reference; no timing.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

struct prepared {
    gemm_case c;
    operands o;
    reference ref;
};

// Shapes large enough for cpu_omp to use every thread it may, one per path through the
// backend: a team on one panel, several blocks of k (items waiting for the previous block),
// two panels of n, a batch split across threads, and the scaling paths (alpha = 0, k = 0).
std::vector<gemm_case> pool_cases() {
    std::vector<gemm_case> cases;
    auto add = [&](gemm_dtype_t t, int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t batch) {
        gemm_case c;
        c.ab_type = c.c_type = t;
        c.layout = cases.size() % 2 ? GEMM_ROW_MAJOR : GEMM_COL_MAJOR;
        c.transa = cases.size() % 3 ? GEMM_OP_N : GEMM_OP_T;
        c.m = m;
        c.n = n;
        c.k = k;
        c.alpha = alpha;
        c.beta = beta;
        set_leading_dims(c, int64_t(cases.size() % 2));
        if (batch > 1) set_batch(c, batch, false, false, 1);
        cases.push_back(c);
    };
    add(GEMM_F32, 160, 150, 140, 1.0, 0.0, 1);
    add(GEMM_F64, 131, 97, 601, -1.5, 0.5, 1);
    add(GEMM_F32, 37, 3100, 41, 1.0, 1.0, 1);
    add(GEMM_F64, 64, 64, 64, 1.0, 0.0, 16);
    add(GEMM_F32, 1024, 1001, 3, 0.0, 0.5, 1);
    add(GEMM_F64, 1003, 1000, 0, 1.0, 2.0, 1);
    return cases;
}

std::vector<prepared> prepare(const std::vector<gemm_case> &cases) {
    std::vector<prepared> all;
    for (const gemm_case &c : cases) {
        prepared p{c, make_operands(c), {}};
        p.ref = compute_reference(p.c, p.o);
        all.push_back(std::move(p));
    }
    return all;
}

// Runs the case once; returns what went wrong, or "" when the call succeeded and matched.
std::string run_and_check(const prepared &p) {
    run_result r = run_host(p.c, p.o);
    if (r.status != GEMM_STATUS_SUCCESS)
        return p.c.describe() + ": " + gemm_status_string(r.status) + " \"" + r.error + "\"";
    comparison cmp = compare_result(p.c, p.o, r.c, p.ref.value);
    return cmp.ok ? std::string() : p.c.describe() + ": " + cmp.first;
}

// Calls every case `rounds` times, starting at a different case on each thread, so that
// concurrent calls differ in shape and path; returns the first failure.
std::string run_rounds(const std::vector<prepared> &cases, int thread, int rounds) {
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < cases.size(); ++i) {
            std::string failure = run_and_check(cases[(i + std::size_t(thread)) % cases.size()]);
            if (!failure.empty()) return failure;
        }
    return {};
}

// OMP_NUM_THREADS as this process sees it (0 when unset or not a plain number).
int omp_num_threads_env() {
    const char *v = std::getenv("OMP_NUM_THREADS");
    return v ? std::atoi(v) : 0;
}

// Waits up to a minute for the child; a child still running then is killed and counts as hung.
std::string wait_child(pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return "the child hung (killed after 60 s)";
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
    if (WIFEXITED(status)) return "the child exited with " + std::to_string(WEXITSTATUS(status)) + " (see its stderr)";
    return "the child died of signal " + std::to_string(WTERMSIG(status));
}

}  // namespace

TEST_CASE("pool thread count follows OMP_NUM_THREADS") {
    const int wanted = omp_num_threads_env();
    std::string detail;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS && std::string(info.name) == "cpu_omp")
            detail = info.detail;
    }
    INFO("OMP_NUM_THREADS=" << wanted << ", cpu_omp detail: " << detail);
    // "avx512f, 2 threads (...)": the count follows the ISA's name.
    const std::size_t comma = detail.find(", ");
    REQUIRE(comma != std::string::npos);
    const int count = std::atoi(detail.c_str() + comma + 2);
    if (wanted > 0) {
        CHECK(count == wanted);
    } else {  // unset: one per CPU this process may run on, which the test does not compute
        MESSAGE("OMP_NUM_THREADS unset: checking only that cpu_omp reports a thread count");
        CHECK(count >= 1);
    }
}

TEST_CASE("pool 12 threads calling cpu_omp at once") {
    REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
    const std::vector<prepared> cases = prepare(pool_cases());
    constexpr int threads = 12;
    std::vector<std::string> failures(threads);
    std::atomic<bool> go{false};
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t)
        callers.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            failures[t] = run_rounds(cases, t, 3);
        });
    go.store(true);
    for (std::thread &th : callers) th.join();
    for (int t = 0; t < threads; ++t) {
        INFO("thread " << t);
        CHECK_MESSAGE(failures[t].empty(), failures[t]);
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

TEST_CASE("pool calls in a child right after fork() complete and are correct") {
    // Other threads keep calling while the main thread forks, so the pool is busy (its
    // threads inside jobs, its locks possibly held) at the moment of the fork. The child has
    // none of those threads; its calls must neither wait for them nor compute wrong.
    REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
    const std::vector<prepared> cases = prepare(pool_cases());
    REQUIRE(run_rounds(cases, 0, 1).empty());  // the parent's pool exists before the fork
    std::atomic<bool> stop{false};
    std::vector<std::string> failures(2);
    std::vector<std::thread> callers;
    for (int t = 0; t < 2; ++t)
        callers.emplace_back([&, t] {
            while (!stop.load() && failures[t].empty()) failures[t] = run_rounds(cases, t, 1);
        });
    for (int f = 0; f < 4; ++f) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3 * f));
        pid_t pid = fork();
        if (pid == 0) {
            // The child: every case on its own, then from two threads at once.
            std::string failure = run_rounds(cases, 0, 1), other;
            if (failure.empty()) {
                std::thread second([&] { other = run_rounds(cases, 1, 1); });
                failure = run_rounds(cases, 0, 1);
                second.join();
            }
            if (failure.empty()) failure = other;
            if (!failure.empty()) std::fprintf(stderr, "child after fork: %s\n", failure.c_str());
            _exit(failure.empty() ? 0 : 1);
        }
        if (pid < 0) {
            FAIL_CHECK("fork failed: " << std::strerror(errno));
            break;  // the callers must still be stopped and joined
        }
        INFO("fork " << f);
        std::string outcome = wait_child(pid);
        CHECK_MESSAGE(outcome.empty(), outcome);
    }
    stop.store(true);
    for (std::thread &th : callers) th.join();
    for (const std::string &failure : failures) CHECK_MESSAGE(failure.empty(), failure);
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}
