// run_offloaded.hpp: a host-memory problem computed on CUDA devices by the offload engine, the
// host half of run_on_device (backends/cuda_common/run_on_device.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// What a backend enqueues: compute dp (device or managed pointers) on `stream`, asynchronously,
// returning a status (set_error on failure). dp.device is current.
using launch_fn = gemm_status_t (*)(void *state, const problem &dp, cudaStream_t stream);
// Whether launch would compute dp (GEMM_STATUS_NOT_SUPPORTED with the reason if not),
// enqueuing nothing: asked for every shape of step of a host problem before any is copied.
using check_fn = gemm_status_t (*)(void *state, const problem &dp);

// p (host memory) by the offload engine (offload_engine.hpp) on the devices of
// GEMM_OFFLOAD_DEVICES (every device by default): a problem large enough is cut into a share
// per device (offload_spread.hpp), each run by its own thread at once; any other runs on the
// caller's current device (when listed; else the first listed). On each device: C in tiles,
// each tile's A and B blocks copied into device slots (packed: leading dimensions rounded up
// to 16 bytes, matrices to 256, so every step's problem is aligned as offload_shape(p) is),
// launch(tile, stream) on the engine's compute stream while the next blocks arrive and the
// last tiles of C leave; synchronous. C is read only when beta != 0, and only the m x n
// elements of each C are written. ctx.note = "host pointers offloaded: <plan>; H2D x MB,
// D2H y MB, ...", or per device when spread.
gemm_status_t run_offloaded(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state);

// The device problem of a host problem's first step of offload (offload_plan::first_shape, with
// GEMM_OFFLOAD_TILE), null pointers: what backends plan by shape for host pointers (cuBLASLt's
// heuristic, variant refusals); every step is packed and aligned as it is. p itself when p is
// not on the host.
problem offload_shape(const problem &p);

// The device a host problem's offload runs on when not shared out over several: the caller's
// current device when GEMM_OFFLOAD_DEVICES lists it, else the first listed.
gemm_status_t host_problem_device(int &device);

}  // namespace gemm::cuda
