// gemm_plan_api.cpp: gemm_plan_t, a gemm_desc_t with its backend decided once (dispatch/plan).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_set>

#include <spdlog/fmt/fmt.h>

#include "call.hpp"
#include "described_problem.hpp"
#include "dispatch/error.hpp"
#include "dispatch/plan.hpp"
#include "entry_points.h"
#include "guard.hpp"

using namespace gemm;

// What a gemm_plan_t points to. The texts gemm_plan_get_backend hands out are copies owned
// here, so that they live exactly as long as the plan.
struct gemm_plan {
    std::unique_ptr<plan> decided;
    std::string backend, variant, why;
    // What the desc promised that a run's arguments must keep.
    bool row_major = false;  // A and B are swapped in the canonical shape
    int compute = GEMM_F32;  // the type alpha and beta point to
    int alignment = 1;
    bool beta_zero = false;
    // The desc's epilogue, and its call (placeholder pointers) to check a run's operands as
    // gemm_ex_epilogue checks them.
    bool has_epilogue = false;
    api_epilogue epilogue{};
    // The desc's FP8 scale mode: a run of an FP8 plan takes scales in exactly that mode.
    bool fp8 = false;
    int scale_mode = GEMM_SCALE_NONE;
    user_call described{};
};

namespace {

// The plans made and not yet destroyed. A handle is judged by looking it up here, never by
// reading through it: a destroyed plan's memory is freed, and may hold anything. Runs look up
// under a shared lock, so runs on many threads do not serialize; a thread that runs the plan
// it found last, with no plan destroyed since (the count of removals unchanged), takes no lock
// at all. An address gemm_plan_destroy freed may come back from a later gemm_plan_create; the
// old handle then names the new plan (gemm.h says so).
class live_plans {
public:
    void add(const gemm_plan *p) {
        std::unique_lock lock(mutex_);
        plans_.insert(p);
    }
    // Whether p was live (and is no longer).
    bool remove(const gemm_plan *p) {
        std::unique_lock lock(mutex_);
        removals_.fetch_add(1, std::memory_order_release);
        return plans_.erase(p) != 0;
    }
    bool contains(const gemm_plan *p) const {
        thread_local found last;
        const uint64_t removals = removals_.load(std::memory_order_acquire);
        if (p == last.plan && removals == last.removals) return true;
        std::shared_lock lock(mutex_);
        if (plans_.count(p) == 0) return false;
        last = {p, removals};  // a removal since the load makes the next run look again
        return true;
    }

private:
    struct found {
        const gemm_plan *plan = nullptr;
        uint64_t removals = 0;
    };
    mutable std::shared_mutex mutex_;
    std::unordered_set<const gemm_plan *> plans_;
    std::atomic<uint64_t> removals_{0};
};

// Never destroyed: a plan may be destroyed by another static object's destructor at exit.
live_plans &plans_alive() {
    static live_plans *const plans = new live_plans;
    return *plans;
}

constexpr const char *stale_plan = "parameter 1: plan is not a live gemm_plan_t (destroyed?)";

gemm_status_t check_handle(const gemm_plan *p) {
    if (!p) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: plan is NULL", 1);
    if (!plans_alive().contains(p)) return set_error(GEMM_STATUS_INVALID_VALUE, stale_plan, 1);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t create(const api_desc *d, gemm_plan_t *out) {
    if (!out) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: plan is NULL", 2);
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: desc is NULL", 1);
    problem shape;
    call_shape call;
    auto made = std::make_unique<gemm_plan>();
    if (gemm_status_t s = problem_of(*d, 1, shape, &call, &made->described); s != GEMM_STATUS_SUCCESS) return s;
    made->has_epilogue = shape.epilogue.any();
    made->epilogue = {d->activation, d->bias_axis, nullptr,
                      nullptr,       nullptr,      shape.epilogue.aux ? shape.epilogue.ld_aux : 0};
    if (gemm_status_t s = plan::make(shape, call, d->check_pointers != 0, made->decided); s != GEMM_STATUS_SUCCESS)
        return s;
    made->row_major = d->layout == GEMM_ROW_MAJOR;
    made->compute = d->compute;
    made->alignment = d->alignment;
    made->beta_zero = d->beta_zero != 0;
    made->fp8 = is_fp8(dtype(d->a_type));
    made->scale_mode = d->scale_mode;
    const choice &c = made->decided->decided();
    if (c.chosen) {
        made->backend = std::string(c.chosen->name());
        made->variant = std::string(c.variant);
        made->why = c.reason();
    }
    plans_alive().add(made.get());
    *out = made.release();
    return GEMM_STATUS_SUCCESS;
}

// The run's arguments, checked for what the plan could not know (which pointers this run
// needs, their alignment, beta against beta_zero), into p, a copy of the plan's problem.
// Positions count as gemm_plan_run's: plan 1, alpha 2, A 3, B 4, beta 5, C 6.
gemm_status_t problem_of_run(const gemm_plan &pl, const void *alpha, const void *a, const void *b, const void *beta,
                             void *c, problem &p) {
    if (!alpha) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: alpha is NULL", 2);
    if (!beta) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 5: beta is NULL", 5);
    p.scaling = {};  // the desc's are placeholders; a scaled run brings its own (scaling_of_run)
    scalar alpha_value = scalar_value(alpha, pl.compute), beta_value = scalar_value(beta, pl.compute);
    p.alpha = alpha_value.re;
    p.alpha_imag = alpha_value.im;
    p.beta = beta_value.re;
    p.beta_imag = beta_value.im;
    if (pl.beta_zero && !p.beta_zero())
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("parameter 5: beta = {}{} but the plan was made for beta = 0 (desc->beta_zero)",
                                     p.beta, p.beta_imag != 0.0 ? fmt::format(" + {}i", p.beta_imag) : ""),
                         5);
    const bool writes_c = p.m > 0 && p.n > 0 && p.batch > 0;
    const bool reads_ab = writes_c && !p.scales_only();
    struct operand {
        const void *ptr;
        bool needed;
        const char *name;
        int at;
    } operands[] = {{a, reads_ab, "A", 3}, {b, reads_ab, "B", 4}, {c, writes_c, "C", 6}};
    for (const operand &x : operands) {
        if (x.needed && !x.ptr)
            return set_error(GEMM_STATUS_INVALID_POINTER, fmt::format("parameter {}: {} is NULL", x.at, x.name), x.at);
        // The plan's backend and variant were chosen for this alignment (a vectorized kernel
        // may rely on it).
        if (x.ptr && reinterpret_cast<std::uintptr_t>(x.ptr) % std::uintptr_t(pl.alignment) != 0)
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             fmt::format("parameter {}: {} = {} is not a multiple of the plan's alignment, {} bytes "
                                         "(desc->alignment)",
                                         x.at, x.name, x.ptr, pl.alignment),
                             x.at);
    }
    p.a = pl.row_major ? b : a;
    p.b = pl.row_major ? a : b;
    p.c = c;
    return GEMM_STATUS_SUCCESS;
}

