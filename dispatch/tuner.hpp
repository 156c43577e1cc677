// tuner.hpp: times every (backend, variant) that can serve a problem and picks the winner.
#pragma once

#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "tune_cache.hpp"

namespace gemm {

// A problem to tune, without data: the tuner allocates and fills its own operands.
struct tune_spec {
    dtype ab_type = dtype::f32;
    dtype c_type = dtype::f32;
    transpose op_a = transpose::n;
    transpose op_b = transpose::n;
    int64_t m = 0, n = 0, k = 0;
    int64_t batch = 1;
    int64_t ld_padding = 0;  // elements added to every leading dimension; -1: the least
                             // padding that keeps them 16-byte aligned (a padded key class)
    bool aligned = true;     // false: operands start one element past a 64-byte boundary
    bool beta_zero = true;
    memory_space space = memory_space::host;
    int device = 0;          // CUDA ordinal for device problems
};

struct tune_options {
    double budget_ms = 2000;  // time for all candidates of one shape, checks included
    int warmup = 1;
    int min_reps = 3;
    int max_reps = 100;
    double margin = 0.02;     // the default is replaced only when beaten by more than this
    std::vector<std::string> backends;  // only these (empty: every available one)
};

struct candidate_result {
    std::string backend;
    std::string variant;  // as run ("" = default)
    double median_us = 0;
    double best_us = 0;
    int reps = 0;             // timed samples
    int runs_per_sample = 1;  // back-to-back runs in one sample (short runs are batched)
    double spread = 0;        // median / fastest sample - 1
    bool correct = false;
    std::string note;     // why rejected or failed
};

struct tune_outcome {
    tune_entry entry;  // the choice, ready to store
    std::vector<candidate_result> candidates;
    double reference_check_error = 0;  // largest error / tolerance among accepted candidates
    bool disturbed = false;  // the winner's or the default's spread exceeds disturbed_spread
};

// Timings of one candidate that disagree more than this (median over fastest, minus 1) were
// taken while something else had the machine: on a 2-core VM with another process running,
// cpu_omp's samples land on multiples of the 4 ms scheduler tick.
constexpr double disturbed_spread = 0.25;

// The spec a problem belongs to (for `gemm tune --shapes` and GEMM_RECORD files).
tune_spec spec_of(const tune_key &key);

// Times the candidates of spec and fills out. Fails only when nothing could run correctly.
gemm_status_t tune_problem(const tune_spec &spec, const tune_options &options, tune_outcome &out);

}  // namespace gemm
