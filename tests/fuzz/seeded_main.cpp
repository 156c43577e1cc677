// seeded_main.cpp: the fuzz driver where libFuzzer is not available (and in CI, where a run
// must be bounded and repeatable): random inputs from a seed, until a count of calls is made.
// usage: <target> [--seed N] [--calls N] [--inputs N] [--max-length N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fuzz_main.hpp"

namespace {

struct options {
    uint64_t seed = 20261130;
    uint64_t calls = 100000;  // API, drop-in and tune calls, or cache files, whichever the target makes
    uint64_t inputs = 0;      // 0: no bound
    std::size_t max_length = 512;
};

options parse(int argc, char **argv) {
    options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
        if (!std::strcmp(argv[i], "--seed")) o.seed = v;
        else if (!std::strcmp(argv[i], "--calls")) o.calls = v;
        else if (!std::strcmp(argv[i], "--inputs")) o.inputs = v;
        else if (!std::strcmp(argv[i], "--max-length")) o.max_length = std::size_t(v);
        else std::fprintf(stderr, "unknown option %s\n", argv[i]), std::exit(2);
    }
    return o;
}

uint64_t made(const gemm_fuzz::fuzz_counters &c) {
    return c.api_calls + c.blas_calls + c.tune_calls + c.cache_files;
}

}  // namespace

int main(int argc, char **argv) {
    options o = parse(argc, argv);
    gemm_fuzz::prepare_environment();
    std::mt19937_64 rng(o.seed);
    std::vector<uint8_t> input;
    gemm_fuzz::fuzz_counters &c = gemm_fuzz::counters();
    while (made(c) < o.calls && (o.inputs == 0 || c.inputs < o.inputs)) {
        input.resize(1 + rng() % o.max_length);
        for (uint8_t &b : input) b = uint8_t(rng());
        ++c.inputs;
        gemm_fuzz::fuzz_one(input.data(), input.size());
    }
    std::printf("%s: seed %llu: %llu inputs, %llu API calls, %llu drop-in calls (%llu of them computed and "
                "checked), %llu gemm_tune calls, %llu cache files, %llu stores, %llu valid calls past their buffers "
                "not made; no failure\n",
                argv[0], (unsigned long long)o.seed, (unsigned long long)c.inputs, (unsigned long long)c.api_calls,
                (unsigned long long)c.blas_calls, (unsigned long long)c.computed, (unsigned long long)c.tune_calls,
                (unsigned long long)c.cache_files, (unsigned long long)c.stores, (unsigned long long)c.skipped);
    std::error_code ignored;
    std::filesystem::remove_all(std::getenv("GEMM_FUZZ_DIR"), ignored);
    return 0;
}
