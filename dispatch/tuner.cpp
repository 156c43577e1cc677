// tuner.cpp: the candidates of a problem class, their measurement (dispatch/measure), and the
// choice: the fastest correct candidate, if it beats the built-in default by the margin in a
// head-to-head run too.
#include "tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "measure/operand_sets.hpp"
#include "measure/result_check.hpp"
#include "measure/sampler.hpp"
#include "policy.hpp"
#include "registry.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

// Every (backend, variant) that serves p, the built-in choice first. The reference is left
// out unless it is the built-in choice or named: it never wins, and at large sizes one run
// of it would take the whole budget.
std::vector<measure_target> candidates_for(const problem &p, const tune_options &options,
                                           const measure_target &fallback) {
    std::vector<measure_target> list{fallback};
    for (backend *b : registered_backends()) {
        bool named = std::find(options.backends.begin(), options.backends.end(), b->name()) != options.backends.end();
        if (!options.backends.empty() && !named) continue;
        if (b->reference() && !named) continue;
        if (!b->available().ok || !b->supports(p).ok) continue;
        for (std::string &v : b->variants(p))
            if (!(b == fallback.b && v.empty())) list.push_back({b, std::move(v)});
    }
    return list;
}

candidate_result result_of(const measurement &m) {
    candidate_result r;
    r.backend = std::string(m.target.b->name());
    r.variant = m.target.variant;
    r.correct = m.timed;
    r.median_us = m.median_us;
    r.best_us = m.best_us;
    r.reps = m.samples;
    r.runs_per_sample = m.runs_per_sample;
    r.spread = m.spread;
    if (m.status != GEMM_STATUS_SUCCESS) r.note = m.error;
    else if (m.check.result == check_outcome::verdict::wrong)
        r.note = fmt::format("wrong result (error {:.3g} x tolerance)", m.check.worst_ratio);
    return r;
}

// The challenger against the default again, in 3 rounds that alternate them (each after a
// warm-up, 3 samples each), so that both see the same machine state; their medians become
// these head-to-head ones. A run longer than its budget stays one run.
void confirm(operand_sets &sets, const result_check &check, const measure_target &fallback,
             const measure_target &challenger, candidate_result &fr, candidate_result &cr, double budget_ms) {
    sample_settings s;
    s.budget_ms = budget_ms;
    s.rounds = 3;
    s.min_samples = s.max_samples = 9;
    s.check = false;
    std::vector<measurement> again = measure_targets(sets, check, {fallback, challenger}, s);
    if (!again[0].timed || !again[1].timed) return;
    fr.median_us = again[0].median_us;
    cr.median_us = again[1].median_us;
    fr.spread = std::max(fr.spread, again[0].spread);
    cr.spread = std::max(cr.spread, again[1].spread);
}

// The class's operands, and the built-in rule's choice for them (every measurement's default).
gemm_status_t prepare(operand_sets &sets, const char *who, rates_use rates, choice &builtin) {
    if (gemm_status_t s = sets.allocate(); s != GEMM_STATUS_SUCCESS)
        return set_error(s, std::string(who) + ": " + last_error_message());
    builtin = choose_builtin(sets.first(), false, rates);
    return builtin.chosen ? GEMM_STATUS_SUCCESS : set_error(builtin.status, builtin.message);
}

// One timing of every candidate of c, and the choice it gives.
gemm_status_t time_candidates(const problem_class &c, const operand_layout &layout, const tune_options &options,
                              tune_outcome &out) {
    operand_sets sets(c, layout);
    choice builtin;
    if (gemm_status_t s = prepare(sets, "gemm_tune", options.rates, builtin); s != GEMM_STATUS_SUCCESS) return s;
    const problem &p = sets.first();
    result_check check;
    check.prepare(sets, settings().allow_tf32);

    std::vector<measure_target> list = candidates_for(p, options, {builtin.chosen, ""});
    sample_settings s;
    s.budget_ms = options.budget_ms / double(list.size());
    s.min_samples = options.min_reps;
    s.max_samples = options.max_reps;
    s.warmup_samples = options.warmup;
    out = {};
    for (const measurement &m : measure_targets(sets, check, list, s)) {
        out.candidates.push_back(result_of(m));
        if (m.check.result == check_outcome::verdict::wrong)
            logger().warn("tuner: {} rejected: {}", m.target.label(), out.candidates.back().note);
    }

    candidate_result &fallback = out.candidates.front();
    std::size_t fastest = out.candidates.size();
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
        const candidate_result &r = out.candidates[i];
        if (r.correct && (fastest == out.candidates.size() || r.median_us < out.candidates[fastest].median_us))
            fastest = i;
    }
    // A challenger to the built-in choice is timed again against it, head to head; it wins only
    // when faster by more than the margin there too: timing noise must not swap a library's
    // default for a variant that is only as fast.
    if (fallback.correct && fastest != 0 && fastest != out.candidates.size())
        confirm(sets, check, list[0], list[fastest], fallback, out.candidates[fastest], s.budget_ms);
    const candidate_result *winner = fastest == out.candidates.size() ? nullptr : &out.candidates[fastest];
    if (fallback.correct && winner && !(winner->median_us * (1.0 + options.margin) < fallback.median_us))
        winner = &fallback;
    if (!winner) return set_error(GEMM_STATUS_EXECUTION_FAILED, "tuner: no candidate computed a correct result");
    out.entry.key = class_of(p);
    out.entry.backend = winner->backend;
    out.entry.variant = winner->variant;
    out.entry.microseconds = winner->median_us;
    out.entry.default_backend = fallback.backend;
    out.entry.default_microseconds = fallback.correct ? fallback.median_us : 0;
    out.disturbed = winner->spread > disturbed_spread || (fallback.correct && fallback.spread > disturbed_spread);
    if (out.disturbed)
        logger().info("tuner: {} timed while the machine was busy (spread {:.0f} % for the winner, {:.0f} % for the "
                      "default)",
                      out.entry.key.to_text(), 100 * winner->spread, 100 * fallback.spread);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

