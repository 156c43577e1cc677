// gemm_tune_api.cpp: tuning through the C API (gemm_tune in gemm_entry.c lands here).
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "call.hpp"
#include "dispatch/error.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/side_tuner.hpp"
#include "dispatch/tune_cache.hpp"
#include "dispatch/tuner.hpp"
#include "entry_points.h"
#include "gemm/gemm.h"
#include "guard.hpp"

using namespace gemm;

namespace {

// What the last report on this thread points into.
struct report_storage {
    tune_outcome outcome;
    std::vector<gemm_tune_candidate_t> candidates;
};
thread_local report_storage tls_report;

gemm_status_t fail(gemm_status_t s, const std::string &what) { return set_error(s, "gemm_tune: " + what); }

// A flag argument is 0 or 1: anything else there (a count, garbage) is a mistake, not "true".
gemm_status_t check_flag(const char *name, int value, int position) {
    if (value == 0 || value == 1) return GEMM_STATUS_SUCCESS;
    return set_error(GEMM_STATUS_INVALID_VALUE,
                     "parameter " + std::to_string(position) + ": " + name + " = " + std::to_string(value) +
                         " must be 0 or 1",
                     position);
}

gemm_status_t check_request(const api_tune_request &r) {
    if (r.layout != GEMM_ROW_MAJOR && r.layout != GEMM_COL_MAJOR)
        return fail(GEMM_STATUS_INVALID_LAYOUT, "layout is not row- or column-major");
    if (!valid_op(r.transa) || !valid_op(r.transb))
        return fail(GEMM_STATUS_INVALID_OP, "transa/transb must be N, T or C");
    if (r.m < 0 || r.n < 0 || r.k < 0 || r.batch_count < 1 || r.ld_padding < -1)
        return fail(GEMM_STATUS_INVALID_SIZE, "m, n, k must be >= 0, ld_padding >= -1 and batch_count >= 1");
    if (!valid_dtype(r.ab_type) || !valid_dtype(r.c_type))
        return fail(GEMM_STATUS_INVALID_DTYPE, "ab_type/c_type is not a gemm_dtype_t");
    if ((r.misaligned != 0 && r.misaligned != 1) || (r.beta_zero != 0 && r.beta_zero != 1))
        return fail(GEMM_STATUS_INVALID_VALUE, "misaligned and beta_zero must be 0 or 1");
    if (!std::isfinite(r.budget_ms))
        return fail(GEMM_STATUS_INVALID_VALUE, "budget_ms must be a finite number of milliseconds (<= 0: the default)");
    if (!c_type_allowed(dtype(r.ab_type), dtype(r.c_type)))
        return fail(GEMM_STATUS_NOT_SUPPORTED,
                    "c_type must equal ab_type (or be f32 for f16/bf16 inputs, f32, f16 or bf16 for FP8 inputs)");
    if (is_fp8(dtype(r.ab_type)) && r.batch_count != 1)
        return fail(GEMM_STATUS_NOT_SUPPORTED, "FP8 takes one matrix: batch_count must be 1");
    return GEMM_STATUS_SUCCESS;
}

// The canonical (column-major) class of the request, as the API would canonicalize a call.
problem_class class_of(const api_tune_request &r) {
    problem_class c;
    bool row = r.layout == GEMM_ROW_MAJOR;
    transpose a = canonical_op(r.transa, r.ab_type), b = canonical_op(r.transb, r.ab_type);
    c.ab_type = static_cast<dtype>(r.ab_type);
    c.c_type = static_cast<dtype>(r.c_type);
    c.op_a = row ? b : a;
    c.op_b = row ? a : b;
    c.m = row ? r.n : r.m;
    c.n = row ? r.m : r.n;
    c.k = r.k;
    c.batch = r.batch_count;
    c.padded_ld = r.ld_padding != 0;
    c.aligned_16 = !r.misaligned;
    c.space = r.device < 0 ? memory_space::host : memory_space::device;
    c.beta_zero = r.beta_zero != 0;
    return c;
}

// The request's operands: its padding and alignment, on its device.
operand_layout layout_of(const api_tune_request &r) {
    operand_layout l;
    l.ld_padding = r.ld_padding;
    l.aligned = !r.misaligned;
    l.beta = r.beta_zero ? 0.0 : 0.5;  // neither 0 nor 1: a backend that skips reading or scaling C fails the check
    l.device = r.device < 0 ? 0 : r.device;
    return l;
}

std::vector<std::string> split_names(const char *list) {
    std::vector<std::string> names;
    if (!list) return names;
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ','))
        if (!name.empty()) names.push_back(name);
    return names;
}

