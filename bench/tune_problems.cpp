// tune_problems.cpp: problems from arguments, --shapes files and the built-in suites.
#include "tune_problems.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <utility>

#include "cli_args.hpp"
#include "gemm_case.hpp"
#include "problem_args.hpp"

namespace gemm_cli {
namespace {

// LLM layers: hidden size 4096, feed-forward 11008 (Llama-7B); m = tokens in flight.
constexpr int64_t llm_hidden = 4096, llm_ffn = 11008;
constexpr int64_t llm_tokens[] = {1, 2, 4, 8, 16};

tune_problem make(gemm_dtype_t t, gemm_layout_t layout, op_pair ops, gemm_shape shape, int device) {
    tune_problem p;
    p.ab_type = p.c_type = t;
    p.layout = layout;
    p.op_a = ops.first;
    p.op_b = ops.second;
    p.shape = shape;
    p.device = device;
    return p;
}

// A row-major problem of a call beside GEMM, tuned by its key.
tune_problem side(gemm_dtype_t t, const char *call, gemm_op_t op_a, gemm_op_t op_b, gemm_shape shape, int density,
                  int device) {
    tune_problem p = make(t, GEMM_ROW_MAJOR, {op_a, op_b}, shape, device);
    p.call = call;
    p.density = density;
    p.key = tune_problem_side_key(p);
    return p;
}

// ---- --shapes files ----

// "name=value" with name as expected; returns value.
std::string field_value(const std::string &word, const std::string &name) {
    std::string prefix = name + "=";
    if (word.rfind(prefix, 0) != 0) throw usage_error("expected " + name + "=..., found '" + word + "'");
    return word.substr(prefix.size());
}

bool choose(const std::string &value, const std::string &name, const char *when_true, const char *when_false) {
    if (value == when_true) return true;
    if (value == when_false) return false;
    throw usage_error(name + "=" + value + " must be " + name + "=" + when_true + " or " + name + "=" + when_false);
}

gemm_op_t key_op(char c, const std::string &ops) {
    if (c == 'N') return GEMM_OP_N;
    if (c == 'T') return GEMM_OP_T;
    if (c == 'C') return GEMM_OP_C;
    throw usage_error("ops '" + ops + "' must be two of N, T and C");
}

// Whether every leading dimension and batch stride of p's tight layout (its canonical,
// column-major one) is a multiple of 16 bytes. Unsigned products wrap modulo 2^64, which 16
// divides, so huge shapes stay exact.
bool tight_layout_aligned(const tune_problem &p) {
    auto multiple = [](uint64_t elements, std::size_t size) { return elements * uint64_t(size) % 16 == 0; };
    const std::size_t ab = dtype_size(p.ab_type), cs = dtype_size(p.c_type);
    auto rows_cols = [](gemm_op_t op, int64_t r, int64_t c) {
        return std::pair<uint64_t, uint64_t>(uint64_t(std::max<int64_t>(1, op == GEMM_OP_N ? r : c)),
                                             uint64_t(std::max<int64_t>(1, op == GEMM_OP_N ? c : r)));
    };
    auto [a_rows, a_cols] = rows_cols(p.op_a, p.shape.m, p.shape.k);
    auto [b_rows, b_cols] = rows_cols(p.op_b, p.shape.k, p.shape.n);
    const uint64_t c_rows = uint64_t(std::max<int64_t>(1, p.shape.m)),
                   c_cols = uint64_t(std::max<int64_t>(1, p.shape.n));
    bool lds = multiple(a_rows, ab) && multiple(b_rows, ab) && multiple(c_rows, cs);
    bool strides = p.batch <= 1 ||
                   (multiple(a_rows * a_cols, ab) && multiple(b_rows * b_cols, ab) && multiple(c_rows * c_cols, cs));
    return lds && strides;
}

// A GEMM_RECORD line: "f32 f32 NN 1024 1024 1024 batch=1 ld=tight align=16 space=host beta=0",
// the canonical (column-major) class the library looked up, and for a call with an epilogue
// a twelfth field, "epilogue=gelu+bias(rows)+aux", for a pointer-array batch "form=pointers"
// (the library checks their words), then for a block-scaled FP8 class "scales=1x128,128x128",
// and last, for an f32 class of TF32 math, "math=tf32".
tune_problem parse_key_line(const std::vector<std::string> &words, int device) {
    // A key of TF32 math is tuned by its key: the library refuses it unless this process allows
    // TF32 (GEMM_ALLOW_TF32=1), as the key was recorded. Block scales, which a request cannot
    // describe, alike.
    std::vector<std::string> w = words, trailing;  // the trailing words, in the line's order
    if (!w.empty() && w.back() == "math=tf32") {
        trailing.push_back(w.back());
        w.pop_back();
    }
    if (!w.empty() && w.back().rfind("scales=", 0) == 0) {
        trailing.insert(trailing.begin(), w.back());
        w.pop_back();
    }
    if (w.size() != 11 && w.size() != 12)
        throw usage_error("a tune-key line has 11 fields (12 with an epilogue or form=pointers, one more with "
                          "scales= and with math=tf32), this one " +
                          std::to_string(words.size()));
    tune_problem p;
    p.ab_type = dtype_parse(w[0], "dtype of A and B");
    p.c_type = dtype_parse(w[1], "dtype of C");
    p.layout = GEMM_COL_MAJOR;
    if (w[2].size() != 2) throw usage_error("ops '" + w[2] + "' must be two of N, T and C");
    p.op_a = key_op(w[2][0], w[2]);
    p.op_b = key_op(w[2][1], w[2]);
    p.shape = {parse_int(w[3], "m", 0), parse_int(w[4], "n", 0), parse_int(w[5], "k", 0)};
    p.batch = parse_int(field_value(w[6], "batch"), "batch", 1);
    // -1: the least padding that keeps the alignment class the line names.
    p.ld_padding = choose(field_value(w[7], "ld"), "ld", "padded", "tight") ? -1 : 0;
    bool align_elem = choose(field_value(w[8], "align"), "align", "elem", "16");
    std::string space = field_value(w[9], "space");
    if (space == "managed") throw usage_error("space=managed cannot be tuned here (host or device memory only)");
    p.device = choose(space, "space", "device", "host") ? device : -1;
    p.beta_zero = choose(field_value(w[10], "beta"), "beta", "0", "any");
    // A tight align=elem key whose own layout is unaligned was most likely recorded from calls
    // on aligned pointers (what cudaMalloc and malloc give): it is tuned on them, as those calls
    // run. Otherwise align=elem can only come from the pointers, which are placed one element
    // off. The library's online tuning follows the same rule (dispatch/tuner.cpp, class_of).
    p.misaligned = align_elem && (p.ld_padding != 0 || tight_layout_aligned(p));
    if (w.size() == 12) p.key_extra = field_value(w[11], w[11].rfind("form=", 0) == 0 ? "form" : "epilogue");
    for (const std::string &word : trailing)
        p.key_extra += (p.key_extra.empty() ? "" : " ") + (word == "math=tf32" ? "tf32" : word);
    if (w.size() == 12 || !trailing.empty())
        for (const std::string &word : words) p.key += (p.key.empty() ? "" : " ") + word;
    return p;
}

// "f32 row NT 128 4096 4096 [1]"
tune_problem parse_simple_line(const std::vector<std::string> &w) {
    if (w.size() != 6 && w.size() != 7)
        throw usage_error("expected DTYPE LAYOUT OPS M N K [BATCH], found " + std::to_string(w.size()) + " fields");
    gemm_shape shape{parse_int(w[3], "m", 1), parse_int(w[4], "n", 1), parse_int(w[5], "k", 1)};
    tune_problem p = make(dtype_parse(w[0], "dtype"), layout_parse(w[1], "layout"), ops_parse(w[2], "ops"), shape, -1);
    if (w.size() == 7) p.batch = parse_int(w[6], "batch", 1);
    return p;
}

bool is_side_call(const std::string &word) { return word == "omatcopy" || word == "spmm_csr" || word == "spmm_coo"; }

bool is_complex_type(gemm_dtype_t t) { return t == GEMM_C32 || t == GEMM_C64; }

// "host" or "device" (the last word of a simple line, host when absent).
int space_device(const std::string &word, int device) {
    if (word == "host") return -1;
    if (word == "device") return device;
    throw usage_error("'" + word + "' must be host or device");
}

// "1e-2" -> -2, as a key writes a density decade.
int key_density(const std::string &text) {
    if (text.rfind("1e", 0) != 0) throw usage_error("density=" + text + " must be 1e<decade>, as 1e-2");
    const int64_t decade = parse_int(text.substr(2), "density decade", -9);
    if (decade > 0) throw usage_error("density=" + text + " must lie between 1e-9 and 1e0");
    return int(decade);
}

// A density in (0, 1] as its decade, the nearest power of 10 (sparser than 1e-9 counts as 1e-9).
int density_decade(const std::string &text) {
    char *end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(d > 0 && d <= 1))
        throw usage_error("density '" + text + "' must be a number in (0, 1], as 0.01 for 1 %");
    return std::max(-9, int(std::lround(std::log10(d))));
}

// A line naming a call beside GEMM first: the simple form
//   omatcopy DTYPE LAYOUT OP ROWS COLS [host|device]
//   spmm_csr DTYPE LAYOUT OPS M N K DENSITY [host|device]
// or the call's tune-cache key ("omatcopy f32 T 64 48 space=host", "spmm_csr f32 col NN 4096
// 64 4096 density=1e-2 space=host beta=0"), read into the same problem.
tune_problem parse_side_line(const std::vector<std::string> &w, int device) {
    tune_problem p;
    p.call = w[0];
    const bool transpose = p.call == "omatcopy";
    const bool key_line =
        std::any_of(w.begin(), w.end(), [](const std::string &x) { return x.find('=') != std::string::npos; });
    const std::size_t fields = key_line ? (transpose ? 6 : 10) : (transpose ? 6 : 8);
    if (w.size() != fields && !(!key_line && w.size() == fields + 1))
        throw usage_error(transpose
                              ? (key_line ? "an omatcopy key has 6 fields: omatcopy DTYPE OP ROWS COLS space=..."
                                          : "expected omatcopy DTYPE LAYOUT OP ROWS COLS [host|device]")
                              : (key_line ? "a " + p.call + " key has 10 fields: " + p.call +
                                                " DTYPE LAYOUT OPS M N K density=1e<d> space=... beta=..."
                                          : "expected " + p.call + " DTYPE LAYOUT OPS M N K DENSITY [host|device]"));
    p.ab_type = p.c_type = dtype_parse(w[1], "dtype");
    std::size_t at = 2;
    if (transpose && key_line) p.layout = GEMM_COL_MAJOR;
    else p.layout = layout_parse(w[at++], "layout");
    const std::string &ops = w[at++];
    if (ops.size() != (transpose ? 1u : 2u))
        throw usage_error(transpose ? "op '" + ops + "' must be N, T or C"
                                    : "ops '" + ops + "' must be two of N, T and C");
    p.op_a = key_op(ops[0], ops);
    if (!transpose) p.op_b = key_op(ops[1], ops);
    if (transpose) {
        p.shape = {parse_int(w[at], "rows", 1), parse_int(w[at + 1], "cols", 1), 0};
        at += 2;
    } else {
        p.shape = {parse_int(w[at], "m", 1), parse_int(w[at + 1], "n", 1), parse_int(w[at + 2], "k", 0)};
        at += 3;
        p.density = key_line ? key_density(field_value(w[at], "density")) : density_decade(w[at]);
        ++at;
    }
    if (key_line) {
        std::string space = field_value(w[at++], "space");
        if (space == "managed") throw usage_error("space=managed cannot be tuned here (host or device memory only)");
        p.device = choose(space, "space", "device", "host") ? device : -1;
        if (!transpose) p.beta_zero = choose(field_value(w[at], "beta"), "beta", "0", "any");
    } else if (at < w.size()) {
        p.device = space_device(w[at], device);
    }
    p.key = tune_problem_side_key(p);
    return p;
}

bool is_dtype(const std::string &word) {
    try {
        dtype_parse(word, "");
        return true;
    } catch (const usage_error &) {
        return false;
    }
}

}  // namespace

