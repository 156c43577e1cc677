// run_on_device.cpp: device problems launched on the caller's stream, host problems staged:
// page-locked operands copied by DMA directly, pageable ones packed into the context's pinned
// buffer by the host copy threads in waves that the DMA follows, then launched and copied
// back the same way.
#include "run_on_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#include "cuda_status.hpp"
#include "device_context.hpp"
#include "host_copies.hpp"
#include "dispatch/error.hpp"

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

    // The same copies of columns [g0, g1) as DMA between the caller's page-locked memory and
    // the device, one 2-D copy per matrix they touch (rows x columns elements, each side with
    // its own leading dimension), so that no CPU copy stands between them. to_device: host ->
    // device; else device -> host (only the rows of those columns are written).
    gemm_status_t dma(char *device_base, char *host, bool to_device, cudaStream_t stream, int64_t g0, int64_t g1) const {
        while (g0 < g1) {
            const int64_t last = std::min(g1, (g0 / cols + 1) * cols);
            char *d = device_base + offset + packed_at(g0);
            char *h = host + host_at(g0);
            const std::size_t dpitch = std::size_t(packed_ld) * elem, hpitch = std::size_t(ld) * elem;
            const std::size_t width = std::size_t(rows) * elem, height = std::size_t(last - g0);
            cudaError_t e = to_device ? cudaMemcpy2DAsync(d, dpitch, h, hpitch, width, height, cudaMemcpyHostToDevice, stream)
                                      : cudaMemcpy2DAsync(h, hpitch, d, dpitch, width, height, cudaMemcpyDeviceToHost, stream);
            if (e != cudaSuccess) return cuda_status(e, "staging: copy between page-locked memory and the device");
            g0 = last;
        }
        return GEMM_STATUS_SUCCESS;
    }
};

// Pageable operands move in waves of whole columns, at least 8 MiB and at most 64 waves an
// operand: the DMA of one wave runs while the copy threads pack the next, and C's waves are
// unpacked as each arrives. 8 MiB (about 0.25 ms of copying at 35 GB/s) keeps the threads'
// wake-up and each copy's setup small beside the copy; the size was not tuned.
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

// The events that mark each wave of C back on the host, per (thread, device): at most
// max_waves for C, plus one per panel where a panel boundary cuts a wave.
constexpr int max_panels = 4;
struct wave_events final : context_attachment {
    cudaEvent_t events[max_waves + max_panels] = {};
    ~wave_events() override {
        for (cudaEvent_t e : events)
            if (e) cudaEventDestroy(e);
    }
    gemm_status_t get(int64_t wave, cudaEvent_t &out) {
        cudaEvent_t &e = events[wave];
        if (!e) {
            gemm_status_t s = cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                                          "cudaEventCreateWithFlags (staging)");
            if (s != GEMM_STATUS_SUCCESS) {
                e = nullptr;
                return s;
            }
        }
        out = e;
        return GEMM_STATUS_SUCCESS;
    }
};

// Columns [g0, g1) of a pageable input packed wave by wave into the pinned buffer, each wave's
// DMA enqueued as soon as it is packed.
gemm_status_t send_pageable(const staged_operand &o, char *pinned, char *device_base, cudaStream_t stream, int64_t g0,
                            int64_t g1) {
    const int64_t step = wave_columns(o);
    for (int64_t w0 = g0; w0 < g1; w0 += step) {
        const int64_t w1 = std::min(g1, w0 + step);
        copy_columns(o, w0, w1, [&](int64_t a, int64_t b) { o.pack(pinned + o.offset, a, b); });
        const std::size_t at = o.offset + o.packed_at(w0);
        if (gemm_status_t s = cuda_status(cudaMemcpyAsync(device_base + at, pinned + at, o.packed_span(w0, w1),
                                                          cudaMemcpyHostToDevice, stream),
                                          "staging: copy A, B, C to the device");
            s != GEMM_STATUS_SUCCESS)
            return s;
    }
    return GEMM_STATUS_SUCCESS;
}

