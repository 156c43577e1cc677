// mbarrier_tma.cuh: the PTX the Hopper kernel's pipeline is made of (sm_90a): shared-memory
// barriers (mbarrier) and the bulk tensor copy (TMA) of one box into shared memory.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <cstdint>

namespace gemm::cuda_tiled::hopper {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ inline uint32_t shared_address(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ inline void barrier_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

__device__ inline void barrier_expect_bytes(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
}

__device__ inline void barrier_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}

// Waits until the barrier's phase of this parity has completed.
__device__ inline void barrier_wait(uint64_t *bar, unsigned parity) {
    const uint32_t address = shared_address(bar);
    uint32_t done = 0;
    do {
        asm volatile("{\n"
                     ".reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(address), "r"(parity)
                     : "memory");
    } while (!done);
}

// One box of the tensor map at coordinates (x, y) of one matrix (x along the stored
// contiguous dimension) into shared memory; the barrier counts its bytes. Elements past the
// matrix arrive as zeros.
__device__ inline void copy_box(void *dst, const CUtensorMap *map, uint64_t *bar, int x, int y, int matrix) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
            shared_address(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(matrix), "r"(shared_address(bar))
        : "memory");
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace gemm::cuda_tiled::hopper
