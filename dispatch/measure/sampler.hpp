// sampler.hpp: timing targets (a backend and variant, or auto) on a problem class: each
// checked once, then warm-up and timed samples on rotated operand sets, the targets taking
// turns in rounds so that a drifting machine (clocks, heat, a neighbour's load, another
// runtime's spinning threads) drifts under all of them alike.
#pragma once

#include <string>
#include <vector>

#include "dispatch/backend.hpp"
#include "gemm/gemm.h"
#include "operand_sets.hpp"
#include "result_check.hpp"

namespace gemm {

// What a measured run calls: a backend and variant, as a call forced onto it runs, or (b
// null) auto's choice, the tune cache's included.
struct measure_target {
    backend *b = nullptr;
    std::string variant;

    std::string label() const;  // "cpu_omp:avx2_f32_16x6", "cblas", "auto"
};

struct sample_settings {
    // Per target, for its samples over all rounds: each round gets an equal share, and its
    // samples at least three quarters of that share after the round's warm-up. A target's
    // checked run, its warm-ups (on the host at least 150 ms each) and min_samples come on
    // top, so a target takes longer than this when those are long.
    double budget_ms = 1000;
    int min_samples = 3;  // per target, over all rounds: taken whatever the budget, unless
                          // one run alone is longer than it (then one sample of one run)
    int max_samples = 100;
    int rounds = 1;
    int warmup_samples = 1;  // before each round's samples; host warm-ups also last host_warmup_ms
    // The least a host warm-up lasts (sampler.cpp says why 150 ms): less only where the
    // targets are timed so that no other backend's threads can still be busy (the one-time
    // rates probe times cpu_omp before any library).
    double host_warmup_ms = 150;
    bool check = true;                      // check every target's first run (else it is only timed)
    bool traced = false;                    // a GEMM_VERBOSE line per run: a caller's measurement, not the tuner's
    gemm_layout_t layout = GEMM_COL_MAJOR;  // the caller's, so that a trace shows the call as written
};

struct measurement {
    measure_target target;
    gemm_status_t status = GEMM_STATUS_SUCCESS;  // of a failed run (not timed then)
    std::string error;
    check_outcome check;
    bool timed = false;  // correct (or not checked) and timed
    double median_us = 0, best_us = 0;
    double spread = 0;         // median over the fastest sample, minus 1
    double round_spread = -1;  // slowest round's median over the fastest's, minus 1; -1 with
                               // fewer than two rounds that took samples
    int samples = 0;
    int runs_per_sample = 1;  // short runs are timed back to back in one sample
    std::string note;         // "one sample of one run: a run is longer than the budget"
};

// Measures every target on sets (allocated), checked against check when settings.check.
// Timed with device events for device problems, the steady clock for host problems (which,
// for a GPU backend, includes staging: the cost a host-pointer caller pays).
std::vector<measurement> measure_targets(operand_sets &sets, const result_check &check,
                                         const std::vector<measure_target> &targets, const sample_settings &settings);

}  // namespace gemm
