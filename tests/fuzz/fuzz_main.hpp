// fuzz_main.hpp: what a fuzz target provides (one input's work) and what the drivers around it
// (seeded_main.cpp, libfuzzer_main.cpp) provide: counters and the library's environment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gemm_fuzz {

// What the inputs made, for the summary line and the CI bounds.
struct fuzz_counters {
    uint64_t inputs = 0;
    uint64_t api_calls = 0;    // gemm_sgemm ... gemm_ex_strided_batched
    uint64_t plan_calls = 0;   // the same calls through a plan (gemm_plan_create, gemm_plan_run)
    uint64_t epilogue_calls = 0;     // gemm_ex_epilogue
    uint64_t epilogue_computed = 0;  // of those, computed and checked
    uint64_t computed = 0;     // calls (API or drop-in) that computed and were checked
    uint64_t blas_calls = 0;   // sgemm_, dgemm_, cblas_sgemm, cblas_dgemm of the drop-in
    uint64_t tune_calls = 0;   // gemm_tune
    uint64_t cache_files = 0;  // tune-cache files loaded
    uint64_t stores = 0;       // tune-cache stores
    uint64_t skipped = 0;      // valid calls not made: they would reach past their buffers
};

fuzz_counters &counters();

// Runs one input; aborts (with what it saw on stderr) when the library breaks a promise.
void fuzz_one(const uint8_t *data, std::size_t size);

// What a bounded run of this target must have made, given `made` calls in all (the sum the
// seeded driver counts up to): "" when it did, else what fell short. A run that made almost
// nothing of what it exists to check has checked nothing, and must not pass.
std::string shortfall(const fuzz_counters &c, uint64_t made);

// GEMM_* as the targets need it, set before the library reads it: none of the caller's, no
// logging (invalid cache lines would flood stderr), the tune cache in a private folder.
void prepare_environment();

}  // namespace gemm_fuzz
