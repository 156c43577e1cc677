// offload_engine.cpp: the steps of an offload_plan as copies and GEMMs on three streams, and the
// host side of pageable operands (packing into and unpacking from page-locked waves).
#include "offload_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

#include "dispatch/error.hpp"
#include "host_copies.hpp"
#include "offload_plan.hpp"

namespace gemm::cuda {
namespace {

// Pageable operands move through waves of at most 8 MiB: the DMA of one runs while the copy
// threads pack the next, and the threads' wake-up and each copy's setup stay small beside a
// wave. 8 waves in, 4 out: up to 96 MiB of page-locked memory per thread, no more than the
// largest slot needs (allocating page-locked memory is slow, so it is kept across calls).
constexpr std::size_t wave_bytes = std::size_t(8) << 20;
constexpr int in_waves = 8, out_waves = 4;
// A block of page-locked memory goes by DMA straight between the caller's matrices and the
// slot, one copy per matrix, unless it is a batch of matrices smaller than this: a copy costs
// microseconds to enqueue, and packing many small matrices into one wave is cheaper.
constexpr std::size_t direct_matrix_bytes = std::size_t(64) << 10;
// Each host copy thread takes at least this much of a wave: an 8 MiB wave then keeps 16
// threads busy. Larger parts leave threads idle and pack slower
// (backends/cuda_common/NOTES.md, "Pageable operands").
constexpr std::size_t copy_part_bytes = std::size_t(256) << 10;

// Adds the seconds from its making to its end to a total.
class stopwatch {
public:
    explicit stopwatch(double &total) : total_(total) {}
    ~stopwatch() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
    stopwatch(const stopwatch &) = delete;
    stopwatch &operator=(const stopwatch &) = delete;

private:
    double &total_;
    const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

constexpr int event_in_ready = 0, event_gemm_done = 1, first_slot_event = 2;

// One operand as the caller stores it on the host.
struct host_operand {
    char *base = nullptr;
    std::size_t elem = 0;
    int64_t ld = 0, stride = 0;
    bool locked = false;

    char *at(int64_t matrix, int64_t row, int64_t col) const {
        return base +
               (std::size_t(matrix) * std::size_t(stride) + std::size_t(col) * std::size_t(ld) + std::size_t(row)) *
                   elem;
    }
};

// A block in its slot. Its columns are numbered across its matrices: column g is column
// g % cols of the block's matrix g / cols.
struct placed_block {
    offload_block block;
    char *slot = nullptr;
    std::size_t elem = 0;
    int64_t ld = 0, stride = 0;  // packed, in elements

    placed_block(const offload_block &b, char *at, std::size_t e)
        : block(b), slot(at), elem(e), ld(offload_packed_ld(b.rows, e)),
          stride(offload_packed_stride(b.rows, b.cols, e)) {}

