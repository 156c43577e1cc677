// test_host_copies.cpp: the host copy threads that staging packs pageable operands with
// (backends/cuda_common/offload/host_copies.cpp, plain C++, so built and run without CUDA too):
// every task of a call runs exactly once and before the call returns, with several application
// threads calling at once (sharing the pool's threads) and with calls of 0 and 1 tasks.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "backends/cuda_common/offload/host_copies.hpp"

namespace {

// Runs `calls` calls of random task counts; returns how many calls saw a task run other than
// once.
int wrong_calls(unsigned seed, int calls) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> size(0, 300);
    std::vector<std::atomic<int>> ran(300);
    int wrong = 0;
    for (int c = 0; c < calls; ++c) {
        const int count = size(rng);
        for (int i = 0; i < count; ++i) ran[std::size_t(i)].store(0);
        auto task = [&ran](int64_t i) { ran[std::size_t(i)].fetch_add(1); };
        gemm::cuda::run_host_copies(count, task);
        for (int i = 0; i < count; ++i)
            if (ran[std::size_t(i)].load() != 1) {
                ++wrong;
                break;
            }
    }
    return wrong;
}

}  // namespace

TEST_CASE("host copies: every task once, before the call returns") {
    CHECK(gemm::cuda::host_copy_threads() >= 1);
    CHECK(gemm::cuda::host_copy_threads() <= 16);
    CHECK(wrong_calls(1, 2000) == 0);
}

TEST_CASE("host copies: four application threads calling at once") {
    std::vector<std::thread> callers;
    std::atomic<int> wrong{0};
    for (unsigned t = 0; t < 4; ++t) callers.emplace_back([t, &wrong] { wrong += wrong_calls(10 + t, 500); });
    for (std::thread &c : callers) c.join();
    CHECK(wrong.load() == 0);
}
