// gemm_plan_api.cpp: gemm_plan_t, a gemm_desc_t with its backend decided once (dispatch/plan).
#include <cstdint>
#include <memory>
#include <string>

#include "described_problem.hpp"
#include "dispatch/error.hpp"
#include "dispatch/plan.hpp"
#include "entry_points.h"
#include "guard.hpp"

using namespace gemm;

// What a gemm_plan_t points to. The texts gemm_plan_get_backend hands out are copies owned
// here, so that they live exactly as long as the plan.
struct gemm_plan {
    // Set while the plan lives, cleared when it is destroyed: a run of a destroyed plan is
    // refused when its memory has not been reused yet (a best effort, not a promise).
    static constexpr uint64_t alive = 0x67656d6d706c616eull;  // "gemmplan"
    uint64_t magic = alive;
    std::unique_ptr<plan> decided;
    std::string backend, variant, why;
};

namespace {

gemm_status_t check_handle(const gemm_plan *p) {
    if (!p) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: plan is NULL", 1);
    if (p->magic != gemm_plan::alive)
        return set_error(GEMM_STATUS_INVALID_VALUE, "parameter 1: plan is not a live gemm_plan_t (destroyed?)", 1);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t create(const api_desc *d, gemm_plan_t *out) {
    if (!out) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: plan is NULL", 2);
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: desc is NULL", 1);
    problem shape;
    call_shape call;
    if (gemm_status_t s = problem_of(*d, shape, &call); s != GEMM_STATUS_SUCCESS) return s;
    auto made = std::make_unique<gemm_plan>();
    if (gemm_status_t s = plan::make(shape, call, d->layout == GEMM_ROW_MAJOR, d->alignment, d->beta_zero != 0,
                                     made->decided);
        s != GEMM_STATUS_SUCCESS)
        return s;
    const choice &c = made->decided->decided();
    if (c.chosen) {
        made->backend = std::string(c.chosen->name());
        made->variant = std::string(c.variant);
        made->why = c.reason();
    }
    *out = made.release();
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

gemm_status_t api_plan_create(const api_desc *desc, gemm_plan_t *plan) {
    clear_error();
    return guarded([&] { return create(desc, plan); });
}

gemm_status_t gemm_plan_run(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta,
                            void *C) {
    clear_error();
    return guarded([&] {
        if (gemm_status_t s = check_handle(plan); s != GEMM_STATUS_SUCCESS) return s;
        return plan->decided->run({alpha, A, B, beta, C});
    });
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

void gemm_plan_destroy(gemm_plan_t plan) {
    if (!plan || plan->magic != gemm_plan::alive) return;
    plan->magic = 0;
    delete plan;
}

}  // extern "C"