    int64_t columns() const { return block.count * block.cols; }
    std::size_t column_bytes() const { return std::size_t(block.rows) * elem; }
    std::size_t offset(int64_t g) const {
        return (std::size_t(g / block.cols) * std::size_t(stride) + std::size_t(g % block.cols) * std::size_t(ld)) *
               elem;
    }
    // The caller's address of column g, from row r of the block.
    char *host(const host_operand &h, int64_t g, int64_t r) const {
        return h.at(block.first + g / block.cols, block.row0 + r, block.col0 + g % block.cols);
    }
};

// Columns [g0, g1) whole, or rows [r0, r1) of the single column g0 (a column longer than a
// wave). In page-locked memory a wave is laid out as in the slot, from its first element, so
// that one copy moves it.
struct wave {
    int64_t g0 = 0, g1 = 0, r0 = 0, r1 = 0;
};

std::size_t span(const placed_block &b, const wave &w) {
    if (w.r0 != 0 || w.r1 != b.block.rows) return std::size_t(w.r1 - w.r0) * b.elem;
    return b.offset(w.g1 - 1) + b.column_bytes() - b.offset(w.g0);
}

// f(wave) for the waves of at most `most` bytes of a block, in order.
template <class F> gemm_status_t for_each_wave(const placed_block &b, std::size_t most, F f) {
    const int64_t rows = b.block.rows, columns = b.columns();
    if (b.column_bytes() > most) {
        const int64_t step = int64_t(most / b.elem);
        for (int64_t g = 0; g < columns; ++g)
            for (int64_t r = 0; r < rows; r += step)
                if (gemm_status_t s = f(wave{g, g + 1, r, std::min(rows, r + step)}); s != GEMM_STATUS_SUCCESS)
                    return s;
        return GEMM_STATUS_SUCCESS;
    }
    for (int64_t g0 = 0; g0 < columns;) {
        int64_t g1 = g0 + 1;
        while (g1 < columns && b.offset(g1) + b.column_bytes() - b.offset(g0) <= most) ++g1;
        if (gemm_status_t s = f(wave{g0, g1, 0, rows}); s != GEMM_STATUS_SUCCESS) return s;
        g0 = g1;
    }
    return GEMM_STATUS_SUCCESS;
}

// copy(part) for the parts of a wave on the host copy threads, each part a range of its
// columns or, for a partial column, of its rows, of at least copy_part_bytes.
template <class Copy> void copy_wave(const placed_block &b, const wave &w, Copy copy) {
    const bool rows_split = w.g1 - w.g0 == 1 && (w.r0 != 0 || w.r1 != b.block.rows);
    const int64_t units = rows_split ? w.r1 - w.r0 : w.g1 - w.g0;
    const std::size_t unit_bytes = rows_split ? b.elem : b.column_bytes();
    const int64_t most = std::max<int64_t>(1, int64_t(std::size_t(units) * unit_bytes / copy_part_bytes));
    const int64_t parts = std::min<int64_t>({int64_t(host_copy_threads()), most, units});
    auto part = [&](int64_t i) {
        const int64_t u0 = units * i / parts, u1 = units * (i + 1) / parts;
        if (rows_split) copy(wave{w.g0, w.g1, w.r0 + u0, w.r0 + u1});
        else copy(wave{w.g0 + u0, w.g0 + u1, 0, b.block.rows});
    };
    run_host_copies(parts, part);
}

class offload_run {
public:
    offload_run(const problem &p, offload_device &dev, const offload_plan &plan, char *device_base)
        : p_(p), dev_(dev), plan_(plan), base_(device_base) {
        const std::size_t ab = dtype_size(p.ab_type), c = dtype_size(p.c_type);
        host_[0] = {static_cast<char *>(const_cast<void *>(p.a)), ab, p.lda, p.stride_a, false};
        host_[1] = {static_cast<char *>(const_cast<void *>(p.b)), ab, p.ldb, p.stride_b, false};
        host_[2] = {static_cast<char *>(p.c), c, p.ldc, p.stride_c, false};
        for (host_operand &h : host_) h.locked = h.base && dev.page_locked(h.base);
        int events = first_slot_event;
        for (int o = 0; o < 3; ++o) {
            first_event_[o] = events;
            events += plan.slots(offload_operand(o));
        }
        first_in_wave_event_ = events;
        first_out_wave_event_ = events + in_waves;
        for (int o = 0; o < 3; ++o) wave_ = std::max(wave_, plan.slot_bytes(offload_operand(o)));
        wave_ = std::min(wave_, wave_bytes);
    }

    gemm_status_t go(offload_report &report) {
        offload_plan::cursor cursor(plan_);
        offload_step st;
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        while (s == GEMM_STATUS_SUCCESS && cursor.next(st)) s = step(st);
        if (s == GEMM_STATUS_SUCCESS) s = drain(true);
        report.plan = plan_.describe();
        report.to_device = to_device_;
        report.to_host = to_host_;
        report.all_page_locked = !packed_;
        report.packing = packing_;
        report.unpacking = unpacking_;
        report.waiting = waiting_;
        return s;
    }

private:
    int slot_event(offload_operand o, int slot) const { return first_event_[int(o)] + slot; }

