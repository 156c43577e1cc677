// problem_class.cpp: building, comparing, printing and parsing problem classes.
#include "problem_class.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "settings.hpp"

namespace gemm {
namespace {

// -2 -> "1e-2"; 0 -> "1e0".
std::string fmt_decade(int decade) { return "1e" + std::to_string(decade); }

bool aligned(const void *ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

bool aligned(int64_t elements, std::size_t size) { return (uint64_t(elements) * size) % 16 == 0; }

std::optional<dtype> parse_dtype(const std::string &s) {
    for (dtype t : {dtype::f32, dtype::f64, dtype::f16, dtype::bf16, dtype::c32, dtype::c64, dtype::e4m3, dtype::e5m2})
        if (s == dtype_name(t)) return t;
    return std::nullopt;
}

std::optional<memory_space> parse_space(const std::string &s) {
    for (memory_space m : {memory_space::host, memory_space::device, memory_space::managed})
        if (s == memory_space_name(m)) return m;
    return std::nullopt;
}

// Reads "name=value" where value is one of two words.
bool parse_flag(std::istream &in, const char *name, const char *when_true, const char *when_false, bool &out) {
    std::string word;
    if (!(in >> word)) return false;
    std::string prefix = std::string(name) + "=";
    if (word.rfind(prefix, 0) != 0) return false;
    std::string value = word.substr(prefix.size());
    if (value == when_true) out = true;
    else if (value == when_false) out = false;
    else return false;
    return true;
}

// The key's epilogue as epilogue_name words it.
std::string to_epilogue_name(const problem_class &key) {
    epilogue_spec spec;
    spec.act = key.act;
    spec.axis = key.axis;
    int marker = 0;
    if (key.saves_aux) spec.aux = &marker;  // only its presence is named
    return epilogue_name(spec);
}

// "gelu+bias(rows)+aux", "relu_backward+bias_grad(columns)", "none+bias(rows)": what
// epilogue_name prints, read back. Nothing is accepted that it would not print.
bool parse_epilogue(const std::string &text, problem_class &key) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t plus; (plus = text.find('+', start)) != std::string::npos; start = plus + 1)
        parts.push_back(text.substr(start, plus - start));
    parts.push_back(text.substr(start));
    static const char *const acts[] = {"none", "relu", "gelu", "relu_backward", "gelu_backward"};
    bool found = false;
    for (int a = 0; a < 5 && !found; ++a)
        if (parts[0] == acts[a]) key.act = epilogue_act(a), found = true;
    if (!found) return false;
    epilogue_spec spec;
    spec.act = key.act;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::string bias = spec.backward() ? "bias_grad(" : "bias(";
        if (parts[i] == bias + "rows)" || parts[i] == bias + "columns)")
            key.axis = parts[i] == bias + "rows)" ? epilogue_axis::rows : epilogue_axis::columns;
        else if (parts[i] == "aux") key.saves_aux = true;
        else return false;
    }
    return key.has_epilogue() && to_epilogue_name(key) == text;
}

// "1e-2" -> -2: a density decade as to_text writes it, within [density_floor, 0].
bool parse_density(const std::string &word, int &decade) {
    const std::string prefix = "density=1e";
    if (word.rfind(prefix, 0) != 0) return false;
    const std::string digits = word.substr(prefix.size());
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), decade);
    if (error != std::errc() || end != digits.data() + digits.size() || digits[0] == '+') return false;
    return decade >= density_floor && decade <= 0 && "density=" + fmt_decade(decade) == word;
}

// A block scale's extent in a key: outer indices x k.
const char *block_name(scale_kind kind) { return kind == scale_kind::vec128 ? "1x128" : "128x128"; }

// "scales=1x128,128x128" or "scales=128x128,1x128" (a block-scaled call's canonical A and B
// are one of each): what to_text writes, read back.
bool parse_scales(const std::string &word, problem_class &key) {
    if (word == "scales=1x128,128x128") key.a_scale = scale_kind::vec128, key.b_scale = scale_kind::blk128;
    else if (word == "scales=128x128,1x128") key.a_scale = scale_kind::blk128, key.b_scale = scale_kind::vec128;
    else return false;
    return true;
}

char op_letter(transpose t) { return t == transpose::n ? 'N' : t == transpose::t ? 'T' : 'C'; }

bool parse_op(char letter, dtype type, transpose &out) {
    if (letter != 'N' && letter != 'T' && !(letter == 'C' && is_complex(type))) return false;
    out = letter == 'N' ? transpose::n : letter == 'T' ? transpose::t : transpose::c;
    return true;
}

