// run_on_device.cpp: device problems launched on the caller's stream, host problems staged:
// page-locked operands copied by DMA directly, pageable ones packed into the context's pinned
// buffer by the host copy threads in waves that the DMA follows, then launched and copied
// back the same way.
#include "run_on_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "cuda_status.hpp"
#include "device_context.hpp"
#include "host_copies.hpp"

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

    // Columns are numbered across the matrices: column g is column g % cols of matrix g / cols.
    int64_t columns() const { return rows > 0 ? count * cols : 0; }
    std::size_t packed_at(int64_t g) const {
        return std::size_t((g / cols) * packed_stride + (g % cols) * packed_ld) * elem;
    }
    std::size_t host_at(int64_t g) const { return std::size_t((g / cols) * stride + (g % cols) * ld) * elem; }
    // The packed bytes of columns [g0, g1), from the first one's start to the last one's end.
    std::size_t packed_span(int64_t g0, int64_t g1) const {
        return packed_at(g1 - 1) + std::size_t(rows) * elem - packed_at(g0);
    }

    // Host copies in either direction of columns [g0, g1): only their rows elements.
    void pack(char *packed, int64_t g0, int64_t g1) const {
        for (int64_t g = g0; g < g1; ++g) std::memcpy(packed + packed_at(g), src + host_at(g), std::size_t(rows) * elem);
    }
    void unpack(const char *packed, char *dst, int64_t g0, int64_t g1) const {
        for (int64_t g = g0; g < g1; ++g) std::memcpy(dst + host_at(g), packed + packed_at(g), std::size_t(rows) * elem);
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

// Pageable operands move in waves of whole columns, at least 8 MiB and at most 64 waves an
// operand: the DMA of one wave runs while the copy threads pack the next, and C's waves are
// unpacked as each arrives. Fewer bytes per wave than this and the copy threads' wake-up and
// the per-copy DMA setup start to show.
constexpr std::size_t wave_bytes = std::size_t(8) << 20;
constexpr int64_t max_waves = 64;

int64_t wave_columns(const staged_operand &o) {
    const std::size_t column = std::size_t(o.rows) * o.elem;
    const int64_t by_size = int64_t(std::max<std::size_t>(1, wave_bytes / std::max<std::size_t>(1, column)));
    return std::max(by_size, (o.columns() + max_waves - 1) / max_waves);
}

// copy(g0, g1) over columns [g0, g1) on the host copy threads: parts of at least 1 MiB.
template <class Copy> void copy_columns(const staged_operand &o, int64_t g0, int64_t g1, Copy copy) {
    const std::size_t column = std::max<std::size_t>(1, std::size_t(o.rows) * o.elem);
    const int64_t most = std::max<int64_t>(1, int64_t(std::size_t(g1 - g0) * column / (std::size_t(1) << 20)));
    const int64_t parts = std::min<int64_t>(host_copy_threads(), std::min(most, g1 - g0));
    auto part = [&](int64_t i) { copy(g0 + (g1 - g0) * i / parts, g0 + (g1 - g0) * (i + 1) / parts); };
    run_host_copies(parts, part);
}

// The events that mark each wave of C back on the host, per (thread, device).
struct wave_events final : context_attachment {
    cudaEvent_t events[max_waves + 1] = {};
    ~wave_events() override {
        for (cudaEvent_t e : events)
            if (e) cudaEventDestroy(e);
    }
    gemm_status_t get(int64_t wave, cudaEvent_t &out) {
        cudaEvent_t &e = events[wave];
        if (!e)
            if (gemm_status_t s = cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags (staging)");
                s != GEMM_STATUS_SUCCESS) {
                e = nullptr;
                return s;
            }
        out = e;
        return GEMM_STATUS_SUCCESS;
    }
};

// A pageable input packed wave by wave into the pinned buffer, each wave's DMA enqueued as soon
// as it is packed.
gemm_status_t send_pageable(const staged_operand &o, char *pinned, char *device_base, cudaStream_t stream) {
    const int64_t total = o.columns(), step = wave_columns(o);
    for (int64_t g0 = 0; g0 < total; g0 += step) {
        const int64_t g1 = std::min(total, g0 + step);
        copy_columns(o, g0, g1, [&](int64_t a, int64_t b) { o.pack(pinned + o.offset, a, b); });
        const std::size_t at = o.offset + o.packed_at(g0);
        if (gemm_status_t s = cuda_status(cudaMemcpyAsync(device_base + at, pinned + at, o.packed_span(g0, g1),
                                                          cudaMemcpyHostToDevice, stream),
                                          "staging: copy A, B, C to the device");
            s != GEMM_STATUS_SUCCESS)
            return s;
    }
    return GEMM_STATUS_SUCCESS;
}

// C's waves copied back into the pinned buffer, each marked by an event (enqueue_receive), then
// unpacked into the caller's pageable C as each arrives (unpack_received).
gemm_status_t enqueue_receive(const staged_operand &o, char *pinned, char *device_base, cudaStream_t stream,
                              wave_events &events) {
    const int64_t total = o.columns(), step = wave_columns(o);
    for (int64_t g0 = 0, w = 0; g0 < total; g0 += step, ++w) {
        const int64_t g1 = std::min(total, g0 + step);
        const std::size_t at = o.offset + o.packed_at(g0);
        cudaEvent_t done = nullptr;
        gemm_status_t s = events.get(w, done);
        if (s == GEMM_STATUS_SUCCESS)
            s = cuda_status(cudaMemcpyAsync(pinned + at, device_base + at, o.packed_span(g0, g1), cudaMemcpyDeviceToHost,
                                            stream),
                            "staging: copy C to the host");
        if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventRecord(done, stream), "cudaEventRecord (staging)");
        if (s != GEMM_STATUS_SUCCESS) return s;
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t unpack_received(const staged_operand &o, const char *pinned, char *dst, wave_events &events) {
    const int64_t total = o.columns(), step = wave_columns(o);
    for (int64_t g0 = 0, w = 0; g0 < total; g0 += step, ++w) {
        const int64_t g1 = std::min(total, g0 + step);
        if (gemm_status_t s = cuda_status(cudaEventSynchronize(events.events[w]), "staging: cudaEventSynchronize");
            s != GEMM_STATUS_SUCCESS)
            return s;
        copy_columns(o, g0, g1, [&](int64_t a, int64_t b) { o.unpack(pinned + o.offset, dst, a, b); });
    }
    return GEMM_STATUS_SUCCESS;
}

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
    // runs at a fraction of the link's speed) and copied from there, wave by wave.
    char *host = static_cast<char *>(pinned), *device_base = static_cast<char *>(dev);
    const bool reads_c = !p.beta_zero();
    const bool c_locked = page_locked(p.c);
    struct input { const staged_operand *o; bool needed; } inputs[] = {{&plan.a, plan.a.src != nullptr},
                                                                      {&plan.b, plan.b.src != nullptr},
                                                                      {&plan.c, reads_c}};
    std::size_t packed_bytes = 0;
    for (const input &in : inputs) {
        if (!in.needed || s != GEMM_STATUS_SUCCESS) continue;
        if (page_locked(in.o->src)) {
            s = in.o->dma(device_base, const_cast<char *>(in.o->src), true, stream);
            continue;
        }
        packed_bytes += in.o->bytes;
        s = send_pageable(*in.o, host, device_base, stream);
    }

    problem dp = packed_problem(p, plan, device_base, device);
    dp.stream = stream;
    wave_events &events = dc->attachment<wave_events>();
    if (s == GEMM_STATUS_SUCCESS) s = launch(state, dp, stream);
    if (s == GEMM_STATUS_SUCCESS)
        s = c_locked ? plan.c.dma(device_base, static_cast<char *>(p.c), false, stream)
                     : enqueue_receive(plan.c, host, device_base, stream, events);
    if (s == GEMM_STATUS_SUCCESS && !c_locked) s = unpack_received(plan.c, host, static_cast<char *>(p.c), events);
    // Always wait, also after a failure: the pinned buffer must be idle before the next call
    // packs into it. The first error is the one reported.
    cudaError_t sync = cudaStreamSynchronize(stream);
    if (s != GEMM_STATUS_SUCCESS) {
        cudaGetLastError();
        return s;
    }
    if ((s = cuda_status(sync, "staging: cudaStreamSynchronize")) != GEMM_STATUS_SUCCESS) return s;
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