    gemm_status_t step(const offload_step &st) {
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        if (st.load_a) s = load(offload_operand::a, st.a, st.slot_a);
        if (s == GEMM_STATUS_SUCCESS && st.load_b) s = load(offload_operand::b, st.b, st.slot_b);
        if (s == GEMM_STATUS_SUCCESS && st.load_c) s = load(offload_operand::c, st.c, st.slot_c);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.record(event_in_ready, offload_stream::in);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.wait(offload_stream::compute, event_in_ready);
        // Without a load, the GEMM itself overwrites the C slot: after its last copy back.
        if (s == GEMM_STATUS_SUCCESS && !st.load_c)
            s = dev_.wait(offload_stream::compute, slot_event(offload_operand::c, st.slot_c));
        if (s == GEMM_STATUS_SUCCESS) s = dev_.gemm(plan_.step_problem(p_, st, base_));
        if (s == GEMM_STATUS_SUCCESS && st.slot_a >= 0)
            s = dev_.record(slot_event(offload_operand::a, st.slot_a), offload_stream::compute);
        if (s == GEMM_STATUS_SUCCESS && st.slot_b >= 0)
            s = dev_.record(slot_event(offload_operand::b, st.slot_b), offload_stream::compute);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.record(event_gemm_done, offload_stream::compute);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.wait(offload_stream::out, event_gemm_done);
        if (s == GEMM_STATUS_SUCCESS) s = store(st.c, st.slot_c);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.record(slot_event(offload_operand::c, st.slot_c), offload_stream::out);
        if (s == GEMM_STATUS_SUCCESS) s = drain(false);
        return s;
    }

    placed_block place(offload_operand o, const offload_block &b, int slot) const {
        return placed_block(b, base_ + plan_.slot_offset(o, slot), host_[int(o)].elem);
    }

    bool direct(const host_operand &h, const placed_block &b) const {
        return h.locked && (b.block.count == 1 || std::size_t(b.block.cols) * b.column_bytes() >= direct_matrix_bytes);
    }

    // Block b of operand o into its slot, once the slot's last reader (a GEMM, or for C the
    // copy back) is done.
    gemm_status_t load(offload_operand o, const offload_block &b, int slot) {
        const host_operand &h = host_[int(o)];
        const placed_block pb = place(o, b, slot);
        to_device_ += std::size_t(b.count) * std::size_t(b.cols) * pb.column_bytes();
        gemm_status_t s = dev_.wait(offload_stream::in, slot_event(o, slot));
        if (s != GEMM_STATUS_SUCCESS) return s;
        if (direct(h, pb)) return copy_direct(h, pb, true, offload_stream::in);
        packed_ = true;
        return for_each_wave(pb, wave_, [&](const wave &w) { return send_wave(h, pb, w); });
    }

    // The block by DMA between the caller's page-locked matrices and its slot, a copy per
    // matrix.
    gemm_status_t copy_direct(const host_operand &h, const placed_block &pb, bool to_device, offload_stream stream) {
        const offload_block &b = pb.block;
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        for (int64_t i = 0; i < b.count && s == GEMM_STATUS_SUCCESS; ++i) {
            char *slot = pb.slot + pb.offset(i * b.cols), *host = pb.host(h, i * b.cols, 0);
            const std::size_t slot_pitch = std::size_t(pb.ld) * pb.elem, host_pitch = std::size_t(h.ld) * h.elem;
            s = to_device
                    ? dev_.copy(slot, slot_pitch, host, host_pitch, pb.column_bytes(), std::size_t(b.cols), true, stream)
                    : dev_.copy(host, host_pitch, slot, slot_pitch, pb.column_bytes(), std::size_t(b.cols), false,
                                stream);
        }
        return s;
    }

    // Wave w of the block between the caller's matrices and the page-locked wave at wave_at
    // (laid out as in the slot from the wave's first element), on the host copy threads: into
    // the wave when packing, out of it when not.
    static void move_wave(const host_operand &h, const placed_block &pb, const wave &w, char *wave_at, bool packing) {
        const std::size_t start = pb.offset(w.g0) + std::size_t(w.r0) * pb.elem;
        copy_wave(pb, w, [&](const wave &part) {
            const std::size_t bytes = std::size_t(part.r1 - part.r0) * pb.elem;
            for (int64_t g = part.g0; g < part.g1; ++g) {
                char *packed = wave_at + pb.offset(g) + std::size_t(part.r0) * pb.elem - start;
                char *host = pb.host(h, g, part.r0);
                if (packing) std::memcpy(packed, host, bytes);
                else std::memcpy(host, packed, bytes);
            }
        });
    }

