// tuner.cpp: the candidates of a problem class, their measurement (dispatch/measure), and the
// choice: the fastest correct candidate, if it beats the built-in default by the margin in a
// head-to-head run too.
#include "tuner.hpp"

#include <algorithm>
#include <mutex>

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
std::vector<measure_target> candidates_for(const problem &p, const tune_options &options, const measure_target &fallback) {
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
gemm_status_t prepare(operand_sets &sets, const char *who, choice &builtin) {
    if (gemm_status_t s = sets.allocate(); s != GEMM_STATUS_SUCCESS)
        return set_error(s, std::string(who) + ": " + last_error_message());
    builtin = choose_builtin(sets.first(), false);
    return builtin.chosen ? GEMM_STATUS_SUCCESS : set_error(builtin.status, builtin.message);
}

}  // namespace

problem_class class_of(const tune_key &key) {
    problem_class c;
    c.ab_type = key.ab_type;
    c.c_type = key.c_type;
    c.op_a = key.op_a;
    c.op_b = key.op_b;
    c.m = key.m;
    c.n = key.n;
    c.k = key.k;
    c.batch = key.batch;
    c.pointers = key.pointers;
    c.ld_padding = key.padded_ld ? -1 : 0;
    // A tight key whose own leading dimensions or strides are not 16-byte multiples is
    // align=elem whatever its pointers, and the calls it was recorded from most likely had
    // aligned ones (cudaMalloc and malloc give them): it is measured on aligned pointers, as
    // those calls run (bf16 1500^3 on the H200: cuBLAS took 62 us there and 90 us on pointers
    // one element off, where another winner was picked). Only a key whose tight layout is
    // aligned owes its align=elem to its pointers, which are then placed one element off.
    c.aligned = key.aligned_16 || (!key.padded_ld && !key.tight_layout_aligned());
    c.beta = key.beta_zero ? 0.0 : 0.5;
    c.space = key.space;
    c.act = key.act;
    c.axis = key.axis;
    c.saves_aux = key.saves_aux;
    return c;
}

gemm_status_t tune_problem(const problem_class &c, const tune_options &options, tune_outcome &out) {
    operand_sets sets(c);
    choice builtin;
    if (gemm_status_t s = prepare(sets, "gemm_tune", builtin); s != GEMM_STATUS_SUCCESS) return s;
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
    out.entry.key = key_of(p);
    out.entry.backend = winner->backend;
    out.entry.variant = winner->variant;
    out.entry.microseconds = winner->median_us;
    out.entry.default_backend = fallback.backend;
    out.entry.default_microseconds = fallback.correct ? fallback.median_us : 0;
    out.disturbed = winner->spread > disturbed_spread || (fallback.correct && fallback.spread > disturbed_spread);
    if (out.disturbed)
        logger().info("tuner: {} timed while the machine was busy (spread {:.0f} % for the winner, {:.0f} % for the "
                      "default)", out.entry.key.to_text(), 100 * winner->spread, 100 * fallback.spread);
    return GEMM_STATUS_SUCCESS;
}

namespace {

problem_class square_class(dtype t, int64_t n, memory_space space) {
    problem_class c;
    c.ab_type = c.c_type = t;
    c.m = c.n = c.k = n;
    c.space = space;
    return c;
}

// The first available backend of the kind, in the preference order, that serves p.
backend *first_serving(backend_kind kind, const problem &p) {
    for (backend *b : registered_backends())
        if (b->kind() == kind && !b->reference() && b->available().ok && b->supports(p).ok) return b;
    return nullptr;
}

// The median time of b (when null, of the first backend of the kind that serves c, which b
// then names) on class c, in about budget_ms; timed only: the tuner checks results.
gemm_status_t time_square(const problem_class &c, backend_kind kind, double budget_ms, backend *&b, double &us) {
    operand_sets sets(c);
    if (gemm_status_t s = sets.allocate(); s != GEMM_STATUS_SUCCESS)
        return set_error(s, std::string("gemm rates: ") + last_error_message());
    if (!b) b = first_serving(kind, sets.first());
    if (!b) return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm rates: no backend serves " + key_of(sets.first()).to_text());
    const result_check unprepared;  // not judged: check is false
    sample_settings s;
    s.budget_ms = budget_ms;
    s.check = false;
    const measurement m = measure_targets(sets, unprepared, {{b, ""}}, s).front();
    if (!m.timed)
        return set_error(m.status != GEMM_STATUS_SUCCESS ? m.status : GEMM_STATUS_EXECUTION_FAILED,
                         "gemm rates: " + m.target.label() + ": " + m.error);
    us = m.median_us;
    return GEMM_STATUS_SUCCESS;
}

// The fastest of the host backends that serve class c (the reference aside), timed one after
// another, each in about budget_ms: which one depends on the machine (on the H200's 16-core
// host cpu_omp ran 1024^3 f32 at 5x Debian's OpenBLAS, on a 2-core VM at 0.7-1.3x).
gemm_status_t time_fastest_host(const problem_class &c, double budget_ms, backend *&fastest, double &us) {
    fastest = nullptr;
    gemm_status_t first_failure = GEMM_STATUS_SUCCESS;
    for (backend *b : registered_backends()) {
        if (b->kind() != backend_kind::host || b->reference() || !b->available().ok) continue;
        backend *timed = b;
        double t = 0;
        if (gemm_status_t s = time_square(c, backend_kind::host, budget_ms, timed, t); s != GEMM_STATUS_SUCCESS) {
            if (first_failure == GEMM_STATUS_SUCCESS) first_failure = s;
            clear_error();
            continue;
        }
        if (!fastest || t < us) {
            fastest = b;
            us = t;
        }
    }
    if (fastest) return GEMM_STATUS_SUCCESS;
    return set_error(first_failure != GEMM_STATUS_SUCCESS ? first_failure : GEMM_STATUS_NOT_SUPPORTED,
                     "gemm rates: no host backend could be timed on " + std::to_string(c.m) + "^3");
}

}  // namespace

