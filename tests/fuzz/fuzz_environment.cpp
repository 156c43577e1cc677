// fuzz_environment.cpp: the environment and counters every fuzz target shares.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>  // environ

#include "fuzz_main.hpp"

namespace gemm_fuzz {

fuzz_counters &counters() {
    static fuzz_counters c;
    return c;
}

namespace {
std::atomic<bool> threads_on{false};
}

bool several_threads() { return threads_on.load(std::memory_order_relaxed); }
void set_several_threads(bool on) { threads_on.store(on, std::memory_order_relaxed); }

void prepare_environment() {
    // Every GEMM_* variable of the caller's shell goes, whatever it is (the library's, a
    // backend's, one added later): none may change what a run checks.
    std::vector<std::string> names;
    for (char **entry = environ; *entry; ++entry) {
        std::string text = *entry;
        if (text.rfind("GEMM_", 0) == 0) names.push_back(text.substr(0, text.find('=')));
    }
    for (const std::string &name : names) unsetenv(name.c_str());
    setenv("GEMM_LOG_LEVEL", "off", 1);
    // gemm_tune_key stores what it measured on a busy machine too (dispatch/tuner.hpp), so that
    // what a store does is checked on every run; a disturbed tune's report is checked as well.
    setenv("GEMM_TEST_TUNE_DISTURBED", "never", 1);
    const char *tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/gemm_fuzz_XXXXXX";
    if (!mkdtemp(dir.data())) {
        std::perror("gemm fuzz: mkdtemp");
        std::exit(2);
    }
    setenv("GEMM_FUZZ_DIR", dir.c_str(), 1);
    setenv("GEMM_TUNE_CACHE", (dir + "/tune-cache.txt").c_str(), 1);
}

}  // namespace gemm_fuzz
