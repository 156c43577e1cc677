// cublas.cpp: cuBLAS's 64-bit GEMM entry points on the canonical (column-major) problem.
#include "cublas.hpp"

#include <cuComplex.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/kernels/scale_c.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/runtime/cublas_verdict.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/cuda_types.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "backends/cuda_common/runtime/side_streams.hpp"

namespace gemm {
namespace {

using cuda::cublas;  // the loaded functions (cublas_library.hpp)
using cuda::use_tf32;

// The handle's math mode for p. Reductions stay in the compute type: by default cuBLAS may
// split k and add the partial sums in C's type, which for f16 and bf16 C is several roundings
// of partial sums larger than the result (beyond the tolerance rule's one rounding).
cublasMath_t math_for(const problem &p) {
    const int mode = (use_tf32(p) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) |
                     CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    return static_cast<cublasMath_t>(mode);
}

// The Sgemm/Dgemm forms for f32 and f64 (the peers' baseline), Cgemm/Zgemm for complex,
// GemmEx for the rest.
// Batches use the strided-batched forms; a stride of 0 shares one matrix.
// Cgemm and Zgemm (and their strided batches) for the complex types.
template <class Z> gemm_status_t enqueue_complex(cublasHandle_t h, const problem &p, run_report &ctx, Z alpha, Z beta) {
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
        s = batched ? cublas().cublasCgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                            p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublas().cublasCgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc);
    else
        s = batched ? cublas().cublasZgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                            p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublas().cublasZgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc);
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
            batched ? cublas().cublasDgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                            p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublas().cublasDgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc),
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
            batched ? cublas().cublasSgemmStridedBatched_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, p.stride_a, b,
                                                            p.ldb, p.stride_b, &beta, c, p.ldc, p.stride_c, p.batch)
                    : cublas().cublasSgemm_64(h, ta, tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc),
            name);
    }
    cublasComputeType_t compute = use_tf32(p) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cudaDataType_t ab = cuda::data_type_of(p.ab_type), ct = cuda::data_type_of(p.c_type);
    const char *name = batched ? (use_tf32(p) ? "cublasGemmStridedBatchedEx_64_tf32" : "cublasGemmStridedBatchedEx_64")
                               : (use_tf32(p) ? "cublasGemmEx_64_tf32" : "cublasGemmEx_64");
    ctx.variant_used = name;
    return cuda::cublas_status(
        batched ? cublas().cublasGemmStridedBatchedEx_64(h, ta, tb, p.m, p.n, p.k, &alpha, p.a, ab, p.lda, p.stride_a,
                                                         p.b, ab, p.ldb, p.stride_b, &beta, p.c, ct, p.ldc, p.stride_c,
                                                         p.batch, compute, CUBLAS_GEMM_DEFAULT)
                : cublas().cublasGemmEx_64(h, ta, tb, p.m, p.n, p.k, &alpha, p.a, ab, p.lda, p.b, ab, p.ldb, &beta, p.c,
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
    if (s == GEMM_STATUS_SUCCESS) s = dc->blas(stream, math_for(dp), h);
    if (s == GEMM_STATUS_SUCCESS) s = enqueue(h, dp, ctx);
    return s;
}

// The library's compute type for ab and the bytes of its scalars (cuBLAS's scale type).
cublasComputeType_t compute_of(dtype ab) {
    return ab == dtype::f64 || ab == dtype::c64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
}

// Appends the scalar (re, im) as the compute type of ab stores it.
void append_scalar(std::vector<unsigned char> &out, dtype ab, double re, double im) {
    auto put = [&out](const void *p, std::size_t n) {
        const unsigned char *b = static_cast<const unsigned char *>(p);
        out.insert(out.end(), b, b + n);
    };
    const float f[2] = {float(re), float(im)};
    const double d[2] = {re, im};
    switch (ab) {
    case dtype::f64: return put(d, sizeof(double));
    case dtype::c32: return put(f, 2 * sizeof(float));
    case dtype::c64: return put(d, 2 * sizeof(double));
    default: return put(f, sizeof(float));
    }
}

// The pointer arrays of batched calls, in a ring of page-locked host buffers mapped into the
// device's address space, which cuBLAS's kernels read directly: no copy enters the stream (a
// copy of the arrays would add more to every batch than a batch of small GEMMs takes on the
// GPU, and one from pageable memory also waits for the stream; docs/PERFORMANCE.md,
// "Pointer-array and grouped batches"). A
// slot is written again only once the call that read it has finished (its event); the host
// waits only when `slots` batches are still in flight.
struct pointer_uploads final : cuda::context_attachment {
    static constexpr int slots = 16;
    struct slot {
        void *host = nullptr, *device = nullptr;
        std::size_t bytes = 0;
        cudaEvent_t done = nullptr;
        bool in_flight = false;
    };
    slot ring[slots];
    int next = 0;

    ~pointer_uploads() override {
        for (slot &s : ring) {
            if (s.done) cudaEventDestroy(s.done);
            if (s.host) cudaFreeHost(s.host);
        }
    }

    // The a, b and c arrays of batch, back to back, at an address the device reads; call
    // finish(stream) once the work that reads them is enqueued.
    gemm_status_t upload(const problem_batch &batch, const void *const *&out) {
        slot &s = ring[next];
        const std::size_t total = batch.c.size(), bytes = 3 * total * sizeof(void *);
        gemm_status_t st = GEMM_STATUS_SUCCESS;
        if (s.in_flight) st = cuda::cuda_status(cudaEventSynchronize(s.done), "cudaEventSynchronize (pointer arrays)");
        s.in_flight = false;
        if (st == GEMM_STATUS_SUCCESS && !s.done)
            st = cuda::cuda_status(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming),
                                   "cudaEventCreateWithFlags");
        if (st == GEMM_STATUS_SUCCESS && s.bytes < bytes) st = grow(s, bytes);
        if (st != GEMM_STATUS_SUCCESS) return st;
        auto *host = static_cast<const void **>(s.host);
        std::copy(batch.a.begin(), batch.a.end(), host);
        std::copy(batch.b.begin(), batch.b.end(), host + total);
        std::copy(batch.c.begin(), batch.c.end(), host + 2 * total);
        out = static_cast<const void *const *>(s.device);
        return GEMM_STATUS_SUCCESS;
    }

    gemm_status_t finish(cudaStream_t stream) {
        slot &s = ring[next];
        next = (next + 1) % slots;
        s.in_flight = true;
        return cuda::cuda_status(cudaEventRecord(s.done, stream), "cudaEventRecord (pointer arrays)");
    }

private:
    // Plain (not write-combined) memory: the device then reads what the host wrote without
    // the host having to flush its write-combining buffers first.
    static gemm_status_t grow(slot &s, std::size_t bytes) {
        if (s.host) cudaFreeHost(s.host);
        s.host = s.device = nullptr;
        s.bytes = 0;
        std::size_t rounded = (bytes + 4095) / 4096 * 4096;
        gemm_status_t st =
            cuda::cuda_status(cudaHostAlloc(&s.host, rounded, cudaHostAllocMapped), "cudaHostAlloc (pointer arrays)");
        if (st == GEMM_STATUS_SUCCESS)
            st = cuda::cuda_status(cudaHostGetDevicePointer(&s.device, s.host, 0),
                                   "cudaHostGetDevicePointer (pointer arrays)");
        if (st == GEMM_STATUS_SUCCESS) s.bytes = rounded;
        return st;
    }
};

