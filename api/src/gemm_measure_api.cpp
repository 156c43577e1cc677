// gemm_measure_api.cpp: gemm_measure, the measurement engine (dispatch/measure) for callers:
// a gemm_desc_t becomes a problem class, each backend named a target.
#include <cmath>
#include <string>
#include <vector>

#include "described_problem.hpp"
#include "dispatch/error.hpp"
#include "dispatch/measure/operand_sets.hpp"
#include "dispatch/measure/result_check.hpp"
#include "dispatch/measure/sampler.hpp"
#include "dispatch/settings.hpp"
#include "entry_points.h"
#include "guard.hpp"
#include "struct_size.hpp"

using namespace gemm;

namespace {

// What the last gemm_measure on this thread handed out.
struct measure_storage {
    std::vector<std::string> names, errors, notes;
};
thread_local measure_storage tls_measure;

gemm_status_t check_options(const gemm_measure_options_t &o) {
    auto bad = [](const std::string &what) { return set_error(GEMM_STATUS_INVALID_VALUE, "parameter 4: " + what, 4); };
    if (!(o.budget_ms > 0) || !std::isfinite(o.budget_ms)) return bad("budget_ms must be a positive number");
    if (o.min_samples < 1 || o.max_samples < o.min_samples) return bad("need 1 <= min_samples <= max_samples");
    if (o.rounds < 1 || o.warmup_samples < 0) return bad("need rounds >= 1 and warmup_samples >= 0");
    if (!std::isfinite(o.alpha) || !std::isfinite(o.beta)) return bad("alpha and beta must be finite");
    if ((o.check != 0 && o.check != 1) || (o.pinned != 0 && o.pinned != 1))
        return bad("check and pinned must be 0 or 1");
    return GEMM_STATUS_SUCCESS;
}

// The class of the desc's calls, and their operands: the canonical problem's leading
// dimensions, alignment and kinds of FP8 scales, the options' scalars, device and page-locking.
gemm_status_t class_of(const api_desc &d, const gemm_measure_options_t &o, problem_class &c, operand_layout &l) {
    problem p;
    if (gemm_status_t s = problem_of(d, 1, p); s != GEMM_STATUS_SUCCESS) return s;
    if (p.epilogue.any() && d.batch > 1)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm_measure: an epilogue is measured on one matrix, not a batch");
    if (d.batch > 1 && (d.stride_a != GEMM_DESC_TIGHT || d.stride_b != GEMM_DESC_TIGHT || d.stride_c != GEMM_DESC_TIGHT))
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm_measure: batches are measured with GEMM_DESC_TIGHT strides");
    if (d.beta_zero && o.beta != 0.0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_measure: the desc says beta = 0, the options say beta = " + std::to_string(o.beta));
    p.space = d.device < 0 ? memory_space::host : memory_space::device;
    p.beta = o.beta;
    c = class_of(p);  // a placeholder aux stands for the desc's: saves_aux as the desc says
    l.lda = p.lda;
    l.ldb = p.ldb;
    l.ldc = p.ldc;
    l.aligned = d.alignment >= 16;  // below: one element past a 64-byte boundary
    l.alpha = o.alpha;
    l.beta = o.beta;
    l.device = d.device < 0 ? 0 : d.device;
    l.pinned = o.pinned != 0;
    l.ld_aux = p.epilogue.aux ? p.epilogue.ld_aux : 0;
    l.a_scale = p.scaling.a.kind;
    l.b_scale = p.scaling.b.kind;
    return GEMM_STATUS_SUCCESS;
}

void fill(gemm_measurement_t &r, const std::string &name, gemm_status_t status, const std::string &error) {
    measure_storage &st = tls_measure;
    st.names.push_back(name);
    st.errors.push_back(error);
    r = gemm_measurement_t{};
    r.status = status;
    r.round_spread = -1;
}

gemm_status_t measure(const api_desc *d, const char *const *names, int64_t count, const gemm_measure_options_t *given,
                      gemm_measurement_t *reports) {
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: desc is NULL", 1);
    if (count < 0)
        return set_error(GEMM_STATUS_INVALID_SIZE, "parameter 3: count = " + std::to_string(count) + " must be >= 0", 3);
    if (count > 0 && !names) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: backends is NULL", 2);
    for (int64_t i = 0; i < count; ++i)
        if (!names[i])
            return set_error(GEMM_STATUS_INVALID_POINTER,
                             "parameter 2: backends[" + std::to_string(i) +
                                 "] is NULL (a name, \"name:variant\" or "
                                 "\"auto\")",
                             2);
    if (count > 0 && !reports) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 5: reports is NULL", 5);
    gemm_measure_options_t o;
    gemm_measure_options_init(&o);
    if (given) {  // struct_size first: it says how many bytes of *given there are to copy
        if (gemm_status_t s =
                check_struct_size(given, given->struct_size, sizeof *given, "parameter 4: options->struct_size",
                                  "gemm_measure_options_t", "initialize it with gemm_measure_options_init", 4);
            s != GEMM_STATUS_SUCCESS)
            return s;
        o = *given;
    }
    if (gemm_status_t s = check_options(o); s != GEMM_STATUS_SUCCESS) return s;
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS)
        return set_error(env.error, env.error_message);
    problem_class c;
    operand_layout layout;
    if (gemm_status_t s = class_of(*d, o, c, layout); s != GEMM_STATUS_SUCCESS) return s;
    operand_sets sets(c, layout);
    if (gemm_status_t s = sets.allocate(); s != GEMM_STATUS_SUCCESS)
        return set_error(s, std::string("gemm_measure: ") + last_error_message());
    result_check check;
    if (o.check) check.prepare(sets, settings().allow_tf32);

    tls_measure = {};
    std::vector<measure_target> targets;
    std::vector<int64_t> slot;  // the report each target fills
    for (int64_t i = 0; i < count; ++i) {
        std::string name = names[i];
        measure_target t;
        std::string variant;
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        if (name != "auto") s = backend_named(names[i], t.b, variant);
        t.variant = variant;
        fill(reports[i], name, s, s == GEMM_STATUS_SUCCESS ? "" : last_error_message());
        tls_measure.notes.emplace_back();
        if (s != GEMM_STATUS_SUCCESS) continue;
        targets.push_back(t);
        slot.push_back(i);
    }
    clear_error();
    sample_settings s;
    s.budget_ms = o.budget_ms;
    s.min_samples = o.min_samples;
    s.max_samples = o.max_samples;
    s.rounds = o.rounds;
    s.warmup_samples = o.warmup_samples;
    s.check = o.check != 0;
    s.traced = true;  // the caller's own calls: GEMM_VERBOSE shows what each ran, as written
    s.layout = gemm_layout_t(d->layout);
    std::vector<measurement> found = measure_targets(sets, check, targets, s);
    for (std::size_t k = 0; k < found.size(); ++k) {
        gemm_measurement_t &r = reports[slot[k]];
        tls_measure.errors[std::size_t(slot[k])] = found[k].error;
        tls_measure.notes[std::size_t(slot[k])] = found[k].note;
        r.status = found[k].status;
        r.checked = found[k].check.result != check_outcome::verdict::not_checked;
        r.correct = found[k].check.result == check_outcome::verdict::ok;
        r.check_method = found[k].check.method;
        r.check_ratio = found[k].check.worst_ratio;
        r.timed = found[k].timed;
        r.median_us = found[k].median_us;
        r.best_us = found[k].best_us;
        r.spread = found[k].spread;
        r.round_spread = found[k].round_spread;
        r.samples = found[k].samples;
        r.runs_per_sample = found[k].runs_per_sample;
    }
    for (int64_t i = 0; i < count; ++i) {
        reports[i].backend = tls_measure.names[std::size_t(i)].c_str();
        reports[i].error = tls_measure.errors[std::size_t(i)].c_str();
        reports[i].note = tls_measure.notes[std::size_t(i)].c_str();
        if (!reports[i].check_method) reports[i].check_method = "";
    }
    clear_error();
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

void gemm_measure_options_init(gemm_measure_options_t *o) {
    if (!o) return;
    *o = gemm_measure_options_t{};
    o->struct_size = int64_t(sizeof *o);
    o->budget_ms = 1000;
    o->min_samples = 3;
    o->max_samples = 100;
    o->rounds = 3;
    o->warmup_samples = 1;
    o->check = 1;
    o->alpha = 1;
    o->beta = 0;
}

gemm_status_t api_measure(const api_desc *desc, const char *const *backends, int64_t count,
                          const gemm_measure_options_t *options, gemm_measurement_t *reports) {
    clear_error();
    return guarded([&] { return measure(desc, backends, count, options, reports); });
}

}  // extern "C"