bool tune_problem::operator==(const tune_problem &o) const {
    return ab_type == o.ab_type && c_type == o.c_type && layout == o.layout && op_a == o.op_a && op_b == o.op_b &&
           shape.m == o.shape.m && shape.n == o.shape.n && shape.k == o.shape.k && batch == o.batch &&
           ld_padding == o.ld_padding && misaligned == o.misaligned && beta_zero == o.beta_zero && device == o.device &&
           key_extra == o.key_extra && call == o.call && density == o.density;
}

// The tune-cache key of block-scaled calls of an argument problem (tight, aligned operands of
// one matrix), as the library writes it: the canonical (column-major) class, a row-major
// call's A and B swapped, and with them their block shapes; an FP8 op C is T.
std::string block_scaled_key(const tune_problem &p) {
    tune_problem c = p;
    const auto real_op = [](gemm_op_t op) { return op == GEMM_OP_C ? GEMM_OP_T : op; };
    const bool row = p.layout == GEMM_ROW_MAJOR;
    c.layout = GEMM_COL_MAJOR;
    c.op_a = real_op(row ? p.op_b : p.op_a);
    c.op_b = real_op(row ? p.op_a : p.op_b);
    if (row) std::swap(c.shape.m, c.shape.n);
    return std::string(gemm_dtype_name(c.ab_type)) + " " + gemm_dtype_name(c.c_type) + " " + op_letter(c.op_a) +
           op_letter(c.op_b) + " " + std::to_string(c.shape.m) + " " + std::to_string(c.shape.n) + " " +
           std::to_string(c.shape.k) + " batch=" + std::to_string(c.batch) +
           " ld=tight align=" + (tight_layout_aligned(c) ? "16" : "elem") +
           " space=" + (c.device >= 0 ? "device" : "host") + " beta=" + (c.beta_zero ? "0" : "any") +
           (row ? " scales=128x128,1x128" : " scales=1x128,128x128");
}

