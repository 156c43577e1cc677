// rates_probe.hpp: the one-time measurement of this machine's rates for GEMMs on host memory
// (machine_rates.hpp), made the first time a choice needs them and kept in the tune cache.
// It must stay within 0.5 s, CUDA's start included (docs/TUNING.md has what it takes).
#pragma once

#include "gemm/gemm.h"
#include "machine_rates.hpp"

namespace gemm {

// The host part of the rates of host-memory GEMMs of real type t (f32 or f64) on this
// machine, from brief timings of NN problems: every available host backend but the reference
// at 64^3 and 384^3 and on a 1024 x 1024 matrix times a vector (cpu_omp before any library,
// whose thread pool would still be spinning). Fails only when no host backend could be timed.
gemm_status_t measure_host_rates(dtype t, dtype_rates &out);

// Adds to r the GPU part: the first device backend that serves host memory, timed on device
// memory at 1024^3 and on pageable and page-locked host memory at 256^3 and 1024^3 (the
// page-locked link left out where page-locking fails); r's measured_ms grows by the time
// taken. r unchanged where no GPU could be timed.
gemm_status_t measure_gpu_rates(dtype t, dtype_rates &r);

// Whether measuring the rates of p's type could change auto's choice for p: more than one
// available host backend but the reference serves p, or one does and gpu_rates_matter(p).
bool rates_matter(const problem &p);

// Whether p could go to a GPU: a device backend is available and p has at least
// offload_min_flops operations. Only then is the GPU part measured, so that a program of small
// host calls never starts CUDA or loads cuBLAS.
bool gpu_rates_matter(const problem &p);

// The rates for host-memory calls of type t (rates_type(t)) in the process's tune cache, with
// the GPU part when with_gpu; what is missing is measured and stored first (the host part, the
// GPU part, or both), once per process, type and part (a failure is not tried again, and is
// logged). Callers that arrive while another thread measures wait for it. measured_ms, when
// not null, is set to the time this call spent measuring (0: it did not).
void ensure_rates(dtype t, bool with_gpu, double *measured_ms = nullptr);

}  // namespace gemm