operand_layout layout_for(const problem_class &key) {
    operand_layout l;
    l.ld_padding = key.padded_ld ? -1 : 0;
    // A tight key whose own leading dimensions or strides are not 16-byte multiples is
    // align=elem whatever its pointers, and the calls it was recorded from most likely had
    // aligned ones (cudaMalloc and malloc give them): it is measured on aligned pointers, as
    // those calls run, since cuBLAS runs such shapes far slower on pointers one element off and
    // a winner picked there loses on the real call (docs/PERFORMANCE.md, "auto after record →
    // tune"). Only a key whose tight layout is aligned owes its align=elem to its pointers,
    // which are then placed one element off.
    l.aligned = key.aligned_16 || (!key.padded_ld && !key.tight_layout_aligned());
    l.beta = key.beta_zero ? 0.0 : 0.5;
    l.a_scale = key.a_scale;
    l.b_scale = key.b_scale;
    return l;
}

std::optional<int> forced_disturbed_timings() {
    const char *v = std::getenv("GEMM_TEST_TUNE_DISTURBED");
    if (v && std::string(v) == "never") return 0;
    if (v && *v >= '0' && *v <= '9' && v[1] == '\0') return *v - '0';
    return std::nullopt;
}

gemm_status_t tune_problem(const problem_class &c, const operand_layout &layout, const tune_options &options,
                           tune_outcome &out) {
    for (int timing = 1;; ++timing) {
        if (gemm_status_t s = time_candidates(c, layout, options, out); s != GEMM_STATUS_SUCCESS) return s;
        out.timings = timing;
        if (const std::optional<int> forced = forced_disturbed_timings()) out.disturbed = timing <= *forced;
        if (!out.disturbed || timing > options.disturbed_retimes) return GEMM_STATUS_SUCCESS;
        logger().info("tuner: {} timed again in {:.0f} ms: its timings disagreed", out.entry.key.to_text(),
                      options.retime_pause_ms);
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options.retime_pause_ms));
    }
}

gemm_status_t verify_entry(const tune_entry &e, int device, const tune_options &options, verify_outcome &out) {
    out = {};
    operand_layout layout = layout_for(e.key);
    if (e.key.space == memory_space::device) layout.device = device;
    operand_sets sets(e.key, layout);
    choice builtin;
    if (gemm_status_t s = prepare(sets, "gemm_tune_verify", rates_use::measure, builtin); s != GEMM_STATUS_SUCCESS)
        return s;
    const problem &p = sets.first();
    out.default_backend = std::string(builtin.chosen->name());
    backend *b = find_backend(e.backend);
    if (b == builtin.chosen && e.variant.empty()) {
        out.note = "the built-in choice itself";
        return GEMM_STATUS_SUCCESS;
    }
    verdict usable = !b ? verdict::no("not in this build") : !b->available().ok ? b->available() : b->supports(p);
    if (!usable.ok) {
        out.holds = false;
        out.note = e.backend + " cannot serve it here: " + usable.reason;
        return GEMM_STATUS_SUCCESS;
    }
    result_check check;
    check.prepare(sets, settings().allow_tf32);
    sample_settings s;
    s.budget_ms = options.budget_ms / 2;
    s.rounds = 3;
    s.min_samples = std::max(options.min_reps, s.rounds);
    s.max_samples = options.max_reps;
    s.warmup_samples = options.warmup;
    std::vector<measurement> m = measure_targets(sets, check, {{builtin.chosen, ""}, {b, e.variant}}, s);
    const measurement &fallback = m[0], &stored = m[1];
    out.measured = true;
    out.median_us = stored.median_us;
    out.default_median_us = fallback.median_us;
    out.disturbed =
        (stored.timed && stored.spread > disturbed_spread) || (fallback.timed && fallback.spread > disturbed_spread);
    if (!stored.timed) {
        out.holds = false;
        out.note = stored.status != GEMM_STATUS_SUCCESS
                       ? stored.error
                       : fmt::format("wrong result (error {:.3g} x tolerance)", stored.check.worst_ratio);
    } else if (fallback.timed && stored.median_us > fallback.median_us * (1.0 + options.margin)) {
        out.holds = false;
        out.note = fmt::format("{:.3f}x the default's speed", fallback.median_us / stored.median_us);
    } else if (!fallback.timed) {
        out.note = "the default failed: " + (fallback.error.empty() ? std::string("wrong result") : fallback.error);
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
