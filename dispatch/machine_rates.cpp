// machine_rates.cpp: fitting, estimating and the text form of the host-memory rates.
#include "machine_rates.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace gemm {
namespace {

double square_flops(int64_t n) { return 2.0 * double(n) * double(n) * double(n); }

// A square NN problem's traffic with beta 0: A and B there, C back.
double square_bytes(int64_t n, std::size_t element) { return 3.0 * double(n) * double(n) * double(element); }

bool positive(double x) { return std::isfinite(x) && x > 0; }

bool backend_name(const std::string &s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

// "<value> <unit>" from in.
bool read_value(std::istringstream &in, const char *unit, double &value) {
    std::string u;
    if (!(in >> value >> u)) return false;
    return u == unit && std::isfinite(value);
}

}  // namespace

const host_rate *dtype_rates::host_of(const std::string &backend) const {
    for (const host_rate &h : host)
        if (h.backend == backend) return &h;
    return nullptr;
}

void order_fastest_first(std::vector<host_rate> &host) {
    std::stable_sort(host.begin(), host.end(),
                     [](const host_rate &a, const host_rate &b) { return a.gflops > b.gflops; });
}

dtype rates_type(dtype t) { return t == dtype::f64 || t == dtype::c64 ? dtype::f64 : dtype::f32; }

const dtype_rates *machine_rates::for_type(dtype t) const {
    const std::optional<dtype_rates> &r = rates_type(t) == dtype::f64 ? f64 : f32;
    return r ? &*r : nullptr;
}

std::optional<host_rate> fit_host_rate(const std::string &backend, int64_t small_n, double small_us, int64_t large_n,
                                       double large_us) {
    if (!positive(small_us) || !positive(large_us) || small_n <= 0 || large_n <= small_n) return std::nullopt;
    const double small_flops = square_flops(small_n), large_flops = square_flops(large_n);
    host_rate h;
    h.backend = backend;
    if (large_us > small_us) {
        h.gflops = (large_flops - small_flops) / (large_us - small_us) / 1e3;
        h.fixed_us = std::max(0.0, small_us - small_flops / h.gflops / 1e3);
    } else {
        h.gflops = large_flops / large_us / 1e3;
    }
    if (!positive(h.gflops)) return std::nullopt;
    return h;
}

namespace {

// The link and fixed cost from a GPU backend's times on host memory at two square sizes, once
// the device's multiply-adds at `gflops` are taken off: the link from their difference, the
// fixed cost from the rest; where the larger leaves no more than the smaller (the small call
// all fixed cost and noise), all of the larger's remainder, or with none left its whole time,
// is charged to the link.
bool fit_link(std::size_t element, double gflops, const gpu_anchors &a, double &link, double &fixed) {
    if (!positive(gflops) || !positive(a.small_us) || !positive(a.large_us)) return false;
    if (a.small_n <= 0 || a.large_n <= a.small_n) return false;
    const double small_rest = a.small_us - square_flops(a.small_n) / gflops / 1e3;
    const double large_rest = a.large_us - square_flops(a.large_n) / gflops / 1e3;
    const double small_bytes = square_bytes(a.small_n, element), large_bytes = square_bytes(a.large_n, element);
    fixed = 0;
    if (large_rest > small_rest && small_rest > 0) {
        link = (large_bytes - small_bytes) / (large_rest - small_rest) / 1e3;
        fixed = std::max(0.0, small_rest - small_bytes / link / 1e3);
    } else {
        link = large_bytes / (large_rest > 0 ? large_rest : a.large_us) / 1e3;
    }
    return positive(link);
}

}  // namespace

bool fit_host_bandwidth(host_rate &h, const problem &p, double us) {
    if (!positive(us) || !positive(h.gflops)) return false;
    const double streaming_us = us - h.fixed_us;
    h.gbs = streaming_us > p.flops() / h.gflops / 1e3 ? host_traffic_bytes(p) / streaming_us / 1e3 : 0;
    return true;
}

bool fit_gpu_rates(dtype t, const gpu_anchors &a, const std::string &gpu_backend, dtype_rates &r) {
    if (!positive(a.device_us) || a.device_n <= 0) return false;
    const double gflops = square_flops(a.device_n) / a.device_us / 1e3;
    double link = 0, fixed = 0;
    if (!fit_link(dtype_size(t), gflops, a, link, fixed)) return false;
    r.gpu_backend = gpu_backend;
    r.gpu_gflops = gflops;
    r.link_gbs = link;
    r.gpu_fixed_us = fixed;
    return true;
}

bool fit_locked_link(dtype t, const gpu_anchors &a, dtype_rates &r) {
    double link = 0, fixed = 0;
    if (!r.has_gpu() || !fit_link(dtype_size(t), r.gpu_gflops, a, link, fixed)) return false;
    r.locked_link_gbs = link;
    r.locked_fixed_us = fixed;
    return true;
}

double host_traffic_bytes(const problem &p) {
    const double ab = double(dtype_size(p.ab_type)), c = double(dtype_size(p.c_type));
    const double c_trips = p.beta_zero() ? 1.0 : 2.0;
    return double(p.batch) *
           ((double(p.m) * double(p.k) + double(p.k) * double(p.n)) * ab + c_trips * double(p.m) * double(p.n) * c);
}

double host_estimate_us(const host_rate &h, const problem &p) {
    const double arithmetic_us = p.flops() / h.gflops / 1e3;
    const double streaming_us = h.gbs > 0 ? host_traffic_bytes(p) / h.gbs / 1e3 : 0;
    return h.fixed_us + std::max(arithmetic_us, streaming_us);
}

double gpu_estimate_us(const dtype_rates &r, const problem &p) {
    const bool locked = p.page_locked && r.has_locked_link();
    const double link = locked ? r.locked_link_gbs : r.link_gbs, fixed = locked ? r.locked_fixed_us : r.gpu_fixed_us;
    return fixed + host_traffic_bytes(p) / link / 1e3 + p.flops() / r.gpu_gflops / 1e3;
}

std::string rates_line(dtype t, const dtype_rates &r) {
    std::string line = fmt::format("rates {}", dtype_name(t));
    for (const host_rate &h : r.host)
        line += fmt::format(" | host {} {:.6g} GFLOP/s {:.6g} us {:.6g} GB/s", h.backend, h.gflops, h.fixed_us, h.gbs);
    if (r.has_gpu())
        line += fmt::format(" | gpu {} {:.6g} GFLOP/s {:.6g} GB/s {:.6g} us", r.gpu_backend, r.gpu_gflops, r.link_gbs,
                            r.gpu_fixed_us);
    if (r.has_locked_link())
        line += fmt::format(" | page-locked {:.6g} GB/s {:.6g} us", r.locked_link_gbs, r.locked_fixed_us);
    if (r.measured_ms > 0) line += fmt::format(" | measured {:.6g} ms", r.measured_ms);
    return line;
}

namespace {

// One " host <backend> <x> GFLOP/s [<x> us [<x> GB/s]]" part.
bool parse_host_part(std::istringstream &in, host_rate &h) {
    std::string word, extra;
    if (!(in >> word >> h.backend) || word != "host" || !read_value(in, "GFLOP/s", h.gflops)) return false;
    if (in >> std::ws; !in.eof() && !read_value(in, "us", h.fixed_us)) return false;
    if (in >> std::ws; !in.eof() && !read_value(in, "GB/s", h.gbs)) return false;
    return !(in >> extra) && backend_name(h.backend);
}

// One " page-locked <x> GB/s <x> us" part.
bool parse_locked_part(std::istringstream &in, dtype_rates &r) {
    std::string word, extra;
    return (in >> word) && word == "page-locked" && read_value(in, "GB/s", r.locked_link_gbs) &&
           read_value(in, "us", r.locked_fixed_us) && !(in >> extra);
}

// One " gpu <backend> <x> GFLOP/s <x> GB/s <x> us" part.
bool parse_gpu_part(std::istringstream &in, dtype_rates &r) {
    std::string word, extra;
    return (in >> word >> r.gpu_backend) && word == "gpu" && read_value(in, "GFLOP/s", r.gpu_gflops) &&
           read_value(in, "GB/s", r.link_gbs) && read_value(in, "us", r.gpu_fixed_us) && !(in >> extra) &&
           backend_name(r.gpu_backend);
}

bool first_word_is(const std::string &part, const char *word) {
    std::istringstream in(part);
    std::string w;
    return (in >> w) && w == word;
}

}  // namespace

std::optional<std::pair<dtype, dtype_rates>> parse_rates_line(const std::string &line, std::string &why) {
    std::vector<std::string> parts;
    std::stringstream whole(line);
    for (std::string part; std::getline(whole, part, '|');) parts.push_back(part);
    why = "not a rates line: rates <f32|f64> | host <backend> <x> GFLOP/s <x> us <x> GB/s [| host ...] "
          "[| gpu <backend> <x> GFLOP/s <x> GB/s <x> us [| page-locked <x> GB/s <x> us]] [| measured <x> ms]";
    if (parts.size() < 2) return std::nullopt;
    std::istringstream head(parts[0]);
    std::string word, type, extra;
    if (!(head >> word >> type) || word != "rates" || (head >> extra)) return std::nullopt;
    if (type != "f32" && type != "f64") return std::nullopt;
    dtype_rates r;
    bool locked_given = false;
    std::size_t i = 1;
    for (; i < parts.size() && first_word_is(parts[i], "host"); ++i) {
        std::istringstream in(parts[i]);
        host_rate h;
        if (!parse_host_part(in, h)) return std::nullopt;
        if (r.host_of(h.backend)) {
            why = "host backend " + h.backend + " named twice";
            return std::nullopt;
        }
        r.host.push_back(std::move(h));
    }
    if (r.host.empty()) return std::nullopt;
    if (i < parts.size() && first_word_is(parts[i], "gpu")) {
        std::istringstream in(parts[i++]);
        if (!parse_gpu_part(in, r)) return std::nullopt;
        if (i < parts.size() && first_word_is(parts[i], "page-locked")) {
            std::istringstream locked(parts[i++]);
            if (!parse_locked_part(locked, r)) return std::nullopt;
            locked_given = true;
        }
    }
    if (i < parts.size()) {
        std::istringstream in(parts[i++]);
        if (!(in >> word) || word != "measured" || !read_value(in, "ms", r.measured_ms) || (in >> extra))
            return std::nullopt;
    }
    if (i != parts.size()) return std::nullopt;
    bool valid = r.measured_ms >= 0;
    for (const host_rate &h : r.host) valid &= positive(h.gflops) && h.fixed_us >= 0 && h.gbs >= 0;
    if (r.has_gpu()) valid &= positive(r.gpu_gflops) && positive(r.link_gbs) && r.gpu_fixed_us >= 0;
    if (locked_given) valid &= positive(r.locked_link_gbs) && r.locked_fixed_us >= 0;
    if (!valid) {
        why = "rates must be positive numbers (costs and times at least 0)";
        return std::nullopt;
    }
    order_fastest_first(r.host);
    return std::pair{type == "f32" ? dtype::f32 : dtype::f64, r};
}

}  // namespace gemm
