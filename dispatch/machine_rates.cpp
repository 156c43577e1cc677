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

const dtype_rates *machine_rates::for_type(dtype t) const {
    const std::optional<dtype_rates> &r = t == dtype::f64 || t == dtype::c64 ? f64 : f32;
    return r ? &*r : nullptr;
}

std::optional<dtype_rates> fit_rates(dtype t, const rate_anchors &a, const std::string &host_backend,
                                     const std::string &gpu_backend) {
    if (!positive(a.host_us) || !positive(a.device_us) || !positive(a.small_us) || !positive(a.large_us))
        return std::nullopt;
    if (a.host_n <= 0 || a.device_n <= 0 || a.small_n <= 0 || a.large_n <= a.small_n) return std::nullopt;
    const std::size_t element = dtype_size(t);
    dtype_rates r;
    r.host_backend = host_backend;
    r.gpu_backend = gpu_backend;
    r.host_gflops = square_flops(a.host_n) / a.host_us / 1e3;
    r.gpu_gflops = square_flops(a.device_n) / a.device_us / 1e3;
    // What each host-memory time leaves after the device's multiply-adds: traffic and the
    // fixed cost.
    const double small_rest = a.small_us - square_flops(a.small_n) / r.gpu_gflops / 1e3;
    const double large_rest = a.large_us - square_flops(a.large_n) / r.gpu_gflops / 1e3;
    const double small_bytes = square_bytes(a.small_n, element), large_bytes = square_bytes(a.large_n, element);
    if (large_rest > small_rest && small_rest > 0) {
        r.link_gbs = (large_bytes - small_bytes) / (large_rest - small_rest) / 1e3;
        r.gpu_fixed_us = std::max(0.0, small_rest - small_bytes / r.link_gbs / 1e3);
    } else {
        // The small call was all fixed cost and noise: charge the large one's remainder (or,
        // with none left, its whole time) to the link.
        r.link_gbs = large_bytes / (large_rest > 0 ? large_rest : a.large_us) / 1e3;
        r.gpu_fixed_us = 0;
    }
    if (!positive(r.host_gflops) || !positive(r.gpu_gflops) || !positive(r.link_gbs)) return std::nullopt;
    return r;
}

double host_traffic_bytes(const problem &p) {
    const double ab = double(dtype_size(p.ab_type)), c = double(dtype_size(p.c_type));
    const double c_trips = p.beta_zero() ? 1.0 : 2.0;
    return double(p.batch) * ((double(p.m) * double(p.k) + double(p.k) * double(p.n)) * ab +
                              c_trips * double(p.m) * double(p.n) * c);
}

offload_estimate estimate(const dtype_rates &r, const problem &p) {
    const double flops = p.flops();
    offload_estimate e;
    e.host_us = flops / r.host_gflops / 1e3;
    e.gpu_us = r.gpu_fixed_us + host_traffic_bytes(p) / r.link_gbs / 1e3 + flops / r.gpu_gflops / 1e3;
    return e;
}

std::string rates_line(dtype t, const dtype_rates &r) {
    return fmt::format("rates {} | host {} {:.6g} GFLOP/s | gpu {} {:.6g} GFLOP/s {:.6g} GB/s {:.6g} us", dtype_name(t),
                       r.host_backend, r.host_gflops, r.gpu_backend, r.gpu_gflops, r.link_gbs, r.gpu_fixed_us);
}

std::optional<std::pair<dtype, dtype_rates>> parse_rates_line(const std::string &line, std::string &why) {
    std::vector<std::string> parts;
    std::stringstream whole(line);
    for (std::string part; std::getline(whole, part, '|');) parts.push_back(part);
    why = "not a rates line: rates <f32|f64> | host <backend> <x> GFLOP/s | gpu <backend> <x> GFLOP/s <x> GB/s <x> us";
    if (parts.size() != 3) return std::nullopt;
    std::istringstream head(parts[0]), host(parts[1]), gpu(parts[2]);
    std::string word, type, extra;
    if (!(head >> word >> type) || word != "rates" || (head >> extra)) return std::nullopt;
    if (type != "f32" && type != "f64") return std::nullopt;
    dtype_rates r;
    if (!(host >> word >> r.host_backend) || word != "host" || !read_value(host, "GFLOP/s", r.host_gflops) ||
        (host >> extra))
        return std::nullopt;
    if (!(gpu >> word >> r.gpu_backend) || word != "gpu" || !read_value(gpu, "GFLOP/s", r.gpu_gflops) ||
        !read_value(gpu, "GB/s", r.link_gbs) || !read_value(gpu, "us", r.gpu_fixed_us) || (gpu >> extra))
        return std::nullopt;
    if (!backend_name(r.host_backend) || !backend_name(r.gpu_backend)) return std::nullopt;
    if (!positive(r.host_gflops) || !positive(r.gpu_gflops) || !positive(r.link_gbs) || r.gpu_fixed_us < 0) {
        why = "rates must be positive numbers (the fixed cost at least 0)";
        return std::nullopt;
    }
    return std::pair{type == "f32" ? dtype::f32 : dtype::f64, r};
}

}  // namespace gemm