const char *const activation_names[] = {"GEMM_ACTIVATION_NONE", "GEMM_ACTIVATION_RELU", "GEMM_ACTIVATION_GELU",
                                        "GEMM_ACTIVATION_RELU_BACKWARD", "GEMM_ACTIVATION_GELU_BACKWARD"};
const char *const axis_names[] = {"GEMM_BIAS_NONE", "GEMM_BIAS_ROWS", "GEMM_BIAS_COLUMNS"};

// The run's epilogue has the plan's activation, axis, aux and ld_aux, and its pointers and
// spans pass the checks of gemm_ex_epilogue (on the plan's call with this run's operands);
// then it becomes p's, canonical.

// The plan's call with one run's operands, through entry point `entry`: what gemm_ex's checks
// judge when a run brings an epilogue or scales.
user_call call_of_run(const gemm_plan &pl, int entry, const void *alpha, const void *a, const void *b, const void *beta,
                      void *c) {
    user_call run = pl.described;
    run.entry = entry;
    run.alpha = alpha;
    run.beta = beta;
    run.a = a;
    run.b = b;
    run.c = c;
    return run;
}

gemm_status_t epilogue_of_run(const gemm_plan &pl, const void *alpha, const void *a, const void *b, const void *beta,
                              void *c, const api_epilogue *e, problem &p) {
    if (!e) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 7: epilogue is NULL", 7);
    const api_epilogue &want = pl.epilogue;
    auto mismatch = [](const std::string &what) {
        return set_error(GEMM_STATUS_INVALID_VALUE, "parameter 7: epilogue->" + what, 7);
    };
    if (e->activation != want.activation)
        return mismatch(fmt::format("activation = {} but the plan was made for {} (desc->activation)", e->activation,
                                    activation_names[want.activation]));
    if (e->bias_axis != want.bias_axis)
        return mismatch(fmt::format("bias_axis = {} but the plan was made for {} (desc->bias_axis)", e->bias_axis,
                                    axis_names[want.bias_axis]));
    if (bool(e->aux) != (want.ld_aux != 0))
        return mismatch(want.ld_aux ? "aux is NULL but the plan was made with one (desc->aux, or a backward activation)"
                                    : "aux is set but the plan was made without one (desc->aux = 0)");
    if (e->aux && e->ld_aux != want.ld_aux)
        return mismatch(fmt::format("ld_aux = {} but the plan was made for {} (desc->ld_aux)", e->ld_aux, want.ld_aux));
    user_call run = call_of_run(pl, api_entry_plan_epilogue, alpha, a, b, beta, c);
    run.epilogue = e;
    if (gemm_status_t s = check_call(run); s != GEMM_STATUS_SUCCESS) return s;
    p.epilogue = canonicalize(run).epilogue;
    return GEMM_STATUS_SUCCESS;
}

