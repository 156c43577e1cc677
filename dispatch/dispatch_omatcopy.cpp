// dispatch_omatcopy.cpp: the middle of every gemm_omatcopy call: selection, run, trace.
#include "dispatch_omatcopy.hpp"

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
    "auto: built-in rule, the backends that lead transposes first, then the preference order";

bool in_memory_of(const backend &b, const transpose_problem &t) {
    return t.space == memory_space::host ? b.kind() == backend_kind::host : b.kind() == backend_kind::device;
}

verdict can_serve(const backend &b, const transpose_problem &t) {
    const verdict &available = b.available();
    return available.ok ? b.supports_omatcopy(t) : available;
}

transpose_choice choose_forced(const transpose_problem &t, const selection &sel, bool collect_skipped) {
    transpose_choice c;
    c.why = sel.why;
    if (collect_skipped)
        for (backend *b : registered_backends())
            if (b != sel.forced) c.skipped.push_back(std::string(b->name()) + ": not selected, " + sel.why);
    if (verdict v = sel.forced->supports_omatcopy(t); !v.ok) {
        c.status = GEMM_STATUS_NOT_SUPPORTED;
        c.message = "backend '" + std::string(sel.forced->name()) + "' (" + sel.why +
                    ") cannot serve this transpose (gemm_omatcopy): " + v.reason;
        return c;
    }
    c.chosen = sel.forced;
    // Variants are GEMM kernels: a transpose has none of them, and runs the backend's own kernel.
    if (!sel.variant.empty())
        c.note = "variant '" + sel.variant + "' is a GEMM variant; the transpose ran the backend's own kernel";
    return c;
}

transpose_choice choose_builtin(const transpose_problem &t, bool collect_skipped) {
    // Leading is asked before availability: probing a backend may load its library (cuBLAS's
    // do), which a call that a leading backend serves should not pay for.
    std::vector<backend *> order;
    for (backend *b : registered_backends())
        if (in_memory_of(*b, t) && b->leads_omatcopy(t) && b->available().ok) order.push_back(b);
    for (backend *b : registered_backends())
        if (in_memory_of(*b, t) && std::find(order.begin(), order.end(), b) == order.end()) order.push_back(b);
    transpose_choice c;
    std::string reasons;
    for (backend *b : order) {
        verdict v = can_serve(*b, t);
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
        c.message = fmt::format("auto: no backend can serve this transpose (gemm_omatcopy) on {} memory ({})",
                                memory_space_name(t.space), reasons.empty() ? "no backend of that kind" : reasons);
    }
    return c;
}

const char *layout_name(gemm_layout_t l) { return l == GEMM_ROW_MAJOR ? "row" : "col"; }

char op_letter(gemm_op_t o) { return o == GEMM_OP_N ? 'N' : o == GEMM_OP_T ? 'T' : 'C'; }

void trace(const transpose_problem &t, const transpose_call &call, const transpose_choice &c, const run_report &ctx,
           gemm_status_t status, double seconds) {
    std::string_view variant = ctx.variant_used.empty() ? std::string_view("default") : ctx.variant_used;
    std::string line = fmt::format(
        "backend={} variant={} call=omatcopy dtype={} layout={} trans={} rows={} cols={} lda={} ldb={} space={} "
        "why=\"{}\"",
        c.chosen ? std::string(c.chosen->name()) : "none", variant, dtype_name(t.type), layout_name(call.layout),
        op_letter(call.trans), call.rows, call.cols, call.lda, call.ldb, memory_space_name(t.space), c.why);
    if (status == GEMM_STATUS_SUCCESS)
        line += fmt::format(" time={:.2f}us gbs={:.2f}", seconds * 1e6, seconds > 0 ? t.bytes() / seconds * 1e-9 : 0.0);
    else line += fmt::format(" status={} error=\"{}\"", int(status), last_error_message());
    std::string note = c.note;
    if (!ctx.note.empty()) note += (note.empty() ? "" : "; ") + ctx.note;
    if (!note.empty()) line += " note=\"" + note + "\"";
    trace_line(line);
    for (const std::string &s : c.skipped) trace_line("  skipped " + s);
}

}  // namespace

transpose_choice choose_omatcopy_backend(const transpose_problem &t, bool collect_skipped) {
    const selection &sel = current_selection();
    return sel.forced ? choose_forced(t, sel, collect_skipped) : choose_builtin(t, collect_skipped);
}

gemm_status_t dispatch_omatcopy(const transpose_problem &t, const transpose_call &call) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    if (t.rows == 0 || t.cols == 0) return GEMM_STATUS_SUCCESS;  // quick return: nothing to write
    transpose_choice c = choose_omatcopy_backend(t, env.verbose >= 2);
    run_report ctx;
    if (!c.chosen) {
        gemm_status_t s = set_error(c.status, c.message);
        if (env.verbose) trace(t, call, c, ctx, s, 0);
        return s;
    }
    // The clock is read only for the trace.
    std::chrono::steady_clock::time_point start;
    if (env.verbose) start = std::chrono::steady_clock::now();
    gemm_status_t s = c.chosen->run_omatcopy(t, ctx);
    if (env.verbose) {
        std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        trace(t, call, c, ctx, s, elapsed.count());
    }
    return s;
}

}  // namespace gemm