// The dtypes a call beside GEMM takes: a transpose every dtype of gemm_ex but FP8, a sparse
// product f32, f64, c32 and c64.
bool side_dtype(call_kind call, dtype t) {
    if (call == call_kind::omatcopy) return !is_fp8(t);
    return t == dtype::f32 || t == dtype::f64 || t == dtype::c32 || t == dtype::c64;
}

// "<dtype> <op> <rows> <cols> space=<space>" (omatcopy) or "<dtype> <row|col> <op_a><op_b>
// <m> <n> <k> density=1e<d> space=<space> beta=<0|any>" (spmm_csr, spmm_coo), after the call's
// name: what to_text writes, read back.
std::optional<problem_class> parse_side(call_kind call, std::istream &in) {
    problem_class key;
    key.call = call;
    std::string type_word, ops, space_word, rest;
    if (!(in >> type_word)) return std::nullopt;
    auto type = parse_dtype(type_word);
    if (!type || !side_dtype(call, *type)) return std::nullopt;
    key.ab_type = key.c_type = *type;
    if (call == call_kind::omatcopy) {
        if (!(in >> ops >> key.m >> key.n) || ops.size() != 1 || !parse_op(ops[0], *type, key.op_a))
            return std::nullopt;
    } else {
        std::string layout;
        if (!(in >> layout) || (layout != "row" && layout != "col")) return std::nullopt;
        key.row_major = layout == "row";
        if (!(in >> ops >> key.m >> key.n >> key.k) || ops.size() != 2 || !parse_op(ops[0], *type, key.op_a) ||
            !parse_op(ops[1], *type, key.op_b))
            return std::nullopt;
        if (!(in >> rest) || !parse_density(rest, key.density)) return std::nullopt;
    }
    if (!(in >> space_word) || space_word.rfind("space=", 0) != 0) return std::nullopt;
    auto space = parse_space(space_word.substr(6));
    if (!space) return std::nullopt;
    key.space = *space;
    if (call != call_kind::omatcopy && !parse_flag(in, "beta", "0", "any", key.beta_zero)) return std::nullopt;
    if (in >> rest) return std::nullopt;
    if (key.m < 0 || key.n < 0 || key.k < 0) return std::nullopt;
    return key;
}

}  // namespace

const char *call_kind_name(call_kind c) {
    switch (c) {
    case call_kind::gemm: return "gemm";
    case call_kind::omatcopy: return "omatcopy";
    case call_kind::spmm_csr: return "spmm_csr";
    case call_kind::spmm_coo: return "spmm_coo";
    }
    return "gemm";
}

bool problem_class::has_epilogue() const {
    return act != epilogue_act::none || axis != epilogue_axis::none || saves_aux;
}

bool problem_class::same_but_shape(const problem_class &o) const {
    return ab_type == o.ab_type && c_type == o.c_type && op_a == o.op_a && op_b == o.op_b && batch == o.batch &&
           padded_ld == o.padded_ld && aligned_16 == o.aligned_16 && space == o.space && beta_zero == o.beta_zero &&
           act == o.act && axis == o.axis && saves_aux == o.saves_aux && pointers == o.pointers && tf32 == o.tf32 &&
           call == o.call && row_major == o.row_major && density == o.density && a_scale == o.a_scale &&
           b_scale == o.b_scale;
}

bool problem_class::operator==(const problem_class &o) const {
    return same_but_shape(o) && m == o.m && n == o.n && k == o.k;
}

// Unsigned products wrap modulo 2^64, which 16 divides, so huge keys stay exact.
bool problem_class::tight_layout_aligned() const {
    auto multiple = [](uint64_t elements, std::size_t size) { return elements * uint64_t(size) % 16 == 0; };
    const std::size_t ab = dtype_size(ab_type), cs = dtype_size(c_type);
    const int64_t a_rows = std::max<int64_t>(1, op_a == transpose::n ? m : k);
    const int64_t a_cols = std::max<int64_t>(1, op_a == transpose::n ? k : m);
    const int64_t b_rows = std::max<int64_t>(1, op_b == transpose::n ? k : n);
    const int64_t b_cols = std::max<int64_t>(1, op_b == transpose::n ? n : k);
    const int64_t c_rows = std::max<int64_t>(1, m), c_cols = std::max<int64_t>(1, n);
    auto times = [](int64_t x, int64_t y) { return uint64_t(x) * uint64_t(y); };
    bool lds = multiple(uint64_t(a_rows), ab) && multiple(uint64_t(b_rows), ab) && multiple(uint64_t(c_rows), cs);
    bool strides = batch <= 1 || (multiple(times(a_rows, a_cols), ab) && multiple(times(b_rows, b_cols), ab) &&
                                  multiple(times(c_rows, c_cols), cs));
    return lds && strides;
}

