// run_on_device.cpp: device problems launched on the caller's stream; host problems handed to
// the offload engine (offload/run_offloaded.hpp).
#include "run_on_device.hpp"

#include "backends/cuda_common/runtime/device_context.hpp"

namespace gemm::cuda {

gemm_status_t device_of(const problem &p, int &device) {
    if (p.space == memory_space::host) return host_problem_device(device);
    device = p.device;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state) {
    if (p.space == memory_space::host) return run_offloaded(p, ctx, launch, check, state);
    device_guard guard;
    gemm_status_t s = guard.enter(p.device);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return launch(state, p, static_cast<cudaStream_t>(p.stream));
}

}  // namespace gemm::cuda
