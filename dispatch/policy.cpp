// policy.cpp: forced selection, the tune cache, and the built-in auto rule.
#include "policy.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_set>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "rates_probe.hpp"
#include "registry.hpp"
#include "settings.hpp"
#include "tune_cache.hpp"
#include "tune_cache_file.hpp"
#include "tuner.hpp"

namespace gemm {
namespace {

// The built-in rule's reason, alone and for the common miss of auto (one literal each, so
// that the trace of a miss allocates nothing).
constexpr std::string_view builtin_why = "auto: built-in rule, first of the preference order that serves it";
constexpr std::string_view builtin_epilogue_why =
    "auto: built-in rule, the backends that fuse the epilogue first, then the preference order";
constexpr std::string_view builtin_epilogue_untuned_why =
    "auto: built-in rule, the backends that fuse the epilogue first, then the preference order (shape not tuned)";
constexpr std::string_view builtin_batch_why =
    "auto: built-in rule, the backends that serve this batch in one launch first, then the preference order";
constexpr std::string_view builtin_batch_untuned_why =
    "auto: built-in rule, the backends that serve this batch in one launch first, then the preference order (shape "
    "not tuned)";
constexpr std::string_view builtin_untuned_why =
    "auto: built-in rule, first of the preference order that serves it (shape not tuned)";
constexpr std::string_view builtin_offload_why =
    "auto: built-in rule, the GPU for host memory where this machine's rates say it is faster";
constexpr std::string_view builtin_host_rates_why =
    "auto: built-in rule, the host backend this machine's rates estimate fastest";
constexpr std::string_view builtin_host_rates_untuned_why =
    "auto: built-in rule, the host backend this machine's rates estimate fastest (shape not tuned)";

// The built-in rule's reason for c, said of a shape not tuned.
std::string_view untuned_why(const choice &c) {
    if (c.why == builtin_offload_why) return c.why;  // its detail says more
    if (c.why == builtin_host_rates_why) return builtin_host_rates_untuned_why;
    if (c.why == builtin_epilogue_why) return builtin_epilogue_untuned_why;
    if (c.why == builtin_batch_why) return builtin_batch_untuned_why;
    return builtin_untuned_why;
}

// Whether b can run p here: its availability's verdict, else its verdict on p.
verdict can_serve(backend &b, const problem &p) {
    const verdict &available = b.available();
    return available.ok ? b.supports(p) : available;
}

choice choose_forced(const problem &p, const selection &sel, bool collect_skipped) {
    choice c;
    c.why = sel.why;
    if (collect_skipped)
        for (backend *b : registered_backends())
            if (b != sel.forced) c.skipped.push_back(std::string(b->name()) + ": not selected, " + sel.why);
    if (verdict v = sel.forced->supports(p); !v.ok) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message =
            "backend '" + std::string(sel.forced->name()) + "' (" + sel.why + ") cannot serve this call: " + v.reason;
        return c;
    }
    c.chosen = sel.forced;
    c.variant = sel.variant;
    return c;
}

// The backends of one kind, in registry order: the built-in rule's preference.
std::vector<backend *> of_kind(backend_kind kind) {
    std::vector<backend *> found;
    for (backend *b : registered_backends())
        if (b->kind() == kind) found.push_back(b);
    return found;
}

choice choose_in_order(const problem &p, const std::vector<backend *> &order, bool collect_skipped) {
    choice c;
    std::string reasons;
    for (backend *b : order) {
        std::string_view name = b->name();
        verdict v = can_serve(*b, p);
        if (v.ok && !c.chosen) {
            c.chosen = b;
            c.why = builtin_why;
            if (!collect_skipped) return c;
            continue;
        }
        std::string line = std::string(name) + ": " + (v.ok ? "lower in the preference order" : v.reason);
        if (collect_skipped) c.skipped.push_back(line);
        reasons += (reasons.empty() ? "" : "; ") + line;
    }
    if (!c.chosen) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = "auto: no backend can serve this call (" + reasons + ")";
    }
    return c;
}

// The cached choice if it can run p here; otherwise why not, for the trace. The cache only
// holds entries whose backend this build has and whose variant it knows (checked on load).
bool usable(const tune_entry_ptr &e, const problem &p, backend *&b, std::string &why_not) {
    if (!e) return false;
    b = find_backend(e->backend);
    if (!b) return false;
    verdict v = can_serve(*b, p);
    if (!v.ok) why_not = "cached " + e->backend + " not usable: " + v.reason;
    return v.ok;
}

