// dispatch_spmm.hpp: choose a backend for a canonical sparse x dense product (gemm_spmm_csr,
// gemm_spmm_coo), run it, trace it.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"
#include "gemm/gemm.h"
#include "side_call.hpp"
#include "sparse_problem.hpp"

namespace gemm {

// The call as the user made it, before canonicalization; only for the trace line.
struct sparse_call {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t op_a = GEMM_OP_N, op_b = GEMM_OP_N;
    int64_t ldb = 0, ldc = 0;
};

// The backend that serves s, and why (side_call.hpp).
using sparse_choice = side_choice;

// A forced selection: that backend, or NOT_SUPPORTED with its reason, never another. Auto: the
// tune cache's entry for s's class (its own, else the nearest tuned shape's) where its backend
// can serve s (side_call::choose_tuned); else the built-in rule: among the backends of s's memory
// (host ones for host memory, single-device ones otherwise) those that lead sparse products
// (leads_spmm) first, then the registry's preference order; the first available one that
// supports s.
sparse_choice choose_spmm_backend(const sparse_problem &s, bool collect_skipped);

// The built-in rule alone, as auto takes it for an untuned class: the tuner's default
// candidate.
sparse_choice choose_spmm_builtin(const sparse_problem &s);

// Runs a checked s on the selection in force, with the GEMM_VERBOSE trace line: an invalid
// GEMM_* setting or selection fails it as it fails a GEMM, then an empty C returns at once.
gemm_status_t dispatch_spmm(const sparse_problem &s, const sparse_call &call);

}  // namespace gemm
