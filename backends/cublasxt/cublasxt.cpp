// cublasxt.cpp: cuBLASXt on the canonical problem. cuBLASXt cuts C into square blocks of
// block_dim x block_dim and deals them round-robin to the GPUs of GEMM_XT_DEVICES; a thread
// per GPU streams the blocks of A and B it needs from host memory. So a problem may be far
// larger than one GPU's memory, and several GPUs share it. The call blocks until C is back.
//
// Variants: "b<block_dim>". "" is b4096: large problems run several times faster with it than
// with cuBLASXt's own default of 1024 (docs/PERFORMANCE.md, "Host memory on the GPU:
// cublasxt"). cuBLASXt sizes its buffers by the block dimension, not the problem: a small
// problem forced onto "" still takes 10 blocks of 4096^2 elements per GPU for the call; the
// tuner offers b1024 for those.
//
// Pinned memory: cuBLASXt's pinning mode (page-lock the caller's operands for each call) stays
// off. With CUDA 13.1 one of our test calls failed with it on, with
// CUBLAS_STATUS_MAPPING_ERROR (f64, pageable operands, after f32 calls in the same process had
// passed), and locking gigabytes on every call costs what it saves. Memory the caller
// page-locked itself (cudaMallocHost, cudaHostRegister) is copied at full speed; pageable
// memory goes through the driver's staging copies.
#include "cublasxt.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/runtime/cublas_verdict.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/cuda_types.hpp"
#include "dispatch/error.hpp"
#include "dispatch/host_scale.hpp"
#include "dispatch/settings.hpp"

