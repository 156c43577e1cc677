// policy.cpp: forced selection and the built-in auto rule.
#include "policy.hpp"

#include <string_view>

#include "registry.hpp"

namespace gemm {
namespace {

// Libraries first: each is at least as fast as our own backends on most shapes, and a
// backend that is not in this build or not available is simply passed over.
constexpr std::string_view host_preference[] = {"cblas", "cpu_omp", "cpu_ref"};
constexpr std::string_view device_preference[] = {"cublas", "cublaslt", "cuda_tiled",
                                                  "cuda_naive"};

choice choose_forced(const problem &p, const selection &sel, bool collect_skipped) {
    choice c;
    c.why = "forced by " + sel.source;
    if (collect_skipped)
        for (backend *b : registered_backends())
            if (b != sel.forced) c.skipped.push_back(std::string(b->name()) + ": not selected, " + c.why);
    if (verdict v = sel.forced->supports(p); !v.ok) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = "backend '" + std::string(sel.forced->name()) + "' (" + c.why +
                    ") cannot serve this call: " + v.reason;
        return c;
    }
    c.chosen = sel.forced;
    c.variant = sel.variant;
    return c;
}

template <std::size_t N>
choice choose_auto(const problem &p, const std::string_view (&order)[N], bool collect_skipped) {
    choice c;
    std::string reasons;
    for (std::string_view name : order) {
        backend *b = find_backend(name);
        if (!b) continue;  // not in this build
        verdict v = b->available();
        if (v.ok) v = b->supports(p);
        if (v.ok && !c.chosen) {
            c.chosen = b;
            c.why = "auto: built-in rule, first of the preference order that serves it";
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

}  // namespace

choice choose_backend(const problem &p, const selection &sel, bool collect_skipped) {
    if (sel.forced) return choose_forced(p, sel, collect_skipped);
    if (p.space == memory_space::host) return choose_auto(p, host_preference, collect_skipped);
    return choose_auto(p, device_preference, collect_skipped);
}

}  // namespace gemm