std::vector<tune_problem> tune_problems_from_arguments(const tune_options &o) {
    std::vector<tune_problem> list;
    for (dtype_pair t : o.dtypes)
        for (gemm_layout_t layout : o.layouts)
            for (const op_pair &ops : o.ops)
                for (const gemm_shape &shape : o.shapes) {
                    tune_problem p = make(t.ab, layout, ops, shape, o.device);
                    p.c_type = t.c;
                    p.batch = o.batch;
                    p.beta_zero = o.beta_zero;
                    if (o.scale == GEMM_SCALE_BLOCK) {
                        p.key = block_scaled_key(p);
                        p.key_extra = "scales=block";
                    }
                    list.push_back(p);
                }
    return list;
}

std::vector<tune_problem> tune_problems_from_file(const std::string &path, int device_for_device_lines) {
    std::ifstream in(path);
    if (!in) throw usage_error("--shapes: cannot read '" + path + "'");
    std::vector<tune_problem> list;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        std::size_t hash = line.find('#');
        std::istringstream words(hash == std::string::npos ? line : line.substr(0, hash));
        std::vector<std::string> w;
        for (std::string word; words >> word;) w.push_back(word);
        if (w.empty()) continue;
        try {
            bool key_line = w.size() > 1 && is_dtype(w[1]);
            if (is_side_call(w[0])) list.push_back(parse_side_line(w, device_for_device_lines));
            else list.push_back(key_line ? parse_key_line(w, device_for_device_lines) : parse_simple_line(w));
        } catch (const usage_error &e) {
            throw usage_error(path + ":" + std::to_string(number) + ": " + e.what());
        }
    }
    return list;
}

