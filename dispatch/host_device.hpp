// host_device.hpp: GEMM_HOST_DEVICE, which marks a function that host and device code share
// (nvcc compiles it for both; a host compiler sees a plain function).
#pragma once

#if defined(__CUDACC__)
#define GEMM_HOST_DEVICE __host__ __device__
#else
#define GEMM_HOST_DEVICE
#endif