void fill_report(gemm_tune_report_t &report, bool stored) {
    report_storage &st = tls_report;
    st.candidates.clear();
    for (const candidate_result &c : st.outcome.candidates)
        st.candidates.push_back({c.backend.c_str(), c.variant.c_str(), c.correct ? c.median_us : 0.0, c.correct ? 1 : 0,
                                 c.note.c_str(), c.correct ? c.spread : 0.0});
    const tune_entry &e = st.outcome.entry;
    report.backend = e.backend.c_str();
    report.variant = e.variant.c_str();
    report.median_us = e.microseconds;
    report.default_backend = e.default_backend.c_str();
    report.default_median_us = e.default_microseconds;
    report.candidate_count = int64_t(st.candidates.size());
    report.candidates = st.candidates.data();
    report.stored = stored ? 1 : 0;
    report.disturbed = st.outcome.disturbed ? 1 : 0;
}

// Tunes class c on operands laid out as `layout` says with the budget and backends a request or
// a key call gives, storing the winner when asked; the report points into this thread's
// storage. key: the key a key call named, which the winner must be stored under, or the
// caller could not look it up by that key.
gemm_status_t tune_class(const problem_class &c, const operand_layout &layout, double budget_ms, const char *backends,
                         int store, gemm_tune_report_t *report, const problem_class *key = nullptr) {
    tune_options options;
    if (budget_ms > 0) options.budget_ms = budget_ms;
    options.backends = split_names(backends);
    options.disturbed_retimes = 2;
    for (const std::string &name : options.backends)
        if (!find_backend(name))
            return fail(GEMM_STATUS_UNKNOWN_BACKEND, "backends names '" + name + "', which is not in this build");
    tls_report.outcome = {};
    // A stored host-memory entry's default is the built-in rule's choice with this machine's
    // rates, which it measures first where they are missing. A tune restricted to some
    // backends measures nothing else, and one that stores nothing writes no rates either: its
    // default is then the rule's choice with the rates the cache has.
    if (!store || !options.backends.empty()) options.rates = rates_use::stored_only;
    gemm_status_t tuned = c.side_call() ? tune_side_problem(c, layout.device, options, tls_report.outcome)
                                        : tune_problem(c, layout, options, tls_report.outcome);
    if (tuned != GEMM_STATUS_SUCCESS) return tuned;
    if (key && tls_report.outcome.entry.key != *key)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "parameter 1: key '" + key->to_text() + "' was measured as '" +
                             tls_report.outcome.entry.key.to_text() + "', which is the key to tune; nothing stored",
                         1);
    bool stored = false;
    // A winner whose timings stayed disturbed may be the wrong one: reported, never stored.
    if (store && !tls_report.outcome.disturbed) {
        gemm_status_t s = process_tune_cache().store({tls_report.outcome.entry});
        if (s != GEMM_STATUS_SUCCESS) {
            fill_report(*report, false);
            return s;
        }
        stored = true;
    }
    fill_report(*report, stored);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t tune_request(const api_tune_request *request, int store, gemm_tune_report_t *report) {
    if (!request) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: request is NULL", 1);
    if (gemm_status_t s = check_flag("store", store, 2); s != GEMM_STATUS_SUCCESS) return s;
    if (!report) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 3: report is NULL", 3);
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS)
        return set_error(env.error, env.error_message);
    if (gemm_status_t s = check_request(*request); s != GEMM_STATUS_SUCCESS) return s;
    return tune_class(class_of(*request), layout_of(*request), request->budget_ms, request->backends, store, report);
}

