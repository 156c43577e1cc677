// memory.hpp: which memory space a call's pointers live in.
#pragma once

#include <cstddef>

#include "gemm/gemm.h"
#include "problem.hpp"

namespace gemm {

// Where one pointer lives; device is the CUDA ordinal for device and managed memory.
using pointer_classifier = memory_space (*)(const void *ptr, int *device);

// Installed by a GPU backend when it registers; without one every pointer is host memory.
void set_pointer_classifier(pointer_classifier classify);

// The CUDA stream this thread's calls run on (gemm_set_stream); nullptr = default stream.
void set_thread_stream(void *stream);
void *thread_stream();

// Device memory, streams and event timing, installed with the CUDA backends so that the
// measurement engine can time device-pointer problems without depending on CUDA. Every call makes `device`
// current for its duration and restores the caller's device. Copies are synchronous.
struct device_services {
    gemm_status_t (*allocate)(int device, std::size_t bytes, void **out);
    void (*release)(int device, void *ptr);
    gemm_status_t (*copy)(int device, void *dst, const void *src, std::size_t bytes);
    gemm_status_t (*create_stream)(int device, void **stream);
    void (*destroy_stream)(int device, void *stream);
    // Device time, in milliseconds, of what work(state) enqueues on stream, between two
    // events; waits for it to finish.
    gemm_status_t (*time_on_stream)(int device, void *stream, gemm_status_t (*work)(void *state),
                                    void *state, double *milliseconds);
    std::size_t (*cache_bytes)(int device);  // last-level (L2) cache
    // Page-locks host memory (cudaHostRegister), so that copies of it run at the link's
    // speed; unpin undoes it.
    gemm_status_t (*pin)(void *host, std::size_t bytes);
    void (*unpin)(void *host);
};

void set_device_services(const device_services *services);
const device_services *installed_device_services();  // nullptr without a GPU build

// Sets p.space and p.device from A, B and C. Mixed spaces, or two devices, are an error.
gemm_status_t classify_memory(problem &p);

}  // namespace gemm
