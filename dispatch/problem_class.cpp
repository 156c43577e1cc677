// problem_class.cpp: building, comparing, printing and parsing problem classes.
#include "problem_class.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <sstream>
#include <vector>

#include "settings.hpp"

namespace gemm {
namespace {

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

}  // namespace

bool problem_class::has_epilogue() const {
    return act != epilogue_act::none || axis != epilogue_axis::none || saves_aux;
}

bool problem_class::same_but_shape(const problem_class &o) const {
    return ab_type == o.ab_type && c_type == o.c_type && op_a == o.op_a && op_b == o.op_b && batch == o.batch &&
           padded_ld == o.padded_ld && aligned_16 == o.aligned_16 && space == o.space && beta_zero == o.beta_zero &&
           act == o.act && axis == o.axis && saves_aux == o.saves_aux && pointers == o.pointers && tf32 == o.tf32;
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
        uint64_t(k.pointers) << 25 | uint64_t(k.tf32) << 26);
    return h;
}

std::string problem_class::to_text() const {
    std::ostringstream out;
    out << dtype_name(ab_type) << ' ' << dtype_name(c_type) << ' ' << op_name(op_a) << op_name(op_b) << ' ' << m << ' '
        << n << ' ' << k << " batch=" << batch << " ld=" << (padded_ld ? "padded" : "tight")
        << " align=" << (aligned_16 ? "16" : "elem") << " space=" << memory_space_name(space)
        << " beta=" << (beta_zero ? "0" : "any");
    if (has_epilogue()) out << " epilogue=" << to_epilogue_name(*this);
    if (pointers) out << " form=pointers";
    if (tf32) out << " math=tf32";
    return out.str();
}

std::optional<problem_class> problem_class::parse(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::string ab, c, ops, batch_word, space_word;
    problem_class key;
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
    // only), then math=tf32 for an f32 key.
    std::string rest;
    bool more = bool(in >> rest);
    if (more && rest != "math=tf32") {
        if (rest == "form=pointers") key.pointers = true;
        else if (rest.rfind("epilogue=", 0) != 0 || !parse_epilogue(rest.substr(9), key)) return std::nullopt;
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
    return key;
}

}  // namespace gemm