// A key argument (parameter 1) as gemm_tune_key and gemm_tune_verify take it, with its device
// (parameter 2) and budget (parameter 3).
gemm_status_t read_key(const char *key_text, int device, double budget_ms, problem_class &out) {
    std::optional<problem_class> key = problem_class::parse(key_text);
    if (!key)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text + "' is not a tune-cache key", 1);
    // A key parses whatever its two types, but only the pairs a call can have name a class:
    // another would be timed on operands no call passes and stored where no call looks.
    if (!std::isfinite(budget_ms))
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "parameter 3: budget_ms must be a finite number of milliseconds "
                         "(<= 0: the default)",
                         3);
    if (key->space == memory_space::device && device < 0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "parameter 2: device must be a CUDA device ordinal (>= 0) for a "
                         "key of device memory",
                         2);
    // A call beside GEMM has one dtype, no alignment class and no TF32 math: what follows is
    // GEMM's.
    if (key->side_call()) {
        out = *key;
        return GEMM_STATUS_SUCCESS;
    }
    if (!c_type_allowed(key->ab_type, key->c_type))
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text + "' has C of " + dtype_name(key->c_type) +
                             " for A and B of " + dtype_name(key->ab_type) +
                             ": no call has these types (C has A's type, or f32 for f16 and bf16, or f32, f16 or "
                             "bf16 for FP8)",
                         1);
    // A group of a grouped FP8 call is keyed as a pointer batch of its size (form=pointers).
    if (is_fp8(key->ab_type) && key->batch != 1 && !key->pointers)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text +
                             "': no call has it (FP8 takes one matrix, or a grouped call's groups: form=pointers)",
                         1);
    if (is_fp8(key->ab_type) && key->has_epilogue())
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text + "': no call has it (FP8 takes no epilogue)", 1);
    // The key is looked up and stored as written, and no call is of such a class: its calls'
    // key, the one an entry would be stored under, says align=elem.
    if (key->aligned_16 && !key->padded_ld && !key->tight_layout_aligned())
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text +
                             "' says align=16, but with ld=tight its leading dimensions or batch strides are not "
                             "multiples of 16 bytes, so its calls are align=elem: write align=elem, or ld=padded "
                             "align=16 for leading dimensions padded to 16 bytes",
                         1);
    // This process times f32 in TF32 or not as GEMM_ALLOW_TF32 says, and stores under that key.
    if (key->ab_type == dtype::f32 && key->tf32 != settings().allow_tf32)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         std::string("parameter 1: key '") + key_text + "' is of " +
                             (key->tf32 ? "TF32 math (math=tf32): measure it with GEMM_ALLOW_TF32=1"
                                        : "full f32 math: measure it without GEMM_ALLOW_TF32=1"),
                         1);
    out = *key;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t tune_key_text(const char *key_text, int device, double budget_ms, const char *backends, int store,
                            gemm_tune_report_t *report) {
    if (!key_text) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: key is NULL", 1);
    if (gemm_status_t s = check_flag("store", store, 5); s != GEMM_STATUS_SUCCESS) return s;
    if (!report) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 6: report is NULL", 6);
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS)
        return set_error(env.error, env.error_message);
    problem_class key;
    if (gemm_status_t s = read_key(key_text, device, budget_ms, key); s != GEMM_STATUS_SUCCESS) return s;
    if (key.space == memory_space::managed)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "parameter 1: space=managed is not tuned (host or device memory)",
                         1);
    operand_layout layout = layout_for(key);
    layout.device = device < 0 ? 0 : device;
    return tune_class(key, layout, budget_ms, backends, store, report, &key);
}

// What the last listing and the last verdict on this thread point into.
struct entries_storage {
    std::vector<tune_entry_ptr> entries;
    std::vector<std::string> keys;
    std::vector<gemm_tune_entry_t> listed;
};
thread_local entries_storage tls_entries;

thread_local verify_outcome tls_verdict;

gemm_status_t list_entries(const gemm_tune_entry_t **entries, int64_t *count) {
    if (!entries) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: entries is NULL", 1);
    if (!count) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: count is NULL", 2);
    entries_storage fresh;
    fresh.entries = process_tune_cache().entries();
    for (const tune_entry_ptr &e : fresh.entries) fresh.keys.push_back(e->key.to_text());
    for (std::size_t i = 0; i < fresh.entries.size(); ++i) {
        const tune_entry &e = *fresh.entries[i];
        fresh.listed.push_back({fresh.keys[i].c_str(), e.backend.c_str(), e.variant.c_str(), e.microseconds,
                                e.default_backend.c_str(), e.default_microseconds});
    }
    tls_entries = std::move(fresh);  // moving the vectors keeps the strings where they are
    *entries = tls_entries.listed.data();
    *count = int64_t(tls_entries.listed.size());
    return GEMM_STATUS_SUCCESS;
}

struct rates_storage {
    std::shared_ptr<const machine_rates> rates;  // holds the backends' names
    std::vector<gemm_host_rates_t> listed;
    std::vector<gemm_host_backend_rate_t> hosts[2];  // each listed type's host backends
};
thread_local rates_storage tls_rates;

