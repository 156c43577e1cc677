// auto_against_best.hpp: how `auto` did on each problem of a `gemm bench` run against the
// fastest backend forced on the same problem, and the block the table ends with.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "report.hpp"

namespace gemm_cli {

// One problem's rows (every backend of one case): fills auto's row with the fastest backend
// forced, its median and best / auto. Nothing is filled unless both were timed.
void auto_against_best_fill(std::vector<bench_row> &case_rows);

// The auto row with the lowest best / auto among rows, or null when no auto row has one.
const bench_row *auto_against_best_worst(const std::vector<bench_row> &rows);

// One line per problem auto was asked on, then the worst; nothing when the run has no auto
// row or no backend forced to compare it with.
void auto_against_best_print(std::FILE *out, const std::vector<bench_row> &rows);

}  // namespace gemm_cli
