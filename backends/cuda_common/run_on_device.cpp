// run_on_device.cpp: device problems launched on the caller's stream, host problems staged:
// packed into the context's pinned buffer, copied in one transfer, launched, copied back.
#include "run_on_device.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_status.hpp"
#include "device_context.hpp"

namespace gemm::cuda {
namespace {

constexpr std::size_t buffer_alignment = 256;  // what cudaMalloc guarantees; cuBLASLt's best

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

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

    // The same copies as DMA between the caller's page-locked memory and the device, one 2-D
    // copy per matrix (rows x cols elements, each side with its own leading dimension), so
    // that no CPU copy stands between them. to_device: host -> device; else device -> host
    // (only the rows x cols window of each matrix is written).
    gemm_status_t dma(char *device_base, char *host, bool to_device, cudaStream_t stream) const {
        for (int64_t b = 0; b < count && rows > 0 && cols > 0; ++b) {
            char *d = device_base + offset + std::size_t(b * packed_stride) * elem;
            char *h = host + std::size_t(b * stride) * elem;
            const std::size_t dpitch = std::size_t(packed_ld) * elem, hpitch = std::size_t(ld) * elem;
            const std::size_t width = std::size_t(rows) * elem, height = std::size_t(cols);
            cudaError_t e = to_device ? cudaMemcpy2DAsync(d, dpitch, h, hpitch, width, height, cudaMemcpyHostToDevice, stream)
                                      : cudaMemcpy2DAsync(h, hpitch, d, dpitch, width, height, cudaMemcpyDeviceToHost, stream);
            if (e != cudaSuccess) return cuda_status(e, "staging: copy between page-locked memory and the device");
        }
        return GEMM_STATUS_SUCCESS;
    }
};

// Whether host memory at ptr is page-locked (cudaMallocHost, cudaHostRegister): the DMA
// engine reads and writes it directly, at the link's speed.
bool page_locked(const void *ptr) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attributes.type == cudaMemoryTypeHost;
}

struct staging_plan {
    staged_operand a, b, c;
    std::size_t in_bytes = 0;     // A, B and (beta != 0) C, from offset 0
    std::size_t total_bytes = 0;  // the whole device and pinned buffer
};

staging_plan plan_staging(const problem &p) {
    bool reads_ab = !p.scales_only();
    staging_plan s{
        staged_operand(reads_ab ? p.a : nullptr, p.ab_type, p.a_rows(), p.a_cols(), p.lda, p.stride_a, p.batch),
        staged_operand(reads_ab ? p.b : nullptr, p.ab_type, p.b_rows(), p.b_cols(), p.ldb, p.stride_b, p.batch),
        staged_operand(p.c, p.c_type, p.m, p.n, p.ldc, p.stride_c, p.batch)};
    s.a.offset = 0;
    s.b.offset = round_up(s.a.bytes, buffer_alignment);
    s.c.offset = s.b.offset + round_up(s.b.bytes, buffer_alignment);
    s.total_bytes = s.c.offset + s.c.bytes;
    s.in_bytes = !p.beta_zero() ? s.total_bytes : s.c.offset;
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

gemm_status_t run_staged(const problem &p, run_report &ctx, launch_fn launch, void *state) {
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

    // Page-locked operands go straight between the caller's memory and the device; pageable
    // ones are packed into the context's page-locked buffer first (a DMA from pageable memory
    // runs at a fraction of the link's speed) and copied from there.
    char *host = static_cast<char *>(pinned), *device_base = static_cast<char *>(dev);
    const bool reads_c = !p.beta_zero();
    const bool c_locked = page_locked(p.c);
    struct input { const staged_operand *o; bool needed; } inputs[] = {{&plan.a, plan.a.src != nullptr},
                                                                      {&plan.b, plan.b.src != nullptr},
                                                                      {&plan.c, reads_c}};
    std::size_t packed_bytes = 0;
    for (const input &in : inputs) {
        if (!in.needed) continue;
        if (page_locked(in.o->src)) {
            if (s == GEMM_STATUS_SUCCESS) s = in.o->dma(device_base, const_cast<char *>(in.o->src), true, stream);
            continue;
        }
        in.o->pack(host + in.o->offset);
        packed_bytes += in.o->bytes;
        if (s == GEMM_STATUS_SUCCESS)
            s = cuda_status(cudaMemcpyAsync(device_base + in.o->offset, host + in.o->offset, in.o->bytes,
                                            cudaMemcpyHostToDevice, stream),
                            "staging: copy A, B, C to the device");
    }

    problem dp = packed_problem(p, plan, device_base, device);
    dp.stream = stream;
    if (s == GEMM_STATUS_SUCCESS) s = launch(state, dp, stream);
    if (s == GEMM_STATUS_SUCCESS)
        s = c_locked ? plan.c.dma(device_base, static_cast<char *>(p.c), false, stream)
                     : cuda_status(cudaMemcpyAsync(host + plan.c.offset, device_base + plan.c.offset, plan.c.bytes,
                                                   cudaMemcpyDeviceToHost, stream),
                                   "staging: copy C to the host");
    // Always wait, also after a failure: the pinned buffer must be idle before the next call
    // packs into it. The first error is the one reported.
    cudaError_t sync = cudaStreamSynchronize(stream);
    if (s != GEMM_STATUS_SUCCESS) {
        cudaGetLastError();
        return s;
    }
    if ((s = cuda_status(sync, "staging: cudaStreamSynchronize")) != GEMM_STATUS_SUCCESS) return s;
    if (!c_locked) plan.c.unpack(host + plan.c.offset, static_cast<char *>(p.c));
    ctx.note = "staged host pointers (H2D " + megabytes(plan.in_bytes) + " MB, D2H " + megabytes(plan.c.bytes) +
               " MB; " + (packed_bytes == 0 && c_locked ? "all page-locked: direct DMA)" : "packed through page-locked "
                                                                                        "staging where pageable)");
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

problem staged_shape(const problem &p) {
    if (p.space != memory_space::host) return p;
    return packed_problem(p, plan_staging(p), nullptr, -1);
}

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, void *state) {
    if (p.space == memory_space::host) return run_staged(p, ctx, launch, state);
    device_guard guard;
    gemm_status_t s = guard.enter(p.device);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return launch(state, p, static_cast<cudaStream_t>(p.stream));
}

}  // namespace gemm::cuda