namespace gemm {
namespace {

using cuda::cublas;  // the loaded functions (cublas_library.hpp)

constexpr int block_dims[] = {512, 1024, 2048, 4096, 8192};
constexpr std::string_view block_ids[] = {"b512", "b1024", "b2048", "b4096", "b8192"};  // the variants
constexpr int smallest_timed_block = 1024;  // variants() offers none smaller
constexpr int default_block = 4096;

struct xt_variant {
    int block_dim = 0;  // 0: the default
};

bool parse_variant(std::string_view id, xt_variant &out) {
    out = {};
    if (id.empty()) return true;
    for (std::size_t i = 0; i < std::size(block_dims); ++i)
        if (id == block_ids[i]) {
            out.block_dim = block_dims[i];
            return true;
        }
    return false;
}

std::string_view block_id(int block_dim) {
    for (std::size_t i = 0; i < std::size(block_dims); ++i)
        if (block_dims[i] == block_dim) return block_ids[i];
    return {};
}

// Device memory cuBLASXt holds on each GPU while working with blocks of block_dim. Measured
// (CUDA 13.1) with bench/device/xt_footprint.cpp and the out-of-core test (docs/PERFORMANCE.md,
// "Host memory on the GPU: cublasxt"): 10 blocks
// during a call (A, B and C blocks of its pipeline, allocated per call), for every block
// dimension and dtype, plus 72 MiB kept from the first call on (the GPU's cuBLAS handle and
// workspace); the fixed part is given some room here.
constexpr double footprint_blocks = 10;
constexpr uint64_t footprint_fixed = uint64_t(96) << 20;

uint64_t footprint(int block_dim, dtype t) {
    double block = double(block_dim) * double(block_dim) * double(dtype_size(t));
    return footprint_fixed + uint64_t(footprint_blocks * block);
}

// Both are checked with the other settings before any call runs.
uint64_t device_byte_cap() {
    static const uint64_t cap = parse_byte_count(settings().option("GEMM_XT_MAX_DEVICE_BYTES")).value_or(0);
    return cap;
}

bool within_cap(int block_dim, dtype t) {
    uint64_t cap = device_byte_cap();
    return cap == 0 || footprint(block_dim, t) <= cap;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The process's one cuBLASXt handle. Its block dimension is handle state that each call sets,
// so calls are serialized.
class xt_engine {
public:
    // Never destroyed: cuBLASXt's worker threads must not be torn down while the CUDA
    // runtime unloads at exit.
    static xt_engine &instance() {
        static xt_engine *e = new xt_engine;
        return *e;
    }

    std::mutex &mutex() { return mutex_; }

    // Creates the handle on first use, on the chosen devices. Call with the mutex held.
    gemm_status_t handle(cublasXtHandle_t &out) {
        if (!handle_) {
            if (gemm_status_t s = cuda::require_cublas(); s != GEMM_STATUS_SUCCESS) return s;
            cublasXtHandle_t h = nullptr;
            if (gemm_status_t s = cuda::cublas_status(cublas().cublasXtCreate(&h), "cublasXtCreate");
                s != GEMM_STATUS_SUCCESS)
                return s;
            std::vector<int> devices = chosen_devices();  // cublasXtDeviceSelect takes int *
            gemm_status_t s = cuda::cublas_status(cublas().cublasXtDeviceSelect(h, int(devices.size()), devices.data()),
                                                  "cublasXtDeviceSelect");
            if (s != GEMM_STATUS_SUCCESS) {
                cublas().cublasXtDestroy(h);
                return s;
            }
            handle_ = h;
        }
        out = handle_;
        return GEMM_STATUS_SUCCESS;
    }

    // GEMM_XT_DEVICES, or every device; both are constant for the process, so worked out once.
    static const std::vector<int> &chosen_devices() {
        static const std::vector<int> devices = [] {
            std::vector<int> list = parse_devices(settings().option("GEMM_XT_DEVICES")).value_or(std::vector<int>{});
            if (list.empty())
                for (int d = 0; d < cuda::device_count(); ++d) list.push_back(d);
            return list;
        }();
        return devices;
    }

    // "0,1", for the verdict and the trace.
    static const std::string &devices_text() {
        static const std::string text = [] {
            std::string list;
            for (int d : chosen_devices()) list += (list.empty() ? "" : ",") + std::to_string(d);
            return list;
        }();
        return text;
    }

private:
    std::mutex mutex_;
    cublasXtHandle_t handle_ = nullptr;
};

// The block dimension a variant runs with under GEMM_XT_MAX_DEVICE_BYTES: its own, or for ""
// the default when that fits the cap, else the largest that does. 0: none fits.
int block_dim_for(const xt_variant &v, dtype t) {
    if (v.block_dim) return within_cap(v.block_dim, t) ? v.block_dim : 0;
    if (within_cap(default_block, t)) return default_block;
    int best = 0;
    for (int b : block_dims)
        if (within_cap(b, t)) best = b;
    return best;
}

template <class T, class F> gemm_status_t gemm_batches(cublasXtHandle_t h, const problem &p, F xt_gemm) {
    T alpha = T(p.alpha), beta = T(p.beta);
    for (int64_t batch = 0; batch < p.batch; ++batch) {
        const T *a = static_cast<const T *>(p.a) + batch * p.stride_a;
        const T *b = static_cast<const T *>(p.b) + batch * p.stride_b;
        T *c = static_cast<T *>(p.c) + batch * p.stride_c;
        cublasStatus_t st = xt_gemm(h, cuda::operation_of(p.op_a), cuda::operation_of(p.op_b), std::size_t(p.m),
                                    std::size_t(p.n), std::size_t(p.k), &alpha, a, std::size_t(p.lda), b,
                                    std::size_t(p.ldb), &beta, c, std::size_t(p.ldc));
        if (st != CUBLAS_STATUS_SUCCESS)
            return cuda::cublas_status(st, p.ab_type == dtype::f64 ? "cublasXtDgemm" : "cublasXtSgemm");
    }
    return GEMM_STATUS_SUCCESS;
}

// "devices 0,1, at most 256 MiB each; <cuBLAS's detail>", or why GEMM_XT_DEVICES cannot be served.
verdict on_chosen_devices(const std::string &detail) {
    for (int d : xt_engine::chosen_devices())
        if (d >= cuda::device_count())
            return verdict::no("GEMM_XT_DEVICES names device " + std::to_string(d) + ", but this machine has " +
                               std::to_string(cuda::device_count()));
    std::string cap = device_byte_cap() ? ", at most " + mib(device_byte_cap()) + " each" : "";
    return verdict::yes("devices " + xt_engine::devices_text() + cap + "; " + detail);
}

class cublasxt_backend final : public backend {
public:
    std::string_view name() const override { return "cublasxt"; }
    backend_kind kind() const override { return backend_kind::multi_device; }

    verdict probe() const override {
        verdict v = cuda::cublas_verdict();
        return v.ok ? on_chosen_devices(v.detail) : v;
    }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }

    std::string identity() const override {
        const std::string id = cuda::cublas_identity();
        if (id == "unavailable") return id;
        verdict v = on_chosen_devices(id);
        return v.ok ? v.detail : "unavailable";
    }

    // Host memory only, f32 and f64 (cuBLASXt has no half-precision GEMM).
    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host)
            return verdict::no(std::string("cublasxt takes host memory; ") + memory_space_name(p.space) +
                               " pointers are served by cublas or cublaslt");
        if (p.ab_type != p.c_type || (p.ab_type != dtype::f32 && p.ab_type != dtype::f64))
            return verdict::no("cublasxt serves f32 and f64 (C of the same type); not supported: " +
                               std::string(dtype_name(p.ab_type)) + " x " + dtype_name(p.c_type));
        if (!within_cap(block_dims[0], p.ab_type))
            return verdict::no("GEMM_XT_MAX_DEVICE_BYTES=" + std::to_string(device_byte_cap()) +
                               " is below the smallest block's need (" + mib(footprint(block_dims[0], p.ab_type)) + ")");
        return verdict::yes();
    }

