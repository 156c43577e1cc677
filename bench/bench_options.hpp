// bench_options.hpp: what `gemm bench` was asked to do, parsed from its command line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemm_case.hpp"

namespace gemm_cli {

struct bench_options {
    bool show_help = false;
    std::vector<gemm_shape> shapes;  // the default set when none is given
    bool default_shapes = true;
    std::vector<dtype_pair> dtypes{{GEMM_F32, GEMM_F32}};
    std::vector<gemm_layout_t> layouts{GEMM_ROW_MAJOR};
    std::vector<std::pair<gemm_op_t, gemm_op_t>> ops{{GEMM_OP_N, GEMM_OP_N}};
    int64_t batch = 1;
    double alpha = 1.0, beta = 0.0;
    gemm_scale_mode_t scale = GEMM_SCALE_NONE;  // FP8 dtypes only
    std::vector<std::string> backends;          // empty: the available backends that serve the memory
                                                // space, except cpu_ref, then "auto"
    std::string baseline;                       // empty: cublas on the device; on the host cblas, else cpu_omp
    int device = -1;                            // >= 0: operands in that CUDA device's memory
    bool pinned = false;                        // host operands page-locked (--memory pinned)
    int64_t warmup = 2;
    int64_t reps = 10;
    double budget_ms = 1000;  // per shape and backend: warm-up and timed calls stop past it
    int64_t rounds = 3;       // the backends of a shape take turns in this many rounds
    bool measure_peak = true;
    double peak_gflops = 0;  // > 0 when given
    double peak_gbs = 0;     // > 0 when given
    std::string csv_path, json_path;
};

extern const char *const bench_help;

// Throws usage_error for anything it cannot accept.
bench_options bench_options_parse(int argc, char **argv, int first);

}  // namespace gemm_cli
