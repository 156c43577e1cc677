// cuda_context.cpp: device probing, error mapping, per-thread contexts and host staging.
#include "cuda_context.hpp"
#include "cuda_runtime.hpp"
#include "device_services.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/settings.hpp"

namespace gemm::cuda {
namespace {

constexpr std::size_t buffer_alignment = 256;  // what cudaMalloc guarantees; cuBLASLt's best

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

struct device_probe {
    int count = 0;
    std::string error;  // why count is 0
};

std::string version_text(int v) {  // CUDA encodes 13.1 as 13010
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Why cudaGetDeviceCount failed, in the user's terms. Without any NVIDIA driver the runtime
// says "CUDA driver version is insufficient for CUDA runtime version", which reads as "update
// the driver": that is only true when a driver is there (libcuda loads, and the kernel
// module shows /proc/driver/nvidia).
std::string device_count_error(cudaError_t e) {
    int driver = 0, runtime = 0;  // driver 0: libcuda.so.1 could not be loaded
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    cudaGetLastError();
    bool kernel_module = access("/proc/driver/nvidia", F_OK) == 0;
    std::string call = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e);
    if (e == cudaErrorInsufficientDriver && (driver == 0 || !kernel_module))
        return std::string("no NVIDIA driver / no GPU (") +
               (driver == 0 ? "libcuda.so.1 cannot be loaded" : "no /proc/driver/nvidia") + "; " + call + ")";
    if (e == cudaErrorInsufficientDriver)
        return "the NVIDIA driver (CUDA " + version_text(driver) + ") is older than the CUDA runtime (" +
               version_text(runtime) + "): update the driver (" + call + ")";
    if (e == cudaErrorNoDevice) {
        const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        std::string hidden = visible ? "; CUDA_VISIBLE_DEVICES='" + std::string(visible) + "'" : "";
        return std::string(kernel_module ? "no GPU: the NVIDIA driver shows none" : "no NVIDIA driver / no GPU") +
               " (" + call + hidden + ")";
    }
    return call + " (" + cudaGetErrorString(e) + ")";
}

const device_probe &probe_devices() {
    static const device_probe probe = [] {
        device_probe d;
        cudaError_t e = cudaGetDeviceCount(&d.count);
        if (e != cudaSuccess) {
            cudaGetLastError();  // no driver or no device: not sticky, leave nothing behind
            d.count = 0;
            d.error = device_count_error(e);
        } else if (d.count == 0) {
            d.error = "cudaGetDeviceCount returned 0";
        }
        return d;
    }();
    return probe;
}

verdict make_device_verdict() {
    const device_probe &d = probe_devices();
    if (d.count == 0) return verdict::no("no CUDA device: " + d.error);
    std::string detail;
    for (int i = 0; i < d.count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            cudaGetLastError();
            detail += "device " + std::to_string(i) + ": properties unavailable; ";
            continue;
        }
        char line[400];
        std::snprintf(line, sizeof line, "device %d: %s, sm_%d%d, %d SMs, %.0f GiB; ", i, prop.name,
                      prop.major, prop.minor, prop.multiProcessorCount,
                      double(prop.totalGlobalMem) / double(1ull << 30));
        detail += line;
    }
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) cudaGetLastError();
    if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
    std::size_t lt = cublasLtGetVersion();  // e.g. 130100
    detail += "CUDA runtime " + version_text(runtime) + ", driver " + version_text(driver) +
              ", cuBLAS " + std::to_string(lt / 10000) + "." + std::to_string(lt / 100 % 100) +
              "." + std::to_string(lt % 100);
    return verdict::yes(detail);
}

memory_space classify_pointer(const void *ptr, int *device) {
    *device = -1;
    if (device_count() == 0) return memory_space::host;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();  // older drivers report plain host memory as an invalid value
        return memory_space::host;
    }
    switch (attr.type) {
    case cudaMemoryTypeDevice: *device = attr.device; return memory_space::device;
    case cudaMemoryTypeManaged: *device = attr.device; return memory_space::managed;
    default: return memory_space::host;  // unregistered or pinned host memory: staged
    }
}