// Columns [g0, g1) of C copied back into the pinned buffer in waves, each marked by the next
// of the events (enqueue_receive; wave counts them), then unpacked into the caller's pageable
// C in the same waves as each arrives (unpack_received, from the same first wave).
gemm_status_t enqueue_receive(const staged_operand &o, char *pinned, char *device_base, cudaStream_t stream,
                              wave_events &events, int64_t g0, int64_t g1, int64_t &wave) {
    const int64_t step = wave_columns(o);
    for (int64_t w0 = g0; w0 < g1; w0 += step, ++wave) {
        const int64_t w1 = std::min(g1, w0 + step);
        const std::size_t at = o.offset + o.packed_at(w0);
        cudaEvent_t done = nullptr;
        gemm_status_t s = events.get(wave, done);
        if (s == GEMM_STATUS_SUCCESS)
            s = cuda_status(cudaMemcpyAsync(pinned + at, device_base + at, o.packed_span(w0, w1), cudaMemcpyDeviceToHost,
                                            stream),
                            "staging: copy C to the host");
        if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventRecord(done, stream), "cudaEventRecord (staging)");
        if (s != GEMM_STATUS_SUCCESS) return s;
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t unpack_received(const staged_operand &o, const char *pinned, char *dst, wave_events &events,
                              int64_t g0, int64_t g1, int64_t &wave) {
    const int64_t step = wave_columns(o);
    for (int64_t w0 = g0; w0 < g1; w0 += step, ++wave) {
        const int64_t w1 = std::min(g1, w0 + step);
        if (gemm_status_t s = cuda_status(cudaEventSynchronize(events.events[wave]), "staging: cudaEventSynchronize");
            s != GEMM_STATUS_SUCCESS)
            return s;
        copy_columns(o, w0, w1, [&](int64_t a, int64_t b) { o.unpack(pinned + o.offset, dst, a, b); });
    }
    return GEMM_STATUS_SUCCESS;
}

// The second and third streams of a staged call cut into panels, and the events that order
// them: panel j's GEMM waits for its inputs (in_done), its C's trip back for its GEMM
// (gemm_done).
struct panel_streams final : context_attachment {
    cudaStream_t compute = nullptr, out = nullptr;
    cudaEvent_t in_done[max_panels] = {}, gemm_done[max_panels] = {};
    ~panel_streams() override {
        for (int j = 0; j < max_panels; ++j) {
            if (in_done[j]) cudaEventDestroy(in_done[j]);
            if (gemm_done[j]) cudaEventDestroy(gemm_done[j]);
        }
        if (compute) cudaStreamDestroy(compute);
        if (out) cudaStreamDestroy(out);
    }
    gemm_status_t create() {
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        for (cudaStream_t *st : {&compute, &out})
            if (s == GEMM_STATUS_SUCCESS && !*st)
                s = cuda_status(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (staging)");
        for (int j = 0; j < max_panels; ++j)
            for (cudaEvent_t *e : {&in_done[j], &gemm_done[j]})
                if (s == GEMM_STATUS_SUCCESS && !*e)
                    s = cuda_status(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreateWithFlags (staging)");
        return s;
    }
};

// How many panels of C's columns (and B's, op N) a staged problem is cut into, so that panel
// j's GEMM runs while panel j + 1's inputs arrive and panel j - 1's C leaves: equal panels of
// at least 1024 columns, for one large GEMM whose B is stored along n (op N; a panel of B op T
// would be rows, not columns) and that has no epilogue. Equal panels take whatever variant
// the first one takes, so a variant that refuses the shape does so before anything is
// computed (the first launch), and the call runs whole instead.
int panels_for(const problem &p) {
    if (p.batch != 1 || p.op_b != transpose::n || p.scales_only() || p.epilogue.any()) return 1;
    if (double(p.m) * double(p.n) * double(p.k) < 8.0 * 1024 * 1024 * 1024) return 1;
    for (int panels = max_panels; panels > 1; --panels)
        if (p.n % panels == 0 && p.n / panels >= 1024) return panels;
    return 1;
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

// One staged call. Page-locked operands go straight between the caller's memory and the
// device; pageable ones are packed into the context's page-locked buffer first (a DMA from
// pageable memory runs at a fraction of the link's speed) and copied from there, wave by
// wave. With panels, the inputs go on the staging stream (A whole, then each panel's B and C
// columns), panel j's GEMM on the compute stream once its inputs are in, and its C back on the
// out stream once its GEMM is done: every GEMM is enqueued before any C leaves, so a launch
// that fails leaves the caller's C untouched.
struct staged_run {
    const problem &p;
    const staging_plan &plan;
    char *pinned, *device_base;
    int device;
    cudaStream_t in;
    launch_fn launch;
    void *state;
    wave_events &events;
    bool c_locked = false;
    std::size_t packed_bytes = 0;
    bool launched = false;  // a GEMM was enqueued (so C on the device may have changed)
    int panels = 1;

    // Columns [g0, g1) of an input to the device.
    gemm_status_t send(const staged_operand &o, int64_t g0, int64_t g1) {
        if (g0 >= g1) return GEMM_STATUS_SUCCESS;
        if (page_locked(o.src)) return o.dma(device_base, const_cast<char *>(o.src), true, in, g0, g1);
        packed_bytes += o.packed_span(g0, g1);
        return send_pageable(o, pinned, device_base, in, g0, g1);
    }

    gemm_status_t go(int count, panel_streams *streams) {
        panels = count;
        packed_bytes = 0;
        launched = false;
        c_locked = page_locked(p.c);
        const bool reads_c = !p.beta_zero();
        cudaStream_t compute = count > 1 ? streams->compute : in, out = count > 1 ? streams->out : in;
        const staged_operand &a = plan.a, &b = plan.b, &c = plan.c;
        gemm_status_t s = a.src ? send(a, 0, a.columns()) : GEMM_STATUS_SUCCESS;
        if (s == GEMM_STATUS_SUCCESS && b.src && count == 1) s = send(b, 0, b.columns());
        const problem whole = packed_problem(p, plan, device_base, device);
        const int64_t width = count > 1 ? p.n / count : c.columns();  // columns of C per panel
        for (int j = 0; j < count && s == GEMM_STATUS_SUCCESS; ++j) {
            const int64_t n0 = j * width, n1 = j + 1 == count ? c.columns() : n0 + width;
            if (count > 1 && b.src) s = send(b, n0, n1);
            if (s == GEMM_STATUS_SUCCESS && reads_c) s = send(c, n0, n1);
            if (s == GEMM_STATUS_SUCCESS && count > 1) {
                s = cuda_status(cudaEventRecord(streams->in_done[j], in), "cudaEventRecord (staging)");
                if (s == GEMM_STATUS_SUCCESS)
                    s = cuda_status(cudaStreamWaitEvent(compute, streams->in_done[j], 0), "cudaStreamWaitEvent (staging)");
            }
            problem part = whole;
            if (count > 1) {
                part.n = n1 - n0;
                part.b = static_cast<const char *>(whole.b) + std::size_t(n0 * whole.ldb) * dtype_size(p.ab_type);
                part.c = static_cast<char *>(whole.c) + std::size_t(n0 * whole.ldc) * dtype_size(p.c_type);
            }
            part.stream = compute;
            if (s == GEMM_STATUS_SUCCESS) s = launch(state, part, compute);
            launched = launched || s == GEMM_STATUS_SUCCESS;
            if (s == GEMM_STATUS_SUCCESS && count > 1)
                s = cuda_status(cudaEventRecord(streams->gemm_done[j], compute), "cudaEventRecord (staging)");
        }
        int64_t wave = 0;
        for (int j = 0; j < count && s == GEMM_STATUS_SUCCESS; ++j) {
            const int64_t n0 = j * width, n1 = j + 1 == count ? c.columns() : n0 + width;
            if (count > 1) s = cuda_status(cudaStreamWaitEvent(out, streams->gemm_done[j], 0), "cudaStreamWaitEvent (staging)");
            if (s == GEMM_STATUS_SUCCESS)
                s = c_locked ? c.dma(device_base, static_cast<char *>(p.c), false, out, n0, n1)
                             : enqueue_receive(c, pinned, device_base, out, events, n0, n1, wave);
        }
        wave = 0;  // the same panels, so the same waves
        for (int j = 0; j < count && s == GEMM_STATUS_SUCCESS && !c_locked; ++j) {
            const int64_t n0 = j * width, n1 = j + 1 == count ? c.columns() : n0 + width;
            s = unpack_received(c, pinned, static_cast<char *>(p.c), events, n0, n1, wave);
        }
        return finish(s, {in, compute, out});
    }

    // Waits for every stream, also after a failure: the pinned buffer must be idle before the
    // next call packs into it. The first error is the one reported.
    static gemm_status_t finish(gemm_status_t s, std::initializer_list<cudaStream_t> streams) {
        cudaError_t sync = cudaSuccess;
        for (cudaStream_t st : streams) {
            cudaError_t e = cudaStreamSynchronize(st);
            if (sync == cudaSuccess) sync = e;
        }
        if (s != GEMM_STATUS_SUCCESS) {
            cudaGetLastError();
            return s;
        }
        return cuda_status(sync, "staging: cudaStreamSynchronize");
    }
};

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

    panel_streams *panel = nullptr;
    int panels = panels_for(p);
    if (panels > 1) {
        panel = &dc->attachment<panel_streams>();
        if (panel->create() != GEMM_STATUS_SUCCESS) {  // a failure to overlap is no failure to compute
            clear_error();
            panels = 1;
        }
    }
    staged_run run{p, plan, static_cast<char *>(pinned), static_cast<char *>(dev), device, stream, launch, state,
                   dc->attachment<wave_events>()};
    s = run.go(panels, panel);
    if (s == GEMM_STATUS_NOT_SUPPORTED && panels > 1 && !run.launched) {
        clear_error();  // the variant refused the panel's shape before anything ran: run it whole
        s = run.go(1, nullptr);
    }
    if (s != GEMM_STATUS_SUCCESS) return s;
    ctx.note = "staged host pointers (H2D " + megabytes(plan.in_bytes) + " MB, D2H " + megabytes(plan.c.bytes) +
               " MB; " + (run.packed_bytes == 0 && run.c_locked ? "all page-locked: direct DMA" : "packed through page-locked "
                                                                                            "staging where pageable") +
               (run.panels > 1 ? "; " + std::to_string(run.panels) + " panels overlapping copies and GEMMs)" : ")");
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
