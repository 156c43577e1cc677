// cpu_info.hpp: what the benchmark needs to know about the host CPU.
#pragma once

#include <cstdint>
#include <string>

namespace gemm_cli {

struct cpu_info {
    std::string model;       // "model name" from /proc/cpuinfo, or "unknown"
    int logical_cpus = 1;    // online logical CPUs
    int openmp_threads = 1;  // what an OpenMP parallel region uses by default
    bool avx2 = false;
    bool fma = false;
    bool avx512f = false;
    int64_t last_level_cache_bytes = 0;  // largest cache level found; a default when unknown
    bool cache_size_known = false;
    double load_average = -1;  // 1-minute load from /proc/loadavg; < 0 when unreadable
};

cpu_info cpu_info_read();

// True when other processes keep a sizeable share of the CPUs busy, so timings and the
// measured peaks come out low and noisy.
bool cpu_info_busy(const cpu_info &cpu);

// "avx2 fma" style list of the ISA extensions found, or "none of avx2/fma/avx512f".
std::string cpu_info_isa_list(const cpu_info &cpu);

}  // namespace gemm_cli
