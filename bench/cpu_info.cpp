// cpu_info.cpp: CPU model, thread counts, ISA extensions and last-level cache size.
#include "cpu_info.hpp"

#include <omp.h>
#include <unistd.h>

#include <fstream>

namespace gemm_cli {
namespace {

// 32 MiB: a generous last-level cache for current server CPUs, so that rotating buffers
// stay out of cache when the real size cannot be read.
constexpr int64_t default_cache_bytes = int64_t(32) << 20;

std::string read_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        std::size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        std::size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "unknown" : line.substr(start);
    }
    return "unknown";
}

// Sizes in sysfs read like "32768K" or "32M".
int64_t parse_cache_size(const std::string &text) {
    std::size_t used = 0;
    long long value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (...) {
        return 0;
    }
    std::string unit = text.substr(used);
    if (unit.rfind('K', 0) == 0) return int64_t(value) << 10;
    if (unit.rfind('M', 0) == 0) return int64_t(value) << 20;
    return int64_t(value);
}

// The largest cache that cpu0 reports; sysfs works where sysconf returns 0 (AMD, VMs).
int64_t read_largest_cache_bytes() {
    int64_t largest = 0;
    for (int index = 0; index < 8; ++index) {
        std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
        std::string text;
        if (!(in >> text)) continue;
        int64_t bytes = parse_cache_size(text);
        if (bytes > largest) largest = bytes;
    }
    if (largest == 0) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) largest = l3;
    }
    return largest;
}

double read_load_average() {
    std::ifstream in("/proc/loadavg");
    double load = -1;
    if (!(in >> load)) return -1;
    return load;
}

}  // namespace

cpu_info cpu_info_read() {
    cpu_info cpu;
    cpu.model = read_model_name();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu.logical_cpus = online > 0 ? int(online) : 1;
    cpu.openmp_threads = omp_get_max_threads();
    __builtin_cpu_init();
    cpu.avx2 = __builtin_cpu_supports("avx2");
    cpu.fma = __builtin_cpu_supports("fma");
    cpu.avx512f = __builtin_cpu_supports("avx512f");
    int64_t cache = read_largest_cache_bytes();
    cpu.cache_size_known = cache > 0;
    cpu.last_level_cache_bytes = cache > 0 ? cache : default_cache_bytes;
    cpu.load_average = read_load_average();
    return cpu;
}

bool cpu_info_busy(const cpu_info &cpu) { return cpu.load_average >= 0.5 * cpu.logical_cpus; }

std::string cpu_info_isa_list(const cpu_info &cpu) {
    std::string list;
    if (cpu.avx2) list += "avx2 ";
    if (cpu.fma) list += "fma ";
    if (cpu.avx512f) list += "avx512f ";
    if (list.empty()) return "none of avx2/fma/avx512f";
    list.pop_back();
    return list;
}

}  // namespace gemm_cli