std::size_t problem_class_hash::operator()(const problem_class &k) const {
    std::size_t h = std::hash<int64_t>()(k.m);
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(uint64_t(k.n));
    mix(uint64_t(k.k));
    mix(uint64_t(k.batch));
    mix(uint64_t(k.ab_type) | uint64_t(k.c_type) << 4 | uint64_t(k.op_a) << 8 | uint64_t(k.op_b) << 9 |
        uint64_t(k.padded_ld) << 10 | uint64_t(k.aligned_16) << 11 | uint64_t(k.space) << 12 |
        uint64_t(k.beta_zero) << 14 | uint64_t(k.act) << 16 | uint64_t(k.axis) << 20 | uint64_t(k.saves_aux) << 24 |
        uint64_t(k.pointers) << 25 | uint64_t(k.tf32) << 26 | uint64_t(k.call) << 27 | uint64_t(k.row_major) << 30 |
        uint64_t(int64_t(k.density) - density_floor) << 31 | uint64_t(k.a_scale) << 35 | uint64_t(k.b_scale) << 37);
    return h;
}

std::string problem_class::to_text() const {
    std::ostringstream out;
    if (call == call_kind::omatcopy) {
        out << "omatcopy " << dtype_name(ab_type) << ' ' << op_letter(op_a) << ' ' << m << ' ' << n
            << " space=" << memory_space_name(space);
        return out.str();
    }
    if (side_call()) {
        out << call_kind_name(call) << ' ' << dtype_name(ab_type) << ' ' << (row_major ? "row" : "col") << ' '
            << op_letter(op_a) << op_letter(op_b) << ' ' << m << ' ' << n << ' ' << k
            << " density=" << fmt_decade(density) << " space=" << memory_space_name(space)
            << " beta=" << (beta_zero ? "0" : "any");
        return out.str();
    }
    out << dtype_name(ab_type) << ' ' << dtype_name(c_type) << ' ' << op_name(op_a) << op_name(op_b) << ' ' << m << ' '
        << n << ' ' << k << " batch=" << batch << " ld=" << (padded_ld ? "padded" : "tight")
        << " align=" << (aligned_16 ? "16" : "elem") << " space=" << memory_space_name(space)
        << " beta=" << (beta_zero ? "0" : "any");
    if (has_epilogue()) out << " epilogue=" << to_epilogue_name(*this);
    if (pointers) out << " form=pointers";
    if (a_scale != scale_kind::none) out << " scales=" << block_name(a_scale) << ',' << block_name(b_scale);
    if (tf32) out << " math=tf32";
    return out.str();
}

std::optional<problem_class> problem_class::parse(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::string ab, c, ops, batch_word, space_word;
    problem_class key;
    // A call beside GEMM names itself first; a GEMM key starts with a dtype.
    for (call_kind call : {call_kind::omatcopy, call_kind::spmm_csr, call_kind::spmm_coo})
        if (text.substr(0, text.find(' ')) == call_kind_name(call)) {
            in >> ab;
            return parse_side(call, in);
        }
    if (!(in >> ab >> c >> ops >> key.m >> key.n >> key.k >> batch_word)) return std::nullopt;
    auto ab_type = parse_dtype(ab), c_type = parse_dtype(c);
    if (!ab_type || !c_type || ops.size() != 2 || batch_word.rfind("batch=", 0) != 0) return std::nullopt;
    key.ab_type = *ab_type;
    key.c_type = *c_type;
    for (int i = 0; i < 2; ++i) {
        if (ops[i] != 'N' && ops[i] != 'T' && !(ops[i] == 'C' && is_complex(key.ab_type))) return std::nullopt;
        (i == 0 ? key.op_a : key.op_b) = ops[i] == 'N' ? transpose::n : ops[i] == 'T' ? transpose::t : transpose::c;
    }
    std::string batch_text = batch_word.substr(6);
    auto [end, error] = std::from_chars(batch_text.data(), batch_text.data() + batch_text.size(), key.batch);
    if (error != std::errc() || end != batch_text.data() + batch_text.size()) return std::nullopt;
    if (!parse_flag(in, "ld", "padded", "tight", key.padded_ld)) return std::nullopt;
    if (!parse_flag(in, "align", "16", "elem", key.aligned_16)) return std::nullopt;
    if (!(in >> space_word) || space_word.rfind("space=", 0) != 0) return std::nullopt;
    auto space = parse_space(space_word.substr(6));
    if (!space) return std::nullopt;
    key.space = *space;
    if (!parse_flag(in, "beta", "0", "any", key.beta_zero)) return std::nullopt;
    // At most one of the trailing words epilogue= and form= (an epilogue is for plain calls
    // only), then scales= for an FP8 key, then math=tf32 for an f32 key.
    std::string rest;
    bool more = bool(in >> rest);
    if (more && rest != "math=tf32" && rest.rfind("scales=", 0) != 0) {
        if (rest == "form=pointers") key.pointers = true;
        else if (rest.rfind("epilogue=", 0) != 0 || !parse_epilogue(rest.substr(9), key)) return std::nullopt;
        more = bool(in >> rest);
    }
    if (more && rest.rfind("scales=", 0) == 0) {
        if (!is_fp8(key.ab_type) || !parse_scales(rest, key)) return std::nullopt;
        more = bool(in >> rest);
    }
    if (more) {
        if (rest != "math=tf32" || key.ab_type != dtype::f32) return std::nullopt;
        key.tf32 = true;
    }
    if (in >> rest) return std::nullopt;
    if (key.has_epilogue() && (is_complex(key.ab_type) || key.batch != 1)) return std::nullopt;
    if (key.m < 0 || key.n < 0 || key.k < 0 || key.batch < 1) return std::nullopt;
    return key;
}