choice from_entry(backend *b, tune_entry_ptr e, std::string_view why, std::string detail = {}) {
    choice c;
    c.chosen = b;
    c.variant = e->variant;
    c.tuned = e.get();
    c.keep = std::move(e);
    c.why = why;
    c.why_detail = std::move(detail);
    return c;
}

// GEMM_RECORD: each untuned shape once in the file, for `gemm tune --shapes FILE`: a shape
// this process has not recorded is looked for in the file (under a lock, so processes
// recording at once do not both add it) and appended when it is not there.
void record_miss(const problem_class &key, const std::string &path) {
    static std::mutex mutex;
    static std::unordered_set<problem_class, problem_class_hash> seen;
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(key).second) return;
    if (gemm_status_t s = append_line_once(path, key.to_text()); s != GEMM_STATUS_SUCCESS) {
        logger().warn("GEMM_RECORD: {}", last_error_message());
        clear_error();
    }
}

// The first time online tuning of a shape fails in this process, say why: otherwise calls
// would run untuned, silently.
void warn_once_not_tuned(const problem_class &key, const std::string &message) {
    static std::once_flag once;
    std::call_once(once, [&] {
        logger().warn("GEMM_TUNE=online: cannot tune {}: {}; such a shape takes the nearest tuned shape or the "
                      "built-in rule and is not tuned again until the tune cache changes",
                      key.to_text(), message);
    });
}

// The first time a store fails in this process, say why: otherwise a cache that cannot be
// written would make every process tune again, silently.
void warn_once_not_stored(const std::string &message) {
    static std::once_flag once;
    std::call_once(once, [&] {
        logger().warn("GEMM_TUNE=online: cannot store in the tune cache: {}; shapes tuned now are kept for this "
                      "process only",
                      message);
    });
}

// Tunes p's shape now (GEMM_TUNE=online) with a small budget and stores the result (kept in
// memory when the file cannot take it). One shape at a time, so threads meeting the same new
// shape tune it once. A key whose tuning failed is not tuned again (each try may take
// seconds) until the cache's entries change, or the set of such keys reaches its limit (a
// program may call with ever new shapes); why_not says so. Leaves the thread's error clear:
// the caller's call has not failed.
tune_entry_ptr tune_now(const problem_class &key, int device, std::string &why_not) {
    static std::mutex one_at_a_time;  // also guards failed and failed_version
    static std::unordered_set<problem_class, problem_class_hash> failed;
    static std::uint64_t failed_version = 0;  // the cache's version when failed was last valid
    constexpr std::size_t failed_limit = 4096;
    std::lock_guard<std::mutex> lock(one_at_a_time);
    tune_cache &cache = process_tune_cache();
    if (tune_entry_ptr e = cache.find(key)) return e;
    if (std::uint64_t v = cache.version(); v != failed_version || failed.size() >= failed_limit) {
        failed.clear();
        failed_version = v;
    }
    if (failed.count(key)) {
        why_not = "online tuning failed earlier in this process";
        return nullptr;
    }
    tune_options options;
    options.budget_ms = 300;
    tune_outcome outcome;
    operand_layout layout = layout_for(key);
    layout.device = device < 0 ? 0 : device;
    if (tune_problem(key, layout, options, outcome) != GEMM_STATUS_SUCCESS) {
        std::string message = last_error_message();
        clear_error();
        warn_once_not_tuned(key, message);
        logger().debug("GEMM_TUNE=online: cannot tune {}: {}", key.to_text(), message);
        failed.insert(key);
        why_not = "online tuning failed: " + message;
        return nullptr;
    }
    // A winner timed while the machine was busy may be the wrong one: not stored, and not
    // timed again within the caller's call (gemm tune times such a problem again).
    if (outcome.disturbed) {
        logger().debug("GEMM_TUNE=online: {} timed while the machine was busy; not stored", key.to_text());
        failed.insert(key);
        why_not = "online tuning was disturbed (the machine was busy); not stored";
        return nullptr;
    }
    if (cache.store({outcome.entry}) != GEMM_STATUS_SUCCESS) warn_once_not_stored(last_error_message());
    clear_error();
    return cache.find(key);
}

// This thread's last decision from the cache: an exact hit, or (GEMM_TUNE=use) for an untuned
// key its nearest tuned shape or, none near, the built-in rule. Calls of one shape in a loop
// find it here without the cache's lock, the hash lookups or the entry's reference count:
// all shared by every thread, so threads calling at once made each other wait on them
// (docs/PERFORMANCE.md, "Routing cost", from bench/dispatch_cost.c), and without formatting
// the nearest shape's text on every call.
struct last_decision {
    const tune_cache *cache = nullptr;
    std::uint64_t version = 0;  // the cache's version when it was made
    problem_class key;
    tune_entry_ptr entry;  // the key's own entry, or its nearest tuned shape's; null: the built-in rule
    backend *b = nullptr;
    std::string_view why;  // a literal
    std::string detail;    // " 4x4x4" for a nearest shape
};
thread_local last_decision tls_last;

