// cublas_verdict.hpp: whether a backend built on cuBLAS can run here: a CUDA device, then the
// libraries loaded (cublas_loader/).
#pragma once

#include <string>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// The probe of a backend built on cuBLAS: device_verdict(), then cublas_loaded(), the details
// of both ("device 0: ...; CUDA runtime 13.1, driver 13.1, cuBLAS 13.1.0"). Without a device
// the libraries are not loaded.
verdict cublas_verdict();

// What the machine's fingerprint says of a backend built on cuBLAS (backend::identity): what
// cublas_verdict() would say where the cuBLAS the build was made against is the one loaded,
// without loading it ("unavailable" without a device).
std::string cublas_identity();

}  // namespace gemm::cuda
