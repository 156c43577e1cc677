// tuner.hpp: times every (backend, variant) that can serve a problem class and picks the winner.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "measure/operand_sets.hpp"
#include "policy.hpp"
#include "problem_class.hpp"
#include "tune_cache.hpp"

namespace gemm {

struct tune_options {
    // Shared by the candidates' samples: each gets budget_ms / their count (sample_settings::
    // budget_ms), and a challenger's head-to-head rematch with the default a share more. The
    // checked runs, warm-ups (on the host at least 150 ms per candidate and round) and
    // min_reps come on top: on the host a problem with many candidates takes longer.
    double budget_ms = 2000;
    int warmup = 1;
    int min_reps = 3;
    int max_reps = 100;
    double margin = 0.02;               // the default is replaced only when beaten by more than this
    std::vector<std::string> backends;  // only these (empty: every available one)
    // Whether the default (the built-in rule's choice) may measure the machine's rates it
    // lacks, which stores them: not for a tune that stores nothing.
    rates_use rates = rates_use::measure;
    // A problem whose timings came out disturbed is timed again this many times at most,
    // each after retime_pause_ms, until they agree: a disturbed winner may be the wrong one.
    int disturbed_retimes = 0;
    double retime_pause_ms = 500;
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
    std::string note;  // why rejected or failed
};

struct tune_outcome {
    tune_entry entry;  // the choice, ready to store
    std::vector<candidate_result> candidates;
    bool disturbed = false;  // the winner's or the default's spread exceeds disturbed_spread
    int timings = 0;         // how many times the candidates were timed (1 + re-timings)
};

// Timings of one candidate that disagree more than this (median over fastest, minus 1) were
// taken while something else had the machine: where another process competes for the cores
// a CPU backend's threads use, its samples land on multiples of the scheduler's tick.
constexpr double disturbed_spread = 0.25;

// GEMM_TEST_TUNE_DISTURBED=N, a hook for tests only: the first N timings of every problem a
// process tunes count as disturbed and the later ones as not, whatever their spread, so that
// tests see the re-timing and the refusal to store that a busy machine causes, the same on a
// busy test machine; "never" (0): no timing counts as disturbed, for tests that must store.
// Nothing when unset or not a digit: the spreads decide.
std::optional<int> forced_disturbed_timings();

// The operands that stand for a class's calls (for `gemm tune --shapes`, GEMM_RECORD files
// and GEMM_TUNE=online): beta 0, or 0.5 for a class whose calls read C (neither 0 nor 1, so
// that a backend that skips reading or scaling C fails the check); the least leading
// dimensions, rounded up to 16 bytes for a padded class; device 0 for a device class (the
// caller sets another).
operand_layout layout_for(const problem_class &key);

// Times the candidates of c on operands laid out as `layout` says (dispatch/measure) and fills
// out, again (options.disturbed_retimes) while out.disturbed. Fails only when nothing could
// run correctly.
gemm_status_t tune_problem(const problem_class &c, const operand_layout &layout, const tune_options &options,
                           tune_outcome &out);

// A stored choice measured again against the built-in rule's choice now, which is what auto
// would run for its calls without the entry.
struct verify_outcome {
    std::string default_backend;  // the built-in rule's choice
    bool measured = false;        // false: the entry is that choice, or cannot run here
    double median_us = 0;         // the stored choice, head to head with the default
    double default_median_us = 0;
    bool holds = true;       // correct, and not slower than the default by more than the margin
    bool disturbed = false;  // either spread exceeds disturbed_spread
    std::string note;        // why it does not hold, or why it was not measured
};

// Checks and times e's choice and the default in alternating rounds on the class of e's key
// (device keys on CUDA device `device`) within options.budget_ms. Fails only when the
// operands cannot be made or no backend serves the class by the built-in rule.
gemm_status_t verify_entry(const tune_entry &e, int device, const tune_options &options, verify_outcome &out);

}  // namespace gemm
