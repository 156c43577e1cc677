// problem_args.cpp: parsing shapes, dtypes, layouts, ops and backend names.
#include "problem_args.hpp"

#include <algorithm>
#include <cctype>

namespace gemm_cli {
namespace {

std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

}  // namespace

gemm_shape shape_parse(const std::string &text) {
    std::vector<std::string> parts = split_list(text, 'x');
    bool well_formed = !text.empty() && text.front() != 'x' && text.back() != 'x' &&
                       text.find("xx") == std::string::npos && (parts.size() == 1 || parts.size() == 3);
    if (!well_formed) throw usage_error("shape '" + text + "' must be N or MxNxK");
    const std::string what = "shape '" + text + "'";
    if (parts.size() == 1) {
        int64_t n = parse_int(parts[0], what, 1);
        return {n, n, n};
    }
    return {parse_int(parts[0], what, 1), parse_int(parts[1], what, 1), parse_int(parts[2], what, 1)};
}

gemm_dtype_t dtype_parse(const std::string &text, const std::string &what) {
    std::string name = lowercase(text);
    if (name == "f32") return GEMM_F32;
    if (name == "f64") return GEMM_F64;
    if (name == "f16") return GEMM_F16;
    if (name == "bf16") return GEMM_BF16;
    if (name == "c32") return GEMM_C32;
    if (name == "c64") return GEMM_C64;
    if (name == "e4m3") return GEMM_F8_E4M3;
    if (name == "e5m2") return GEMM_F8_E5M2;
    throw usage_error(what + ": unknown dtype '" + text + "' (f32, f64, f16, bf16, c32, c64, e4m3, e5m2)");
}

dtype_pair dtype_pair_parse(const std::string &text, const std::string &what) {
    const std::size_t arrow = text.find('>');
    if (arrow == std::string::npos) {
        const gemm_dtype_t t = dtype_parse(text, what);
        // FP8 is an input type only: alone it writes bf16, as FP8 layers' outputs usually are.
        if (t == GEMM_F8_E4M3 || t == GEMM_F8_E5M2) return {t, GEMM_BF16};
        return {t, t};
    }
    return {dtype_parse(text.substr(0, arrow), what), dtype_parse(text.substr(arrow + 1), what + " (type of C)")};
}

gemm_layout_t layout_parse(const std::string &text, const std::string &what) {
    std::string name = lowercase(text);
    if (name == "row") return GEMM_ROW_MAJOR;
    if (name == "col") return GEMM_COL_MAJOR;
    throw usage_error(what + ": unknown layout '" + text + "' (row, col)");
}

op_pair ops_parse(const std::string &text, const std::string &what) {
    std::string name = lowercase(text);
    auto op = [&](char c) {
        if (c == 'n') return GEMM_OP_N;
        if (c == 't') return GEMM_OP_T;
        if (c == 'c') return GEMM_OP_C;
        throw usage_error(what + ": '" + text + "' must be two of N, T and C, like NT");
    };
    if (name.size() != 2) throw usage_error(what + ": '" + text + "' must be two of N, T and C, like NT");
    return {op(name[0]), op(name[1])};
}

double positive_parse(const std::string &text, const std::string &option) {
    double v = parse_double(text, option);
    if (v <= 0) throw usage_error(option + ": " + text + " must be positive");
    return v;
}

gemm_scale_mode_t scale_parse(const std::string &text) {
    if (text == "none") return GEMM_SCALE_NONE;
    if (text == "tensor") return GEMM_SCALE_TENSOR;
    if (text == "block") return GEMM_SCALE_BLOCK;
    throw usage_error("--scale: '" + text + "' must be none, tensor or block");
}

void scale_check(gemm_scale_mode_t scale, const std::vector<dtype_pair> &dtypes) {
    for (const dtype_pair &t : dtypes)
        if (scale != GEMM_SCALE_NONE && t.ab != GEMM_F8_E4M3 && t.ab != GEMM_F8_E5M2)
            throw usage_error(std::string("--scale: scales are for FP8 dtypes (e4m3, e5m2), not ") +
                              gemm_dtype_name(t.ab));
}

backend_names backend_names_read() {
    backend_names names;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) != GEMM_STATUS_SUCCESS) continue;
        names.all.push_back(info.name);
        if (!info.available) continue;
        gemm_backend_traits_t traits{};
        traits.struct_size = sizeof traits;
        if (gemm_backend_get_traits(info.name, &traits) != GEMM_STATUS_SUCCESS || traits.reference) continue;
        names.timed.push_back(info.name);
        names.timed_kinds.push_back(traits.kind);
    }
    return names;
}

gemm_desc_t tiny_desc(gemm_dtype_t t, int device) {
    gemm_desc_t d;
    gemm_desc_init(&d, t, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1);
    d.device = device;
    return d;
}

void backend_name_require(const std::string &name, const backend_names &names, const char *option, bool allow_auto) {
    if (allow_auto && name == "auto") return;
    // "name:variant" names a variant; gemm_set_backend checks the variant when it is run.
    std::string backend = name.substr(0, name.find(':'));
    if (std::find(names.all.begin(), names.all.end(), backend) != names.all.end()) return;
    std::string known = allow_auto ? "auto" : "";
    for (const std::string &n : names.all) known += (known.empty() ? "" : ", ") + n;
    throw usage_error(std::string(option) + ": no backend named '" + backend + "' in this build (" + known + ")");
}

}  // namespace gemm_cli
