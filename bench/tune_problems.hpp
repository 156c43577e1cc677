// tune_problems.hpp: the problems `gemm tune` tunes: from the arguments, from a --shapes
// file (simple lines or GEMM_RECORD's tune-key lines), or from a built-in suite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "gemm_case.hpp"
#include "tune_options.hpp"

namespace gemm_cli {

// One problem class, as gemm_tune_request_t describes it (no budget, no backend filter).
struct tune_problem {
    gemm_dtype_t ab_type = GEMM_F32;
    gemm_dtype_t c_type = GEMM_F32;
    gemm_layout_t layout = GEMM_ROW_MAJOR;
    gemm_op_t op_a = GEMM_OP_N, op_b = GEMM_OP_N;
    gemm_shape shape;
    int64_t batch = 1;
    int64_t ld_padding = 0;  // elements added to every leading dimension
    bool misaligned = false;
    bool beta_zero = true;
    int device = -1;  // >= 0: device pointers on that CUDA device
    // A tune-key line's twelfth word, an epilogue ("gelu+bias(rows)+aux") or a pointer-array
    // batch ("pointers", from form=pointers), then "tf32" for math=tf32: such a line is tuned
    // by its key (gemm_tune_key), which a gemm_tune_request_t cannot describe.
    std::string key_extra;
    std::string key;
    // A call beside GEMM: "omatcopy" (a transpose: shape.m rows, shape.n cols, op_a its op),
    // "spmm_csr" or "spmm_coo" (a sparse product, A's density 10^density); "" for GEMM. Such
    // a problem is tuned by its key (tune_problem_side_key), which has its call's name first.
    std::string call;
    int density = 0;

    bool operator==(const tune_problem &o) const;
};

// Every argument shape in every --dtype, --layout and --ops.
std::vector<tune_problem> tune_problems_from_arguments(const tune_options &o);

// The problems of a --shapes file; device lines use device_for_device_lines. A line may name
// a call beside GEMM first: "omatcopy DTYPE LAYOUT OP ROWS COLS [device]", "spmm_csr DTYPE
// LAYOUT OPS M N K DENSITY [device]" (spmm_coo alike), or such a call's tune-cache key. Throws
// usage_error naming the file and line for a line it cannot read.
std::vector<tune_problem> tune_problems_from_file(const std::string &path, int device_for_device_lines);

// What a suite may include on this machine.
struct suite_scope {
    std::vector<gemm_dtype_t> host_dtypes;  // dtypes some host backend (not cpu_ref) serves
    int device = -1;                        // >= 0: also device-pointer problems on it
};

std::vector<tune_problem> tune_problems_suite(const std::string &name, const suite_scope &scope);

// Appends the problems of more that list does not have yet, keeping the order.
void tune_problems_merge(std::vector<tune_problem> &list, const std::vector<tune_problem> &more);

// "1024x1024x1024", with " x4" for batches.
std::string tune_problem_shape_text(const tune_problem &p);
// "row NN", "col NT ld+16 misaligned beta!=0": the class apart from dtype and shape.
std::string tune_problem_class_text(const tune_problem &p);
// "f32", or "bf16>f32" when C differs.
std::string tune_problem_dtype_text(const tune_problem &p);

// The tune-cache key of a call beside GEMM, canonical as the library keys its calls: a
// row-major transpose is the column-major one of swapped rows and cols; a real type's op C is T.
std::string tune_problem_side_key(const tune_problem &p);

gemm_tune_request_t tune_problem_request(const tune_problem &p, double budget_ms, const char *backends);

}  // namespace gemm_cli