// Frees and reallocates a growing buffer only when it is too small; sizes grow to the next
// 2 MiB so that a slowly growing sequence of calls does not reallocate every time.
template <class Alloc, class Free>
gemm_status_t grow(void *&buf, std::size_t &have, std::size_t need, Alloc alloc, Free release,
                   const char *what) {
    if (need <= have && buf) return GEMM_STATUS_SUCCESS;
    if (buf) {
        release(buf);
        cudaGetLastError();
        buf = nullptr;
        have = 0;
    }
    std::size_t bytes = round_up(need > 0 ? need : 1, std::size_t(2) << 20);
    gemm_status_t s = cuda_status(alloc(&buf, bytes), what);
    if (s != GEMM_STATUS_SUCCESS) {
        buf = nullptr;
        return s;
    }
    have = bytes;
    return GEMM_STATUS_SUCCESS;
}

// The calling thread's contexts, one slot per device ordinal.
struct thread_contexts {
    std::vector<std::unique_ptr<device_context>> by_device;
};
thread_local thread_contexts tls_contexts;

// One operand as the caller stores it on the host and as it is packed for the device.
struct staged_operand {
    const char *src = nullptr;  // host; null when not staged
    std::size_t elem = 0;
    int64_t rows = 0, cols = 0, ld = 0, stride = 0;
    int64_t count = 0;  // matrices stored: 1 when all share one (stride 0 or batch 1)
    int64_t packed_ld = 0, packed_stride = 0;
    std::size_t bytes = 0;  // packed size
    std::size_t offset = 0; // in the staging buffers

    staged_operand(const void *p, dtype t, int64_t r, int64_t c, int64_t l, int64_t s, int64_t batch) {
        elem = dtype_size(t);
        rows = r;
        cols = c;
        ld = l;
        stride = s;
        count = batch > 1 && s != 0 ? batch : 1;
        packed_ld = int64_t(round_up(std::size_t(rows > 0 ? rows : 1), 16 / elem));
        std::size_t matrix_bytes = round_up(std::size_t(packed_ld * cols) * elem, buffer_alignment);
        packed_stride = count > 1 ? int64_t(matrix_bytes / elem) : 0;
        src = static_cast<const char *>(p);
        bytes = src ? std::size_t(count) * matrix_bytes : 0;
    }

    // Host copy in either direction, column by column: only rows x cols of every matrix.
    void pack(char *dst) const {
        for (int64_t b = 0; b < count; ++b)
            for (int64_t j = 0; j < cols; ++j)
                std::memcpy(dst + std::size_t(b * packed_stride + j * packed_ld) * elem,
                            src + std::size_t(b * stride + j * ld) * elem, std::size_t(rows) * elem);
    }
    void unpack(const char *packed, char *dst) const {
        for (int64_t b = 0; b < count; ++b)
            for (int64_t j = 0; j < cols; ++j)
                std::memcpy(dst + std::size_t(b * stride + j * ld) * elem,
                            packed + std::size_t(b * packed_stride + j * packed_ld) * elem,
                            std::size_t(rows) * elem);
    }
};

struct staging_plan {
    staged_operand a, b, c;
    std::size_t in_bytes = 0;     // A, B and (beta != 0) C, from offset 0
    std::size_t total_bytes = 0;  // the whole device and pinned buffer
};

staging_plan plan_staging(const problem &p) {
    bool reads_ab = p.k > 0 && p.alpha != 0.0;
    staging_plan s{
        staged_operand(reads_ab ? p.a : nullptr, p.ab_type, p.a_rows(), p.a_cols(), p.lda, p.stride_a, p.batch),
        staged_operand(reads_ab ? p.b : nullptr, p.ab_type, p.b_rows(), p.b_cols(), p.ldb, p.stride_b, p.batch),
        staged_operand(p.c, p.c_type, p.m, p.n, p.ldc, p.stride_c, p.batch)};
    s.a.offset = 0;
    s.b.offset = round_up(s.a.bytes, buffer_alignment);
    s.c.offset = s.b.offset + round_up(s.b.bytes, buffer_alignment);
    s.total_bytes = s.c.offset + s.c.bytes;
    s.in_bytes = p.beta != 0.0 ? s.total_bytes : s.c.offset;
    return s;
}

