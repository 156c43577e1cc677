// run_on_device.hpp: a problem run on the GPU, whatever memory its pointers are in: device
// and managed problems on the caller's stream, host problems staged through the context's
// buffers. What every CUDA backend's run() calls:
//
//     gemm_status_t run(const problem &p, std::string_view v, run_report &ctx) override {
//         return cuda::run_on_device(p, ctx, [&](const problem &dp, cudaStream_t s) {
//             ... enqueue work for dp on s; return a gemm_status_t ...
//         });
//     }
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// The problem a host-pointer call becomes once staged, with null pointers: packed operands
// (see run_on_device). Device and managed problems are returned unchanged. Backends that
// plan by shape (cuBLASLt heuristics, variant lists) plan on this.
problem staged_shape(const problem &p);

// What a backend enqueues: compute dp (device or managed pointers) on `stream`, asynchronously,
// returning a status (set_error on failure). dp.device is current.
using launch_fn = gemm_status_t (*)(void *state, const problem &dp, cudaStream_t stream);

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, void *state);

// Runs p on the GPU through launch(dp, stream):
//  - device or managed p: cudaSetDevice(p.device), launch(p, p.stream) (the caller's stream
//    from gemm_set_stream; asynchronous), then the caller's current device is restored.
//  - host p: runs on the caller's current device. A and B (only when k > 0 and alpha != 0)
//    and C (only when beta != 0) go to the context's device buffer: from page-locked memory
//    (cudaMallocHost, cudaHostRegister) by DMA straight from the caller's matrices, from
//    pageable memory packed on the CPU into the context's pinned buffer first; launched on the
//    context's staging stream; C comes back the same way (to page-locked memory by DMA into
//    its m x n elements, else through the pinned buffer and unpacked), the stream
//    synchronized. Only the m x n elements of each C are written: padding between columns
//    never is. Packing rewrites the
//    layout: ld = rows rounded up to 16 bytes, batch stride = ld * cols rounded up to 256
//    bytes, or 0 when the caller's stride was 0 (one shared matrix) or batch == 1; pointers
//    not staged are null. ctx.note = "staged host pointers (H2D x MB, D2H y MB; ...)", the
//    end saying whether every operand was page-locked.
// F: gemm_status_t (const problem &dp, cudaStream_t stream).
template <class F> gemm_status_t run_on_device(const problem &p, run_report &ctx, F &&launch) {
    using fn_type = std::remove_reference_t<F>;
    return run_on_device(
        p, ctx,
        [](void *state, const problem &dp, cudaStream_t stream) -> gemm_status_t {
            return (*static_cast<fn_type *>(state))(dp, stream);
        },
        const_cast<void *>(static_cast<const void *>(&launch)));
}

}  // namespace gemm::cuda