gemm_status_t measure_rates(dtype t, double budget_ms, dtype_rates &out) {
    bool device_backend = false;
    for (backend *b : registered_backends()) device_backend |= b->kind() == backend_kind::device && b->available().ok;
    if (!device_backend) return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm rates: no device backend available");
    rate_anchors a;
    a.host_n = a.small_n = 1024;
    a.device_n = a.large_n = 4096;
    backend *host = nullptr, *gpu = nullptr;
    gemm_status_t s = time_fastest_host(square_class(t, a.host_n, memory_space::host), budget_ms, host, a.host_us);
    if (s == GEMM_STATUS_SUCCESS)
        s = time_square(square_class(t, a.small_n, memory_space::host), backend_kind::device, budget_ms, gpu,
                        a.small_us);
    if (s == GEMM_STATUS_SUCCESS)
        s = time_square(square_class(t, a.large_n, memory_space::host), backend_kind::device, budget_ms, gpu,
                        a.large_us);
    if (s == GEMM_STATUS_SUCCESS)
        s = time_square(square_class(t, a.device_n, memory_space::device), backend_kind::device, budget_ms, gpu,
                        a.device_us);
    if (s != GEMM_STATUS_SUCCESS) return s;
    std::optional<dtype_rates> r = fit_rates(t, a, std::string(host->name()), std::string(gpu->name()));
    if (!r) return set_error(GEMM_STATUS_EXECUTION_FAILED, "gemm rates: the timings give no rates");
    out = *r;
    return GEMM_STATUS_SUCCESS;
}

void ensure_rates(const problem_class &c) {
    problem shape;  // for its operation count
    shape.ab_type = c.ab_type;
    shape.m = c.m, shape.n = c.n, shape.k = c.k, shape.batch = c.batch;
    if (c.space != memory_space::host || shape.flops() < offload_min_flops) return;
    const dtype real = c.ab_type == dtype::f64 || c.ab_type == dtype::c64 ? dtype::f64 : dtype::f32;
    static std::mutex one_at_a_time;  // also guards tried
    static bool tried[2] = {false, false};  // per real type: a failed measurement is not repeated
    std::lock_guard<std::mutex> lock(one_at_a_time);
    tune_cache &cache = process_tune_cache();
    if (std::shared_ptr<const machine_rates> r = cache.rates(); r && r->for_type(real)) return;
    if (tried[real == dtype::f64]) return;
    tried[real == dtype::f64] = true;
    dtype_rates rates;
    if (measure_rates(real, 300, rates) != GEMM_STATUS_SUCCESS) {
        logger().debug("{}", last_error_message());
        clear_error();
        return;
    }
    logger().info("{}", rates_line(real, rates));
    if (cache.store_rates(real, rates) != GEMM_STATUS_SUCCESS)
        logger().warn("gemm rates: not stored: {}", last_error_message());
    clear_error();
}

gemm_status_t verify_entry(const tune_entry &e, int device, const tune_options &options, verify_outcome &out) {
    out = {};
    problem_class c = class_of(e.key);
    if (c.space == memory_space::device) c.device = device;
    operand_sets sets(c);
    choice builtin;
    if (gemm_status_t s = prepare(sets, "gemm_tune_verify", builtin); s != GEMM_STATUS_SUCCESS) return s;
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
    out.disturbed = (stored.timed && stored.spread > disturbed_spread) ||
                    (fallback.timed && fallback.spread > disturbed_spread);
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