    // Block dimensions up to twice the larger side of C (bigger ones change nothing), within
    // GEMM_XT_MAX_DEVICE_BYTES.
    std::vector<std::string> variants(const problem &p) const override {
        std::vector<std::string> ids{""};
        for (int b : block_dims) {
            bool useful = b == smallest_timed_block || b < 2 * std::max(p.m, p.n);
            if (b < smallest_timed_block || b == default_block || !useful || !within_cap(b, p.ab_type)) continue;
            ids.emplace_back(block_id(b));
        }
        return ids;
    }

    bool knows_variant(std::string_view v) const override {
        xt_variant parsed;
        return parse_variant(v, parsed);
    }

    std::vector<std::string> variant_ids() const override { return {std::begin(block_ids), std::end(block_ids)}; }

    std::vector<backend_option> options() const override {
        return {{"GEMM_XT_DEVICES", "all, or ordinals 0,1", "all", "the GPUs cublasxt spreads a call over",
                 invalid_devices},
                {"GEMM_XT_MAX_DEVICE_BYTES", "bytes, or with K, M, G", "(no cap)",
                 "the device memory cublasxt may hold on each GPU (larger problems still run, out of core)",
                 invalid_byte_count}};
    }

    gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) override {
        xt_variant v;
        if (!parse_variant(variant, v))
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublasxt: no variant '" + std::string(variant) + "'");
        if (p.k == 0 || p.alpha == 0.0) {
            ctx.variant_used = "host scale_c";
            scale_c_on_host(p);
            return GEMM_STATUS_SUCCESS;
        }
        int block = block_dim_for(v, p.ab_type);
        if (block == 0)
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublasxt: variant '" + std::string(variant) + "' needs " +
                                                            mib(footprint(v.block_dim, p.ab_type)) +
                                                            " per device, over GEMM_XT_MAX_DEVICE_BYTES");
        xt_engine &xt = xt_engine::instance();
        std::lock_guard<std::mutex> lock(xt.mutex());
        cublasXtHandle_t h = nullptr;
        if (gemm_status_t s = xt.handle(h); s != GEMM_STATUS_SUCCESS) return s;
        int previous_device = -1;
        bool restore = cudaGetDevice(&previous_device) == cudaSuccess;
        gemm_status_t s = cuda::cublas_status(cublas().cublasXtSetBlockDim(h, block), "cublasXtSetBlockDim");
        if (s == GEMM_STATUS_SUCCESS)
            s = p.ab_type == dtype::f64 ? gemm_batches<double>(h, p, cublas().cublasXtDgemm)
                                        : gemm_batches<float>(h, p, cublas().cublasXtSgemm);
        if (restore) cudaSetDevice(previous_device);
        cudaGetLastError();  // cuBLASXt reports through its status; leave the caller nothing
        ctx.variant_used = block_id(block);
        ctx.note = "cuBLASXt on devices " + xt_engine::devices_text();
        return s;
    }
};

}  // namespace

backend_ptr make_cublasxt_backend() { return std::make_unique<cublasxt_backend>(); }

}  // namespace gemm
