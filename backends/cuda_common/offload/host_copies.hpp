// host_copies.hpp: the process's pool of host threads for copies between pageable memory and
// page-locked staging. One thread copies pageable memory at a fraction of what the link takes,
// so the offload engine packs and unpacks with several (backends/cuda_common/NOTES.md,
// "Pageable operands").
#pragma once

#include <cstdint>

namespace gemm::cuda {

// Runs task(context, i) for every i in [0, count) on the calling thread and on the pool's
// threads that join, and returns when every task has returned. Tasks must not throw. Started
// on first use with up to 15 threads (fewer on a smaller machine: the caller is the sixteenth),
// joined at exit. Calls running at once (threads offloading together, the devices of a spread
// call) share the pool: an idle thread takes a task of the oldest call that has one left.
void run_host_copies(int64_t count, void (*task)(void *context, int64_t i), void *context);

// run_host_copies for a callable taking the task index.
template <class F> void run_host_copies(int64_t count, F &f) {
    run_host_copies(
        count, [](void *c, int64_t i) { (*static_cast<F *>(c))(i); }, &f);
}

// Threads a run_host_copies call may use, the caller included.
int host_copy_threads();

}  // namespace gemm::cuda
