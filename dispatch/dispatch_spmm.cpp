// dispatch_spmm.cpp: the middle of every gemm_spmm_csr and gemm_spmm_coo call: selection, run,
// trace.
#include "dispatch_spmm.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "registry.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

constexpr const char *builtin_why =
    "auto: built-in rule, the backends that lead sparse products first, then the preference order";

const char *format_name(sparse_format f) { return f == sparse_format::csr ? "csr" : "coo"; }

bool in_memory_of(const backend &b, const sparse_problem &s) {
    return s.space == memory_space::host ? b.kind() == backend_kind::host : b.kind() == backend_kind::device;
}

verdict can_serve(const backend &b, const sparse_problem &s) {
    const verdict &available = b.available();
    return available.ok ? b.supports_spmm(s) : available;
}

sparse_choice choose_forced(const sparse_problem &s, const selection &sel, bool collect_skipped) {
    sparse_choice c;
    c.why = sel.why;
    if (collect_skipped)
        for (backend *b : registered_backends())
            if (b != sel.forced) c.skipped.push_back(std::string(b->name()) + ": not selected, " + sel.why);
    if (verdict v = sel.forced->supports_spmm(s); !v.ok) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = fmt::format("backend '{}' ({}) cannot serve this sparse product (gemm_spmm_{}): {}",
                                sel.forced->name(), sel.why, format_name(s.format), v.reason);
        return c;
    }
    c.chosen = sel.forced;
    // Variants are GEMM kernels: a sparse product has none of them, and runs the backend's own.
    if (!sel.variant.empty())
        c.note = "variant '" + sel.variant + "' is a GEMM variant; the sparse product ran the backend's own kernel";
    return c;
}

sparse_choice choose_builtin(const sparse_problem &s, bool collect_skipped) {
    // Leading is asked before availability: probing a backend may load its library, which a
    // call that a leading backend serves should not pay for.
    std::vector<backend *> order;
    for (backend *b : registered_backends())
        if (in_memory_of(*b, s) && b->leads_spmm(s) && b->available().ok) order.push_back(b);
    for (backend *b : registered_backends())
        if (in_memory_of(*b, s) && std::find(order.begin(), order.end(), b) == order.end()) order.push_back(b);
    sparse_choice c;
    std::string reasons;
    for (backend *b : order) {
        verdict v = can_serve(*b, s);
        if (v.ok && !c.chosen) {
            c.chosen = b;
            c.why = builtin_why;
            if (!collect_skipped) return c;
            continue;
        }
        std::string line = std::string(b->name()) + ": " + (v.ok ? "lower in the preference order" : v.reason);
        if (collect_skipped) c.skipped.push_back(line);
        reasons += (reasons.empty() ? "" : "; ") + line;
    }
    if (!c.chosen) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = fmt::format("auto: no backend can serve this sparse product (gemm_spmm_{}) on {} memory ({})",
                                format_name(s.format), memory_space_name(s.space),
                                reasons.empty() ? "no backend of that kind" : reasons);
    }
    return c;
}

const char *layout_name(gemm_layout_t l) { return l == GEMM_ROW_MAJOR ? "row" : "col"; }

char op_letter(gemm_op_t o) { return o == GEMM_OP_N ? 'N' : o == GEMM_OP_T ? 'T' : 'C'; }

void trace(const sparse_problem &s, const sparse_call &call, const sparse_choice &c, const run_report &ctx,
           gemm_status_t status, double seconds) {
    std::string_view variant = ctx.variant_used.empty() ? std::string_view("default") : ctx.variant_used;
    std::string line = fmt::format(
        "backend={} variant={} call=spmm_{} dtype={} layout={} op_a={} op_b={} m={} n={} k={} nnz={} index={} "
        "base={} ldb={} ldc={} space={} why=\"{}\"",
        c.chosen ? std::string(c.chosen->name()) : "none", variant, format_name(s.format), dtype_name(s.type),
        layout_name(call.layout), op_letter(call.op_a), op_letter(call.op_b), s.m, s.n, s.k, s.nnz,
        s.index64 ? "i64" : "i32", s.index_base, call.ldb, call.ldc, memory_space_name(s.space), c.why);
    if (status == GEMM_STATUS_SUCCESS)
        line += fmt::format(" time={:.2f}us gflops={:.2f}", seconds * 1e6,
                            seconds > 0 && !s.scales_only() ? s.flops() / seconds * 1e-9 : 0.0);
    else line += fmt::format(" status={} error=\"{}\"", int(status), last_error_message());
    std::string note = c.note;
    if (!ctx.note.empty()) note += (note.empty() ? "" : "; ") + ctx.note;
    if (!note.empty()) line += " note=\"" + note + "\"";
    trace_line(line);
    for (const std::string &skipped : c.skipped) trace_line("  skipped " + skipped);
}

}  // namespace

sparse_choice choose_spmm_backend(const sparse_problem &s, bool collect_skipped) {
    const selection &sel = current_selection();
    return sel.forced ? choose_forced(s, sel, collect_skipped) : choose_builtin(s, collect_skipped);
}

gemm_status_t dispatch_spmm(const sparse_problem &s, const sparse_call &call) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    if (s.m == 0 || s.n == 0) return GEMM_STATUS_SUCCESS;  // quick return: nothing to write
    sparse_choice c = choose_spmm_backend(s, env.verbose >= 2);
    run_report ctx;
    if (!c.chosen) {
        gemm_status_t st = set_error(c.status, c.message);
        if (env.verbose) trace(s, call, c, ctx, st, 0);
        return st;
    }
    // The clock is read only for the trace.
    std::chrono::steady_clock::time_point start;
    if (env.verbose) start = std::chrono::steady_clock::now();
    gemm_status_t st = c.chosen->run_spmm(s, ctx);
    if (env.verbose) {
        std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        trace(s, call, c, ctx, st, elapsed.count());
    }
    return st;
}

}  // namespace gemm
