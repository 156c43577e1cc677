// memory.hpp: which memory space a call's pointers live in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "gemm/gemm.h"
#include "problem.hpp"
#include "sparse_problem.hpp"
#include "transpose_problem.hpp"

namespace gemm {

// Where one pointer lives, as the CUDA driver says.
struct pointer_place {
    memory_space space = memory_space::host;
    int device = -1;           // the CUDA ordinal of device and managed memory
    bool page_locked = false;  // host memory page-locked (cudaMallocHost, cudaHostRegister)
    // The allocation ptr lies in, where the driver knows it (else 0 and 0).
    std::uintptr_t range_begin = 0;
    std::size_t range_bytes = 0;
};
using pointer_classifier = pointer_place (*)(const void *ptr);

// The CUDA stream this thread's calls run on (gemm_set_stream); nullptr = default stream.
void set_thread_stream(void *stream);
void *thread_stream();

// One copy of device or managed memory (on `device`) to host memory.
struct stream_read {
    void *host;
    const void *src;
    std::size_t bytes;
    int device;
};

// What a device runtime gives dispatch, which is compiled without it. CUDA's table is
// backends/cuda_common/cuda_services.cpp; every backend built on CUDA hands it over through
// backend::runtime_services() (backend.hpp), and dispatch takes the first the registry
// lists, once, the first time it asks (installed_device_services()). A build without CUDA
// has no such backend, so no table: every pointer is host memory, and a device-memory
// problem can be neither measured nor given an epilogue pass (the build has no backend that
// would compute one either), and no runtime's options are listed. Every member that touches a device makes `device`
// current for its duration and restores the caller's device. Copies are synchronous.
struct device_services {
    // Where a pointer lives: host (pageable or page-locked), device or managed memory, and
    // the allocation it lies in. Every call's operands are classified by it.
    pointer_classifier classify;
    // Device memory, streams and event timing, for the measurement engine.
    gemm_status_t (*allocate)(int device, std::size_t bytes, void **out);
    void (*release)(int device, void *ptr);
    gemm_status_t (*copy)(int device, void *dst, const void *src, std::size_t bytes);
    gemm_status_t (*create_stream)(int device, void **stream);
    void (*destroy_stream)(int device, void *stream);
    // Device time, in milliseconds, of what work(state) enqueues on stream, between two
    // events; waits for it to finish.
    gemm_status_t (*time_on_stream)(int device, void *stream, gemm_status_t (*work)(void *state), void *state,
                                    double *milliseconds);
    std::size_t (*cache_bytes)(int device);  // last-level (L2) cache
    // Page-locks host memory (cudaHostRegister), so that copies of it run at the link's
    // speed; unpin undoes it.
    gemm_status_t (*pin)(void *host, std::size_t bytes);
    void (*unpin)(void *host);
    // p's epilogue applied to C (device or managed memory) by a kernel on p.stream, on
    // p.device (dispatch/epilogue_pass.hpp).
    gemm_status_t (*epilogue_pass)(const problem &p);
    // Copies each read's bytes of device or managed memory (on its device) to host memory in
    // the order of stream's work (what was enqueued there before runs first), all enqueued
    // before one wait. NOT_SUPPORTED, with the reason, while the stream is being captured into
    // a CUDA graph, where the copies would only be recorded.
    gemm_status_t (*read_in_stream_order)(void *stream, const stream_read *reads, int count);
    // The GEMM_* variables of the code the runtime's backends share (CUDA's offload engine),
    // declared beside it; settings lists and checks them under options_owner, after the
    // library's own.
    std::vector<backend_option> (*options)();
    const char *options_owner;
};

// The device runtime's table, nullptr in a build without one. Constant once asked.
const device_services *installed_device_services();

// The allocations the classifications of one call met, most recent first: a pointer inside
// one of them is classified without asking the driver (a batch's matrices mostly lie in a few
// allocations; a caching allocator carves a plain call's small operands from one). Never kept
// across calls: between them memory may be freed and allocated again as another kind at the
// same address.
class allocation_memo {
public:
    // The space of ptr if it lies in a remembered allocation.
    bool find(const void *ptr, pointer_place &place) const;
    void add(const pointer_place &place);  // nothing where the driver gave no range

private:
    static constexpr int capacity = 8;
    pointer_place seen_[capacity];
    int count_ = 0;
};

// One of a batch's arrays of matrix pointers (its A, B or C), and what the host reads of it.
struct pointer_array {
    const void *const *array = nullptr;     // as the caller passed it; nullptr: none
    const void *const *readable = nullptr;  // array itself, or copy.data()
    std::vector<const void *> copy;
};

// Each present array of `count` (the batch's `matrices` pointers) as the host can read it:
// in host memory the array itself; in device or managed memory, where cuBLAS's batched calls
// take such arrays, a copy read on the thread's stream, after the work enqueued there before:
// every such copy is enqueued, then waited for once, so that every matrix can be checked
// before anything runs. A refusal names the array it concerns (`failed`, its index) and gives
// the reason in `why`, a phrase about that array ("lies in device memory of device 0 ...").
gemm_status_t host_readable_arrays(pointer_array *arrays, int count, std::size_t matrices, int &failed,
                                   std::string &why);

// Sets p.space, p.device and p.page_locked from the operands the call reads or writes (A and B
// only where it multiplies, none where C is empty). Mixed spaces, or two devices, are an error.
// memo: the batch call's allocations, consulted and extended (nullptr: the call's own, so
// that operands in one allocation cost one question to the driver).
gemm_status_t classify_memory(problem &p, allocation_memo *memo = nullptr);

// The same for a transpose: t.space, t.device and t.stream from A (where alpha != 0) and B.
gemm_status_t classify_memory(transpose_problem &t);

// The same for a sparse product: s.space, s.device and s.stream from A's arrays and B (where the
// product is read) and C.
gemm_status_t classify_memory(sparse_problem &s);

}  // namespace gemm
