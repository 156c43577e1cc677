// host_rates.hpp: this machine's host-memory rates from the tune cache (gemm_tune_cache_rates),
// as gemm info and gemm tune show them.
#pragma once

#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "json_writer.hpp"

namespace gemm_cli {

// The rates, f32's first; error says why when they could not be read (then none).
std::vector<gemm_host_rates_t> host_rates_read(std::string &error);

// "f32"
const char *host_rates_type(const gemm_host_rates_t &r);

// "host cpu_omp 251 GFLOP/s + 6.2 us a call, cblas 48.3 GFLOP/s + 11 us a call; gpu cublas
// 41234 GFLOP/s, 6.912 GB/s, 120.5 us a call; measured in 212 ms" (no gpu part without one)
std::string host_rates_text(const gemm_host_rates_t &r);

// "host_rates": [{"type": "f32", "host_backend": ..., "gpu_fixed_us": ..., "hosts": [{"backend":
// ..., "gflops": ..., "fixed_us": ...}, ...], "measured_ms": ...}, ...]
void host_rates_json(json_writer &w, const std::vector<gemm_host_rates_t> &rates);

}  // namespace gemm_cli
