// tune_options.hpp: what `gemm tune` was asked to do, parsed from its command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "problem_args.hpp"

namespace gemm_cli {

struct tune_options {
    bool show_help = false;
    // Problems from the arguments: every shape in every dtype, layout and ops.
    std::vector<gemm_shape> shapes;
    std::vector<dtype_pair> dtypes{{GEMM_F32, GEMM_F32}};
    std::vector<gemm_layout_t> layouts{GEMM_ROW_MAJOR};
    std::vector<op_pair> ops{{GEMM_OP_N, GEMM_OP_N}};
    int64_t batch = 1;
    bool beta_zero = true;  // --beta-nonzero tunes the class of calls with beta != 0
    // --scale: FP8 argument problems' scaling. block tunes the block-scaled class (by its key);
    // per-tensor scales only multiply alpha, so tensor tunes the class of unscaled calls.
    gemm_scale_mode_t scale = GEMM_SCALE_NONE;
    std::string shapes_file;  // --shapes FILE
    std::string suite;        // --suite default|quick
    double budget_ms = 0;     // per shape; <= 0: the library's default
    std::string backends;     // comma list given to the tuner; "": every backend
    int device = -1;          // >= 0: device pointers on that CUDA device
    bool store = true;        // --no-store: report only
    std::string cache_path;   // --cache FILE: GEMM_TUNE_CACHE for this process
    bool verbose = false;
    std::string json_path;  // --json FILE; "-": stdout, in place of the table
    bool verify = false;    // --verify: check the cache's entries instead of tuning
    bool drop = false;      // --drop: remove the entries that do not hold up
};

extern const char *const tune_help;

// Throws usage_error for anything it cannot accept, and when no problem source is given.
tune_options tune_options_parse(int argc, char **argv, int first);

}  // namespace gemm_cli
