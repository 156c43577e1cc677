// report.hpp: one result row of `gemm bench` and its three renderings: the table on stdout,
// CSV and JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "gemm_case.hpp"

namespace gemm_cli {

enum class check_verdict { ok, wrong, skipped };

// How a row's result was checked (by gemm_measure).
struct check_result {
    check_verdict verdict = check_verdict::skipped;
    std::string method;      // "reference" or "vector"
    double worst_ratio = 0;  // largest |error| / tolerance seen (ok while <= 1)
};

const char *check_verdict_name(check_verdict v);  // "ok", "WRONG", "skipped"

struct bench_row {
    std::string backend;
    gemm_case problem;
    check_result check;
    bool timed = false;
    int64_t reps = 0;                 // timed repetitions
    int64_t calls_per_rep = 0;        // calls inside one repetition (short calls are grouped)
    double median_s = 0, best_s = 0;  // per call
    double ratio = 0;                 // time(baseline) / time(this); 0 when unknown
    double roofline_gflops = 0;       // min(peak, AI × bandwidth); 0 when unknown
    // Slowest round's median over the fastest's, less 1 (0.08: 8 % apart); -1 with fewer
    // than two timed rounds. A ratio to another row is not known better than this.
    double round_spread = -1;
    std::string status = "GEMM_STATUS_SUCCESS";
    std::string note;  // the library's message on failure, or a remark on the timing
    // On auto's row, when auto and a backend forced were both timed on the problem: the
    // forced backend with the lowest median, its median, and that median over auto's (1:
    // auto as fast; < 1: auto slower). Empty and 0 on other rows and when not known.
    std::string best_forced;
    double best_forced_median_s = 0;
    double best_over_auto = 0;

    double gflops() const { return timed ? gemm_case_flops(problem) / median_s * 1e-9 : 0; }
    double gflops_best() const { return timed ? gemm_case_flops(problem) / best_s * 1e-9 : 0; }
    double intensity() const { return gemm_case_flops(problem) / gemm_case_bytes(problem); }
};

// Everything about the run that is not a row: for the JSON file.
struct run_summary {
    std::string command;
    std::string library_version;
    std::string cpu_model;
    int openmp_threads = 0;
    std::string baseline;
    double peak_f32_gflops = 0, peak_f64_gflops = 0, peak_gbs = 0;
    std::string peak_compute_source, peak_bandwidth_source;  // "measured (...)", "given", "none"
    double peak_rss_mib = 0;
};

void report_table_header(std::FILE *out);
void report_table_row(std::FILE *out, const bench_row &row);
void report_csv_header(std::FILE *out);
void report_csv_row(std::FILE *out, const bench_row &row, const std::string &baseline);
void report_json(std::FILE *out, const run_summary &summary, const std::vector<bench_row> &rows);

}  // namespace gemm_cli
