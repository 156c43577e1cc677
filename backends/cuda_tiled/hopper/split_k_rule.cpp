// split_k_rule.cpp: the Hopper kernels' split of k and the reduction's L2 discard, as rules of
// the problem's shape and the device.
#include "backends/cuda_tiled/hopper/split_k_rule.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"

namespace gemm::cuda_tiled::hopper {
namespace {

// A work item's cost beyond its k steps, in k steps: filling the pipeline and storing the
// tile (or its partial sums).
constexpr int64_t item_overhead_steps = 4;
// A split's own cost beyond its items, in k steps: the reduction kernel's launch and its wait
// for the GEMM (k_splits adds the partial sums written and read back, as the k steps whose
// operand bytes they equal on each SM). Without it, shapes whose tiles nearly fill the SMs
// split when the unsplit kernel is faster (NOTES.md, Split k).
constexpr int64_t split_overhead_steps = 8;

}  // namespace

int k_splits(const problem &dp, int64_t tiles, int bm, int bn, int sms, int k_steps) {
    const int64_t partial_bytes = dp.m * dp.n * dp.batch * int64_t(sizeof(float));
    const int64_t stage_bytes = int64_t(bm + bn) * 128;  // a k step's operands, any input type
    auto cost = [&](int64_t splits) {
        const int64_t steps = (k_steps + splits - 1) / splits;
        const int64_t items = tiles * ((k_steps + steps - 1) / steps);
        const int64_t busiest = (items + sms - 1) / sms * (steps + item_overhead_steps);
        if (splits == 1) return busiest;
        return busiest + split_overhead_steps + 2 * splits * partial_bytes / (int64_t(sms) * stage_bytes);
    };
    int best = 1;
    for (int splits = 2; splits <= std::min(k_steps, max_splits); ++splits) {
        if (splits * partial_bytes > int64_t(cuda::device_context::workspace_bytes)) break;
        if (cost(splits) < cost(best)) best = splits;
    }
    return best;
}

// Left dirty in L2, the partial sums go back to memory when later copies evict them, taking
// bandwidth from the next GEMM's operands. Under 1 MiB of sums the discard pass gains nothing;
// where the operands and the sums fit in L2, the next call may rewrite the lines before they
// leave it, so the bound is half of L2, not all of it (NOTES.md, L2: discarding partial
// sums).
bool discards_partials(const problem &dp, std::size_t bytes, const void *partial) {
    if (dp.m % 32 != 0 || reinterpret_cast<std::uintptr_t>(partial) % 128 != 0 || bytes < (std::size_t(1) << 20))
        return false;
    const std::size_t size = dtype_size(dp.ab_type), k = std::size_t(dp.k);
    const std::size_t operands = std::size_t(dp.m) * k * size * std::size_t(dp.stride_a == 0 ? 1 : dp.batch) +
                                 std::size_t(dp.n) * k * size * std::size_t(dp.stride_b == 0 ? 1 : dp.batch);
    int l2 = 0;
    if (cuda::l2_cache_bytes(dp.device, l2) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return operands + bytes > std::size_t(l2) / 2;
}

}  // namespace gemm::cuda_tiled::hopper
