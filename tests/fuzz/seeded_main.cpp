// seeded_main.cpp: the fuzz driver where libFuzzer is not available (and in CI, where a run
// must be bounded and repeatable): random inputs from a seed, until a count of calls is made.
// usage: <target> [--seed N] [--calls N] [--inputs N] [--max-length N]
#include <cerrno>
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

[[noreturn]] void usage_error(const std::string &what) {
    std::fprintf(stderr, "%s\nusage: <target> [--seed N] [--calls N] [--inputs N] [--max-length N]\n", what.c_str());
    std::exit(2);
}

// Every option takes a value: a name without one, or a value that is not a whole number, is
// refused rather than read as 0 or ignored.
options parse(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; i += 2) {
        const char *name = argv[i];
        if (std::strcmp(name, "--seed") && std::strcmp(name, "--calls") && std::strcmp(name, "--inputs") &&
            std::strcmp(name, "--max-length"))
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
        else o.max_length = std::size_t(v);
    }
    if (o.max_length == 0) usage_error("--max-length must be at least 1");
    return o;
}

uint64_t made(const gemm_fuzz::fuzz_counters &c) {
    return c.api_calls + c.epilogue_calls + c.blas_calls + c.tune_calls + c.cache_files;
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
    std::printf("%s: seed %llu: %llu inputs, %llu API calls (%llu of them again through a plan), %llu epilogue calls "
                "(%llu computed), %llu drop-in calls, %llu calls computed and checked, %llu gemm_tune calls, %llu cache "
                "files, %llu stores, %llu valid calls past their buffers not made\n",
                argv[0], (unsigned long long)o.seed, (unsigned long long)c.inputs, (unsigned long long)c.api_calls,
                (unsigned long long)c.plan_calls, (unsigned long long)c.epilogue_calls,
                (unsigned long long)c.epilogue_computed, (unsigned long long)c.blas_calls, (unsigned long long)c.computed, (unsigned long long)c.tune_calls,
                (unsigned long long)c.cache_files, (unsigned long long)c.stores, (unsigned long long)c.skipped);
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
