// plan.cpp: deciding a class of calls once, and running it on one set of operands.
#include "plan.hpp"

#include <string>

#include <spdlog/fmt/fmt.h>

#include "backend.hpp"
#include "error.hpp"
#include "memory.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

std::string space_text(memory_space s, int device) {
    return s == memory_space::host ? std::string("host memory")
                                   : fmt::format("{} memory of device {}", memory_space_name(s), device);
}

}  // namespace

gemm_status_t plan::make(const problem &shape, const call_shape &call, bool check_pointers, std::unique_ptr<plan> &out) {
    const env_settings &env = settings();
    if (env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    std::unique_ptr<plan> made(new plan());
    made->shape_ = shape;
    made->shape_.a = made->shape_.b = made->shape_.c = nullptr;
    made->shape_.epilogue.bias = nullptr;  // placeholders: each run brings its own
    made->shape_.epilogue.bias_grad = made->shape_.epilogue.aux = nullptr;
    made->call_ = call;
    made->check_pointers_ = check_pointers || env.check_pointers;
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

gemm_status_t plan::place_operands(problem &p) const {
    if (!check_pointers_) {
        p.space = shape_.space;
        p.device = shape_.device;
        p.page_locked = false;  // the offload engine asks for each operand it copies
        p.stream = thread_stream();
        return GEMM_STATUS_SUCCESS;
    }
    if (gemm_status_t s = classify_memory(p); s != GEMM_STATUS_SUCCESS) return s;
    const bool host_plan = shape_.space == memory_space::host;
    const bool served =
        host_plan ? p.space == memory_space::host
                  : p.space == memory_space::managed || (p.space == memory_space::device && p.device == shape_.device);
    if (!served)
        return set_error(GEMM_STATUS_MIXED_MEMORY_SPACES,
                         fmt::format("the operands are {}, but the plan was made for {} (desc->device = {})",
                                     space_text(p.space, p.device), space_text(shape_.space, shape_.device),
                                     host_plan ? -1 : shape_.device));
    if (p.space == memory_space::managed) p.device = shape_.device;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t plan::run(problem &p) const {
    if (!choice_.chosen) return GEMM_STATUS_SUCCESS;  // an empty class: BLAS quick return
    if (gemm_status_t s = place_operands(p); s != GEMM_STATUS_SUCCESS) return s;
    run_report ctx;
    return run_choice(p, choice_, call_, ctx, true);
}

}  // namespace gemm