    // A wave packed into the next page-locked in-wave (once its last copy is done), then
    // copied to the slot.
    gemm_status_t send_wave(const host_operand &h, const placed_block &pb, const wave &w) {
        char *staging = nullptr;
        gemm_status_t s = staging_memory(staging);
        if (s != GEMM_STATUS_SUCCESS) return s;
        const int i = next_in_;
        next_in_ = (next_in_ + 1) % in_waves;
        const int event = first_in_wave_event_ + i;
        if (in_used_[i] && (s = wait_for(event)) != GEMM_STATUS_SUCCESS) return s;
        char *wave_at = staging + std::size_t(i) * wave_;
        {
            stopwatch time(packing_);
            move_wave(h, pb, w, wave_at, true);
        }
        const std::size_t start = pb.offset(w.g0) + std::size_t(w.r0) * pb.elem, bytes = span(pb, w);
        s = dev_.copy(pb.slot + start, bytes, wave_at, bytes, bytes, 1, true, offload_stream::in);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.record(event, offload_stream::in);
        in_used_[i] = true;
        return s;
    }

    // C's block from its slot back to the caller's C, on the out stream.
    gemm_status_t store(const offload_block &b, int slot) {
        const host_operand &h = host_[2];
        const placed_block pb = place(offload_operand::c, b, slot);
        to_host_ += std::size_t(b.count) * std::size_t(b.cols) * pb.column_bytes();
        if (direct(h, pb)) return copy_direct(h, pb, false, offload_stream::out);
        packed_ = true;
        return for_each_wave(pb, wave_, [&](const wave &w) { return receive_wave(pb, w); });
    }

    // A wave of C into the next out-wave (unpacking what it held first), marked by its event.
    gemm_status_t receive_wave(const placed_block &pb, const wave &w) {
        char *staging = nullptr;
        gemm_status_t s = staging_memory(staging);
        if (s != GEMM_STATUS_SUCCESS) return s;
        const int i = next_out_;
        next_out_ = (next_out_ + 1) % out_waves;
        if (pending_[i].busy && (s = unpack(i)) != GEMM_STATUS_SUCCESS) return s;
        char *wave_at = staging + std::size_t(in_waves + i) * wave_;
        const std::size_t start = pb.offset(w.g0) + std::size_t(w.r0) * pb.elem, bytes = span(pb, w);
        s = dev_.copy(wave_at, bytes, pb.slot + start, bytes, bytes, 1, false, offload_stream::out);
        if (s == GEMM_STATUS_SUCCESS) s = dev_.record(first_out_wave_event_ + i, offload_stream::out);
        if (s != GEMM_STATUS_SUCCESS) return s;
        pending_[i] = {true, pb, w};
        in_flight_.push_back(i);
        return GEMM_STATUS_SUCCESS;
    }

    // Out-wave i into the caller's C, once its copy has arrived. Waves are unpacked in the
    // order they were sent.
    gemm_status_t unpack(int i) {
        while (!in_flight_.empty()) {
            const int head = in_flight_.front();
            gemm_status_t s = wait_for(first_out_wave_event_ + head);
            if (s != GEMM_STATUS_SUCCESS) return s;
            unpack_arrived(head);
            if (head == i) break;
        }
        return GEMM_STATUS_SUCCESS;
    }

    void unpack_arrived(int i) {
        pending &pw = pending_[i];
        {
            stopwatch time(unpacking_);
            move_wave(host_[2], pw.block, pw.w, staging_ + std::size_t(in_waves + i) * wave_, false);
        }
        pw.busy = false;
        in_flight_.pop_front();
    }

