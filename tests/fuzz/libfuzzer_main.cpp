// libfuzzer_main.cpp: the entry points libFuzzer calls (clang -fsanitize=fuzzer).
#include <cstddef>
#include <cstdint>

#include "fuzz_main.hpp"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    gemm_fuzz::prepare_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
    ++gemm_fuzz::counters().inputs;
    gemm_fuzz::fuzz_one(data, size);
    return 0;
}
