// dispatch_omatcopy.cpp: the middle of every gemm_omatcopy call: selection, run, trace.
#include "dispatch_omatcopy.hpp"

#include <string>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "side_call.hpp"

namespace gemm {
namespace {

// How a backend answers for a transpose (side_call.hpp).
struct omatcopy_family {
    static constexpr const char *kind = "transpose";
    static constexpr const char *builtin_why =
        "auto: built-in rule, the backends that lead transposes first, then the preference order";
    static std::string what(const transpose_problem &) { return "transpose (gemm_omatcopy)"; }
    static verdict supports(const backend &b, const transpose_problem &t) { return b.supports_omatcopy(t); }
    static bool leads(const backend &b, const transpose_problem &t) { return b.leads_omatcopy(t); }
    static gemm_status_t run(backend &b, const transpose_problem &t, run_report &ctx) { return b.run_omatcopy(t, ctx); }
};

void trace(const transpose_problem &t, const transpose_call &call, const transpose_choice &c, const run_report &ctx,
           gemm_status_t status, double seconds) {
    std::string_view variant = ctx.variant_used.empty() ? std::string_view("default") : ctx.variant_used;
    std::string line = fmt::format(
        "backend={} variant={} call=omatcopy dtype={} layout={} trans={} rows={} cols={} lda={} ldb={} space={} "
        "why=\"{}\"",
        c.chosen ? std::string(c.chosen->name()) : "none", variant, dtype_name(t.type), layout_name(call.layout),
        op_letter(call.trans), call.rows, call.cols, call.lda, call.ldb, memory_space_name(t.space), c.why);
    side_call::finish_trace(
        line, status,
        fmt::format(" time={:.2f}us gbs={:.2f}", seconds * 1e6, seconds > 0 ? t.bytes() / seconds * 1e-9 : 0.0), c, ctx);
}

}  // namespace

transpose_choice choose_omatcopy_builtin(const transpose_problem &t) {
    return side_call::choose_builtin<omatcopy_family>(t, false);
}

transpose_choice choose_omatcopy_backend(const transpose_problem &t, bool collect_skipped) {
    return side_call::choose<omatcopy_family>(t, collect_skipped);
}

gemm_status_t dispatch_omatcopy(const transpose_problem &t, const transpose_call &call) {
    return side_call::dispatch<omatcopy_family>(t, t.rows == 0 || t.cols == 0,
                                                [&](const side_choice &c, const run_report &ctx, gemm_status_t s,
                                                    double seconds) { trace(t, call, c, ctx, s, seconds); });
}

}  // namespace gemm
