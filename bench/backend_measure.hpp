// backend_measure.hpp: one backend on one case: force it, verify its result, time it, on
// host or device operands (call_target), in rounds that interleave with other backends'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call_target.hpp"
#include "gemm_case.hpp"
#include "operands.hpp"
#include "report.hpp"
#include "result_check.hpp"

namespace gemm_cli {

struct timing_settings {
    int64_t warmup = 0, reps = 1;
    double budget_s = 1;  // warm-up and repetitions stop once this is spent (one rep at least)
    int64_t rounds = 1;   // the repetitions of a case's backends interleave in this many rounds
};

// One backend on one case, from its check to its row. The timing is split into rounds so that
// the backends of one case can take turns (measure_case): a machine that drifts (clocks,
// temperature, a neighbour's load, another runtime's spinning threads) then drifts under all
// of them alike, instead of under whichever happened to run last.
class backend_measurement {
public:
    // Forces the backend with gemm_set_backend ("auto" included) and checks its result; the
    // selection is restored with NULL after. reference: cpu_ref's C for the case, or NULL for
    // the random-vector check. A failing call or a WRONG result leaves the row untimed, with
    // the reason in its note.
    backend_measurement(const gemm_case &c, operand_pool &pool, call_target &target,
                        const reference_result *reference, const std::string &backend);

    // Round `round` of t.rounds: a warm-up, then this round's share of the repetitions and of
    // the budget. Does nothing for a backend that failed its check or is already done.
    void time_round(call_target &target, const timing_settings &t, int64_t round);

    // The row, with the median and best of every round's repetitions and how far the rounds'
    // medians spread.
    bench_row finish();

private:
    bench_row row_;
    double checked_call_s_ = 0;
    bool timing_ = false;       // checked, and to be timed
    double estimate_s_ = 0;     // fastest call seen, sizes calls_per_rep
    std::vector<double> per_call_;
    std::vector<double> round_medians_;  // one per round that timed repetitions
};

}  // namespace gemm_cli
