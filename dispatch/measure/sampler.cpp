// sampler.cpp: checked runs, warm-up and timed samples of targets in interleaved rounds.
#include "sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include <spdlog/fmt/fmt.h>

#include "dispatch/dispatch.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/settings.hpp"

namespace gemm {
namespace {

using clock_type = std::chrono::steady_clock;

// Short runs are timed in samples of at least this long, so that a sample is not mostly the
// timer's own resolution and jitter. A device sample also times the launch of its first run
// (the GPU waits several microseconds for the host to issue it): at 1 ms that is under 1 %.
constexpr double min_host_sample_us = 200, min_device_sample_us = 1000;
constexpr int max_runs_per_sample = 4096;

// Host warm-up lasts at least sample_settings::host_warmup_ms (150 by default) after switching
// targets: the previous target's threads (OpenBLAS's pool, which spins and yields for up to
// about 0.1 s after its last call; cpu_omp's spin 50 us at most) keep the cores busy for a
// while and slow the first calls of the next one many times over where cores are few
// (docs/PERFORMANCE.md, "On the 2-core VM").
// Device work has no such tail.
constexpr double device_warmup_ms = 5;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

selection selection_of(const measure_target &t) {
    selection s;
    s.spec = t.label();
    s.source = "measurement";
    s.why = "measured";
    s.forced = t.b;
    s.variant = t.variant;
    return s;
}

// One target's runs: the selection it runs under, its run report, and the sets it rotates.
struct runner {
    operand_sets &sets;
    selection sel;
    run_report ctx;
    bool traced = false;
    gemm_layout_t layout = GEMM_COL_MAJOR;  // the caller's, for the trace
    int count = 1;                          // runs in the next sample
};

gemm_status_t run_count(void *state) {
    auto *r = static_cast<runner *>(state);
    for (int i = 0; i < r->count; ++i)
        if (gemm_status_t s = run_selection(r->sets.next(), r->sel, r->ctx, r->traced, r->layout);
            s != GEMM_STATUS_SUCCESS)
            return s;
    return GEMM_STATUS_SUCCESS;
}

// One sample of `count` back-to-back runs, each on the next set; microseconds per run.
gemm_status_t sample(runner &r, int count, double &us) {
    r.count = count;
    if (r.sets.on_device()) {
        double ms = 0;
        gemm_status_t s =
            installed_device_services()->time_on_stream(r.sets.device(), r.sets.stream(), run_count, &r, &ms);
        us = ms * 1e3 / count;
        return s;
    }
    auto start = clock_type::now();
    gemm_status_t s = run_count(&r);
    us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / count;
    return s;
}

int runs_per_sample(double one_run_us, bool on_device) {
    double wanted = on_device ? min_device_sample_us : min_host_sample_us;
    return std::clamp(int(std::ceil(wanted / std::max(one_run_us, 0.01))), 1, max_runs_per_sample);
}

// What one target goes through.
struct target_state {
    std::unique_ptr<runner> run;
    measurement m;
    double estimate_us = std::numeric_limits<double>::infinity();  // the fastest run seen
    bool timing = false;
    std::vector<double> times, round_medians;
};

void fail(target_state &t, gemm_status_t s, const char *when) {
    t.m.status = s;
    t.m.error = fmt::format("{}: {}", when, last_error_message());
    t.timing = false;
    t.times.clear();
}

// The checked run: set 0, its C prepared for the check.
void check_one(target_state &t, const result_check &check, bool checking) {
    operand_sets &sets = t.run->sets;
    double us = 0;
    gemm_status_t s = sets.prepare_check();
    if (s == GEMM_STATUS_SUCCESS) s = sample(*t.run, 1, us);
    if (s != GEMM_STATUS_SUCCESS) return fail(t, s, "failed");
    t.timing = true;
    t.estimate_us = us;
    t.times = {us};  // kept only if the target is not timed further (a long run)
    if (!checking) return;
    problem view;
    if (gemm_status_t cs = sets.checked_result(view); cs != GEMM_STATUS_SUCCESS) return fail(t, cs, "copying C back");
    t.m.check = check.judge(view);
    if (t.m.check.result == check_outcome::verdict::wrong) {
        t.timing = false;
        t.times.clear();
        t.m.note = "wrong result (" + t.m.check.detail + "): not timed";
    }
}

// Samples, not counted, for at least `samples` and the warm-up time; the fastest lowers the
// estimate of one run.
bool warm_up(target_state &t, int samples, int count, double host_warmup_ms) {
    double us = 0;
    double ms = t.run->sets.on_device() ? device_warmup_ms : host_warmup_ms;
    auto until = clock_type::now() + std::chrono::duration<double, std::milli>(ms);
    for (int i = 0; i < 1000 && (i < samples || clock_type::now() < until); ++i) {
        if (gemm_status_t s = sample(*t.run, count, us); s != GEMM_STATUS_SUCCESS) {
            fail(t, s, "failed while warming up");
            return false;
        }
        t.estimate_us = std::min(t.estimate_us, us);
    }
    return true;
}

// Round `round`: a warm-up, then this round's share of the samples, within its share of the
// budget (but at least its share of min_samples).
void time_round(target_state &t, const sample_settings &s, int round, int rounds, double round_budget_ms) {
    if (!t.timing) return;
    const auto start = clock_type::now();
    const bool device = t.run->sets.on_device();
    if (round == 0) t.times.clear();  // the checked run is not a sample
    if (!warm_up(t, s.warmup_samples, runs_per_sample(t.estimate_us, device), s.host_warmup_ms)) return;
    // The samples keep at least three quarters of the round's budget, however long the
    // warm-up (150 ms on the host by default) took: a round lasts up to its warm-up and that, or as long
    // as its least samples take.
    using ms = std::chrono::duration<double, std::milli>;
    const auto deadline = std::max(start + ms(round_budget_ms), clock_type::now() + ms(0.75 * round_budget_ms));
    // Fixed in the first round from the fastest run seen, so that every sample is alike.
    if (round == 0) t.m.runs_per_sample = runs_per_sample(t.estimate_us, device);
    const int rounds_left = rounds - round, taken = int(t.times.size());
    const int min_quota = (std::max(0, s.min_samples - taken) + rounds_left - 1) / rounds_left;
    const int max_quota = (std::max(0, s.max_samples - taken) + rounds_left - 1) / rounds_left;
    std::vector<double> this_round;
    double us = 0;
    while (int(this_round.size()) < max_quota && (int(this_round.size()) < min_quota || clock_type::now() < deadline)) {
        if (gemm_status_t st = sample(*t.run, t.m.runs_per_sample, us); st != GEMM_STATUS_SUCCESS)
            return fail(t, st, "failed while timing");
        this_round.push_back(us);
    }
    if (this_round.empty()) return;
    t.round_medians.push_back(median(this_round));
    t.times.insert(t.times.end(), this_round.begin(), this_round.end());
}

// A run longer than the target's whole budget (a CPU backend on a host 8192^3 takes seconds)
// is not repeated for samples: one more run, which carries none of the first's one-time work,
// is its one sample. If that one fits the budget after all (the first was slow for another
// reason: a busy machine, a first-call setup), the target is timed as any other.
void one_long_run(target_state &t, double budget_ms) {
    double us = 0;
    if (gemm_status_t s = sample(*t.run, 1, us); s != GEMM_STATUS_SUCCESS) return fail(t, s, "failed while timing");
    t.estimate_us = us;
    if (us * 1e-3 <= budget_ms) return;
    t.times = {us};
    t.timing = false;
    t.m.note = "one sample of one run: a run is longer than the budget";
}

void finish(target_state &t) {
    if (t.times.empty() || t.m.status != GEMM_STATUS_SUCCESS) return;
    t.m.timed = true;
    t.m.samples = int(t.times.size());
    t.m.median_us = median(t.times);
    t.m.best_us = *std::min_element(t.times.begin(), t.times.end());
    t.m.spread = t.m.best_us > 0 ? t.m.median_us / t.m.best_us - 1 : 0;
    t.m.round_spread = -1;
    if (t.round_medians.size() >= 2) {
        auto [low, high] = std::minmax_element(t.round_medians.begin(), t.round_medians.end());
        t.m.round_spread = *low > 0 ? *high / *low - 1 : 0;
    }
}

}  // namespace

std::string measure_target::label() const {
    if (!b) return "auto";
    return variant.empty() ? std::string(b->name()) : std::string(b->name()) + ":" + variant;
}

std::vector<measurement> measure_targets(operand_sets &sets, const result_check &check,
                                         const std::vector<measure_target> &targets, const sample_settings &s) {
    std::vector<target_state> state(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        state[i].run = std::make_unique<runner>(runner{sets, selection_of(targets[i]), {}, s.traced, s.layout, 1});
        state[i].m.target = targets[i];
        check_one(state[i], check, s.check);
        if (state[i].timing && state[i].estimate_us * 1e-3 > s.budget_ms) one_long_run(state[i], s.budget_ms);
    }
    const int rounds = std::max(1, s.rounds);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t k = 0; k < state.size(); ++k)  // each round starts one target further on
            time_round(state[(k + std::size_t(round)) % state.size()], s, round, rounds, s.budget_ms / rounds);
    std::vector<measurement> out;
    for (target_state &t : state) {
        finish(t);
        out.push_back(std::move(t.m));
    }
    return out;
}

}  // namespace gemm
