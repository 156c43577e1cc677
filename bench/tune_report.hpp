// tune_report.hpp: the outcome of tuning one problem, and the table `gemm tune` prints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tune_problems.hpp"

namespace gemm_cli {

// One candidate, copied out of the library's report (whose strings the next call reuses).
struct tune_candidate_line {
    std::string backend, variant;
    double median_us = 0;
    bool correct = false;
    std::string note;
};

struct tune_row {
    tune_problem problem;
    bool tuned = false;
    std::string error;  // why not, when not tuned
    std::string winner, winner_variant;
    double winner_us = 0;
    std::string default_backend;
    double default_us = 0;  // 0 when the default failed or was rejected
    bool stored = false;
    double seconds = 0;     // wall time spent on this problem
    std::vector<tune_candidate_line> candidates;

    int64_t rejected() const;
    // default time / winner time; 0 when either is unknown.
    double speedup() const;
};

// The library's report turned into a row.
tune_row tune_row_from_report(const tune_problem &p, const gemm_tune_report_t &report);

// "backend:variant", or the backend alone for its default variant.
std::string backend_variant_text(const std::string &backend, const std::string &variant);

// "812 us", "4.56 ms", "1.23 s"; "-" for 0.
std::string duration_text(double microseconds);

void tune_report_header(std::FILE *out);
// The row and, when verbose, every candidate under it.
void tune_report_row(std::FILE *out, const tune_row &row, bool verbose);

}  // namespace gemm_cli
