// policy.hpp: which backend serves a problem, and why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"
#include "settings.hpp"
#include "tune_cache.hpp"

namespace gemm {

// Built on every call, so the common paths allocate nothing: the variant and the fixed part
// of the reason are views of storage that outlives the call (the interned selection, the tune
// cache entry `tuned`, string literals); only rarer paths add a why_detail.
struct choice {
    backend *chosen = nullptr;  // nullptr: nothing may serve p (status and message say why)
    std::string_view variant;
    std::string_view why;    // for the trace: "forced by GEMM_BACKEND", ...
    std::string why_detail;  // appended to why: " (shape not tuned)", ...
    // The tune-cache entry variant points into, when the choice is tuned. `keep` owns it,
    // except for a choice repeated from the thread's last one (policy.cpp, last_decision): that
    // borrows the entry the thread holds until its next decision (keep_alive makes a choice
    // own it, to keep it longer).
    const tune_entry *tuned = nullptr;
    tune_entry_ptr keep;
    std::vector<std::string> skipped;  // "cpu_omp: f16 not supported" (GEMM_VERBOSE=2)
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string message;

    std::string reason() const { return std::string(why) + why_detail; }
    // A tuned choice: if its backend refuses the call, the built-in rule serves it instead
    // (see dispatch.cpp).
    bool from_tune_cache() const { return tuned != nullptr; }
};

// Forced selection: that backend or an error, never another. Auto: the tune cache (exact
// shape, then, unless GEMM_TUNE=online tunes it now, the nearest tuned shape of its class),
// else the built-in rule.
choice choose_backend(const problem &p, const selection &sel, bool collect_skipped);

// Makes c own the tune-cache entry it points into, for a choice kept beyond the decision's
// call (a plan). Call it on this thread before its next decision.
void keep_alive(choice &c);

// Whether the built-in rule may measure the machine's rates it lacks (rates_probe.hpp): a
// call or a plan may; a query, which only asks whether some backend serves, takes what the
// cache holds.
enum class rates_use { measure, stored_only };

// The built-in rule alone: for host memory, the host backend or GPU this machine's rates
// estimate fastest (calls with an epilogue or a pointer-array batch aside); otherwise the
// first available backend, in a preference order for p's memory space, that supports p. Also
// the tuner's default candidate.
choice choose_builtin(const problem &p, bool collect_skipped, rates_use use = rates_use::measure);

}  // namespace gemm
