// plan.hpp: a class of calls with its backend decided once, the core of a gemm_plan_t
// (api/src/gemm_plan_api.cpp, which checks each run's arguments): a run skips the checks of
// the shape and the auto decision.
#pragma once

#include <memory>

#include "dispatch.hpp"
#include "policy.hpp"
#include "problem.hpp"

namespace gemm {

class plan {
public:
    // Decides the backend for shape (canonical, checked, its pointers placeholders) under the
    // selection in force, as a call of it would: the forced backend or nothing, else auto's
    // choice (the tune cache, else the built-in rule). An empty class (m, n or batch 0)
    // computes nothing, so no backend is asked. call: the caller's view, for traces.
    // check_pointers: every run classifies its operands (also with GEMM_CHECK_POINTERS=1).
    static gemm_status_t make(const problem &shape, const call_shape &call, bool check_pointers,
                              std::unique_ptr<plan> &out);

    // Runs p, the plan's shape with one run's pointers and scalars (checked by the caller), on
    // the calling thread's stream. The operands are taken to lie in the memory the plan was
    // made for, as cuBLAS takes its arguments: asking the driver costs more than the rest of a
    // run's host work. A plan that checks pointers asks, and refuses other memory
    // (GEMM_STATUS_MIXED_MEMORY_SPACES, C untouched): the backend would read through pointers
    // it cannot use. Managed memory serves a device plan: the device reads it.
    gemm_status_t run(problem &p) const;

    const choice &decided() const { return choice_; }
    const problem &shape() const { return shape_; }

private:
    plan() = default;
    // Sets p's memory space, device and stream: the plan's own, or with check_pointers_ the
    // driver's answer for its operands, refused where the plan cannot serve them.
    gemm_status_t place_operands(problem &p) const;

    problem shape_;
    call_shape call_;
    choice choice_;
    bool check_pointers_ = false;
};

}  // namespace gemm
