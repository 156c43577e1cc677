// side_tuner.hpp: the tuner of the calls beside GEMM (gemm_omatcopy, gemm_spmm_csr,
// gemm_spmm_coo): every backend that serves a class timed on operands made for it, each
// checked against cpu_ref, the winner chosen as tune_problem chooses GEMM's.
#pragma once

#include <optional>
#include <string>

#include "gemm/gemm.h"
#include "problem_class.hpp"
#include "tune_cache.hpp"
#include "tuner.hpp"

namespace gemm {

// Times the candidates of key, a class of a call beside GEMM (key.side_call()), and fills
// out as tune_problem does (options.disturbed_retimes included). The operands: random values
// in [-1, 1], tight leading dimensions; a transpose with alpha = 1; a sparse product's A with
// nnz = 10^density * rows * cols entries spread evenly over its rows, 32-bit indices from 0
// (64-bit where a size needs them), sorted, beta = 0 (C filled with NaN before a checked run)
// or 0.5 as the key says. Device keys on CUDA device `device`. The candidates: the built-in
// rule's choice first, then every backend of the key's memory that is available and supports
// the problem, the reference only where named or the built-in choice; options.backends
// narrows them. Each runs once checked against cpu_ref's result on the same operands (a
// transpose bit for bit, a sparse product by tolerance.hpp's rule with k terms), then, where
// correct, takes its turn in 3 rounds of a warm-up and samples of options.budget_ms / (3 *
// candidates), at least options.min_reps samples in all. The winner: the fastest correct
// candidate, the built-in choice unless beaten by more than options.margin.
gemm_status_t tune_side_problem(const problem_class &key, int device, const tune_options &options, tune_outcome &out);

// verify_entry for an entry of a call beside GEMM: its backend and the built-in rule's choice
// checked and timed in 3 rounds on the operands tune_side_problem makes.
gemm_status_t verify_side_entry(const tune_entry &e, int device, const tune_options &options, verify_outcome &out);

// GEMM_TEST_TUNE_WRONG=<backend>, a hook for tests only: the side tuner corrupts that
// backend's checked result before judging it, so that tests see a wrong candidate rejected.
// Nothing when unset.
std::optional<std::string> forced_wrong_backend();

}  // namespace gemm
