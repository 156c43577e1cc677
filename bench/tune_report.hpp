// tune_report.hpp: the outcome of tuning one problem, and the table `gemm tune` prints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cpu_info.hpp"
#include "tune_problems.hpp"

namespace gemm_cli {

// One candidate, copied out of the library's report (whose strings the next call reuses).
struct tune_candidate_line {
    std::string backend, variant;
    double median_us = 0;
    bool correct = false;
    std::string note;
    double spread = 0;  // median over the fastest sample, minus 1
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
    bool disturbed = false;  // the winner's or the default's timings disagreed (a busy machine)
    double seconds = 0;      // wall time spent on this problem
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
std::string duration_text(double us);

// The run's outcome as the last lines of the table (and the JSON) give it.
struct tune_summary {
    std::size_t problems = 0, tuned = 0, stored = 0;
    std::size_t disturbed = 0;   // problems timed while something else had the machine
    std::size_t compared = 0;    // problems with both the winner's and the default's time
    double geomean_speedup = 0;  // default time / winner time over those; 0 when none
    double seconds = 0;
};

tune_summary tune_summary_of(const std::vector<tune_row> &rows, double seconds);

// The run's settings and findings that are not rows, for the JSON file.
struct tune_run_facts {
    std::string command, cache_path, suite_note;
    bool store = true;
    double budget_ms = 0;  // <= 0: the library's default
    cpu_info cpu;
    std::vector<std::string> untried_backends;  // named by --backends, a candidate nowhere
};

void tune_report_json(std::FILE *out, const tune_run_facts &run, const std::vector<tune_row> &rows,
                      const tune_summary &summary);

// The widths of the table's columns whose texts are known before the first problem is tuned:
// the problem's shape, dtype and class, and the default backend's name. The winner, a
// backend:variant of any length, is the last column, so it never pushes another one.
struct tune_table_widths {
    int shape = 0, dtype = 0, klass = 0, backend = 0;
};

tune_table_widths tune_table_widths_for(const std::vector<tune_problem> &problems,
                                        const std::vector<std::string> &backend_names);

void tune_report_header(std::FILE *out, const tune_table_widths &w);
// The row and, when verbose, every candidate under it.
void tune_report_row(std::FILE *out, const tune_row &row, const tune_table_widths &w, bool verbose);

}  // namespace gemm_cli