choice choose_tuned(const problem &p, const env_settings &env, bool collect_skipped) {
    tune_cache &cache = process_tune_cache();
    problem_class key = class_of(p);
    last_decision &last = tls_last;
    if (last.cache == &cache && last.version == cache.version() && last.key == key) {
        if (!last.entry) {  // a plain miss again: the built-in rule, which still asks each backend about p
            choice c = choose_builtin(p, collect_skipped);
            if (c.chosen) {
                c.why = untuned_why(c);
                return c;
            }
        } else if (last.b->supports(p).ok) {
            choice c;
            c.chosen = last.b;
            c.variant = last.entry->variant;
            c.tuned = last.entry.get();
            c.why = last.why;
            c.why_detail = last.detail;
            return c;
        }
    }
    std::string why_not;
    backend *b = nullptr;
    const std::uint64_t version = cache.version();  // before the lookup: a store after it moves it
    tune_entry_ptr hit = cache.find(key);
    if (usable(hit, p, b, why_not)) {
        last = {&cache, version, key, hit, b, "auto: tune cache hit", {}};
        return from_entry(b, std::move(hit), "auto: tune cache hit");
    }
    std::string not_tuned;  // why online tuning gave nothing
    if (env.tune == tune_mode::online && !hit) {
        tune_entry_ptr fresh = tune_now(key, p.device, not_tuned);
        if (usable(fresh, p, b, why_not)) return from_entry(b, std::move(fresh), "auto: tuned now (GEMM_TUNE=online)");
    }
    if (!env.record_path.empty()) record_miss(key, env.record_path);
    tune_entry_ptr near = cache.nearest(key);
    if (usable(near, p, b, why_not)) {
        std::string detail = fmt::format(" {}x{}x{}", near->key.m, near->key.n, near->key.k);
        if (!not_tuned.empty()) detail += " (" + not_tuned + ")";
        if (env.tune == tune_mode::use && !hit)
            last = {&cache, version, key, near, b, "auto: nearest tuned shape", detail};
        return from_entry(b, std::move(near), "auto: nearest tuned shape", std::move(detail));
    }
    choice c = choose_builtin(p, collect_skipped);
    if (c.chosen && why_not.empty() && not_tuned.empty()) {
        // The common miss, said without building a string.
        if (env.tune == tune_mode::use && !hit && !near) last = {&cache, version, key, nullptr, nullptr, {}, {}};
        c.why = untuned_why(c);
        return c;
    }
    c.why_detail += " (" + (why_not.empty() ? std::string("shape not tuned") : why_not) +
                    (not_tuned.empty() ? "" : "; " + not_tuned) + ")";
    return c;
}

}  // namespace

void keep_alive(choice &c) {
    if (c.tuned && !c.keep && tls_last.entry.get() == c.tuned) c.keep = tls_last.entry;
}