problem_class class_of(const problem &p) {
    problem_class key;
    key.ab_type = p.ab_type;
    key.c_type = p.c_type;
    key.op_a = p.op_a;
    key.op_b = p.op_b;
    key.m = p.m;
    key.n = p.n;
    key.k = p.k;
    key.batch = p.batch;
    key.padded_ld = p.lda > std::max<int64_t>(1, p.a_rows()) || p.ldb > std::max<int64_t>(1, p.b_rows()) ||
                    p.ldc > std::max<int64_t>(1, p.m);
    std::size_t ab = dtype_size(p.ab_type), cs = dtype_size(p.c_type);
    key.aligned_16 = aligned(p.a) && aligned(p.b) && aligned(p.c) && aligned(p.lda, ab) && aligned(p.ldb, ab) &&
                     aligned(p.ldc, cs) &&
                     (p.batch == 1 || (aligned(p.stride_a, ab) && aligned(p.stride_b, ab) && aligned(p.stride_c, cs)));
    key.space = p.space;
    key.beta_zero = p.beta_zero();
    key.act = p.epilogue.act;
    key.axis = p.epilogue.axis;
    key.saves_aux = !p.epilogue.backward() && p.epilogue.aux;
    key.pointers = p.pointer_batch;
    key.tf32 = p.ab_type == dtype::f32 && settings().allow_tf32;
    if (p.scaling.blocks()) {
        key.a_scale = p.scaling.a.kind;
        key.b_scale = p.scaling.b.kind;
    }
    return key;
}

problem_class class_of(const transpose_problem &t) {
    problem_class key;
    key.call = call_kind::omatcopy;
    key.ab_type = key.c_type = t.type;
    key.op_a = t.op;
    key.m = t.rows;
    key.n = t.cols;
    key.space = t.space;
    return key;
}

// B's and C's layout and op_b come back from their element steps (sparse_problem): a matrix
// whose rows are contiguous (row step 1) is laid out column-major; op(B) is B itself (N) when
// it is laid out as C is. Where both steps of a matrix are 1 (one column), it counts as
// column-major, as its elements lie alike either way.
problem_class class_of(const sparse_problem &s) {
    problem_class key;
    key.call = s.format == sparse_format::csr ? call_kind::spmm_csr : call_kind::spmm_coo;
    key.ab_type = key.c_type = s.type;
    key.op_a = s.op_a;
    key.row_major = !s.c_rows_contiguous();
    key.op_b = s.b_conj ? transpose::c : s.b_rows_contiguous() == s.c_rows_contiguous() ? transpose::n : transpose::t;
    key.m = s.m;
    key.n = s.n;
    key.k = s.k;
    const double cells = double(s.rows) * double(s.cols);
    const double decade = s.nnz > 0 && cells > 0 ? std::round(std::log10(double(s.nnz) / cells)) : density_floor;
    key.density = int(std::clamp(decade, double(density_floor), 0.0));
    key.space = s.space;
    key.beta_zero = s.beta_zero();
    return key;
}

}  // namespace gemm
