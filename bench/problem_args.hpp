// problem_args.hpp: reading the problem options `gemm bench` and `gemm tune` share: shapes,
// and comma lists of dtypes, layouts and ops.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli_args.hpp"
#include "gemm_case.hpp"

namespace gemm_cli {

using op_pair = std::pair<gemm_op_t, gemm_op_t>;  // op(A), op(B)

// "N" (an N x N x N product) or "MxNxK"; what names the argument in the error message.
gemm_shape shape_parse(const std::string &text);

// One item each; what names the option or field in the error message.
gemm_dtype_t dtype_parse(const std::string &text, const std::string &what);
// "T" (A, B and C of type T) or "T>U" (A and B of type T, C of type U, e.g. bf16>f32).
dtype_pair dtype_pair_parse(const std::string &text, const std::string &what);
gemm_layout_t layout_parse(const std::string &text, const std::string &what);
op_pair ops_parse(const std::string &text, const std::string &what);

// Every item of a comma list, each one checked by parse_item(item, option); an empty list,
// or an empty item in it ("f32,", "f32,,f64": a value left out), is an error.
template <class T, class F>
std::vector<T> list_parse(const std::string &option, const std::string &text, F parse_item) {
    if (text.empty()) throw usage_error(option + " needs at least one value");
    std::vector<T> items;
    for (const std::string &item : split_list(text)) {
        if (item.empty()) throw usage_error(option + ": '" + text + "' has an empty item");
        items.push_back(parse_item(item, option));
    }
    return items;
}

double positive_parse(const std::string &text, const std::string &option);

// --scale none|tensor|block, and its rule: scales are for FP8 dtypes only.
gemm_scale_mode_t scale_parse(const std::string &text);
void scale_check(gemm_scale_mode_t scale, const std::vector<dtype_pair> &dtypes);

// The backends compiled into this build, in registry order (the built-in rule's preference
// within each kind), and those available here that are not the reference (cpu_ref, timed only
// when named), with their kinds.
struct backend_names {
    std::vector<std::string> all;
    std::vector<std::string> timed;                // available, not the reference
    std::vector<gemm_backend_kind_t> timed_kinds;  // of each of timed
};
backend_names backend_names_read();

// A plain 1x1x1 problem of dtype t in host memory (device >= 0: that device's memory).
gemm_desc_t tiny_desc(gemm_dtype_t t, int device);

// Refuses a name that is not a backend of this build (nor "auto" when allow_auto).
void backend_name_require(const std::string &name, const backend_names &names, const char *option, bool allow_auto);

}  // namespace gemm_cli
