// backend_measure.hpp: one backend on one case: force it, verify its result, time it, on
// host or device operands (call_target).
#pragma once

#include <cstdint>
#include <string>

#include "call_target.hpp"
#include "gemm_case.hpp"
#include "operands.hpp"
#include "report.hpp"
#include "result_check.hpp"

namespace gemm_cli {

struct timing_settings {
    int64_t warmup = 0, reps = 1;
    double budget_s = 1;  // warm-up and repetitions stop once this is spent (one rep at least)
};

// Forces the backend with gemm_set_backend ("auto" included) and restores the selection
// with NULL after. The calls run on target; the checks read the pool's host operands, of
// which target's are copies. reference: cpu_ref's C for the case, or NULL for the
// random-vector check. A failing call or a WRONG result leaves the row untimed, with the
// reason in its note.
bench_row measure_backend(const gemm_case &c, operand_pool &pool, call_target &target,
                          const reference_result *reference, const std::string &backend,
                          const timing_settings &t);

}  // namespace gemm_cli
