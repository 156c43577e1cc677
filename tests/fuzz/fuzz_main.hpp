// fuzz_main.hpp: what a fuzz target provides (one input's work) and what the drivers around it
// (seeded_main.cpp, libfuzzer_main.cpp) provide: counters and the library's environment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gemm_fuzz {

// What the inputs made, for the summary line and the CI bounds; atomic, since in the seeded
// driver's --threads mode every thread counts into them.
struct fuzz_counters {
    using count = std::atomic<uint64_t>;
    count inputs{0};
    count api_calls{0};            // gemm_sgemm ... gemm_ex_strided_batched, gemm_cgemm, gemm_zgemm
    count plan_calls{0};           // the same calls through a plan (gemm_plan_create, gemm_plan_run)
    count epilogue_calls{0};       // gemm_ex_epilogue
    count epilogue_computed{0};    // of those, computed and checked
    count epilogue_plan_calls{0};  // the same through a plan with an epilogue (gemm_plan_run_epilogue)
    count pointer_calls{0};        // gemm_*_batched (pointer arrays) and gemm_ex_grouped
    count pointer_computed{0};     // of those, computed and checked
    count computed{0};             // calls (API or drop-in) that computed and were checked
    count blas_calls{0};           // sgemm_, dgemm_, cblas_sgemm, cblas_dgemm of the drop-in
    count tune_calls{0};           // gemm_tune
    count measure_calls{0};        // gemm_measure, gemm_tune_key and gemm_tune_verify
    count timed_calls{0};          // of those, calls that timed something and were checked
    count cache_files{0};          // tune-cache files loaded
    count stores{0};               // tune-cache stores
    count skipped{0};              // valid calls not made: they would reach past their buffers
};

fuzz_counters &counters();

// Whether several threads run inputs at once (the seeded driver's --threads): a target then
// leaves alone what is global to the process (the backend gemm_set_backend forces) and
// checks nothing another thread may change under it (which tune-cache entries exist).
bool several_threads();
void set_several_threads(bool on);

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
