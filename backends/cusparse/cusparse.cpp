// cusparse.cpp: the cuSPARSE backend: gemm_spmm_csr and gemm_spmm_coo on device memory through
// cuSPARSE's generic API (cusparseSpMM, cusparseSpMV for a contiguous SpMV); every GEMM is
// refused. cuSPARSE is loaded at the first probe (cusparse_library.cpp).
#include "cusparse.hpp"

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "cusparse_library.hpp"
#include "dispatch/error.hpp"

namespace gemm {
namespace {

using cusparse_detail::cusparse;
using cusparse_detail::cusparse_status;

// The thread's cuSPARSE handle on a device, made on first use and destroyed with the thread's
// context for that device.
struct cusparse_handle final : cuda::context_attachment {
    cusparseHandle_t handle = nullptr;
    ~cusparse_handle() override {
        if (handle) cusparse().cusparseDestroy(handle);
    }
};

cudaDataType data_type(dtype t) {
    switch (t) {
    case dtype::f64: return CUDA_R_64F;
    case dtype::c32: return CUDA_C_32F;
    case dtype::c64: return CUDA_C_64F;
    default: return CUDA_R_32F;
    }
}

// alpha or beta as cuSPARSE reads it (host pointer mode): a value of the problem's type.
struct scalar_value {
    alignas(16) unsigned char bytes[16] = {};
    scalar_value(dtype t, double re, double im) {
        if (t == dtype::f32 || t == dtype::c32) {
            const float parts[2] = {float(re), float(im)};
            std::memcpy(bytes, parts, t == dtype::f32 ? 4 : 8);
        } else {
            const double parts[2] = {re, im};
            std::memcpy(bytes, parts, t == dtype::f64 ? 8 : 16);
        }
    }
    const void *get() const { return bytes; }
};

// The descriptors of one call, destroyed with it.
struct descriptors {
    cusparseConstSpMatDescr_t a = nullptr;
    cusparseConstDnMatDescr_t b = nullptr;
    cusparseDnMatDescr_t c = nullptr;
    cusparseConstDnVecDescr_t x = nullptr;
    cusparseDnVecDescr_t y = nullptr;
    ~descriptors() {
        const cusparse_detail::cusparse_functions &f = cusparse();
        if (a) f.cusparseDestroySpMat(a);
        if (b) f.cusparseDestroyDnMat(b);
        if (c) f.cusparseDestroyDnMat(c);
        if (x) f.cusparseDestroyDnVec(x);
        if (y) f.cusparseDestroyDnVec(y);
    }
};

// Whether C is column-major (its rows contiguous) as cuSPARSE's dense descriptor sees it.
bool c_column_major(const sparse_problem &s) { return s.c_row_step == 1; }

// SpMV where B's column and C's are contiguous vectors.
bool as_spmv(const sparse_problem &s) { return s.n == 1 && s.b_row_step == 1 && s.c_row_step == 1; }

bool aligned(const void *p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

gemm_status_t make_a(const sparse_problem &s, descriptors &d) {
    const cusparseIndexType_t index = s.index64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    const cusparseIndexBase_t base = s.index_base ? CUSPARSE_INDEX_BASE_ONE : CUSPARSE_INDEX_BASE_ZERO;
    if (s.format == sparse_format::csr)
        return cusparse_status(cusparse().cusparseCreateConstCsr(&d.a, s.rows, s.cols, s.nnz, s.row_offsets,
                                                                 s.col_indices, s.values, index, index, base,
                                                                 data_type(s.type)),
                               "cusparse: cusparseCreateConstCsr");
    return cusparse_status(cusparse().cusparseCreateConstCoo(&d.a, s.rows, s.cols, s.nnz, s.row_indices, s.col_indices,
                                                             s.values, index, base, data_type(s.type)),
                           "cusparse: cusparseCreateConstCoo");
}

// op(B) (k x n) and C (m x n) in C's order: op(B)'s steps put it in that order (supports_spmm).
gemm_status_t make_dense(const sparse_problem &s, descriptors &d) {
    const cusparse_detail::cusparse_functions &f = cusparse();
    const cudaDataType t = data_type(s.type);
    if (as_spmv(s)) {
        gemm_status_t st =
            cusparse_status(f.cusparseCreateConstDnVec(&d.x, s.k, s.b, t), "cusparse: cusparseCreateConstDnVec");
        if (st == GEMM_STATUS_SUCCESS)
            st = cusparse_status(f.cusparseCreateDnVec(&d.y, s.m, s.c, t), "cusparse: cusparseCreateDnVec");
        return st;
    }
    const bool col = c_column_major(s);
    const cusparseOrder_t order = col ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
    gemm_status_t st =
        cusparse_status(f.cusparseCreateConstDnMat(&d.b, s.k, s.n, col ? s.b_col_step : s.b_row_step, s.b, t, order),
                        "cusparse: cusparseCreateConstDnMat");
    if (st == GEMM_STATUS_SUCCESS)
        st = cusparse_status(f.cusparseCreateDnMat(&d.c, s.m, s.n, col ? s.c_col_step : s.c_row_step, s.c, t, order),
                             "cusparse: cusparseCreateDnMat");
    return st;
}

// C's m x n window set to zeros, for beta = 0: cuSPARSE documents no promise that it never
// reads C then, and NaN in C must not leak.
gemm_status_t zero_c(const sparse_problem &s, cudaStream_t stream) {
    const std::size_t size = dtype_size(s.type);
    const bool col = c_column_major(s);
    const int64_t ld = col ? s.c_col_step : s.c_row_step, length = col ? s.m : s.n, lines = col ? s.n : s.m;
    return cuda::cuda_status(
        cudaMemset2DAsync(s.c, std::size_t(ld) * size, 0, std::size_t(length) * size, std::size_t(lines), stream),
        "cusparse: zeroing C for beta = 0");
}

class cusparse_backend final : public backend {
public:
    std::string_view name() const override { return "cusparse"; }
    backend_kind kind() const override { return backend_kind::device; }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }

    verdict probe() const override {
        verdict device = cuda::device_verdict();
        if (!device.ok) return device;
        const verdict &loaded = cusparse_detail::cusparse_loaded();
        return loaded.ok ? verdict::yes(device.detail + ", " + loaded.detail) : loaded;
    }

    // The fingerprint without loading cuSPARSE: the version built against.
    std::string identity() const override {
        verdict device = cuda::device_verdict();
        if (!device.ok) return "unavailable";
        return device.detail + ", " + cusparse_detail::cusparse_built_version();
    }

    verdict supports(const problem &) const override {
        return verdict::no("sparse products only (gemm_spmm_csr, gemm_spmm_coo): no GEMM kernel");
    }

    gemm_status_t run(const problem &, std::string_view, run_report &) override { return GEMM_STATUS_NOT_SUPPORTED; }

    // What is served is what cuSPARSE's generic SpMM documents for both formats with its
    // default algorithm: op(A) = A, op(B) in C's order (no transpose or conjugate of B), on
    // device or managed memory. Complex operands must lie at their element's alignment, as
    // cuComplex needs. A product with nothing to read (alpha = 0, k = 0, nnz = 0) is left to
    // cuda_tiled's scaling of C: cuSPARSE would be handed NULL arrays.
    // cuSPARSE's SpMM documents sorted rows without repeated columns (sorted COO entries).
    bool spmm_assumes_sorted() const override { return true; }

    verdict supports_spmm(const sparse_problem &s) const override {
        if (s.space == memory_space::host)
            return verdict::no("host pointers: cuSPARSE takes device or managed memory (auto runs host memory on a "
                               "host backend)");
        if (s.op_a != transpose::n)
            return verdict::no("op_a T or C not served by this backend (cuda_tiled serves them)");
        if (s.b_conj) return verdict::no("op_b C not served (cuSPARSE's SpMM has no conjugate of B)");
        if (c_column_major(s) ? s.b_row_step != 1 : s.b_col_step != 1)
            return verdict::no("op(B) stored in the other order than C (op_b T) not served by this backend");
        if (s.scales_only())
            return verdict::no("alpha = 0, k = 0 or nnz = 0: nothing to multiply (cuda_tiled scales C)");
        const std::size_t size = dtype_size(s.type);
        if (!aligned(s.values, size) || !aligned(s.b, size) || !aligned(s.c, size))
            return verdict::no("A's values, B or C not aligned to their element's size (cuSPARSE needs it)");
        return verdict::yes();
    }

    gemm_status_t run_spmm(const sparse_problem &s, run_report &ctx) override {
        cuda::device_guard guard;
        if (gemm_status_t st = guard.enter(s.device); st != GEMM_STATUS_SUCCESS) return st;
        cuda::device_context *dc = nullptr;
        if (gemm_status_t st = cuda::context_for(s.device, dc); st != GEMM_STATUS_SUCCESS) return st;
        const auto stream = static_cast<cudaStream_t>(s.stream);
        cusparse_handle &h = dc->attachment<cusparse_handle>();
        const cusparse_detail::cusparse_functions &f = cusparse();
        if (!h.handle)
            if (gemm_status_t st = cusparse_status(f.cusparseCreate(&h.handle), "cusparse: cusparseCreate");
                st != GEMM_STATUS_SUCCESS)
                return st;
        if (gemm_status_t st = cusparse_status(f.cusparseSetStream(h.handle, stream), "cusparse: cusparseSetStream");
            st != GEMM_STATUS_SUCCESS)
            return st;
        descriptors d;
        if (gemm_status_t st = make_a(s, d); st != GEMM_STATUS_SUCCESS) return st;
        if (gemm_status_t st = make_dense(s, d); st != GEMM_STATUS_SUCCESS) return st;
        const scalar_value alpha(s.type, s.alpha, s.alpha_imag), beta(s.type, s.beta, s.beta_imag);
        const cudaDataType t = data_type(s.type);
        const bool spmv = as_spmv(s);
        std::size_t bytes = 0;
        gemm_status_t st =
            spmv
                ? cusparse_status(f.cusparseSpMV_bufferSize(h.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha.get(), d.a,
                                                            d.x, beta.get(), d.y, t, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
                                  "cusparse: cusparseSpMV_bufferSize")
                : cusparse_status(f.cusparseSpMM_bufferSize(h.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                            CUSPARSE_OPERATION_NON_TRANSPOSE, alpha.get(), d.a, d.b,
                                                            beta.get(), d.c, t, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
                                  "cusparse: cusparseSpMM_bufferSize");
        if (st != GEMM_STATUS_SUCCESS) return st;
        void *buffer = nullptr;
        if (bytes > 0)
            if (st = dc->acquire_scratch(stream, bytes, buffer); st != GEMM_STATUS_SUCCESS) return st;
        if (s.beta_zero()) st = zero_c(s, stream);
        if (st == GEMM_STATUS_SUCCESS) {
            ctx.variant_used = spmv ? "spmv_alg_default" : "spmm_alg_default";
            st = spmv ? cusparse_status(f.cusparseSpMV(h.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha.get(), d.a,
                                                       d.x, beta.get(), d.y, t, CUSPARSE_SPMV_ALG_DEFAULT, buffer),
                                        "cusparse: cusparseSpMV")
                      : cusparse_status(f.cusparseSpMM(h.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                       CUSPARSE_OPERATION_NON_TRANSPOSE, alpha.get(), d.a, d.b,
                                                       beta.get(), d.c, t, CUSPARSE_SPMM_ALG_DEFAULT, buffer),
                                        "cusparse: cusparseSpMM");
        }
        if (buffer) {
            const gemm_status_t released = dc->release_scratch(stream, buffer);
            if (st == GEMM_STATUS_SUCCESS) st = released;
        }
        return st;
    }
};

}  // namespace

backend_ptr make_cusparse_backend() { return std::make_unique<cusparse_backend>(); }

}  // namespace gemm
