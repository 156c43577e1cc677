// fuzz_environment.cpp: the environment and counters every fuzz target shares.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_main.hpp"

namespace gemm_fuzz {

fuzz_counters &counters() {
    static fuzz_counters c;
    return c;
}

void prepare_environment() {
    for (const char *name : {"GEMM_BACKEND", "GEMM_TUNE", "GEMM_RECORD", "GEMM_VERBOSE", "GEMM_ALLOW_TF32",
                             "GEMM_CBLAS_LIB", "GEMM_XT_DEVICES", "GEMM_XT_MAX_DEVICE_BYTES"})
        unsetenv(name);
    setenv("GEMM_LOG_LEVEL", "off", 1);
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
