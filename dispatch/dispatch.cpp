// dispatch.cpp: the middle of every call: selection, run, trace.
#include "dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "epilogue_pass.hpp"
#include "error.hpp"
#include "log.hpp"
#include "policy.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

// An FP8 call's scaling: " scales=none", "tensor" or "block", then "+d_scale" and "+amax"
// when set; nothing for other types.
std::string scaling_text(const problem &p) {
    if (!is_fp8(p.ab_type)) return {};
    const scaling_spec &s = p.scaling;
    std::string text = s.blocks()                       ? " scales=block"
                       : s.a.kind == scale_kind::tensor ? " scales=tensor"
                                                        : " scales=none";
    if (s.d_scale) text += "+d_scale";
    if (s.amax_d) text += "+amax";
    return text;
}

void trace(const problem &p, const call_shape &call, const choice &c, const run_report &ctx, gemm_status_t status,
           double seconds) {
    std::string_view variant = !ctx.variant_used.empty() ? ctx.variant_used
                               : c.variant.empty()       ? std::string_view("default")
                                                         : c.variant;
    std::string line =
        fmt::format("backend={} variant={} dtype={}{} layout={} ops={}{} m={} n={} k={} lda={} ldb={} "
                    "ldc={} batch={}{} space={} why=\"{}\"",
                    c.chosen ? std::string(c.chosen->name()) : "none", variant, dtype_name(p.ab_type),
                    p.c_type != p.ab_type ? std::string("->") + dtype_name(p.c_type) : "", layout_name(call.layout),
                    op_letter(call.transa), op_letter(call.transb), call.m, call.n, call.k, call.lda, call.ldb,
                    call.ldc, p.batch, scaling_text(p), memory_space_name(p.space), c.reason());
    if (status == GEMM_STATUS_SUCCESS)
        line +=
            fmt::format(" time={:.2f}us gflops={:.2f}", seconds * 1e6, seconds > 0 ? p.flops() / seconds * 1e-9 : 0.0);
    else line += fmt::format(" status={} error=\"{}\"", int(status), last_error_message());
    if (p.epilogue.any() && status == GEMM_STATUS_SUCCESS) {
        epilogue_spec as_called = p.epilogue;  // the bias axis of the caller's layout
        if (call.layout == GEMM_ROW_MAJOR && as_called.axis != epilogue_axis::none)
            as_called.axis = as_called.axis == epilogue_axis::rows ? epilogue_axis::columns : epilogue_axis::rows;
        line += fmt::format(" epilogue={}:{}", epilogue_name(as_called), ctx.epilogue);
    }
    if (!ctx.note.empty()) line += " note=\"" + ctx.note + "\"";
    trace_line(line);
    for (const std::string &s : c.skipped) trace_line("  skipped " + s);
}

// p on b: with its epilogue when b fuses it, else (or when b's fused run refuses, before
// touching anything) the product alone and then the library's pass over C.
gemm_status_t run_on(backend &b, const problem &p, std::string_view variant, run_report &ctx) {
    if (!p.epilogue.any()) return b.run(p, variant, ctx);
    if (b.fuses_epilogue(p)) {
        gemm_status_t s = b.run(p, variant, ctx);
        ctx.epilogue = "fused";
        if (s != GEMM_STATUS_NOT_SUPPORTED) return s;
        clear_error();
    }
    problem product = p;
    product.epilogue = {};
    gemm_status_t s = b.run(product, variant, ctx);
    ctx.epilogue = "pass";
    return s == GEMM_STATUS_SUCCESS ? apply_epilogue(p) : s;
}

