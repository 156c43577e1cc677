// dispatch_spmm.cpp: the middle of every gemm_spmm_csr and gemm_spmm_coo call: selection, run,
// trace.
#include "dispatch_spmm.hpp"

#include <string>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "side_call.hpp"

namespace gemm {
namespace {

const char *format_name(sparse_format f) { return f == sparse_format::csr ? "csr" : "coo"; }

// How a backend answers for a sparse product (side_call.hpp).
struct spmm_family {
    static constexpr const char *kind = "sparse product";
    static constexpr const char *builtin_why =
        "auto: built-in rule, the backends that lead sparse products first, then the preference order";
    static std::string what(const sparse_problem &s) {
        return std::string("sparse product (gemm_spmm_") + format_name(s.format) + ")";
    }
    static verdict supports(const backend &b, const sparse_problem &s) { return b.supports_spmm(s); }
    static bool leads(const backend &b, const sparse_problem &s) { return b.leads_spmm(s); }
    static gemm_status_t run(backend &b, const sparse_problem &s, run_report &ctx) { return b.run_spmm(s, ctx); }
};

void trace(const sparse_problem &s, const sparse_call &call, const sparse_choice &c, const run_report &ctx,
           gemm_status_t status, double seconds) {
    std::string_view variant = ctx.variant_used.empty() ? std::string_view("default") : ctx.variant_used;
    std::string line = fmt::format(
        "backend={} variant={} call=spmm_{} dtype={} layout={} op_a={} op_b={} m={} n={} k={} nnz={} index={} "
        "base={} ldb={} ldc={} space={} why=\"{}\"",
        c.chosen ? std::string(c.chosen->name()) : "none", variant, format_name(s.format), dtype_name(s.type),
        layout_name(call.layout), op_letter(call.op_a), op_letter(call.op_b), s.m, s.n, s.k, s.nnz,
        s.index64 ? "i64" : "i32", s.index_base, call.ldb, call.ldc, memory_space_name(s.space), c.why);
    side_call::finish_trace(line, status,
                            fmt::format(" time={:.2f}us gflops={:.2f}", seconds * 1e6,
                                        seconds > 0 && !s.scales_only() ? s.flops() / seconds * 1e-9 : 0.0),
                            c, ctx);
}

}  // namespace

sparse_choice choose_spmm_builtin(const sparse_problem &s) { return side_call::choose_builtin<spmm_family>(s, false); }

sparse_choice choose_spmm_backend(const sparse_problem &s, bool collect_skipped) {
    return side_call::choose<spmm_family>(s, collect_skipped);
}

gemm_status_t dispatch_spmm(const sparse_problem &s, const sparse_call &call) {
    return side_call::dispatch<spmm_family>(s, s.m == 0 || s.n == 0,
                                            [&](const side_choice &c, const run_report &ctx, gemm_status_t st,
                                                double seconds) { trace(s, call, c, ctx, st, seconds); });
}

}  // namespace gemm
