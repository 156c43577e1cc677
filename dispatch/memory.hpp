// memory.hpp: which memory space a call's pointers live in.
#pragma once

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

// Sets p.space and p.device from A, B and C. Mixed spaces, or two devices, are an error.
gemm_status_t classify_memory(problem &p);

}  // namespace gemm
