// side_call.hpp: selection and run of the calls beside GEMM (gemm_omatcopy, gemm_spmm_*), one
// rule for all of them: a forced backend serves the call or fails with its reason, never
// another; auto takes, among the backends of the call's memory, those that lead the call first,
// then the registry's preference order, the first available one that supports it. A Family
// says how a backend answers for the family's problem (supports, leads, run) and how the call
// is named in messages.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "backend.hpp"
#include "error.hpp"
#include "gemm/gemm.h"
#include "log.hpp"
#include "problem_class.hpp"
#include "registry.hpp"
#include "settings.hpp"
#include "tune_cache.hpp"

namespace gemm {

// The backend that serves a call beside GEMM, and why; nullptr with status and message when
// none may.
struct side_choice {
    backend *chosen = nullptr;
    std::string why;
    std::string note;                  // for the trace: a pinned GEMM variant that does not apply
    std::vector<std::string> skipped;  // "cblas: no transpose kernel" (GEMM_VERBOSE=2)
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string message;
};

namespace side_call {

// A side call's trace line finished and written: `done` (its time and rate) after a success,
// else the status and error; the choice's note and the run's; then a line for each backend
// skipped.
inline void finish_trace(std::string line, gemm_status_t status, const std::string &done, const side_choice &c,
                         const run_report &ctx) {
    if (status == GEMM_STATUS_SUCCESS) line += done;
    else line += fmt::format(" status={} error=\"{}\"", int(status), last_error_message());
    std::string note = c.note;
    if (!ctx.note.empty()) note += (note.empty() ? "" : "; ") + ctx.note;
    if (!note.empty()) line += " note=\"" + note + "\"";
    trace_line(line);
    for (const std::string &s : c.skipped) trace_line("  skipped " + s);
}

template <class Problem> bool in_memory_of(const backend &b, const Problem &p) {
    return p.space == memory_space::host ? b.kind() == backend_kind::host : b.kind() == backend_kind::device;
}

// Family: static verdict supports(const backend &, const Problem &), bool leads(...),
// gemm_status_t run(backend &, const Problem &, run_report &), std::string what(const Problem &)
// ("transpose (gemm_omatcopy)"), const char *kind ("transpose": "the transpose ran the
// backend's own kernel") and const char *builtin_why.
template <class Family, class Problem>
side_choice choose_forced(const Problem &p, const selection &sel, bool collect_skipped) {
    side_choice c;
    c.why = sel.why;
    if (collect_skipped)
        for (backend *b : registered_backends())
            if (b != sel.forced) c.skipped.push_back(std::string(b->name()) + ": not selected, " + sel.why);
    if (verdict v = Family::supports(*sel.forced, p); !v.ok) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = "backend '" + std::string(sel.forced->name()) + "' (" + sel.why + ") cannot serve this " +
                    Family::what(p) + ": " + v.reason;
        return c;
    }
    c.chosen = sel.forced;
    // Variants are GEMM kernels: a call beside GEMM has none of them, and runs the backend's own.
    if (!sel.variant.empty())
        c.note =
            "variant '" + sel.variant + "' is a GEMM variant; the " + Family::kind + " ran the backend's own kernel";
    return c;
}

template <class Family, class Problem> side_choice choose_builtin(const Problem &p, bool collect_skipped) {
    // Leading is asked before availability: probing a backend may load its library (cuBLAS's
    // and cuSPARSE's do), which a call that a leading backend serves should not pay for.
    std::vector<backend *> order;
    for (backend *b : registered_backends())
        if (in_memory_of(*b, p) && Family::leads(*b, p) && b->available().ok) order.push_back(b);
    for (backend *b : registered_backends())
        if (in_memory_of(*b, p) && std::find(order.begin(), order.end(), b) == order.end()) order.push_back(b);
    side_choice c;
    std::string reasons;
    for (backend *b : order) {
        const verdict &available = b->available();
        const verdict v = available.ok ? Family::supports(*b, p) : available;
        if (v.ok && !c.chosen) {
            c.chosen = b;
            c.why = Family::builtin_why;
            if (!collect_skipped) return c;
            continue;
        }
        std::string line = std::string(b->name()) + ": " + (v.ok ? "lower in the preference order" : v.reason);
        if (collect_skipped) c.skipped.push_back(line);
        reasons += (reasons.empty() ? "" : "; ") + line;
    }
    if (!c.chosen) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = fmt::format("auto: no backend can serve this {} on {} memory ({})", Family::what(p),
                                memory_space_name(p.space), reasons.empty() ? "no backend of that kind" : reasons);
    }
    return c;
}

