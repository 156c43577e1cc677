// backend_measure.cpp: verifying a backend's result, then timing it: warm-up apart, nothing
// but calls inside the timed loop, operands rotated, median and best of the repetitions;
// the target's clock (steady clock on the host, events on the device) times them.
#include "backend_measure.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gemm/gemm.h"
#include "library_config.hpp"
#include "timer.hpp"

namespace gemm_cli {
namespace {

// Calls shorter than this are grouped into one timed repetition, so the clock's resolution
// and the call to read it stay below a percent of what is measured.
constexpr double min_rep_seconds = 1e-3;
constexpr double warmup_budget_share = 0.25;

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Cycles through the pool's operand sets; set 0 is kept for the check, so the timed calls
// start at set 1 when there is more than one.
class rotating_caller {
public:
    explicit rotating_caller(call_target &target) : target_(target), next_(1 % target.set_count()) {}
    gemm_status_t call() {
        std::size_t set = next_;
        next_ = next_ + 1 == target_.set_count() ? 0 : next_ + 1;
        return target_.call(set);
    }

private:
    call_target &target_;
    std::size_t next_;
};

void record_failure(bench_row &row, gemm_status_t s) {
    row.status = status_name(s);
    row.note = row.status + ": " + gemm_last_error();
    row.timed = false;
}

// The checked call; its duration is the first estimate of one call's time.
bool verify(const gemm_case &c, operand_pool &pool, call_target &target, const reference_result *reference,
            bench_row &row, double *call_seconds) {
    aligned_buffer result(pool.c_initial().bytes()), c_before(pool.c_initial().bytes());
    check_prepare_c(c, pool, c_before);
    gemm_status_t s = target.call_checked(c_before, result, call_seconds);
    if (s != GEMM_STATUS_SUCCESS) {
        record_failure(row, s);
        return false;
    }
    row.check = reference ? check_against_reference(c, result, *reference, c_before)
                          : check_with_vector(c, pool, result, c_before);
    if (row.check.verdict == check_verdict::ok) return true;
    row.note = row.check.detail + (row.check.verdict == check_verdict::wrong ? " (not timed)" : "");
    return row.check.verdict == check_verdict::skipped;
}

// Warm-up calls, within a quarter of the round's budget so that timed repetitions keep the
// rest, but for at least the target's minimum warm-up time; *estimate becomes the fastest
// call, the best guess of one call's time.
bool warm_up(call_target &target, rotating_caller &caller, int64_t warmup_calls, double budget_s,
             const stopwatch &budget, bench_row &row, double *estimate) {
    stopwatch warming;
    for (int64_t i = 0;; ++i) {
        bool counted = i >= warmup_calls || budget.seconds() >= warmup_budget_share * budget_s;
        if (counted && warming.seconds() >= target.min_warmup_seconds()) break;
        target.timer_start();
        gemm_status_t s = caller.call();
        double took = target.timer_stop();
        if (s != GEMM_STATUS_SUCCESS) {
            record_failure(row, s);
            return false;
        }
        *estimate = std::min(*estimate, took);
    }
    return true;
}

// Nothing but the calls inside the timed loop; each repetition's time is per call.
bool time_reps(call_target &target, rotating_caller &caller, int64_t reps, double budget_s, const stopwatch &budget,
               int64_t calls_per_rep, bench_row &row, std::vector<double> &per_call) {
    for (int64_t done = 0; done < reps && (done == 0 || budget.seconds() < budget_s); ++done) {
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        target.timer_start();
        for (int64_t i = 0; i < calls_per_rep && s == GEMM_STATUS_SUCCESS; ++i) s = caller.call();
        double elapsed = target.timer_stop();
        if (s != GEMM_STATUS_SUCCESS) {
            record_failure(row, s);
            return false;
        }
        per_call.push_back(elapsed / double(calls_per_rep));
    }
    return true;
}

}  // namespace

backend_measurement::backend_measurement(const gemm_case &c, operand_pool &pool, call_target &target,
                                         const reference_result *reference, const std::string &backend) {
    row_.backend = backend;
    row_.problem = c;
    gemm_status_t s = gemm_set_backend(backend.c_str());
    if (s != GEMM_STATUS_SUCCESS) {
        record_failure(row_, s);
        return;
    }
    timing_ = verify(c, pool, target, reference, row_, &checked_call_s_);
    estimate_s_ = checked_call_s_;
    gemm_set_backend(nullptr);
}

void backend_measurement::time_round(call_target &target, const timing_settings &t, int64_t round) {
    if (!timing_) return;
    if (checked_call_s_ >= t.budget_s) {
        // A call longer than the whole budget is not repeated: the checked call is the figure.
        per_call_.assign(1, checked_call_s_);
        row_.calls_per_rep = 1;
        row_.note = "one call (the checked one): it exceeds --budget-ms";
        timing_ = false;
        return;
    }
    // This round's share of the repetitions still to do (none left: nothing to warm up for).
    const int64_t rounds_left = std::max<int64_t>(t.rounds - round, 1);
    const int64_t reps = (t.reps - int64_t(per_call_.size()) + rounds_left - 1) / rounds_left;
    if (reps <= 0) return;
    if (gemm_status_t s = gemm_set_backend(row_.backend.c_str()); s != GEMM_STATUS_SUCCESS) {
        record_failure(row_, s);
        timing_ = false;
        return;
    }
    const double budget_s = t.budget_s / double(t.rounds);
    stopwatch budget;
    rotating_caller caller(target);
    bool ok = warm_up(target, caller, t.warmup, budget_s, budget, row_, &estimate_s_);
    if (ok && row_.calls_per_rep == 0)  // fixed in the first round, so that every sample is alike
        row_.calls_per_rep = std::max<int64_t>(1, int64_t(std::ceil(min_rep_seconds / std::max(estimate_s_, 1e-9))));
    // The repetitions get the round's budget less the warm-up's share, even when the target's
    // minimum warm-up (150 ms on the host) outlasted that share.
    const double reps_budget_s = budget_s - std::min(budget.seconds(), warmup_budget_share * budget_s);
    stopwatch reps_clock;
    const std::size_t before = per_call_.size();
    if (ok) ok = time_reps(target, caller, reps, reps_budget_s, reps_clock, row_.calls_per_rep, row_, per_call_);
    if (!ok) {
        per_call_.clear();
        timing_ = false;
    } else if (per_call_.size() > before) {
        round_medians_.push_back(median_of({per_call_.begin() + std::ptrdiff_t(before), per_call_.end()}));
    }
    gemm_set_backend(nullptr);
}

bench_row backend_measurement::finish() {
    if (!per_call_.empty() && row_.status == "GEMM_STATUS_SUCCESS") {
        row_.median_s = median_of(per_call_);
        row_.best_s = *std::min_element(per_call_.begin(), per_call_.end());
        row_.reps = int64_t(per_call_.size());
        row_.timed = true;
        if (round_medians_.size() >= 2) {
            auto [low, high] = std::minmax_element(round_medians_.begin(), round_medians_.end());
            row_.round_spread = *high / *low - 1.0;
        }
    }
    return row_;
}

}  // namespace gemm_cli
