// machine_rates.hpp: the rates a GEMM on host memory runs at on this machine, measured once
// (each host backend's rate, bandwidth and per-call cost; with a GPU, the GPU's rate, and the
// link's rate and a fixed cost per call, for pageable and for page-locked operands, of the GPU
// backend that stages host operands), and the estimates auto's
// built-in rule makes from them for shapes that are not tuned: the side, and the host backend,
// whose estimate is shortest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "problem.hpp"

namespace gemm {

// Below this many operations a host-memory call stays on the host without a look at the
// GPU's rates: on host memory a GPU backend spends tens of microseconds (three copies, a
// launch and a wait) before any arithmetic, more than the host takes for 2^21 operations at
// 100 GFLOP/s.
constexpr double offload_min_flops = double(1 << 21);

// One host backend's time model: fixed_us + the longer of operations / gflops and operand
// bytes / gbs (a roofline: a product too thin to reuse its operands, such as a matrix times a
// vector, runs at the speed it streams them, which a rate fitted on squares does not show).
struct host_rate {
    std::string backend;
    double gflops = 0;
    double fixed_us = 0;  // per call, beyond the arithmetic (threads woken, packing set up)
    double gbs = 0;       // operand bytes per second (1e9) on a matrix times a vector; 0: no bound
};

// Puts host rates in the order dtype_rates::host keeps: the highest rate first.
void order_fastest_first(std::vector<host_rate> &host);

// One real type's rates (f32 stands for f16, bf16 and c32 as well, f64 for c64).
struct dtype_rates {
    std::vector<host_rate> host;  // every host backend timed (the reference aside), fastest first
    std::string gpu_backend;      // the device backend timed staging host operands; "" for none
    double gpu_gflops = 0;        // its rate on device memory
    double link_gbs = 0;          // operand bytes between host and device memory, per second (1e9)
    double gpu_fixed_us = 0;      // per call, beyond the traffic and the multiply-adds
    // The link and the fixed cost where every operand is page-locked (copied by DMA, without
    // the staging pageable memory needs); 0: not measured, the pageable figures stand for them.
    double locked_link_gbs = 0;
    double locked_fixed_us = 0;
    double measured_ms = 0;  // how long measuring them took (0: not said)

    bool has_gpu() const { return !gpu_backend.empty(); }
    bool has_locked_link() const { return has_gpu() && locked_link_gbs > 0; }
    const host_rate *fastest_host() const { return host.empty() ? nullptr : &host.front(); }
    const host_rate *host_of(const std::string &backend) const;
};

// The rates a tune cache holds for this machine, by real type.
struct machine_rates {
    std::optional<dtype_rates> f32, f64;

    // The rates that stand for t: f64's for f64 and c64, f32's for the other types.
    const dtype_rates *for_type(dtype t) const;
};

// The real type whose rates stand for t.
dtype rates_type(dtype t);

// A host backend's model from its times at two square sizes small_n < large_n: the rate from
// the difference, the fixed cost from what the small one leaves; where the larger took no
// longer (noise), the larger's whole time at no fixed cost. Nothing for times that are not
// positive or sizes out of order.
std::optional<host_rate> fit_host_rate(const std::string &backend, int64_t small_n, double small_us, int64_t large_n,
                                       double large_us);

// Sets h.gbs from h's time on a matrix-vector product p (m, n or k of 1): the bandwidth its
// operand bytes leave after the fixed cost, where that is slower than h's rate; else 0 (the
// rate bounds it). false, h unchanged, for a time that is not positive.
bool fit_host_bandwidth(host_rate &h, const problem &p, double us);

// The anchors the GPU's rates are fitted from, for one real type: the GPU backend's time on
// device memory at square size device_n, and on host memory at sizes small_n and large_n (all
// NN, beta 0, tight, column-major).
struct gpu_anchors {
    int64_t device_n = 0, small_n = 0, large_n = 0;
    double device_us = 0, small_us = 0, large_us = 0;
};

// Sets r's GPU part from the anchors of real type t (f32 or f64): the rate from the device
// time; the link and the fixed cost from what the two host-memory times leave after the
// device's multiply-adds (the link from their difference, the fixed cost from the rest;
// where the larger leaves no more than the smaller, all of the larger's remainder is
// traffic). false, r unchanged, for times that are not positive.
bool fit_gpu_rates(dtype t, const gpu_anchors &a, const std::string &gpu_backend, dtype_rates &r);

// Sets r's page-locked link and fixed cost from the GPU backend's times on page-locked host
// memory at a.small_n and a.large_n (a.device_* unused: r's GPU rate stands), as fit_gpu_rates
// fits the pageable ones. false, r unchanged, without r's GPU part or for times that are not
// positive.
bool fit_locked_link(dtype t, const gpu_anchors &a, dtype_rates &r);

// The bytes a GEMM on host memory moves to and from the device: A, B, C back, and C there
// too when beta != 0.
double host_traffic_bytes(const problem &p);

double host_estimate_us(const host_rate &h, const problem &p);
// Through the page-locked link where p's operands are all page-locked and r has it.
double gpu_estimate_us(const dtype_rates &r, const problem &p);

// The tune cache's line for t's rates:
//   rates f32 | host <backend> <rate> GFLOP/s <fixed> us <bandwidth> GB/s | host ...
//             | gpu <backend> <rate> GFLOP/s <link> GB/s <fixed> us | page-locked <link> GB/s <fixed> us
//             | measured <time> ms
// (one line; the gpu, page-locked and measured parts only where known), and its parse
// (nothing, with why, for a line that is not one). A host part without its " us" reads as a
// fixed cost of 0, without its " GB/s" as no bandwidth bound.
std::string rates_line(dtype t, const dtype_rates &r);
std::optional<std::pair<dtype, dtype_rates>> parse_rates_line(const std::string &line, std::string &why);

}  // namespace gemm
