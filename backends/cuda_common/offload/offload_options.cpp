// offload_options.cpp: the GEMM_OFFLOAD_* variables, read once. Settings has checked each
// before any call runs, so a value read here is valid.
#include "offload_options.hpp"

#include "dispatch/settings.hpp"

namespace gemm::cuda {

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
