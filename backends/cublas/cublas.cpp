// cublas.cpp: cuBLAS's 64-bit GEMM entry points on the canonical (column-major) problem.
#include "cublas.hpp"

#include <cuComplex.h>

#include <type_traits>

#include "backends/cuda_common/cuda_devices.hpp"
#include "backends/cuda_common/cuda_status.hpp"
#include "backends/cuda_common/cuda_types.hpp"
#include "backends/cuda_common/device_context.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/scale_c.hpp"

namespace gemm {
namespace {

using cuda::use_tf32;

// The Sgemm/Dgemm forms for f32 and f64 (the peers' baseline), Cgemm/Zgemm for complex,
// GemmEx for the rest.
// Batches use the strided-batched forms; a stride of 0 shares one matrix.
// Cgemm and Zgemm (and their strided batches) for the complex types.
template <class Z>
gemm_status_t enqueue_complex(cublasHandle_t h, const problem &p, run_report &ctx, Z alpha, Z beta) {
    cublasOperation_t ta = cuda::operation_of(p.op_a), tb = cuda::operation_of(p.op_b);
    auto a = static_cast<const Z *>(p.a);
    auto b = static_cast<const Z *>(p.b);
    auto c = static_cast<Z *>(p.c);
    constexpr bool single = std::is_same_v<Z, cuComplex>;
    const bool batched = p.batch > 1;
    const char *name = single ? (batched ? "cublasCgemmStridedBatched_64" : "cublasCgemm_64")
                              : (batched ? "cublasZgemmStridedBatched_64" : "cublasZgemm_64");
    ctx.variant_used = name;
    cublasStatus_t s;
    if constexpr (single)
        s = batched ? cublasCgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b, p.ldb,
                                                   p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublasCgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc);
    else
        s = batched ? cublasZgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b, p.ldb,
                                                   p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublasZgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc);
    return cuda::cublas_status(s, name);
}

gemm_status_t enqueue(cublasHandle_t h, const problem &p, run_report &ctx) {
    if (p.ab_type == dtype::c32)
        return enqueue_complex<cuComplex>(h, p, ctx, make_cuComplex(float(p.alpha), float(p.alpha_imag)),
                                          make_cuComplex(float(p.beta), float(p.beta_imag)));
    if (p.ab_type == dtype::c64)
        return enqueue_complex<cuDoubleComplex>(h, p, ctx, make_cuDoubleComplex(p.alpha, p.alpha_imag),
                                                make_cuDoubleComplex(p.beta, p.beta_imag));
    cublasOperation_t ta = cuda::operation_of(p.op_a), tb = cuda::operation_of(p.op_b);
    bool batched = p.batch > 1;
    if (p.ab_type == dtype::f64) {
        double alpha = p.alpha, beta = p.beta;
        auto a = static_cast<const double *>(p.a);
        auto b = static_cast<const double *>(p.b);
        auto c = static_cast<double *>(p.c);
        const char *name = batched ? "cublasDgemmStridedBatched_64" : "cublasDgemm_64";
        ctx.variant_used = name;
        return cuda::cublas_status(
            batched ? cublasDgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                   p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublasDgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc),
            name);
    }
    float alpha = float(p.alpha), beta = float(p.beta);
    if (p.ab_type == dtype::f32 && !use_tf32(p)) {
        auto a = static_cast<const float *>(p.a);
        auto b = static_cast<const float *>(p.b);
        auto c = static_cast<float *>(p.c);
        const char *name = batched ? "cublasSgemmStridedBatched_64" : "cublasSgemm_64";
        ctx.variant_used = name;
        return cuda::cublas_status(
            batched ? cublasSgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                   p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublasSgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc),
            name);
    }
    cublasComputeType_t compute = use_tf32(p) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cudaDataType_t ab = cuda::data_type_of(p.ab_type), ct = cuda::data_type_of(p.c_type);
    const char *name = batched ? (use_tf32(p) ? "cublasGemmStridedBatchedEx_64_tf32" : "cublasGemmStridedBatchedEx_64")
                               : (use_tf32(p) ? "cublasGemmEx_64_tf32" : "cublasGemmEx_64");
    ctx.variant_used = name;
    return cuda::cublas_status(
        batched ? cublasGemmStridedBatchedEx_64(h, ta, tb, p.m, p.n, p.k, &alpha, p.a, ab, p.lda, p.stride_a, p.b,
                                                ab, p.ldb, p.stride_b, &beta, p.c, ct, p.ldc, p.stride_c,
                                                p.batch, compute, CUBLAS_GEMM_DEFAULT)
                : cublasGemmEx_64(h, ta, tb, p.m, p.n, p.k, &alpha, p.a, ab, p.lda, p.b, ab, p.ldb, &beta, p.c,
                                  ct, p.ldc, compute, CUBLAS_GEMM_DEFAULT),
        name);
}

gemm_status_t launch(const problem &dp, cudaStream_t stream, run_report &ctx) {
    // k == 0 or alpha == 0: C = beta * C without touching A or B (which may be NULL).
    if (dp.scales_only()) {
        ctx.variant_used = "scale_c";
        return cuda::scale_c(dp, stream);
    }
    cuda::device_context *dc = nullptr;
    gemm_status_t s = cuda::context_for(dp.device, dc);
    cublasHandle_t h = nullptr;
    if (s == GEMM_STATUS_SUCCESS)
        s = dc->blas(stream, use_tf32(dp) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH, h);
    if (s == GEMM_STATUS_SUCCESS) s = enqueue(h, dp, ctx);
    return s;
}

class cublas_backend final : public backend {
public:
    std::string_view name() const override { return "cublas"; }
    backend_kind kind() const override { return backend_kind::device; }
    verdict probe() const override { return cuda::device_verdict(); }

    // Device and managed pointers run in place; host pointers are staged. The _64 entry
    // points take every size as int64_t, so there is no int range to refuse.
    verdict supports(const problem &p) const override {
        return cuda::library_supports_types(p);
    }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        return cuda::run_on_device(p, ctx, [&ctx](const problem &dp, cudaStream_t stream) {
            return launch(dp, stream, ctx);
        });
    }
};

}  // namespace

backend_ptr make_cublas_backend() {
    return std::make_unique<cublas_backend>();
}

}  // namespace gemm