// A tuned choice its backend refuses (a variant for another CPU or dtype in a cache file that
// still passed every check) left C untouched, as NOT_SUPPORTED promises: auto serves the call
// with the built-in rule instead, says so in the trace, and warns once per choice.
gemm_status_t run_builtin_instead(const problem &p, const choice &cached, choice &builtin, run_report &ctx) {
    std::string refused = fmt::format("{}:{}", cached.chosen->name(), cached.variant);
    std::string reason = last_error_message();
    {
        static std::mutex mutex;
        static std::set<std::string> warned;
        std::lock_guard<std::mutex> lock(mutex);
        if (warned.insert(refused).second)
            logger().warn("tune cache chose {}, which refused the call ({}); using the built-in rule", refused, reason);
    }
    builtin = choose_builtin(p, false);
    if (!builtin.chosen) return set_error(builtin.status, builtin.message);
    clear_error();
    builtin.why_detail += " (cached " + refused + " refused: " + reason + ")";
    ctx = run_report{};
    return run_on(*builtin.chosen, p, builtin.variant, ctx);
}

// The choice, the run and, with GEMM_VERBOSE and traced, its trace line.
gemm_status_t choose_and_run(const problem &p, const selection &sel, const call_shape &call, run_report &ctx,
                             bool traced) {
    const int verbose = traced ? settings().verbose : 0;
    choice c = choose_backend(p, sel, verbose >= 2);
    if (!c.chosen) {
        gemm_status_t s = set_error(c.status, c.message);
        if (verbose) trace(p, call, c, ctx, s, 0);
        return s;
    }
    return run_choice(p, c, call, ctx, traced);
}

// The call whose canonical form p is, in layout: a row-major call is the column-major one
// with A and B (their ops and leading dimensions) and m and n swapped back.
call_shape shape_in_layout(const problem &p, gemm_layout_t layout) {
    auto op = [](transpose t) { return t == transpose::n ? GEMM_OP_N : t == transpose::t ? GEMM_OP_T : GEMM_OP_C; };
    if (layout == GEMM_ROW_MAJOR) return {layout, op(p.op_b), op(p.op_a), p.n, p.m, p.k, p.ldb, p.lda, p.ldc};
    return {GEMM_COL_MAJOR, op(p.op_a), op(p.op_b), p.m, p.n, p.k, p.lda, p.ldb, p.ldc};
}

}  // namespace

gemm_status_t run_choice(const problem &p, const choice &c, const call_shape &call, run_report &ctx, bool traced) {
    const int verbose = traced ? settings().verbose : 0;
    // The clock is read only for the trace: nothing on the hot path without GEMM_VERBOSE.
    std::chrono::steady_clock::time_point start;
    if (verbose) start = std::chrono::steady_clock::now();
    gemm_status_t s = run_on(*c.chosen, p, c.variant, ctx);
    choice builtin;
    if (s == GEMM_STATUS_NOT_SUPPORTED && c.from_tune_cache()) s = run_builtin_instead(p, c, builtin, ctx);
    if (verbose) {
        std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        trace(p, call, builtin.chosen ? builtin : c, ctx, s, elapsed.count());
    }
    return s;
}

gemm_status_t run_selection(const problem &p, const selection &sel, run_report &ctx, bool traced, gemm_layout_t layout) {
    ctx.variant_used = {};  // this run's report, not the last one's
    ctx.note.clear();
    ctx.epilogue = {};
    if (p.pointer_batch) return run_pointer_batch(p, sel, traced);
    return choose_and_run(p, sel, shape_in_layout(p, layout), ctx, traced);
}

gemm_status_t dispatch(const problem &p, const call_shape &call) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    if (p.m == 0 || p.n == 0 || p.batch == 0) return GEMM_STATUS_SUCCESS;  // BLAS quick return
    run_report ctx;
    return choose_and_run(p, sel, call, ctx, true);
}

