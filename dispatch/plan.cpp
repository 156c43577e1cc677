// plan.cpp: deciding a class of calls once, and running it on one set of operands.
#include "plan.hpp"

#include <cstdint>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "backend.hpp"
#include "error.hpp"
#include "memory.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

// gemm_plan_run's parameter positions.
enum position : int { alpha_at = 2, a_at = 3, b_at = 4, beta_at = 5, c_at = 6 };

double scalar(const void *v, dtype compute) {
    return compute == dtype::f64 ? *static_cast<const double *>(v) : double(*static_cast<const float *>(v));
}

std::string space_text(memory_space s, int device) {
    return s == memory_space::host ? std::string("host memory")
                                   : fmt::format("{} memory of device {}", memory_space_name(s), device);
}

}  // namespace

gemm_status_t plan::make(const problem &shape, const call_shape &call, bool row_major, int alignment, bool beta_zero,
                         std::unique_ptr<plan> &out) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    std::unique_ptr<plan> made(new plan());
    made->shape_ = shape;
    made->shape_.a = made->shape_.b = made->shape_.c = nullptr;
    made->call_ = call;
    made->row_major_ = row_major;
    made->alignment_ = alignment;
    made->beta_zero_ = beta_zero;
    // An empty class computes nothing, so no backend is asked (as a call returns before it).
    if (shape.m > 0 && shape.n > 0 && shape.batch > 0) {
        choice c = choose_backend(shape, sel, false);
        if (!c.chosen) return set_error(c.status, c.message);
        keep_alive(c);  // the plan outlives this thread's next decision
        c.why_detail += " (plan)";
        made->choice_ = std::move(c);
    }
    out = std::move(made);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t plan::check(const plan_operands &o, problem &p) const {
    if (!o.alpha) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: alpha is NULL", alpha_at);
    if (!o.beta) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 5: beta is NULL", beta_at);
    p = shape_;
    p.alpha = scalar(o.alpha, p.compute_type);
    p.beta = scalar(o.beta, p.compute_type);
    if (beta_zero_ && p.beta != 0.0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("parameter 5: beta = {} but the plan was made for beta = 0 (desc->beta_zero)",
                                     p.beta),
                         beta_at);
    const bool writes_c = p.m > 0 && p.n > 0 && p.batch > 0;
    const bool reads_ab = writes_c && p.k > 0 && p.alpha != 0.0;
    struct operand { const void *ptr; bool needed; const char *name; int at; } ops[] = {
        {o.a, reads_ab, "A", a_at}, {o.b, reads_ab, "B", b_at}, {o.c, writes_c, "C", c_at}};
    for (const operand &x : ops) {
        if (x.needed && !x.ptr)
            return set_error(GEMM_STATUS_INVALID_POINTER, fmt::format("parameter {}: {} is NULL", x.at, x.name), x.at);
        // The plan's backend and variant were chosen for this alignment (a vectorized kernel
        // may rely on it).
        if (x.ptr && reinterpret_cast<std::uintptr_t>(x.ptr) % std::uintptr_t(alignment_) != 0)
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             fmt::format("parameter {}: {} = {} is not a multiple of the plan's alignment, {} bytes "
                                         "(desc->alignment)", x.at, x.name, x.ptr, alignment_),
                             x.at);
    }
    p.a = row_major_ ? o.b : o.a;
    p.b = row_major_ ? o.a : o.b;
    p.c = o.c;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t plan::run(const plan_operands &o) const {
    problem p;
    if (gemm_status_t s = check(o, p); s != GEMM_STATUS_SUCCESS) return s;
    if (!choice_.chosen) return GEMM_STATUS_SUCCESS;  // an empty class: BLAS quick return
    if (gemm_status_t s = classify_memory(p); s != GEMM_STATUS_SUCCESS) return s;
    // The backend serves the memory the plan was made for; other memory would make it read
    // through pointers it cannot use. Managed memory serves a device plan: the device reads it.
    const bool host_plan = shape_.space == memory_space::host;
    const bool served = host_plan ? p.space == memory_space::host
                                  : p.space == memory_space::managed ||
                                        (p.space == memory_space::device && p.device == shape_.device);
    if (!served)
        return set_error(GEMM_STATUS_MIXED_MEMORY_SPACES,
                         fmt::format("the operands are {}, but the plan was made for {} (desc->device = {})",
                                     space_text(p.space, p.device), space_text(shape_.space, shape_.device),
                                     host_plan ? -1 : shape_.device));
    if (p.space == memory_space::managed) p.device = shape_.device;
    run_report ctx;
    return run_choice(p, choice_, call_, ctx, true);
}

}  // namespace gemm