std::vector<tune_problem> tune_problems_suite(const std::string &name, const suite_scope &scope) {
    std::vector<tune_problem> list;
    const op_pair nn{GEMM_OP_N, GEMM_OP_N}, nt{GEMM_OP_N, GEMM_OP_T};
    auto add = [&list](gemm_dtype_t t, op_pair ops, gemm_shape s, int device) {
        list.push_back(make(t, GEMM_ROW_MAJOR, ops, s, device));
    };
    bool has_f32 = std::find(scope.host_dtypes.begin(), scope.host_dtypes.end(), GEMM_F32) != scope.host_dtypes.end();
    bool has_f64 = std::find(scope.host_dtypes.begin(), scope.host_dtypes.end(), GEMM_F64) != scope.host_dtypes.end();
    if (name == "quick") {
        if (has_f32)
            for (gemm_shape s :
                 {gemm_shape{128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {16, 1024, 1024}, {127, 257, 509}})
                add(GEMM_F32, nn, s, -1);
        if (has_f64) add(GEMM_F64, nn, {256, 256, 256}, -1);
        if (scope.device >= 0)
            for (gemm_dtype_t t : {GEMM_F32, GEMM_BF16}) add(t, nn, {1024, 1024, 1024}, scope.device);
        return list;
    }
    // default. Row-major NN for squares, odd and K-heavy shapes (and every default shape of
    // `gemm bench`); NT, the layout of a linear layer's weights, for the skinny LLM shapes.
    const gemm_shape odd[] = {{127, 257, 509}, {1000, 1000, 1000}, {1001, 999, 1003}};
    const gemm_shape k_heavy[] = {{64, 64, 65536}, {256, 256, 16384}, {4096, 4096, 64}, {4096, 4096, 16}};
    std::vector<gemm_shape> skinny;
    for (int64_t m : llm_tokens)
        for (gemm_shape s : {gemm_shape{m, llm_hidden, llm_hidden}, {m, llm_ffn, llm_hidden}, {m, llm_hidden, llm_ffn}})
            skinny.push_back(s);
    if (has_f32) {
        for (int64_t n = 128; n <= 4096; n *= 2) add(GEMM_F32, nn, {n, n, n}, -1);
        for (gemm_shape s : odd) add(GEMM_F32, nn, s, -1);
        add(GEMM_F32, nn, {16, llm_hidden, llm_hidden}, -1);
        for (gemm_shape s : skinny) add(GEMM_F32, nt, s, -1);
        for (gemm_shape s : k_heavy) add(GEMM_F32, nn, s, -1);
    }
    // f64 runs at half the f32 rate on the CPU: the sizes that matter most, up to 2048.
    if (has_f64) {
        for (int64_t n = 128; n <= 2048; n *= 2) add(GEMM_F64, nn, {n, n, n}, -1);
        add(GEMM_F64, nn, {1001, 999, 1003}, -1);
        add(GEMM_F64, nt, {16, llm_hidden, llm_hidden}, -1);
        add(GEMM_F64, nn, {64, 64, 65536}, -1);
    }
    // The calls beside GEMM, on the host and on the device: f32 transposes (op N, a copy, and
    // T) of 1024^2 and 4096^2, and a CSR product of 4096^2 at 1 % by 64 columns.
    std::vector<int> spaces;
    if (has_f32) spaces.push_back(-1);
    if (scope.device >= 0) spaces.push_back(scope.device);
    for (int device : spaces) {
        for (int64_t n : {int64_t(1024), int64_t(4096)})
            for (gemm_op_t op : {GEMM_OP_N, GEMM_OP_T})
                list.push_back(side(GEMM_F32, "omatcopy", op, GEMM_OP_N, {n, n, 0}, 0, device));
        list.push_back(side(GEMM_F32, "spmm_csr", GEMM_OP_N, GEMM_OP_N, {4096, 64, 4096}, -2, device));
    }
    if (scope.device >= 0)
        for (gemm_dtype_t t : {GEMM_F32, GEMM_BF16}) {
            for (int64_t n = 256; n <= 8192; n *= 2) add(t, nn, {n, n, n}, scope.device);
            for (gemm_shape s : odd) add(t, nn, s, scope.device);
            for (gemm_shape s : skinny) add(t, nt, s, scope.device);
            for (gemm_shape s : k_heavy) add(t, nn, s, scope.device);
        }
    return list;
}

void tune_problems_merge(std::vector<tune_problem> &list, const std::vector<tune_problem> &more) {
    for (const tune_problem &p : more)
        if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
}

std::string tune_problem_side_key(const tune_problem &p) {
    // The API makes a real type's C a T.
    auto letter = [&p](gemm_op_t op) {
        return op == GEMM_OP_N ? 'N' : op == GEMM_OP_C && is_complex_type(p.ab_type) ? 'C' : 'T';
    };
    const std::string space = p.device >= 0 ? "device" : "host";
    if (p.call == "omatcopy") {
        const bool row = p.layout == GEMM_ROW_MAJOR;
        return "omatcopy " + std::string(gemm_dtype_name(p.ab_type)) + " " + letter(p.op_a) + " " +
               std::to_string(row ? p.shape.n : p.shape.m) + " " + std::to_string(row ? p.shape.m : p.shape.n) +
               " space=" + space;
    }
    return p.call + " " + gemm_dtype_name(p.ab_type) + " " + layout_name(p.layout) + " " + letter(p.op_a) +
           letter(p.op_b) + " " + std::to_string(p.shape.m) + " " + std::to_string(p.shape.n) + " " +
           std::to_string(p.shape.k) + " density=1e" + std::to_string(p.density) + " space=" + space +
           " beta=" + (p.beta_zero ? "0" : "any");
}

std::string tune_problem_shape_text(const tune_problem &p) {
    if (p.call == "omatcopy") return std::to_string(p.shape.m) + "x" + std::to_string(p.shape.n);
    if (!p.call.empty())
        return std::to_string(p.shape.m) + "x" + std::to_string(p.shape.n) + "x" + std::to_string(p.shape.k) + " d=1e" +
               std::to_string(p.density);
    std::string text = std::to_string(p.shape.m) + "x" + std::to_string(p.shape.n) + "x" + std::to_string(p.shape.k);
    if (p.batch > 1) text += " x" + std::to_string(p.batch);
    return text;
}

std::string tune_problem_class_text(const tune_problem &p) {
    if (!p.call.empty()) {
        std::string text = p.call + " " + layout_name(p.layout) + " " + op_letter(p.op_a);
        if (p.call != "omatcopy") text += op_letter(p.op_b);
        if (!p.beta_zero) text += " beta!=0";
        return p.device >= 0 ? text + " dev" + std::to_string(p.device) : text;
    }
    std::string text = std::string(layout_name(p.layout)) + " " + op_letter(p.op_a) + op_letter(p.op_b);
    if (p.ld_padding > 0) text += " ld+" + std::to_string(p.ld_padding);
    if (p.ld_padding < 0) text += " ld+pad";
    if (p.misaligned) text += " misaligned";
    if (!p.beta_zero) text += " beta!=0";
    if (p.device >= 0) text += " dev" + std::to_string(p.device);
    if (!p.key_extra.empty()) text += " " + p.key_extra;
    return text;
}

std::string tune_problem_dtype_text(const tune_problem &p) {
    std::string text = gemm_dtype_name(p.ab_type);
    if (p.c_type != p.ab_type) text += std::string(">") + gemm_dtype_name(p.c_type);
    return text;
}

gemm_tune_request_t tune_problem_request(const tune_problem &p, double budget_ms, const char *backends) {
    gemm_tune_request_t r{};
    r.ab_type = p.ab_type;
    r.c_type = p.c_type;
    r.layout = p.layout;
    r.transa = p.op_a;
    r.transb = p.op_b;
    r.m = p.shape.m;
    r.n = p.shape.n;
    r.k = p.shape.k;
    r.batch_count = p.batch;
    r.ld_padding = p.ld_padding;
    r.misaligned = p.misaligned ? 1 : 0;
    r.beta_zero = p.beta_zero ? 1 : 0;
    r.device = p.device;
    r.budget_ms = budget_ms;
    r.backends = backends;
    return r;
}

}  // namespace gemm_cli
