// seeded_main.cpp: the fuzz driver where libFuzzer is not available (and in CI, where a run
// must be bounded and repeatable): random inputs from a seed, until a count of calls is made.
// With --threads N, N threads run at once, thread t on its own stream of inputs from seed + t
// (thread 0's stream is the single-threaded run's), until their calls together reach the count.
// usage: <target> [--seed N] [--calls N] [--inputs N] [--max-length N] [--threads N]
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_main.hpp"

namespace {

struct options {
    uint64_t seed = 20261130;
    uint64_t calls = 100000;  // API, drop-in and tune calls, or cache files, whichever the target makes
    uint64_t inputs = 0;      // 0: no bound
    std::size_t max_length = 512;
    uint64_t threads = 1;
};

[[noreturn]] void usage_error(const std::string &what) {
    std::fprintf(stderr, "%s\nusage: <target> [--seed N] [--calls N] [--inputs N] [--max-length N] [--threads N]\n",
                 what.c_str());
    std::exit(2);
}

// Every option takes a value: a name without one, or a value that is not a whole number, is
// refused rather than read as 0 or ignored.
options parse(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; i += 2) {
        const char *name = argv[i];
        if (std::strcmp(name, "--seed") && std::strcmp(name, "--calls") && std::strcmp(name, "--inputs") &&
            std::strcmp(name, "--max-length") && std::strcmp(name, "--threads"))
            usage_error(std::string("unknown option ") + name);
        if (i + 1 == argc) usage_error(std::string(name) + " needs a value");
        const char *text = argv[i + 1];
        char *end = nullptr;
        errno = 0;
        uint64_t v = std::strtoull(text, &end, 10);
        if (!*text || *end || errno || text[0] == '-')
            usage_error(std::string(name) + ": '" + text + "' is not a whole number");
        if (!std::strcmp(name, "--seed")) o.seed = v;
        else if (!std::strcmp(name, "--calls")) o.calls = v;
        else if (!std::strcmp(name, "--inputs")) o.inputs = v;
        else if (!std::strcmp(name, "--threads")) o.threads = v;
        else o.max_length = std::size_t(v);
    }
    if (o.max_length == 0) usage_error("--max-length must be at least 1");
    if (o.threads == 0 || o.threads > 256) usage_error("--threads must be 1 to 256");
    return o;
}

uint64_t made(const gemm_fuzz::fuzz_counters &c) {
    return c.api_calls + c.epilogue_calls + c.pointer_calls + c.blas_calls + c.tune_calls + c.measure_calls +
           c.cache_files;
}

// One thread's stream: inputs from its seed until the calls of all threads reach the bound.
void run_stream(const options &o, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> input;
    gemm_fuzz::fuzz_counters &c = gemm_fuzz::counters();
    while (made(c) < o.calls && (o.inputs == 0 || c.inputs < o.inputs)) {
        input.resize(1 + rng() % o.max_length);
        for (uint8_t &b : input) b = uint8_t(rng());
        ++c.inputs;
        gemm_fuzz::fuzz_one(input.data(), input.size());
    }
}

}  // namespace

int main(int argc, char **argv) {
    options o = parse(argc, argv);
    gemm_fuzz::prepare_environment();
    gemm_fuzz::fuzz_counters &c = gemm_fuzz::counters();
    const auto start = std::chrono::steady_clock::now();
    if (o.threads == 1) {
        run_stream(o, o.seed);
    } else {
        gemm_fuzz::set_several_threads(true);
        std::vector<std::thread> streams;
        for (uint64_t t = 0; t < o.threads; ++t) streams.emplace_back(run_stream, std::cref(o), o.seed + t);
        for (std::thread &t : streams) t.join();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto n = [](const std::atomic<uint64_t> &v) { return (unsigned long long)v.load(); };
    std::printf("%s: seed %llu, %llu thread(s): %llu inputs, %llu API calls (%llu of them again through a plan), %llu "
                "epilogue calls (%llu computed, %llu through a plan), %llu pointer-array and grouped calls (%llu "
                "computed), %llu drop-in calls, %llu calls computed and checked, %llu gemm_tune calls, %llu measure, "
                "tune-key and verify calls (%llu timed), %llu cache files, %llu stores, %llu valid calls past their "
                "buffers not "
                "made; %llu calls in %.1f s\n",
                argv[0], (unsigned long long)o.seed, (unsigned long long)o.threads, n(c.inputs), n(c.api_calls),
                n(c.plan_calls), n(c.epilogue_calls), n(c.epilogue_computed), n(c.epilogue_plan_calls),
                n(c.pointer_calls), n(c.pointer_computed), n(c.blas_calls), n(c.computed), n(c.tune_calls),
                n(c.measure_calls), n(c.timed_calls), n(c.cache_files), n(c.stores), n(c.skipped),
                (unsigned long long)made(c), seconds);
    std::error_code ignored;
    std::filesystem::remove_all(std::getenv("GEMM_FUZZ_DIR"), ignored);
    // Every failure aborted above; what is left to fail is a run that checked too little.
    std::string shortfall = gemm_fuzz::shortfall(c, made(c));
    if (!shortfall.empty()) {
        std::printf("FAILED: %s\n", shortfall.c_str());
        return 1;
    }
    std::printf("no failure\n");
    return 0;
}