problem packed_problem(const problem &p, const staging_plan &s, const char *device_base, int device) {
    problem dp = p;
    auto place = [&](const staged_operand &o) -> const char * {
        return o.src && device_base ? device_base + o.offset : nullptr;
    };
    dp.a = place(s.a);
    dp.lda = s.a.packed_ld;
    dp.stride_a = s.a.packed_stride;
    dp.b = place(s.b);
    dp.ldb = s.b.packed_ld;
    dp.stride_b = s.b.packed_stride;
    dp.c = const_cast<char *>(place(s.c));
    dp.ldc = s.c.packed_ld;
    dp.stride_c = s.c.packed_stride;
    dp.space = memory_space::device;
    dp.device = device;
    dp.stream = nullptr;
    return dp;
}

std::string megabytes(std::size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", double(bytes) / 1e6);
    return text;
}

gemm_status_t run_staged(const problem &p, run_context &ctx, launch_fn launch, void *state) {
    int device = 0;
    gemm_status_t s = cuda_status(cudaGetDevice(&device), "cudaGetDevice");
    if (s != GEMM_STATUS_SUCCESS) return s;
    device_context *dc = nullptr;
    if ((s = context_for(device, dc)) != GEMM_STATUS_SUCCESS) return s;

    staging_plan plan = plan_staging(p);
    void *dev = nullptr, *pinned = nullptr;
    cudaStream_t stream = nullptr;
    if ((s = dc->staging_stream(stream)) != GEMM_STATUS_SUCCESS) return s;
    if ((s = dc->device_staging(plan.total_bytes, dev)) != GEMM_STATUS_SUCCESS) return s;
    if ((s = dc->pinned_staging(plan.total_bytes, pinned)) != GEMM_STATUS_SUCCESS) return s;

    char *host = static_cast<char *>(pinned);
    if (plan.a.src) plan.a.pack(host + plan.a.offset);
    if (plan.b.src) plan.b.pack(host + plan.b.offset);
    if (p.beta != 0.0) plan.c.pack(host + plan.c.offset);

    problem dp = packed_problem(p, plan, static_cast<const char *>(dev), device);
    dp.stream = stream;
    if (plan.in_bytes > 0)
        s = cuda_status(cudaMemcpyAsync(dev, pinned, plan.in_bytes, cudaMemcpyHostToDevice, stream),
                        "staging: copy A, B, C to the device");
    if (s == GEMM_STATUS_SUCCESS) s = launch(state, dp, stream);
    if (s == GEMM_STATUS_SUCCESS)
        s = cuda_status(cudaMemcpyAsync(host + plan.c.offset, static_cast<char *>(dev) + plan.c.offset,
                                        plan.c.bytes, cudaMemcpyDeviceToHost, stream),
                        "staging: copy C to the host");
    // Always wait, also after a failure: the pinned buffer must be idle before the next call
    // packs into it. The first error is the one reported.
    cudaError_t sync = cudaStreamSynchronize(stream);
    if (s != GEMM_STATUS_SUCCESS) {
        cudaGetLastError();
        return s;
    }
    if ((s = cuda_status(sync, "staging: cudaStreamSynchronize")) != GEMM_STATUS_SUCCESS) return s;
    plan.c.unpack(host + plan.c.offset, static_cast<char *>(p.c));
    ctx.note = "staged host pointers (H2D " + megabytes(plan.in_bytes) + " MB, D2H " +
               megabytes(plan.c.bytes) + " MB)";
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

int device_count() { return probe_devices().count; }

verdict device_verdict() {
    static const verdict v = make_device_verdict();
    return v;
}

gemm_status_t cuda_status(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = e == cudaErrorMemoryAllocation ? GEMM_STATUS_ALLOC_FAILED : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

gemm_status_t cublas_status(cublasStatus_t st, const char *what) {
    if (st == CUBLAS_STATUS_SUCCESS) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = st == CUBLAS_STATUS_ALLOC_FAILED ? GEMM_STATUS_ALLOC_FAILED
                      : st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH
                          ? GEMM_STATUS_NOT_SUPPORTED
                          : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cublasGetStatusName(st) + " (" +
                            cublasGetStatusString(st) + ")");
}

bool use_tf32(const problem &p) { return p.ab_type == dtype::f32 && settings().allow_tf32; }

void install_runtime() {
    set_pointer_classifier(classify_pointer);
    install_device_services();
}

device_context::device_context(int device) : device_(device) {}

device_context::~device_context() {
    attachments_.clear();  // they may hold descriptors made with the handles below
    int previous = -1;
    bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_ &&
                    cudaSetDevice(device_) == cudaSuccess;
    // Results are ignored: at process exit the runtime may already be unloading, and there
    // is no caller left to tell.
    if (workspace_event_) cudaEventDestroy(workspace_event_);
    if (workspace_) cudaFree(workspace_);
    if (device_buf_) cudaFree(device_buf_);
    if (pinned_buf_) cudaFreeHost(pinned_buf_);
    if (staging_stream_) cudaStreamDestroy(staging_stream_);
    if (lt_) cublasLtDestroy(lt_);
    if (blas_) cublasDestroy(blas_);
    if (switched) cudaSetDevice(previous);
    cudaGetLastError();
}

gemm_status_t device_context::blas(cudaStream_t stream, cublasMath_t math, cublasHandle_t &out) {
    if (!blas_) {
        gemm_status_t s = cublas_status(cublasCreate(&blas_), "cublasCreate");
        if (s != GEMM_STATUS_SUCCESS) {
            blas_ = nullptr;
            return s;
        }
        blas_stream_ = nullptr;
        blas_math_ = CUBLAS_DEFAULT_MATH;
        // Scalars are passed from the host.
        s = cublas_status(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
        if (s != GEMM_STATUS_SUCCESS) return s;
    }
    if (stream != blas_stream_) {
        gemm_status_t s = cublas_status(cublasSetStream(blas_, stream), "cublasSetStream");
        if (s != GEMM_STATUS_SUCCESS) return s;
        blas_stream_ = stream;
    }
    if (math != blas_math_) {
        gemm_status_t s = cublas_status(cublasSetMathMode(blas_, math), "cublasSetMathMode");
        if (s != GEMM_STATUS_SUCCESS) return s;
        blas_math_ = math;
    }
    out = blas_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::blas_lt(cublasLtHandle_t &out) {
    if (!lt_) {
        gemm_status_t s = cublas_status(cublasLtCreate(&lt_), "cublasLtCreate");
        if (s != GEMM_STATUS_SUCCESS) {
            lt_ = nullptr;
            return s;
        }
    }
    out = lt_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::acquire_workspace(cudaStream_t stream, void *&out) {
    if (!workspace_event_) {
        gemm_status_t s = cuda_status(cudaEventCreateWithFlags(&workspace_event_, cudaEventDisableTiming),
                                      "cudaEventCreateWithFlags (workspace)");
        if (s != GEMM_STATUS_SUCCESS) {
            workspace_event_ = nullptr;
            return s;
        }
    }
    if (!workspace_) {
        gemm_status_t s = cuda_status(cudaMalloc(&workspace_, workspace_bytes), "cudaMalloc (cuBLASLt workspace)");
        if (s != GEMM_STATUS_SUCCESS) {
            workspace_ = nullptr;
            return s;
        }
    }
    if (workspace_used_ && stream != workspace_stream_) {
        gemm_status_t s = cuda_status(cudaStreamWaitEvent(stream, workspace_event_, 0),
                                      "cudaStreamWaitEvent (workspace shared by two streams)");
        if (s != GEMM_STATUS_SUCCESS) return s;
    }
    out = workspace_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::release_workspace(cudaStream_t stream) {
    gemm_status_t s = cuda_status(cudaEventRecord(workspace_event_, stream), "cudaEventRecord (workspace)");
    if (s != GEMM_STATUS_SUCCESS) return s;
    workspace_used_ = true;
    workspace_stream_ = stream;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::staging_stream(cudaStream_t &out) {
    if (!staging_stream_) {
        gemm_status_t s = cuda_status(cudaStreamCreateWithFlags(&staging_stream_, cudaStreamNonBlocking),
                                      "cudaStreamCreateWithFlags (staging)");
        if (s != GEMM_STATUS_SUCCESS) {
            staging_stream_ = nullptr;
            return s;
        }
    }
    out = staging_stream_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::device_staging(std::size_t bytes, void *&out) {
    gemm_status_t s = grow(
        device_buf_, device_buf_bytes_, bytes, [](void **p, std::size_t n) { return cudaMalloc(p, n); },
        [](void *p) { cudaFree(p); }, "cudaMalloc (staging)");
    out = device_buf_;
    return s;
}

gemm_status_t device_context::pinned_staging(std::size_t bytes, void *&out) {
    gemm_status_t s = grow(
        pinned_buf_, pinned_buf_bytes_, bytes, [](void **p, std::size_t n) { return cudaMallocHost(p, n); },
        [](void *p) { cudaFreeHost(p); }, "cudaMallocHost (staging)");
    out = pinned_buf_;
    return s;
}

device_guard::~device_guard() {
    if (switched_ && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

gemm_status_t device_guard::enter(int device) {
    gemm_status_t s = cuda_status(cudaGetDevice(&previous_), "cudaGetDevice");
    if (s != GEMM_STATUS_SUCCESS || previous_ == device) return s;
    s = cuda_status(cudaSetDevice(device), "cudaSetDevice");
    if (s == GEMM_STATUS_SUCCESS) switched_ = true;
    return s;
}

gemm_status_t device_of(const problem &p, int &device) {
    if (p.space != memory_space::host) {
        device = p.device;
        return GEMM_STATUS_SUCCESS;
    }
    return cuda_status(cudaGetDevice(&device), "cudaGetDevice");
}

gemm_status_t context_for(int device, device_context *&out) {
    int count = device_count();
    if (device < 0 || device >= count)
        return set_error(GEMM_STATUS_EXECUTION_FAILED,
                         "CUDA device " + std::to_string(device) + " does not exist (" +
                             std::to_string(count) + " devices)");
    std::vector<std::unique_ptr<device_context>> &slots = tls_contexts.by_device;
    if (slots.size() < std::size_t(count)) slots.resize(std::size_t(count));
    std::unique_ptr<device_context> &slot = slots[std::size_t(device)];
    if (!slot) slot = std::make_unique<device_context>(device);
    out = slot.get();
    return GEMM_STATUS_SUCCESS;
}

problem staged_shape(const problem &p) {
    if (p.space != memory_space::host) return p;
    return packed_problem(p, plan_staging(p), nullptr, -1);
}

gemm_status_t run_on_device(const problem &p, run_context &ctx, launch_fn launch, void *state) {
    if (p.space == memory_space::host) return run_staged(p, ctx, launch, state);
    device_guard guard;
    gemm_status_t s = guard.enter(p.device);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return launch(state, p, static_cast<cudaStream_t>(p.stream));
}

verdict library_supports_types(const problem &p) {
    if (!c_type_allowed(p.ab_type, p.c_type))
        return verdict::no(std::string("C of type ") + dtype_name(p.c_type) + " not supported with " +
                           dtype_name(p.ab_type) + " inputs");
    if (p.compute_type != compute_type_for(p.ab_type))
        return verdict::no(std::string("compute type ") + dtype_name(p.compute_type) + " not supported with " +
                           dtype_name(p.ab_type) + " inputs");
    return verdict::yes();
}

}  // namespace gemm::cuda
