// plan.hpp: a class of calls with its backend decided once (gemm_plan_t): running it skips
// the argument checks of the shape and the auto decision, and repeats only what depends on
// the pointers and scalars of one run.
#pragma once

#include <memory>

#include "dispatch.hpp"
#include "policy.hpp"
#include "problem.hpp"

namespace gemm {

// The operands of one run as the caller passed them (before row-major swapping).
struct plan_operands {
    const void *alpha = nullptr, *a = nullptr, *b = nullptr, *beta = nullptr;
    void *c = nullptr;
};

class plan {
public:
    // Decides the backend for shape (canonical, checked, its pointers placeholders) under the
    // selection in force, as a call of it would: the forced backend or nothing, else auto's
    // choice (the tune cache, else the built-in rule). call: the caller's view, for traces;
    // row_major: A and B are swapped in shape.
    static gemm_status_t make(const problem &shape, const call_shape &call, bool row_major, int alignment,
                              bool beta_zero, std::unique_ptr<plan> &out);

    // Runs the plan on these operands, on the calling thread's stream. Checks only what the
    // plan could not: which pointers are needed, their alignment and memory space, beta
    // against beta_zero. Parameter positions in messages count as gemm_plan_run's.
    gemm_status_t run(const plan_operands &o) const;

    const choice &decided() const { return choice_; }
    const problem &shape() const { return shape_; }

private:
    plan() = default;
    gemm_status_t check(const plan_operands &o, problem &p) const;

    problem shape_;
    call_shape call_;
    bool row_major_ = false;
    bool beta_zero_ = false;
    int alignment_ = 1;
    choice choice_;
};

}  // namespace gemm
