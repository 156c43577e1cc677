// dispatch_omatcopy.hpp: choose a backend for a canonical transpose (gemm_omatcopy), run it,
// trace it.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"
#include "gemm/gemm.h"
#include "side_call.hpp"
#include "transpose_problem.hpp"

namespace gemm {

// The call as the user made it, before canonicalization; only for the trace line.
struct transpose_call {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t trans = GEMM_OP_N;
    int64_t rows = 0, cols = 0;
    int64_t lda = 0, ldb = 0;
};

// The backend that serves t, and why (side_call.hpp).
using transpose_choice = side_choice;

// A forced selection: that backend, or NOT_SUPPORTED with its reason, never another. Auto: the
// tune cache's entry for t's class (its own, else the nearest tuned shape's) where its backend
// can serve t (side_call::choose_tuned); else the built-in rule: among the backends of t's memory
// (host ones for host memory, single-device ones otherwise) those that lead transposes
// (leads_omatcopy) first, then the registry's preference order; the first available one
// that supports t.
transpose_choice choose_omatcopy_backend(const transpose_problem &t, bool collect_skipped);

// The built-in rule alone, as auto takes it for an untuned class: the tuner's default
// candidate.
transpose_choice choose_omatcopy_builtin(const transpose_problem &t);

// Runs a checked t on the selection in force, with the GEMM_VERBOSE trace line: an invalid
// GEMM_* setting or selection fails it as it fails a GEMM, then an empty t returns at once.
gemm_status_t dispatch_omatcopy(const transpose_problem &t, const transpose_call &call);

}  // namespace gemm