// The ways run_batch serves a batch of device matrices (variant ids, named for the tuner):
// one_call, cuBLAS's batched or grouped GEMM; streams, one cuBLAS call per matrix spread over
// the thread's side streams. "" takes the built-in rule of grouped_call::run.
constexpr std::string_view one_call_variant = "one_call";
constexpr std::string_view streams_variant = "streams";

// A batch whose matrices are device memory: in one call (cublasGemmBatchedEx_64 for a single
// group, cublasGemmGroupedBatchedEx_64 for several, reading the pointer arrays from the
// thread's pointer_uploads ring), or a call per matrix over side streams. NOT_SUPPORTED, with
// C untouched: host or managed memory (run one by one instead), a stream being captured
// (a replay would read the arrays from a slot reused since); for one call also a group that
// only scales C, TF32, and a batch cuBLAS's batched calls refuse (NOT_SUPPORTED or
// INVALID_VALUE from them, which launch nothing).
class grouped_call {
public:
    explicit grouped_call(const problem_batch &b) : b_(b) {}

    gemm_status_t run(std::string_view variant, run_report &ctx) {
        const problem &first = b_.shapes.front();
        if (first.space != memory_space::device) return GEMM_STATUS_NOT_SUPPORTED;
        cuda::device_guard guard;
        cuda::device_context *dc = nullptr;
        gemm_status_t s = guard.enter(first.device);
        if (s == GEMM_STATUS_SUCCESS) s = cuda::context_for(first.device, dc);
        if (s != GEMM_STATUS_SUCCESS) return s;
        cudaStream_t stream = static_cast<cudaStream_t>(first.stream);
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if ((s = cuda::cuda_status(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing")) !=
            GEMM_STATUS_SUCCESS)
            return s;
        if (capture != cudaStreamCaptureStatusNone) return GEMM_STATUS_NOT_SUPPORTED;
        if (variant.empty()) variant = builtin_way();
        if (variant == streams_variant) return on_side_streams(*dc, stream, ctx);
        for (const problem &g : b_.shapes)
            if (g.scales_only() || use_tf32(g)) return GEMM_STATUS_NOT_SUPPORTED;
        if (!vectors_aligned()) return GEMM_STATUS_NOT_SUPPORTED;
        cublasHandle_t h = nullptr;
        if ((s = dc->blas(stream, math_for(b_.shapes.front()), h)) != GEMM_STATUS_SUCCESS) return s;
        pointer_uploads &uploads = dc->attachment<pointer_uploads>();
        const void *const *arrays = nullptr;
        if ((s = uploads.upload(b_, arrays)) != GEMM_STATUS_SUCCESS) return s;
        s = call(h, arrays, b_.c.size(), ctx);
        gemm_status_t finished = uploads.finish(stream);
        return s != GEMM_STATUS_SUCCESS ? s : finished;
    }

private:
    // cuBLAS's grouped call is slower than a loop for f16/bf16 and far faster in f32, and the
    // side streams beat a loop through the dispatcher (docs/PERFORMANCE.md, "Pointer-array and
    // grouped batches", from bench/device/grouped_batch.cpp). Such loops are bound by cuBLAS's
    // host cost per call, which side streams do not share out: they can only help where
    // kernels, not calls, are the bottleneck. (Untuned, auto gives small f16/bf16 groups to
    // cuda_tiled, which serves them in one launch.)
    std::string_view builtin_way() const {
        const dtype ab = b_.shapes.front().ab_type;
        const bool half = ab == dtype::f16 || ab == dtype::bf16;
        return half && b_.shapes.size() > 1 ? streams_variant : one_call_variant;
    }

    // cuBLAS's batched and grouped calls read the matrices' pointers from the arrays on the
    // device, so unlike a plain call they cannot pick a kernel by the pointers' alignment. A
    // batch whose matrices are not all 16-byte aligned goes to plain calls instead. With CUDA
    // 13.1, cublasGemmBatchedEx called directly on batches of two f16 products, C in
    // f32, column-major T T with leading dimensions the matrices' own, every matrix 2 bytes
    // (4 for C) past 16 after bytes of NaN, gave NaN in nearly all of C: 8,183 of 8,192
    // elements at 64x64x64, 327,427 of 327,680 at 640x256x384, 1,047,750 of 1,048,576 at
    // 1024x512x256; none at 33x17x29, and none with the matrices aligned.
    bool vectors_aligned() const {
        auto aligned = [](const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
        return std::all_of(b_.a.begin(), b_.a.end(), aligned) && std::all_of(b_.b.begin(), b_.b.end(), aligned) &&
               std::all_of(b_.c.begin(), b_.c.end(), aligned);
    }

    // Each matrix on the side stream with the least work so far (flops), in order.
    gemm_status_t on_side_streams(cuda::device_context &dc, cudaStream_t stream, run_report &ctx) {
        cuda::side_streams &side = dc.attachment<cuda::side_streams>();
        if (gemm_status_t s = side.fork(stream); s != GEMM_STATUS_SUCCESS) return s;
        double load[cuda::side_streams::count] = {};
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        std::size_t item = 0;
        for (std::size_t g = 0; g < b_.shapes.size() && s == GEMM_STATUS_SUCCESS; ++g) {
            problem p = b_.shapes[g];
            for (int64_t i = 0; i < b_.sizes[g] && s == GEMM_STATUS_SUCCESS; ++i, ++item) {
                p.a = b_.a[item], p.b = b_.b[item], p.c = b_.c[item];
                const int lane = int(std::min_element(load, load + cuda::side_streams::count) - load);
                load[lane] += std::max(1.0, p.flops());
                s = on_lane(side, lane, p);
            }
        }
        gemm_status_t joined = side.join(stream);
        ctx.variant_used = streams_variant;
        ctx.note = fmt::format("{} matrices over {} streams", b_.c.size(), cuda::side_streams::count);
        return s != GEMM_STATUS_SUCCESS ? s : joined;
    }

    static gemm_status_t on_lane(cuda::side_streams &side, int lane, const problem &p) {
        if (p.scales_only()) return cuda::scale_c(p, side.stream(lane));
        cublasHandle_t h = nullptr;
        gemm_status_t s = side.blas(lane, math_for(p), h);
        run_report each;  // the batch's report names the way, not each matrix's entry point
        return s == GEMM_STATUS_SUCCESS ? enqueue(h, p, each) : s;
    }

    gemm_status_t call(cublasHandle_t h, const void *const *arrays, std::size_t total, run_report &ctx) {
        const problem &first = b_.shapes.front();
        std::vector<cublasOperation_t> ta, tb;
        std::vector<int64_t> m, n, k, lda, ldb, ldc;
        std::vector<unsigned char> alpha, beta;
        for (const problem &g : b_.shapes) {
            ta.push_back(cuda::operation_of(g.op_a));
            tb.push_back(cuda::operation_of(g.op_b));
            m.push_back(g.m), n.push_back(g.n), k.push_back(g.k);
            lda.push_back(g.lda), ldb.push_back(g.ldb), ldc.push_back(g.ldc);
            append_scalar(alpha, g.ab_type, g.alpha, g.alpha_imag);
            append_scalar(beta, g.ab_type, g.beta, g.beta_imag);
        }
        const cudaDataType_t ab = cuda::data_type_of(first.ab_type), ct = cuda::data_type_of(first.c_type);
        const cublasComputeType_t compute = compute_of(first.ab_type);
        const void *const *a = arrays, *const *b = arrays + total;
        void *const *c = const_cast<void *const *>(arrays + 2 * total);
        cublasStatus_t st;
        if (b_.shapes.size() == 1) {
            ctx.variant_used = "cublasGemmBatchedEx_64";
            st = cublas().cublasGemmBatchedEx_64(h, ta[0], tb[0], m[0], n[0], k[0], alpha.data(), a, ab, lda[0], b, ab,
                                                 ldb[0], beta.data(), c, ct, ldc[0], b_.sizes[0], compute,
                                                 CUBLAS_GEMM_DEFAULT);
        } else {
            ctx.variant_used = "cublasGemmGroupedBatchedEx_64";
            st = cublas().cublasGemmGroupedBatchedEx_64(
                h, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(), a, ab, lda.data(), b, ab,
                ldb.data(), beta.data(), c, ct, ldc.data(), int64_t(b_.shapes.size()), b_.sizes.data(), compute);
        }
        // Refused before launching anything: the dispatcher runs the matrices one by one.
        if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) return GEMM_STATUS_NOT_SUPPORTED;
        ctx.note = fmt::format("one call for {} matrices in {} group{}", total, b_.shapes.size(),
                               b_.shapes.size() == 1 ? "" : "s");
        return cuda::cublas_status(st, ctx.variant_used.data());
    }

    const problem_batch &b_;
};

// gemm_omatcopy through cuBLAS's geam: C = alpha * op(A) + beta * op(B) with beta = 0, and
// geam's B and C both ours (the in-place form geam documents for B, transb N, ldb = ldc), which
// beta = 0 leaves unread, so that nothing outside the call's operands is named. alpha = 0
// writes zeros with the library's own kernel, as GEMMs that only scale C do, A never read.
gemm_status_t enqueue_geam(const transpose_problem &t, cudaStream_t stream, run_report &ctx) {
    if (t.alpha_zero()) {
        problem zeros;  // C = 0 * C over B's window: scale_c writes it without reading
        zeros.m = t.b_rows();
        zeros.n = t.b_cols();
        zeros.c = t.b;
        zeros.ldc = t.ldb;
        zeros.ab_type = zeros.c_type = t.type;
        zeros.compute_type = compute_type_for(t.type);
        zeros.beta = 0.0;
        ctx.variant_used = "scale_c";
        return cuda::scale_c(zeros, stream);
    }
    cuda::device_context *dc = nullptr;
    cublasHandle_t h = nullptr;
    gemm_status_t s = cuda::context_for(t.device, dc);
    if (s == GEMM_STATUS_SUCCESS) s = dc->blas(stream, CUBLAS_DEFAULT_MATH, h);
    if (s != GEMM_STATUS_SUCCESS) return s;
    const cublasOperation_t ta = cuda::operation_of(t.op), tb = CUBLAS_OP_N;
    const int64_t m = t.b_rows(), n = t.b_cols();
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    switch (t.type) {
    case dtype::f32: {
        const float alpha = float(t.alpha), beta = 0;
        auto *b = static_cast<float *>(t.b);
        ctx.variant_used = "cublasSgeam_64";
        st = cublas().cublasSgeam_64(h, ta, tb, m, n, &alpha, static_cast<const float *>(t.a), t.lda, &beta, b, t.ldb,
                                     b, t.ldb);
        break;
    }
    case dtype::f64: {
        const double alpha = t.alpha, beta = 0;
        auto *b = static_cast<double *>(t.b);
        ctx.variant_used = "cublasDgeam_64";
        st = cublas().cublasDgeam_64(h, ta, tb, m, n, &alpha, static_cast<const double *>(t.a), t.lda, &beta, b, t.ldb,
                                     b, t.ldb);
        break;
    }
    case dtype::c32: {
        const cuComplex alpha = make_cuComplex(float(t.alpha), float(t.alpha_imag)), beta = make_cuComplex(0, 0);
        auto *b = static_cast<cuComplex *>(t.b);
        ctx.variant_used = "cublasCgeam_64";
        st = cublas().cublasCgeam_64(h, ta, tb, m, n, &alpha, static_cast<const cuComplex *>(t.a), t.lda, &beta, b,
                                     t.ldb, b, t.ldb);
        break;
    }
    case dtype::c64: {
        const cuDoubleComplex alpha = make_cuDoubleComplex(t.alpha, t.alpha_imag), beta = make_cuDoubleComplex(0, 0);
        auto *b = static_cast<cuDoubleComplex *>(t.b);
        ctx.variant_used = "cublasZgeam_64";
        st = cublas().cublasZgeam_64(h, ta, tb, m, n, &alpha, static_cast<const cuDoubleComplex *>(t.a), t.lda, &beta,
                                     b, t.ldb, b, t.ldb);
        break;
    }
    case dtype::f16:
    case dtype::bf16: break;  // refused by supports_omatcopy
    case dtype::e4m3:
    case dtype::e5m2: break;  // gemm_omatcopy refuses FP8
    }
    return cuda::cublas_status(st, ctx.variant_used.empty() ? "cublas geam" : ctx.variant_used.data());
}

class cublas_backend final : public backend {
public:
    std::string_view name() const override { return "cublas"; }
    backend_kind kind() const override { return backend_kind::device; }
    verdict probe() const override { return cuda::cublas_verdict(); }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }
    std::string identity() const override { return cuda::cublas_identity(); }

    // Device and managed pointers run in place; host pointers are offloaded (run_on_device).
    // The _64 entry points take every size as int64_t, so there is no int range to refuse.
    verdict supports(const problem &p) const override {
        if (is_fp8(p.ab_type))
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (cuBLAS has no FP8 GEMM; cublaslt "
                                                                    "serves it)");
        return cuda::library_supports_types(p);
    }

    // The ways of serving a pointer-array batch on device memory; a matrix run alone (a plain
    // call, or a batch's matrices one by one) has one way and takes no notice of them.
    std::vector<std::string> variants(const problem &p) const override {
        if (p.pointer_batch && p.space == memory_space::device)
            return {std::string(one_call_variant), std::string(streams_variant)};
        return {""};
    }
    bool knows_variant(std::string_view v) const override {
        return v.empty() || v == one_call_variant || v == streams_variant;
    }
    std::vector<std::string> variant_ids() const override {
        return {std::string(one_call_variant), std::string(streams_variant)};
    }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        return cuda::run_on_device(p, ctx,
                                   [&ctx](const problem &dp, cudaStream_t stream) { return launch(dp, stream, ctx); });
    }

