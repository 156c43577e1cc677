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

#include "backends/cuda_common/offload/run_offloaded.hpp"
#include "dispatch/backend.hpp"

namespace gemm::cuda {

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state);

// The device a problem runs on: p.device for device and managed memory; for host memory the
// one its offload runs on when not shared out over several (host_problem_device): what
// backends plan on.
gemm_status_t device_of(const problem &p, int &device);

// Runs p on the GPU through launch(dp, stream):
//  - device or managed p: cudaSetDevice(p.device), launch(p, p.stream) (the caller's stream
//    from gemm_set_stream; asynchronous), then the caller's current device is restored.
//  - host p: run_offloaded (offload/run_offloaded.hpp), synchronous.
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
