// dispatch.hpp: choose a backend for a canonical problem, run it, trace it.
#pragma once

#include <functional>
#include <vector>

#include "gemm/gemm.h"
#include "problem.hpp"

namespace gemm {

// The call as the user made it, before canonicalization; only for the trace line.
struct call_shape {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t transa = GEMM_OP_N;
    gemm_op_t transb = GEMM_OP_N;
    int64_t m = 0, n = 0, k = 0;
    int64_t lda = 0, ldb = 0, ldc = 0;
};

// Runs p on the backend the selection in force names (or auto picks) and nowhere else.
gemm_status_t dispatch(const problem &p, const call_shape &call);

// The matrices of a pointer-array batch or grouped call, made one at a time (a batch may
// hold millions): group g has sizes[g] matrices, its shape calls[g] for the trace, and
// problem_at(g, i) is its matrix i, canonical, batch 1, memory classified.
struct problem_groups {
    std::vector<int64_t> sizes;
    std::vector<call_shape> calls;
    std::function<problem(std::size_t group, int64_t item)> problem_at;
};

// Each group is decided once, every group before any matrix runs, so a backend that cannot
// serve a group fails the call with nothing computed. A group of several matrices is decided
// as a pointer batch of its size (its tune key says form=pointers). When every group chose
// one backend and variant, that backend's run_batch may serve all the matrices at once (in
// any order, or concurrently); otherwise they run in order, each on its group's choice. FP8
// groups always run matrix by matrix, each matrix's problem carrying its group's scaling as
// a gemm_ex_scaled problem does; a group's amax_d receives the max over all its matrices. A
// failure while computing stops there (earlier matrices keep their results).
gemm_status_t dispatch_groups(const problem_groups &groups);

struct selection;
struct run_report;
struct choice;

// p on choice c (made by choose_backend for p's class), as a call runs it: a tuned choice its
// backend refuses falls back to the built-in rule, and with GEMM_VERBOSE and traced the call
// is traced. What a plan runs. p is a non-empty problem whose settings were checked.
gemm_status_t run_choice(const problem &p, const choice &c, const call_shape &call, run_report &ctx, bool traced);

// p under an explicit selection, from the choice on, as a call would run it: what the
// measurement engine times. traced: a GEMM_VERBOSE line for it (a caller's own measurement,
// not the tuner's runs), showing the call in the caller's layout (p is its canonical form).
// p is a non-empty problem whose settings were checked.
gemm_status_t run_selection(const problem &p, const selection &sel, run_report &ctx, bool traced,
                            gemm_layout_t layout = GEMM_COL_MAJOR);

// A pointer_batch problem of the measurement engine (its matrices at p's strides) run on sel
// as a caller's pointer-array batch is: one group of p.batch matrices, as dispatch_groups runs
// it. run_selection takes this way for such a problem.
gemm_status_t run_pointer_batch(const problem &p, const selection &sel, bool traced);

}  // namespace gemm
