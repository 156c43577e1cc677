// registry.cpp: the one place that lists backends. Adding one is one line here.
#include "registry.hpp"

#include "backends/cblas/cblas.hpp"
#include "backends/cpu_omp/cpu_omp.hpp"
#include "backends/cpu_ref/cpu_ref.hpp"
#if GEMM_WITH_CUDA
#include "backends/cublas/cublas.hpp"
#include "backends/cublaslt/cublaslt.hpp"
#include "backends/cublasxt/cublasxt.hpp"
#include "backends/cuda_naive/cuda_naive.hpp"
#include "backends/cuda_tiled/cuda_tiled.hpp"
#endif

namespace gemm {
namespace {

// Within each kind the order is the built-in rule's preference where no measured rates decide
// (policy.cpp): on the host our own cpu_omp first, whose build we know (a system BLAS may be a
// reference build, or misdetect the CPU: docs/TUNING.md); on the device cuBLAS first; the
// reference last.
std::vector<backend_ptr> build_registry() {
    std::vector<backend_ptr> all;
    all.push_back(make_cpu_omp_backend());
    all.push_back(make_cblas_backend());
    all.push_back(make_cpu_ref_backend());  // always built: the oracle
#if GEMM_WITH_CUDA
    all.push_back(make_cublas_backend());
    all.push_back(make_cublaslt_backend());
    all.push_back(make_cuda_tiled_backend());
    all.push_back(make_cuda_naive_backend());
    all.push_back(make_cublasxt_backend());  // host memory, one or more GPUs
#endif
    return all;
}

}  // namespace

const std::vector<backend *> &registered_backends() {
    // Owned here for the life of the process and never destroyed, so backends stay valid for
    // threads still running at exit (and leak checkers still see them referenced).
    static const std::vector<backend_ptr> *owned = new std::vector<backend_ptr>(build_registry());
    static const std::vector<backend *> *view = [] {
        auto *ptrs = new std::vector<backend *>;
        for (const backend_ptr &b : *owned) ptrs->push_back(b.get());
        return ptrs;
    }();
    return *view;
}

backend *find_backend(std::string_view name) {
    for (backend *b : registered_backends())
        if (b->name() == name) return b;
    return nullptr;
}

}  // namespace gemm
