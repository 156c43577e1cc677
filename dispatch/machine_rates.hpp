// machine_rates.hpp: the rates a GEMM on host memory runs at on this machine, measured once
// (the fastest host backend and its GEMM rate; the GPU's, the link's and a fixed cost per call
// for the GPU backend that stages host operands), and the estimate auto's built-in rule makes
// from them for shapes that are not tuned: the GPU where the estimate says it is faster, else
// that host backend.
#pragma once

#include <optional>
#include <string>

#include "problem.hpp"

namespace gemm {

// Below this many operations a host-memory call stays on the host without a look at the
// rates: on host memory a GPU backend spends tens of microseconds (three copies, a launch and
// a wait) before any arithmetic, more than the host takes for 2^21 operations at 100 GFLOP/s.
constexpr double offload_min_flops = double(1 << 21);

// One real type's rates (f32 stands for f16, bf16 and c32 as well, f64 for c64).
struct dtype_rates {
    std::string host_backend;  // the fastest host backend (the reference aside) at the host anchor
    double host_gflops = 0;
    std::string gpu_backend;   // the preference order's first device backend, staging host operands
    double gpu_gflops = 0;     // its rate on device memory
    double link_gbs = 0;       // operand bytes between host and device memory, per second (1e9)
    double gpu_fixed_us = 0;   // per call, beyond the traffic and the multiply-adds
};

// The rates a tune cache holds for this machine, by real type.
struct machine_rates {
    std::optional<dtype_rates> f32, f64;

    // The rates that stand for t: f64's for f64 and c64, f32's for the other types.
    const dtype_rates *for_type(dtype t) const;
};

// The anchors the rates are fitted from, for one real type: the host backend's time at
// square size host_n, the GPU backend's on device memory at size device_n, and on host memory
// at sizes small_n and large_n (all NN, beta 0, tight, column-major).
struct rate_anchors {
    int64_t host_n = 0, device_n = 0, small_n = 0, large_n = 0;
    double host_us = 0, device_us = 0, small_us = 0, large_us = 0;
};

// The rates of the anchors' real type t (f32 or f64): rates from the host and device times;
// the link and the fixed cost from what the two host-memory times leave after the device's
// multiply-adds (the link from their difference, the fixed cost from the rest; where the
// larger leaves no more than the smaller, all of the larger's remainder is traffic). Nothing
// for times that are not positive.
std::optional<dtype_rates> fit_rates(dtype t, const rate_anchors &a, const std::string &host_backend,
                                     const std::string &gpu_backend);

// The bytes a GEMM on host memory moves to and from the device: A, B, C back, and C there
// too when beta != 0.
double host_traffic_bytes(const problem &p);

struct offload_estimate {
    double host_us = 0, gpu_us = 0;
};
offload_estimate estimate(const dtype_rates &r, const problem &p);

// The tune cache's line for t's rates, e.g.
//   rates f32 | host cblas 95.3 GFLOP/s | gpu cublas 41000 GFLOP/s 6.91 GB/s 120 us
// and its parse (nothing, with why, for a line that is not one).
std::string rates_line(dtype t, const dtype_rates &r);
std::optional<std::pair<dtype, dtype_rates>> parse_rates_line(const std::string &line, std::string &why);

}  // namespace gemm
