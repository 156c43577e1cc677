// run_on_device.hpp: a problem run on the GPU, whatever memory its pointers are in: device
// and managed problems on the caller's stream, host problems through the offload engine. What
// every CUDA backend's run() calls:
//
//     gemm_status_t run(const problem &p, std::string_view v, run_report &ctx) override {
//         return cuda::run_on_device(p, ctx, [&](const problem &dp, cudaStream_t stream) {
//             ... enqueue work for dp on s; return a gemm_status_t ...
//         });
//     }
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "dispatch/backend.hpp"
#include "offload_plan.hpp"

namespace gemm::cuda {

// What a backend enqueues: compute dp (device or managed pointers) on `stream`, asynchronously,
// returning a status (set_error on failure). dp.device is current.
using launch_fn = gemm_status_t (*)(void *state, const problem &dp, cudaStream_t stream);
// Whether launch would compute dp (GEMM_STATUS_NOT_SUPPORTED with the reason if not),
// enqueuing nothing: asked for every shape of step of a host problem before any is copied.
using check_fn = gemm_status_t (*)(void *state, const problem &dp);

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state);

// The device problem of a host problem's first step of offload (offload_plan::first_shape, with
// GEMM_OFFLOAD_TILE), null pointers: what backends plan by shape for host pointers (cuBLASLt's
// heuristic, variant refusals); every step is packed and aligned as it is. p itself when p is
// not on the host.
problem offload_shape(const problem &p);

// The device a problem runs on: p.device for device and managed memory; for host memory the
// one its offload runs on when not shared out over several (the caller's current device when
// GEMM_OFFLOAD_DEVICES lists it, else the first listed): what backends plan on.
gemm_status_t device_of(const problem &p, int &device);

// Runs p on the GPU through launch(dp, stream):
//  - device or managed p: cudaSetDevice(p.device), launch(p, p.stream) (the caller's stream
//    from gemm_set_stream; asynchronous), then the caller's current device is restored.
//  - host p: by the offload engine (offload_engine.hpp) on the devices of
//    GEMM_OFFLOAD_DEVICES (every device by default): a problem large enough is cut into a share
//    per device (offload_spread.hpp), each run by its own thread at once; any other runs on the
//    caller's current device (when listed; else the first listed). On each device: C in
//    tiles, each tile's A and B blocks copied into device slots (packed: leading dimensions
//    rounded up to 16 bytes, matrices to 256, so every step's problem is aligned as
//    offload_shape(p) is), launch(tile, stream) on the engine's compute stream while the next
//    blocks arrive and the last tiles of C leave; synchronous. C is read only when beta != 0,
//    and only the m x n elements of each C are written. ctx.note = "host pointers offloaded:
//    <plan>; H2D x MB, D2H y MB, ...", or per device when spread.
// F: gemm_status_t (const problem &dp, cudaStream_t stream). Check, when given:
// gemm_status_t (const problem &dp), for launches that can refuse a shape the whole problem
// did not (cuBLASLt's algorithms).
template <class F> gemm_status_t run_on_device(const problem &p, run_report &ctx, F &&launch) {
    using fn_type = std::remove_reference_t<F>;
    return run_on_device(
        p, ctx,
        [](void *state, const problem &dp, cudaStream_t stream) -> gemm_status_t {
            return (*static_cast<fn_type *>(state))(dp, stream);
        },
        nullptr, const_cast<void *>(static_cast<const void *>(&launch)));
}

template <class F, class Check>
gemm_status_t run_on_device(const problem &p, run_report &ctx, F &&launch, Check &&check) {
    struct both {
        std::remove_reference_t<F> &launch;
        std::remove_reference_t<Check> &check;
    } state{launch, check};
    return run_on_device(
        p, ctx,
        [](void *s, const problem &dp, cudaStream_t stream) -> gemm_status_t {
            return static_cast<both *>(s)->launch(dp, stream);
        },
        [](void *s, const problem &dp) -> gemm_status_t { return static_cast<both *>(s)->check(dp); }, &state);
}

}  // namespace gemm::cuda