namespace {

// Group g's matrices appended to out: its shape (pointers cleared) and size, and each matrix's
// canonical pointers.
void append_group(const problem_groups &groups, std::size_t g, problem_batch &out) {
    problem shape = groups.problem_at(g, 0);
    for (int64_t i = 0; i < groups.sizes[g]; ++i) {
        problem p = i == 0 ? shape : groups.problem_at(g, i);
        out.a.push_back(p.a);
        out.b.push_back(p.b);
        out.c.push_back(p.c);
    }
    shape.a = shape.b = shape.c = nullptr;
    out.shapes.push_back(shape);
    out.sizes.push_back(groups.sizes[g]);
}

// The groups as one problem_batch, when every group that computes was decided for the same
// backend and variant (only then can one library call serve them all).
bool one_batch(const problem_groups &groups, const std::vector<choice> &decided, problem_batch &out) {
    const choice *first = nullptr;
    for (std::size_t g = 0; g < decided.size(); ++g) {
        if (!decided[g].chosen) continue;
        if (first && (decided[g].chosen != first->chosen || decided[g].variant != first->variant)) return false;
        if (!first) first = &decided[g];
        append_group(groups, g, out);
    }
    return first && out.c.size() > 1;
}

// One trace line per group of a batch that one library call served (calls[i] is the shape of
// batch.shapes[i]); each line gives the whole call's time.
void trace_batch(const problem_batch &batch, const std::vector<call_shape> &calls, const choice &c,
                 const run_report &ctx, gemm_status_t s, double seconds) {
    for (std::size_t i = 0; i < batch.shapes.size(); ++i) {
        problem p = batch.shapes[i];
        p.batch = batch.sizes[i];
        trace(p, calls[i], c, ctx, s, seconds);
    }
}

// The problem a group is decided on: its first matrix, standing for the group as a pointer
// batch of its size (the tune key's form=pointers) when the call holds several matrices, so
// that a batch is tuned apart from a plain call, whose library calls differ.
problem group_decision(const problem_groups &groups, std::size_t g, bool several) {
    problem p = groups.problem_at(g, 0);
    if (several) {
        p.batch = groups.sizes[g];
        p.pointer_batch = true;
        p.stride_a = p.stride_b = p.stride_c = 0;
    }
    return p;
}

// Whether a group that computes is FP8: its matrices run group by group, never as one batch
// of several groups, so that each group's amax_d is its own.
bool fp8_groups(const problem_groups &groups, const std::vector<choice> &decided) {
    for (std::size_t g = 0; g < decided.size(); ++g)
        if (decided[g].chosen && is_fp8(groups.problem_at(g, 0).ab_type)) return true;
    return false;
}

// An FP8 group of several matrices on a device backend: one run_batch, the backend combining
// the group's amax_d on the device (backend.hpp). A refusal there is an error: the backend
// said it serves the group, and running its matrices one by one would clear amax_d each time.
gemm_status_t run_device_fp8_group(const problem_groups &groups, std::size_t g, const choice &c, int verbose) {
    problem_batch batch;
    append_group(groups, g, batch);
    std::chrono::steady_clock::time_point start;
    if (verbose) start = std::chrono::steady_clock::now();
    run_report ctx;
    clear_error();
    gemm_status_t s = c.chosen->run_batch(batch, c.variant, ctx);
    if (s == GEMM_STATUS_NOT_SUPPORTED && *last_error_message() == '\0')
        s = set_error(s, fmt::format("{} did not run an FP8 group it said it serves", c.chosen->name()));
    if (verbose) {
        std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        trace_batch(batch, {groups.calls[g]}, c, ctx, s, elapsed.count());
    }
    return s;
}

// The amax_d of an FP8 group of several matrices: max |D| over all of them (NaN when any is
// NaN). Each matrix's run writes its own amax into `one` in place of the group's pointer, and
// the group's is stored once all have run. Only groups on host backends run so (a device
// backend gets its group in one run_batch), so the pointer is host memory.
struct group_amax {
    float *target = nullptr;
    float one = 0.0f;
    double max = 0.0;

