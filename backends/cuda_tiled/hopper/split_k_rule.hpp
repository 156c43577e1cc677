// split_k_rule.hpp: when the Hopper kernels split k, into how many ranges, and whether the
// reduction drops the partial sums from L2.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled::hopper {

// The most ranges split k takes (a reduction reads that many partial sums per element).
constexpr int max_splits = 16;

// How many ranges of k to split dp into, for `tiles` tiles of C (all matrices) of bm x bn on
// `sms` SMs: the count whose busiest SM has the fewest k steps plus overheads to run (items
// are spread evenly over the SMs), the fewest such; only counts whose partial sums fit the
// workspace.
int k_splits(const problem &dp, int64_t tiles, int bm, int bn, int sms, int k_steps);

// Whether split_k_reduce drops dp's partial sums (`bytes` of them at `partial`) from L2 once
// read: where every 128-byte line lies whole in one column (m % 32 == 0, the sums 128-byte
// aligned), and where it pays: the sums 1 MiB or more, and the operands with the sums more than
// half of L2.
bool discards_partials(const problem &dp, std::size_t bytes, const void *partial);

}  // namespace gemm::cuda_tiled::hopper
