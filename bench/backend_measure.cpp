// backend_measure.cpp: verifying a backend's result, then timing it: warm-up apart, nothing
// but calls inside the timed loop, operands rotated, median and best of the repetitions;
// the target's clock (steady clock on the host, events on the device) times them.
#include "backend_measure.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gemm/gemm.h"
#include "timer.hpp"

namespace gemm_cli {
namespace {

// Calls shorter than this are grouped into one timed repetition, so the clock's resolution
// and the call to read it stay below a percent of what is measured.
constexpr double min_rep_seconds = 1e-3;
constexpr double warmup_budget_share = 0.25;

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

// The status's name ("GEMM_STATUS_NOT_SUPPORTED") without the explanation that follows it.
std::string status_name(gemm_status_t s) {
    std::string text = gemm_status_string(s);
    return text.substr(0, text.find(':'));
}

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

// Warm-up calls, within a quarter of the budget so that timed repetitions keep the rest, but
// for at least the target's minimum warm-up time; *estimate becomes the fastest call, the
// best guess of one call's time.
bool warm_up(call_target &target, rotating_caller &caller, const timing_settings &t, const stopwatch &budget,
             bench_row &row, double *estimate) {
    stopwatch warming;
    for (int64_t i = 0;; ++i) {
        bool counted = i >= t.warmup || budget.seconds() >= warmup_budget_share * t.budget_s;
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
bool time_reps(call_target &target, rotating_caller &caller, const timing_settings &t, const stopwatch &budget,
               double estimate, bench_row &row) {
    row.calls_per_rep = std::max<int64_t>(1, int64_t(std::ceil(min_rep_seconds / std::max(estimate, 1e-9))));
    std::vector<double> per_call;
    while (int64_t(per_call.size()) < t.reps && (per_call.empty() || budget.seconds() < t.budget_s)) {
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        target.timer_start();
        for (int64_t i = 0; i < row.calls_per_rep && s == GEMM_STATUS_SUCCESS; ++i) s = caller.call();
        double elapsed = target.timer_stop();
        if (s != GEMM_STATUS_SUCCESS) {
            record_failure(row, s);
            return false;
        }
        per_call.push_back(elapsed / double(row.calls_per_rep));
    }
    std::sort(per_call.begin(), per_call.end());
    std::size_t n = per_call.size();
    row.median_s = n % 2 ? per_call[n / 2] : 0.5 * (per_call[n / 2 - 1] + per_call[n / 2]);
    row.best_s = per_call.front();
    row.reps = int64_t(n);
    row.timed = true;
    return true;
}

void time_backend(call_target &target, const timing_settings &t, double checked_call_s, bench_row &row) {
    if (checked_call_s >= t.budget_s) {
        // A call longer than the whole budget is not repeated: the checked call is the figure.
        row.reps = row.calls_per_rep = 1;
        row.median_s = row.best_s = checked_call_s;
        row.timed = true;
        row.note = "one call (the checked one): it exceeds --budget-ms";
        return;
    }
    stopwatch budget;
    rotating_caller caller(target);
    double estimate = checked_call_s;
    if (warm_up(target, caller, t, budget, row, &estimate)) time_reps(target, caller, t, budget, estimate, row);
}

}  // namespace

bench_row measure_backend(const gemm_case &c, operand_pool &pool, call_target &target,
                          const reference_result *reference, const std::string &backend,
                          const timing_settings &t) {
    bench_row row;
    row.backend = backend;
    row.problem = c;
    gemm_status_t s = gemm_set_backend(backend.c_str());
    if (s != GEMM_STATUS_SUCCESS) {
        record_failure(row, s);
        return row;
    }
    double checked_call_s = 0;
    if (verify(c, pool, target, reference, row, &checked_call_s)) time_backend(target, t, checked_call_s, row);
    gemm_set_backend(nullptr);
    return row;
}

}  // namespace gemm_cli