const char *const scale_mode_names[] = {"GEMM_SCALE_NONE", "GEMM_SCALE_TENSOR", "GEMM_SCALE_BLOCK"};

// The run's scaling has the plan's mode, and its pointers pass the checks of gemm_ex_scaled
// (on the plan's call with this run's operands); then it becomes p's, canonical.
gemm_status_t scaling_of_run(const gemm_plan &pl, const void *alpha, const void *a, const void *b, const void *beta,
                             void *c, const api_scaling *x, problem &p) {
    if (!x && pl.scale_mode == GEMM_SCALE_NONE) return GEMM_STATUS_SUCCESS;
    if (!pl.fp8)
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         fmt::format("parameter 7: the plan computes {}: scales take FP8 types (pass NULL)",
                                     dtype_name(dtype(pl.described.a_type))),
                         7);
    const int mode = x ? x->mode : GEMM_SCALE_NONE;
    if (mode != pl.scale_mode)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("parameter 7: scaling->mode = {} but the plan was made for {} (desc->scale_mode)",
                                     mode, scale_mode_names[pl.scale_mode]),
                         7);
    user_call run = call_of_run(pl, api_entry_plan_scaled, alpha, a, b, beta, c);
    run.scaling = x;
    if (gemm_status_t s = check_call(run); s != GEMM_STATUS_SUCCESS) return s;
    p.scaling = canonicalize(run).scaling;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t run_plan(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta, void *C,
                       int entry, const api_epilogue *epilogue, const api_scaling *scaling) {
    if (gemm_status_t s = check_handle(plan); s != GEMM_STATUS_SUCCESS) return s;
    if (entry != api_entry_plan_epilogue && plan->has_epilogue)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "parameter 1: the plan was made with an epilogue (desc->activation, bias_axis or aux): run it "
                         "with gemm_plan_run_epilogue",
                         1);
    if (entry != api_entry_plan_scaled && plan->scale_mode != GEMM_SCALE_NONE)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("parameter 1: the plan was made with desc->scale_mode = {}: run it with "
                                     "gemm_plan_run_scaled",
                                     scale_mode_names[plan->scale_mode]),
                         1);
    // Copied, not built empty and then assigned: a run pays for one pass over the problem.
    problem p = plan->decided->shape();
    if (gemm_status_t s = problem_of_run(*plan, alpha, A, B, beta, C, p); s != GEMM_STATUS_SUCCESS) return s;
    if (entry == api_entry_plan_epilogue)
        if (gemm_status_t s = epilogue_of_run(*plan, alpha, A, B, beta, C, epilogue, p); s != GEMM_STATUS_SUCCESS)
            return s;
    if (entry == api_entry_plan_scaled)
        if (gemm_status_t s = scaling_of_run(*plan, alpha, A, B, beta, C, scaling, p); s != GEMM_STATUS_SUCCESS)
            return s;
    return plan->decided->run(p);
}

}  // namespace

extern "C" {

gemm_status_t api_plan_create(const api_desc *desc, gemm_plan_t *plan) {
    clear_error();
    return guarded([&] { return create(desc, plan); });
}

gemm_status_t api_plan_run(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta, void *C,
                           int entry, const api_epilogue *epilogue, const api_scaling *scaling) {
    clear_error();
    return guarded([&] { return run_plan(plan, alpha, A, B, beta, C, entry, epilogue, scaling); });
}

gemm_status_t gemm_plan_get_backend(gemm_plan_t plan, const char **backend, const char **variant, const char **why) {
    clear_error();
    return guarded([&] {
        if (gemm_status_t s = check_handle(plan); s != GEMM_STATUS_SUCCESS) return s;
        if (backend) *backend = plan->backend.c_str();
        if (variant) *variant = plan->variant.c_str();
        if (why) *why = plan->why.c_str();
        return GEMM_STATUS_SUCCESS;
    });
}

// As free() does, this leaves the thread's last error alone: a caller may destroy a plan
// between a failed run and reading why it failed. A handle that is not a live plan is ignored.
void gemm_plan_destroy(gemm_plan_t plan) {
    if (!plan) return;
    try {
        if (plans_alive().remove(plan)) delete plan;
    } catch (...) {  // a lock that cannot be taken: the plan stays, as nothing may throw past here
    }
}

}  // extern "C"
