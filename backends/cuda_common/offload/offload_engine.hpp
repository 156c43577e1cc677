// offload_engine.hpp: runs a GEMM on host memory on a GPU by an offload_plan, the copies to
// the device, the GEMMs and the copies back overlapped on three streams. Plain C++: the GPU is
// reached through offload_device, which the library implements with CUDA
// (run_on_device.cpp) and the tests with a simulated device that runs each stream's work in a
// random interleaving (tests/test_offload.cpp).
//
// Per step of the plan:
//   in stream       the blocks the step loads, each after the slot's last reader is done
//   compute stream  waits for the in stream, then the step's GEMM
//   out stream      waits for the GEMM, then C back to the host
// Operands in page-locked memory (cudaMallocHost, cudaHostRegister) are copied by DMA between
// the caller's matrices and the slots. Pageable ones go through a ring of page-locked waves:
// the host copy threads pack a wave while the DMA engine drains the one before, and C's waves
// are unpacked into the caller's C as each arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

enum class offload_stream : int { in = 0, compute = 1, out = 2 };

// What the engine needs of a GPU. Every call returns a status (set_error on failure) and
// enqueues without waiting unless it says it waits.
class offload_device {
public:
    virtual ~offload_device() = default;
    // The device memory one call may hold, and whether host memory at ptr is page-locked.
    virtual std::size_t device_budget() = 0;
    virtual bool page_locked(const void *ptr) = 0;
    // Buffers kept across calls and grown on demand: device memory, page-locked host memory.
    virtual gemm_status_t device_memory(std::size_t bytes, char *&out) = 0;
    virtual gemm_status_t pinned_memory(std::size_t bytes, char *&out) = 0;
    // height columns of width bytes, pitch bytes apart on each side, host to device or back.
    virtual gemm_status_t copy(char *dst, std::size_t dst_pitch, const char *src, std::size_t src_pitch,
                               std::size_t width, std::size_t height, bool to_device, offload_stream s) = 0;
    // Events, numbered from 0 by the engine: record marks the stream's work so far; wait makes a
    // stream wait for the event's last record, host_wait the caller; passed asks without waiting.
    // An event never recorded has passed.
    virtual gemm_status_t record(int event, offload_stream s) = 0;
    virtual gemm_status_t wait(offload_stream s, int event) = 0;
    virtual gemm_status_t host_wait(int event) = 0;
    virtual gemm_status_t passed(int event, bool &out) = 0;
    // Whether gemm(dp) would run (NOT_SUPPORTED with the reason otherwise; nothing enqueued),
    // and the GEMM of dp (device pointers; dp.device and dp.stream filled in here) on the
    // compute stream.
    virtual gemm_status_t check(const problem &dp) = 0;
    virtual gemm_status_t gemm(const problem &dp) = 0;
    // Waits for the three streams, also after a failure; the first error it meets.
    virtual gemm_status_t finish() = 0;
};

struct offload_report {
    std::string plan;              // offload_plan::describe()
    std::size_t to_device = 0;     // bytes copied to the device (its slots)
    std::size_t to_host = 0;       // and back
    bool all_page_locked = false;  // every operand copied by DMA from the caller's memory
    // Where the calling thread's time went, in seconds: the whole call; packing pageable
    // operands into page-locked waves and unpacking C from them (on the host copy threads);
    // blocked on the GPU (a wave's copy not done yet, the streams at the end).
    double seconds = 0, packing = 0, unpacking = 0, waiting = 0;
};

// Computes p (host memory, no epilogue) on dev. Before anything is copied: the plan (within
// dev.device_budget(): GEMM_STATUS_ALLOC_FAILED when not even the smallest tiles fit) and
// dev.check on every shape of step it will run, so that a refusal leaves C untouched. A
// failure once copies have begun (an exception too, rethrown) waits for the streams and returns
// the first error; C may then be partly written.
// tile_m, tile_n (when > 0) replace the rule's tile sizes.
// gate, when given, is called once, before the first copy, with the status of the plan, the
// device memory and the checks; it returns whether to go on. With false, nothing is copied
// and the call returns GEMM_STATUS_NOT_SUPPORTED. (The shares of a spread call wait there for
// each other, so that one share's refusal leaves all of C untouched.)
using offload_gate = std::function<bool(gemm_status_t checked)>;
gemm_status_t run_offload(const problem &p, offload_device &dev, offload_report &report, int64_t tile_m = 0,
                          int64_t tile_n = 0, const offload_gate &gate = {});

}  // namespace gemm::cuda