    gemm_status_t run_batch(const problem_batch &b, std::string_view variant, run_report &ctx) override {
        return grouped_call(b).run(variant, ctx);
    }

    // gemm_omatcopy on device and managed memory through geam, which has f32, f64, c32 and c64
    // forms only. Host memory is not staged (cuda_tiled says why).
    verdict supports_omatcopy(const transpose_problem &t) const override {
        if (t.space == memory_space::host)
            return verdict::no("host pointers: transposes on the GPU take device or managed memory (auto runs host "
                               "memory on a host backend)");
        if (t.type == dtype::f16 || t.type == dtype::bf16)
            return verdict::no(std::string("cuBLAS's geam has no ") + dtype_name(t.type) +
                               " form (f32, f64, c32 and c64 only; cuda_tiled serves every type)");
        // cuComplex and cuDoubleComplex are float2 and double2, aligned to the whole element;
        // std::complex promises only its part's alignment.
        const std::uintptr_t size = dtype_size(t.type);
        if (is_complex(t.type) &&
            (reinterpret_cast<std::uintptr_t>(t.a) % size != 0 || reinterpret_cast<std::uintptr_t>(t.b) % size != 0))
            return verdict::no(std::string("geam reads ") + dtype_name(t.type) + " elements as " +
                               (t.type == dtype::c32 ? "cuComplex" : "cuDoubleComplex") + ", which need " +
                               std::to_string(size) +
                               "-byte alignment; A or B is not aligned so (cuda_tiled serves it)");
        return verdict::yes();
    }

    gemm_status_t run_omatcopy(const transpose_problem &t, run_report &ctx) override {
        cuda::device_guard guard;
        if (gemm_status_t s = guard.enter(t.device); s != GEMM_STATUS_SUCCESS) return s;
        return enqueue_geam(t, static_cast<cudaStream_t>(t.stream), ctx);
    }
};

}  // namespace

backend_ptr make_cublas_backend() { return std::make_unique<cublas_backend>(); }

}  // namespace gemm