// " 40x30" (a transpose's rows x cols), " 4096x64x4096" (a sparse product's m x n x k): the
// nearest tuned shape, as the trace names it.
inline std::string shape_text(const problem_class &key) {
    if (key.call == call_kind::omatcopy) return fmt::format(" {}x{}", key.m, key.n);
    return fmt::format(" {}x{}x{}", key.m, key.n, key.k);
}

// Why the backend an entry names cannot serve p, if it cannot. The cache holds only entries
// whose backend this build has (checked on load).
template <class Family, class Problem> std::optional<std::string> entry_refusal(const backend &b, const Problem &p) {
    if (!in_memory_of(b, p)) return std::string("a backend of the other memory space");
    if (const verdict &available = b.available(); !available.ok) return available.reason;
    if (verdict v = Family::supports(b, p); !v.ok) return v.reason;
    return std::nullopt;
}

// Auto's choice from the tune cache (unless GEMM_TUNE=off): the entry of p's class, else the
// nearest tuned shape of the class (within a factor of 2 in each size, tune_cache::nearest),
// where its backend can serve p. An entry whose backend cannot leaves the choice to the
// built-in rule, and why_not says why for the trace. GEMM_TUNE=online does not tune these
// calls on first sight, nor does GEMM_RECORD record them: `gemm tune` tunes them.
template <class Family, class Problem> backend *choose_tuned(const Problem &p, side_choice &c, std::string &why_not) {
    if (settings().tune == tune_mode::off) return nullptr;
    tune_cache &cache = process_tune_cache();
    const problem_class key = class_of(p);
    tune_entry_ptr hit = cache.find(key);
    tune_entry_ptr entry = hit ? hit : cache.nearest(key);
    if (!entry) return nullptr;
    backend *b = find_backend(entry->backend);
    if (!b) return nullptr;
    if (std::optional<std::string> refusal = entry_refusal<Family>(*b, p)) {
        why_not = "cached " + entry->backend + " not usable: " + *refusal;
        return nullptr;
    }
    c.chosen = b;
    c.why = hit ? "auto: tune cache hit" : "auto: nearest tuned shape" + shape_text(entry->key);
    return b;
}

template <class Family, class Problem> side_choice choose(const Problem &p, bool collect_skipped) {
    const selection &sel = current_selection();
    if (sel.forced) return choose_forced<Family>(p, sel, collect_skipped);
    side_choice tuned;
    std::string why_not;
    if (backend *b = choose_tuned<Family>(p, tuned, why_not)) {
        if (collect_skipped)
            for (backend *other : registered_backends())
                if (other != b && in_memory_of(*other, p))
                    tuned.skipped.push_back(std::string(other->name()) + ": not the tuned choice");
        return tuned;
    }
    side_choice c = choose_builtin<Family>(p, collect_skipped);
    if (c.chosen && !why_not.empty()) c.why += " (" + why_not + ")";
    return c;
}

// Runs a checked p on the selection in force: an invalid GEMM_* setting or selection fails it
// as it fails a GEMM, then an empty p (nothing to write) returns at once; trace(choice, report,
// status, seconds) writes the GEMM_VERBOSE line, the clock read only for it.
template <class Family, class Problem, class Trace> gemm_status_t dispatch(const Problem &p, bool empty, Trace trace) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    if (empty) return GEMM_STATUS_SUCCESS;
    side_choice c = choose<Family>(p, env.verbose >= 2);
    run_report ctx;
    if (!c.chosen) {
        gemm_status_t s = set_error(c.status, c.message);
        if (env.verbose) trace(c, ctx, s, 0.0);
        return s;
    }
    std::chrono::steady_clock::time_point start;
    if (env.verbose) start = std::chrono::steady_clock::now();
    gemm_status_t s = Family::run(*c.chosen, p, ctx);
    if (env.verbose) trace(c, ctx, s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return s;
}

}  // namespace side_call
}  // namespace gemm