    // The out-waves that have arrived (all of them, waiting, when `all`).
    gemm_status_t drain(bool all) {
        while (!in_flight_.empty()) {
            const int head = in_flight_.front();
            if (all) {
                if (gemm_status_t s = wait_for(first_out_wave_event_ + head); s != GEMM_STATUS_SUCCESS) return s;
            } else {
                bool arrived = false;
                if (gemm_status_t s = dev_.passed(first_out_wave_event_ + head, arrived); s != GEMM_STATUS_SUCCESS)
                    return s;
                if (!arrived) break;
            }
            unpack_arrived(head);
        }
        return GEMM_STATUS_SUCCESS;
    }

    gemm_status_t wait_for(int event) {
        stopwatch time(waiting_);
        return dev_.host_wait(event);
    }

    gemm_status_t staging_memory(char *&out) {
        if (!staging_) {
            gemm_status_t s = dev_.pinned_memory(std::size_t(in_waves + out_waves) * wave_, staging_);
            if (s != GEMM_STATUS_SUCCESS) return s;
        }
        out = staging_;
        return GEMM_STATUS_SUCCESS;
    }

    struct pending {
        bool busy = false;
        placed_block block{offload_block{}, nullptr, 1};
        wave w;
    };

    const problem &p_;
    offload_device &dev_;
    const offload_plan &plan_;
    char *base_;
    host_operand host_[3];
    int first_event_[3] = {};
    int first_in_wave_event_ = 0, first_out_wave_event_ = 0;
    std::size_t wave_ = 0;  // bytes of page-locked memory per wave
    char *staging_ = nullptr;
    int next_in_ = 0, next_out_ = 0;
    bool in_used_[in_waves] = {};
    pending pending_[out_waves];
    std::deque<int> in_flight_;  // out-waves sent and not yet unpacked, oldest first
    std::size_t to_device_ = 0, to_host_ = 0;
    bool packed_ = false;  // a block went through page-locked waves
    double packing_ = 0, unpacking_ = 0, waiting_ = 0;
};

}  // namespace

namespace {

// The plan of p on dev, its device memory, and every shape of step checked.
gemm_status_t prepare(const problem &p, offload_device &dev, int64_t tile_m, int64_t tile_n, offload_plan &plan,
                      char *&base) {
    if (p.space != memory_space::host || p.epilogue.any())
        return set_error(GEMM_STATUS_INTERNAL_ERROR, "offload: not a host problem without an epilogue");
    std::string why;
    if (!offload_plan::make(p, dev.device_budget(), plan, why, tile_m, tile_n))
        return set_error(GEMM_STATUS_ALLOC_FAILED,
                         "offload to the GPU: " + why +
                             " (the device memory a thread's offload may hold: GEMM_OFFLOAD_MAX_DEVICE_BYTES, else "
                             "half of what is free)");
    gemm_status_t s = dev.device_memory(plan.device_bytes(), base);
    for (const offload_step &shape : plan.distinct_shapes())
        if (s == GEMM_STATUS_SUCCESS) s = dev.check(plan.step_problem(p, shape, base));
    return s;
}

}  // namespace

gemm_status_t run_offload(const problem &p, offload_device &dev, offload_report &report, int64_t tile_m, int64_t tile_n,
                          const offload_gate &gate) {
    offload_plan plan;
    char *base = nullptr;
    gemm_status_t s = prepare(p, dev, tile_m, tile_n, plan, base);
    const bool go = gate ? gate(s) : true;
    if (s != GEMM_STATUS_SUCCESS) return s;
    if (!go) return set_error(GEMM_STATUS_NOT_SUPPORTED, "offload: stopped before the first copy");
    gemm_status_t finished = GEMM_STATUS_SUCCESS;
    {
        stopwatch whole(report.seconds);
        offload_run run(p, dev, plan, base);
        try {
            s = run.go(report);
        } catch (...) {  // out of host memory: no copy may outlive the call
            dev.finish();
            throw;
        }
        stopwatch time(report.waiting);
        finished = dev.finish();
    }
    return s != GEMM_STATUS_SUCCESS ? s : finished;
}

}  // namespace gemm::cuda
