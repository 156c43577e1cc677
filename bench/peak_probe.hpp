// peak_probe.hpp: short measurements of the machine's FMA throughput and memory bandwidth,
// the two ceilings of the roofline the benchmark compares against.
#pragma once

#include <cstdint>
#include <string>

namespace gemm_cli {

struct fma_peak {
    double f32_gflops = 0;  // also the ceiling for f16/bf16, which the CPU computes in f32
    double f64_gflops = 0;
    std::string isa;  // the code path that ran: "avx512f", "avx2+fma" or "portable"
    int threads = 0;
};

struct bandwidth_peak {
    double gbs = 0;  // best STREAM-style triad, counting 24 bytes per element
    int64_t bytes_per_array = 0;
    int threads = 0;
};

// All OpenMP threads; about a quarter of a second per dtype on an idle machine.
fma_peak peak_probe_fma();
// Three arrays of bytes_per_array each, so that the triad runs from memory, not cache.
bandwidth_peak peak_probe_bandwidth(int64_t bytes_per_array);

}  // namespace gemm_cli