namespace {

// GEMM_VERBOSE=2: why each other host backend was passed over.
void skipped_by_rates(const problem &p, const dtype_rates &r, const backend *chosen, double chosen_us,
                      std::vector<std::string> &skipped) {
    for (backend *b : registered_backends()) {
        if (b == chosen || b->kind() != backend_kind::host) continue;
        const std::string name(b->name());
        if (verdict v = can_serve(*b, p); !v.ok) skipped.push_back(name + ": " + v.reason);
        else if (b->reference()) skipped.push_back(name + ": the reference, never chosen where another backend serves");
        else if (const host_rate *h = r.host_of(name))
            skipped.push_back(fmt::format("{}: the rates estimate it slower ({:.4g} ms against {:.4g} ms)", name,
                                          host_estimate_us(*h, p) / 1e3, chosen_us / 1e3));
        else skipped.push_back(name + ": not in this machine's rates");
    }
}

// What this machine's rates name for the host-memory problem p: the GPU backend they were
// measured on where its estimate is the shortest (never under offload_min_flops), else the
// host backend with the shortest estimate. The first call that needs rates the cache lacks
// measures them (rates_probe.hpp; its trace says so). false without rates, with GEMM_TUNE=off
// (the rates are kept in the tune cache), when the rates cannot change the choice, or when no
// backend they name serves p: the preference order then chooses.
bool rates_choice(const problem &p, rates_use use, bool collect_skipped, choice &c) {
    if (settings().tune == tune_mode::off) return false;
    std::shared_ptr<const machine_rates> rates = process_tune_cache().rates();
    const dtype_rates *r = rates ? rates->for_type(p.ab_type) : nullptr;
    double measured_ms = 0;
    if (use == rates_use::measure && ((!r && rates_matter(p)) || (r && !r->has_gpu() && gpu_rates_matter(p)))) {
        ensure_rates(p.ab_type, gpu_rates_matter(p), &measured_ms);
        rates = process_tune_cache().rates();
        r = rates ? rates->for_type(p.ab_type) : nullptr;
    }
    if (!r) return false;
    auto serves = [&p](backend *b) { return b && can_serve(*b, p).ok; };
    backend *host = nullptr;
    double host_us = 0;
    for (const host_rate &h : r->host) {
        backend *b = find_backend(h.backend);
        if (!serves(b) || b->kind() != backend_kind::host || b->reference()) continue;
        if (double us = host_estimate_us(h, p); !host || us < host_us) {
            host = b;
            host_us = us;
        }
    }
    const std::string measured = measured_ms > 0 ? fmt::format("; rates measured now, in {:.0f} ms", measured_ms) : "";
    if (!host) return false;  // nothing to weigh the GPU against
    if (r->has_gpu() && p.flops() >= offload_min_flops) {
        backend *gpu = find_backend(r->gpu_backend);
        const double gpu_us = gpu_estimate_us(*r, p);
        if (serves(gpu) && gpu_us < host_us) {
            c.chosen = gpu;
            c.why = builtin_offload_why;
            const char *link = p.page_locked && r->has_locked_link() ? " from page-locked memory" : "";
            c.why_detail = fmt::format(" (estimated {:.4g} ms{} against {:.4g} ms on {}{})", gpu_us / 1e3, link,
                                       host_us / 1e3, host->name(), measured);
            return true;
        }
    }
    c.chosen = host;
    c.why = builtin_host_rates_why;
    if (collect_skipped) skipped_by_rates(p, *r, host, host_us, c.skipped);
    if (!measured.empty()) c.why_detail = " (" + measured.substr(2) + ")";  // after "(shape not tuned)" if untuned
    return true;
}

}  // namespace

choice choose_builtin(const problem &p, bool collect_skipped, rates_use use) {
    static const std::vector<backend *> host = of_kind(backend_kind::host);
    static const std::vector<backend *> device = of_kind(backend_kind::device);
    const std::vector<backend *> &order = p.space == memory_space::host ? host : device;
    if (!p.epilogue.any() && !p.pointer_batch) {
        if (choice c; p.space == memory_space::host && rates_choice(p, use, collect_skipped, c)) return c;
        return choose_in_order(p, order, collect_skipped);
    }
    // A fused epilogue saves a pass over C, a batch served in one launch the host cost of a
    // call per matrix: the backends that do so for p come first (not the reference, which
    // fuses every epilogue and is never fast). The thread's list keeps its capacity, so such
    // an untuned call allocates nothing here after its first.
    thread_local std::vector<backend *> leading_first;
    leading_first.clear();
    auto leads = [&p](backend *b) { return p.epilogue.any() ? b->fuses_epilogue(p) : b->leads_batches(p); };
    for (backend *b : order)
        if (!b->reference() && b->available().ok && leads(b)) leading_first.push_back(b);
    if (leading_first.empty() && !p.epilogue.any()) return choose_in_order(p, order, collect_skipped);
    for (backend *b : order)
        if (std::find(leading_first.begin(), leading_first.end(), b) == leading_first.end()) leading_first.push_back(b);
    choice c = choose_in_order(p, leading_first, collect_skipped);
    if (c.chosen) c.why = p.epilogue.any() ? builtin_epilogue_why : builtin_batch_why;
    return c;
}

choice choose_backend(const problem &p, const selection &sel, bool collect_skipped) {
    if (sel.forced) return choose_forced(p, sel, collect_skipped);
    const env_settings &env = settings();
    if (env.tune == tune_mode::off) {
        choice c = choose_builtin(p, collect_skipped);
        c.why_detail = " (GEMM_TUNE=off)";
        return c;
    }
    // A masked batch's matrix has no tune key of its own: its shape's entry was timed on every
    // row, and may name a kernel that does not read the row count (a skinny one).
    if (p.row_count) {
        choice c = choose_builtin(p, collect_skipped);
        c.why_detail = " (a masked batch: not tuned)";
        return c;
    }
    return choose_tuned(p, env, collect_skipped);
}

}  // namespace gemm