gemm_status_t list_rates(const gemm_host_rates_t **rates, int64_t *count) {
    if (!rates) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: rates is NULL", 1);
    if (!count) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: count is NULL", 2);
    rates_storage fresh;
    fresh.rates = process_tune_cache().rates();
    for (dtype t : {dtype::f32, dtype::f64}) {
        const dtype_rates *r = fresh.rates ? fresh.rates->for_type(t) : nullptr;
        if (!r || r->host.empty()) continue;
        std::vector<gemm_host_backend_rate_t> &hosts = fresh.hosts[fresh.listed.size()];
        for (const host_rate &h : r->host) hosts.push_back({h.backend.c_str(), h.gflops, h.fixed_us, h.gbs});
        const host_rate &fastest = r->host.front();
        fresh.listed.push_back({t == dtype::f32 ? GEMM_F32 : GEMM_F64, fastest.backend.c_str(), fastest.gflops,
                                r->gpu_backend.c_str(), r->gpu_gflops, r->link_gbs, r->gpu_fixed_us, hosts.data(),
                                int64_t(hosts.size()), r->measured_ms, r->locked_link_gbs, r->locked_fixed_us});
    }
    tls_rates = std::move(fresh);
    *rates = tls_rates.listed.data();
    *count = int64_t(tls_rates.listed.size());
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t verify(const char *key_text, int device, double budget_ms, int remove, gemm_tune_verdict_t *out) {
    if (!key_text) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: key is NULL", 1);
    if (gemm_status_t s = check_flag("remove", remove, 4); s != GEMM_STATUS_SUCCESS) return s;
    if (!out) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 5: verdict is NULL", 5);
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS)
        return set_error(env.error, env.error_message);
    problem_class key;
    if (gemm_status_t s = read_key(key_text, device, budget_ms, key); s != GEMM_STATUS_SUCCESS) return s;
    tune_cache &cache = process_tune_cache();
    tune_entry_ptr entry = cache.find(key);
    if (!entry)
        return set_error(
            GEMM_STATUS_INVALID_VALUE,
            std::string("parameter 1: the tune cache ") + cache.path() + " has no entry for '" + key_text + "'", 1);
    tune_options options;
    if (budget_ms > 0) options.budget_ms = budget_ms;
    verify_outcome &o = tls_verdict;
    gemm_status_t measured = entry->key.side_call() ? verify_side_entry(*entry, device, options, o)
                                                    : verify_entry(*entry, device, options, o);
    if (measured != GEMM_STATUS_SUCCESS) return measured;
    bool removed = false;
    if (remove && !o.holds) {
        if (gemm_status_t s = cache.remove(key); s != GEMM_STATUS_SUCCESS) return s;
        removed = true;
    }
    *out = {o.default_backend.c_str(), o.measured ? 1 : 0,  o.median_us,     o.default_median_us,
            o.holds ? 1 : 0,           o.disturbed ? 1 : 0, removed ? 1 : 0, o.note.c_str()};
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

gemm_status_t gemm_tune_cache_entries(const gemm_tune_entry_t **entries, int64_t *count) {
    clear_error();
    return guarded([&] { return list_entries(entries, count); });
}

gemm_status_t gemm_tune_cache_rates(const gemm_host_rates_t **rates, int64_t *count) {
    clear_error();
    return guarded([&] { return list_rates(rates, count); });
}

gemm_status_t gemm_tune_verify(const char *key, int device, double budget_ms, int remove, gemm_tune_verdict_t *verdict) {
    clear_error();
    return guarded([&] { return verify(key, device, budget_ms, remove, verdict); });
}

gemm_status_t gemm_tune_key(const char *key, int device, double budget_ms, const char *backends, int store,
                            gemm_tune_report_t *report) {
    clear_error();
    return guarded([&] { return tune_key_text(key, device, budget_ms, backends, store, report); });
}

gemm_status_t api_tune(const api_tune_request *request, int store, gemm_tune_report_t *report) {
    clear_error();
    return guarded([&] { return tune_request(request, store, report); });
}

gemm_status_t gemm_tune_cache_check(void) {
    clear_error();
    return guarded([] { return process_tune_cache().check_store(); });
}

const char *gemm_tune_cache_path(void) {
    return guarded_value<const char *>("", [] {
        static const std::string path = tune_cache_path();
        return path.c_str();
    });
}

}  // extern "C"