    void take(problem &p) {
        if (!p.scaling.amax_d) return;
        target = p.scaling.amax_d;
        p.scaling.amax_d = &one;
    }
    void add() {
        if (target && !std::isnan(max) && !(std::fabs(double(one)) <= max)) max = std::fabs(double(one));
    }
    void store() const {
        if (target) *target = float(max);
    }
};

// dispatch_groups on a selection; verbose as settings().verbose, or 0 for an untraced run.
gemm_status_t run_groups(const problem_groups &groups, const selection &sel, int verbose) {
    std::vector<choice> decided(groups.sizes.size());
    std::vector<call_shape> served_calls;
    int64_t total = 0;
    for (int64_t size : groups.sizes) total += size;  // no overflow: the API checked the sum
    for (std::size_t g = 0; g < decided.size(); ++g) {
        if (groups.sizes[g] == 0) continue;
        problem first = group_decision(groups, g, total > 1);
        if (first.m == 0 || first.n == 0) continue;  // BLAS quick return
        decided[g] = choose_backend(first, sel, verbose >= 2);
        if (!decided[g].chosen) {
            std::string where = decided.size() > 1 ? fmt::format("group {}: ", g) : "";
            return set_error(decided[g].status, where + decided[g].message);
        }
        keep_alive(decided[g]);  // the next group's decision replaces the thread's last one
        served_calls.push_back(groups.calls[g]);
    }
    problem_batch batch;
    if (!fp8_groups(groups, decided) && one_batch(groups, decided, batch)) {
        const choice &c = *std::find_if(decided.begin(), decided.end(), [](const choice &x) { return x.chosen; });
        std::chrono::steady_clock::time_point start;
        if (verbose) start = std::chrono::steady_clock::now();
        run_report ctx;
        gemm_status_t s = c.chosen->run_batch(batch, c.variant, ctx);
        if (s != GEMM_STATUS_NOT_SUPPORTED) {
            if (verbose) {
                std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
                trace_batch(batch, served_calls, c, ctx, s, elapsed.count());
            }
            return s;
        }
        clear_error();  // refused before touching C: the matrices run one by one instead
    }
    for (std::size_t g = 0; g < decided.size(); ++g) {
        if (!decided[g].chosen) continue;
        const bool fp8 = is_fp8(groups.problem_at(g, 0).ab_type);
        if (fp8 && groups.sizes[g] > 1 && decided[g].chosen->kind() != backend_kind::host) {
            if (gemm_status_t s = run_device_fp8_group(groups, g, decided[g], verbose); s != GEMM_STATUS_SUCCESS)
                return s;
            continue;
        }
        group_amax amax;
        for (int64_t i = 0; i < groups.sizes[g]; ++i) {
            run_report ctx;
            problem p = groups.problem_at(g, i);
            if (groups.sizes[g] > 1) amax.take(p);
            gemm_status_t s = run_choice(p, decided[g], groups.calls[g], ctx, verbose > 0);
            if (s != GEMM_STATUS_SUCCESS) return s;
            amax.add();
        }
        amax.store();
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

gemm_status_t dispatch_groups(const problem_groups &groups) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    return run_groups(groups, sel, env.verbose);
}

gemm_status_t run_pointer_batch(const problem &p, const selection &sel, bool traced) {
    problem_groups groups;
    groups.sizes = {p.batch};
    groups.calls = {shape_in_layout(p, GEMM_COL_MAJOR)};
    groups.problem_at = [&p](std::size_t, int64_t i) {
        problem q = p;
        q.batch = 1;
        q.pointer_batch = false;
        q.stride_a = q.stride_b = q.stride_c = 0;
        const std::size_t ab = dtype_size(p.ab_type), c = dtype_size(p.c_type);
        if (p.a) q.a = static_cast<const char *>(p.a) + uint64_t(i) * uint64_t(p.stride_a) * ab;
        if (p.b) q.b = static_cast<const char *>(p.b) + uint64_t(i) * uint64_t(p.stride_b) * ab;
        if (p.c) q.c = static_cast<char *>(p.c) + uint64_t(i) * uint64_t(p.stride_c) * c;
        return q;
    };
    return run_groups(groups, sel, traced ? settings().verbose : 0);
}

}  // namespace gemm
