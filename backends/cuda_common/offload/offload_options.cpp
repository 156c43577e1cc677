// offload_options.cpp: the GEMM_OFFLOAD_* variables, declared, checked and read once. Settings
// has checked each before any call runs, so a value read here is valid.
#include "offload_options.hpp"

#include <string>

#include "dispatch/settings.hpp"

namespace gemm::cuda {
namespace {

// "MxN" (each from 1 to 2^20), or {0, 0} when unset or not valid.
std::pair<int64_t, int64_t> parse_tile_size(const std::string &v) {
    const std::size_t x = v.find('x');
    if (x == std::string::npos) return {0, 0};
    auto side = [](const std::string &digits) -> int64_t {
        if (digits.empty() || digits.size() > 7 || digits.find_first_not_of("0123456789") != std::string::npos)
            return 0;
        const int64_t value = std::stoll(digits);
        return value <= (int64_t(1) << 20) ? value : 0;
    };
    const int64_t m = side(v.substr(0, x)), n = side(v.substr(x + 1));
    if (m == 0 || n == 0) return {0, 0};
    return {m, n};
}

std::string invalid_tile_size(const std::string &v) {
    return parse_tile_size(v).first ? "" : "must be MxN, rows and columns of C from 1 to 1048576 (2048x1024)";
}

// A device named twice takes two shares: how spreading is tested on a machine of one GPU.
std::string invalid_device_list(const std::string &v) {
    return parse_devices(v, true) ? "" : "must be all or device ordinals separated by commas (0,1)";
}

}  // namespace

std::vector<backend_option> offload_options() {
    return {
        {"GEMM_OFFLOAD_MAX_DEVICE_BYTES", "bytes, or with K, M, G", "half of the GPU's free memory",
         "the device memory one thread's host-memory GEMMs may hold on a GPU (larger problems still run, out of core)",
         invalid_byte_count},
        {"GEMM_OFFLOAD_TILE", "MxN",
         "2048x2048 for a C of 8192^2 or more, else 1024x1024; no larger than C, smaller where memory is short",
         "rows and columns of C per tile of a host-memory GEMM on a GPU", invalid_tile_size},
        {"GEMM_OFFLOAD_DEVICES", "all, or ordinals 0,1",
         "all; under an MPI or Slurm launcher, the rank's own: local rank modulo the GPUs",
         "the GPUs a host-memory GEMM large enough is spread over, a share each (one named twice takes two); "
         "smaller ones run on the caller's current device when listed, else the first listed",
         invalid_device_list},
    };
}

uint64_t offload_byte_cap() {
    static const uint64_t cap = parse_byte_count(settings().option("GEMM_OFFLOAD_MAX_DEVICE_BYTES")).value_or(0);
    return cap;
}

std::pair<int64_t, int64_t> offload_tile() {
    static const std::pair<int64_t, int64_t> tile = parse_tile_size(settings().option("GEMM_OFFLOAD_TILE"));
    return tile;
}

const std::vector<int> &offload_devices_listed() {
    static const std::vector<int> list =
        parse_devices(settings().option("GEMM_OFFLOAD_DEVICES"), true).value_or(std::vector<int>{});
    return list;
}

}  // namespace gemm::cuda
