// offload_plan.cpp: tile sizes, slots and the order of the steps of a host-memory GEMM on the GPU.
#include "offload_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gemm::cuda {
namespace {

constexpr std::size_t slot_alignment = 256;

// Square tiles of C, about 16 of them, from 1024 to 2048 on a side: the first tile's blocks
// are all the link carries before the first GEMM starts, so fewer, larger tiles wait longer
// for it; smaller ones give each GEMM too few thread blocks to fill the GPU. Among 1024, 2048
// and their mixes, this rule's choice was the fastest at every size timed
// (backends/cuda_common/NOTES.md, "Offload tiles").
constexpr int64_t least_rule_tile = 1024, most_rule_tile = 2048;
constexpr int64_t smallest_tile = 16;

int64_t rule_tile(int64_t m, int64_t n) {
    const double side = std::sqrt(double(m) * double(n) / 16.0);
    int64_t tile = least_rule_tile;
    while (tile < most_rule_tile && double(tile * 2) <= side) tile *= 2;
    return tile;
}

// A batch of matrices that each fit one tile moves about this much per step, so that the
// copies and GEMMs of a step are long beside their fixed costs.
constexpr std::size_t group_bytes = std::size_t(16) << 20;
// Slots of the streamed operand and of C: the copy of the next block overlaps the GEMM of this
// one, and the copy back of the last C tile; two is the least that still overlaps.
constexpr int most_turn_slots = 3, fewest_turn_slots = 2;
// Beyond this many tiles per matrix the order of tiles is not listed: one operand stays.
constexpr int64_t most_ordered_tiles = int64_t(1) << 16;

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t offload_packed_ld(int64_t rows, std::size_t elem) {
    return int64_t(round_up(std::size_t(std::max<int64_t>(rows, 1)), std::max<std::size_t>(1, 16 / elem)));
}

int64_t offload_packed_stride(int64_t rows, int64_t cols, std::size_t elem) {
    const std::size_t matrix =
        std::size_t(offload_packed_ld(rows, elem)) * std::size_t(std::max<int64_t>(cols, 1)) * elem;
    return int64_t(round_up(matrix, slot_alignment) / elem);
}

std::size_t offload_packed_bytes(const offload_block &b, std::size_t elem) {
    if (b.empty()) return 0;
    return std::size_t(b.count) * std::size_t(offload_packed_stride(b.rows, b.cols, elem)) * elem;
}

offload_block offload_plan::block_of(offload_operand o, int64_t first, int64_t count, int64_t i0, int64_t m, int64_t j0,
                                     int64_t n) const {
    if (o == offload_operand::c) return {first, count, i0, m, j0, n};
    if (scales_only_) return {};
    // A's rows [i0, i0 + m) of op(A) over all of k, B's columns [j0, j0 + n) of op(B): as stored,
    // rows or columns depending on the op. A shared matrix (stride 0) is matrix 0 for all.
    if (o == offload_operand::a) {
        const int64_t f = shared_a_ ? 0 : first, c = shared_a_ ? 1 : count;
        return op_a_ == transpose::n ? offload_block{f, c, i0, m, 0, k_} : offload_block{f, c, 0, k_, i0, m};
    }
    const int64_t f = shared_b_ ? 0 : first, c = shared_b_ ? 1 : count;
    return op_b_ == transpose::n ? offload_block{f, c, 0, k_, j0, n} : offload_block{f, c, j0, n, 0, k_};
}

// Whether the current tile sizes fit device_bytes; sets the batch group and the pools.
bool offload_plan::fit(std::size_t device_bytes) {
    row_tiles_ = ceil_div(m_, tm_);
    col_tiles_ = ceil_div(n_, tn_);
    const bool whole = row_tiles_ == 1 && col_tiles_ == 1;
    auto slot = [&](offload_operand o, int64_t count) {
        offload_block b = block_of(o, 0, count, 0, tm_, 0, tn_);
        return round_up(offload_packed_bytes(b, o == offload_operand::c ? elem_c_ : elem_ab_), slot_alignment);
    };
    auto set = [&](offload_operand o, int slots, std::size_t bytes) { pools_[int(o)] = {bytes ? slots : 0, bytes}; };
    if (whole && batch_ > 1) {
        // Whole matrices, several to a step: a shared A or B (stride 0) takes one slot.
        const std::size_t each = slot(offload_operand::a, 1) * !shared_a_ + slot(offload_operand::b, 1) * !shared_b_ +
                                 slot(offload_operand::c, 1);
        for (group_ = std::clamp<int64_t>(int64_t(group_bytes / std::max<std::size_t>(each, 1)), 1, batch_);;
             group_ /= 2) {
            set(offload_operand::a, shared_a_ ? 1 : most_turn_slots, slot(offload_operand::a, group_));
            set(offload_operand::b, shared_b_ ? 1 : most_turn_slots, slot(offload_operand::b, group_));
            set(offload_operand::c, most_turn_slots, slot(offload_operand::c, group_));
            held_tiles_ = 1;
            if (this->device_bytes() <= device_bytes) return true;
            if (group_ == 1) break;
        }
    }
    group_ = 1;
    both_stay_ = false;
    order_.clear();
    // Every tile of A and of B on the device at once: each crosses the link once, in the order
    // that lets the GEMMs start earliest (shell_order).
    const std::size_t a_bytes = slot(offload_operand::a, 1), b_bytes = slot(offload_operand::b, 1);
    if (row_tiles_ * col_tiles_ <= most_ordered_tiles &&
        double(row_tiles_) * double(a_bytes) + double(col_tiles_) * double(b_bytes) +
                most_turn_slots * double(slot(offload_operand::c, 1)) <=
            double(device_bytes)) {
        both_stay_ = true;
        set(offload_operand::a, int(row_tiles_), a_bytes);
        set(offload_operand::b, int(col_tiles_), b_bytes);
        set(offload_operand::c, most_turn_slots, slot(offload_operand::c, 1));
        shell_order();
        return true;
    }
    const offload_operand streamed = stationary_ == offload_operand::a ? offload_operand::b : offload_operand::a;
    const int64_t stationary_tiles = stationary_ == offload_operand::a ? row_tiles_ : col_tiles_;
    const std::size_t held_bytes = slot(stationary_, 1), streamed_bytes = slot(streamed, 1),
                      c_bytes = slot(offload_operand::c, 1);
    for (int turns : {most_turn_slots, fewest_turn_slots}) {
        const std::size_t fixed = std::size_t(turns) * (streamed_bytes + c_bytes);
        if (fixed > device_bytes) continue;
        const int64_t fits = held_bytes ? int64_t(std::min<std::size_t>((device_bytes - fixed) / held_bytes,
                                                                        std::size_t(std::numeric_limits<int>::max())))
                                        : stationary_tiles;
        if (fits < 1) continue;
        held_tiles_ = std::min(stationary_tiles, fits);
        set(stationary_, int(held_tiles_), held_bytes);
        set(streamed, turns, streamed_bytes);
        set(offload_operand::c, turns, c_bytes);
        return true;
    }
    return false;
}

// The tiles of C in the order of their blocks' arrival when both operands stay: after the
// first A tile and B panel, each next load is the A tile or the B panel that makes the most new
// tiles computable per byte copied (an A tile completes a row of tiles against the panels
// already there, a panel a column). Early on the link leads and the GEMMs follow closely; the
// GEMMs are never left waiting for a whole operand, as they are for A in the first column of
// tiles when only A stays.
void offload_plan::shell_order() {
    const double a_cost = double(tm_), b_cost = double(tn_);  // per tile, k and the type alike
    int64_t rows = 0, cols = 0;
    while (rows < row_tiles_ || cols < col_tiles_) {
        const bool next_row =
            cols == col_tiles_ || (rows < row_tiles_ && (rows == 0 || double(cols) * b_cost >= double(rows) * a_cost));
        if (next_row) {
            for (int64_t j = 0; j < cols; ++j) order_.push_back({int32_t(rows), int32_t(j)});
            ++rows;
        } else {
            for (int64_t i = 0; i < rows; ++i) order_.push_back({int32_t(i), int32_t(cols)});
            ++cols;
        }
    }
}

bool offload_plan::make(const problem &p, std::size_t device_bytes, offload_plan &out, std::string &why, int64_t tile_m,
                        int64_t tile_n) {
    offload_plan base;
    base.op_a_ = p.op_a, base.op_b_ = p.op_b;
    base.m_ = std::max<int64_t>(p.m, 1), base.n_ = std::max<int64_t>(p.n, 1), base.k_ = p.k;
    base.batch_ = std::max<int64_t>(p.batch, 1);
    base.shared_a_ = base.batch_ > 1 && p.stride_a == 0;
    base.shared_b_ = base.batch_ > 1 && p.stride_b == 0;
    base.scales_only_ = p.scales_only();
    base.reads_c_ = !p.beta_zero();
    base.elem_ab_ = dtype_size(p.ab_type);
    base.elem_c_ = dtype_size(p.c_type);

    // Each operand in turn stationary; the one that moves fewer bytes wins (A on a tie).
    bool found = false;
    double best_traffic = 0;
    for (offload_operand stationary : {offload_operand::a, offload_operand::b}) {
        offload_plan candidate = base;
        candidate.stationary_ = stationary;
        const bool a = stationary == offload_operand::a;
        candidate.tm_ = std::min(base.m_, tile_m > 0 ? tile_m : rule_tile(base.m_, base.n_));
        candidate.tn_ = std::min(base.n_, tile_n > 0 ? tile_n : rule_tile(base.m_, base.n_));
        bool fits = candidate.fit(device_bytes);
        while (!fits) {
            const bool shrink_m = candidate.tm_ > smallest_tile, shrink_n = candidate.tn_ > smallest_tile;
            if (!shrink_m && !shrink_n) break;
            if (shrink_m && (candidate.tm_ >= candidate.tn_ || !shrink_n))
                candidate.tm_ = std::max(smallest_tile, candidate.tm_ / 2);
            else candidate.tn_ = std::max(smallest_tile, candidate.tn_ / 2);
            fits = candidate.fit(device_bytes);
        }
        if (!fits) continue;
        const double a_bytes = base.scales_only_ ? 0 : double(p.m) * double(p.k) * double(base.elem_ab_);
        const double b_bytes = base.scales_only_ ? 0 : double(p.k) * double(p.n) * double(base.elem_ab_);
        const double traffic =
            a ? a_bytes + b_bytes * double(candidate.passes()) : b_bytes + a_bytes * double(candidate.passes());
        if (!found || traffic < best_traffic) {
            out = candidate;
            best_traffic = traffic;
            found = true;
        }
        // Both operands staying moves each byte once: no plan with B stationary moves fewer.
        if (out.both_stay_) break;
    }
    if (!found)
        why = "not even " + std::to_string(smallest_tile) + "x" + std::to_string(smallest_tile) +
              " tiles of C with all of k = " + std::to_string(p.k) + " fit in " + std::to_string(device_bytes) +
              " bytes of device memory";
    return found;
}

// Every pass over the stationary tiles loads the streamed ones again, unless they all stay in
// their slots from one pass to the next.
int64_t offload_plan::passes() const {
    if (both_stay_) return 1;
    const bool a = stationary_ == offload_operand::a;
    const int64_t streamed_tiles = a ? col_tiles_ : row_tiles_;
    if (group_ > 1 || streamed_tiles <= pools_[a ? 1 : 0].slots) return 1;
    return ceil_div(a ? row_tiles_ : col_tiles_, held_tiles_);
}

int64_t offload_plan::steps() const { return ceil_div(batch_, group_) * row_tiles_ * col_tiles_; }

std::size_t offload_plan::slot_offset(offload_operand o, int slot) const {
    std::size_t at = 0;
    for (int i = 0; i < int(o); ++i) at += std::size_t(pools_[i].slots) * pools_[i].bytes;
    return at + std::size_t(slot) * pools_[int(o)].bytes;
}

std::size_t offload_plan::device_bytes() const { return slot_offset(offload_operand::c, pools_[2].slots); }

offload_step offload_plan::step_at(int64_t index) const {
    const int64_t per_group = row_tiles_ * col_tiles_;
    const int64_t g = index / per_group, t = index % per_group;
    int64_t i = 0, j = 0;
    if (both_stay_) {
        i = order_[std::size_t(t)].first;
        j = order_[std::size_t(t)].second;
    } else {
        const bool a = stationary_ == offload_operand::a;
        const int64_t held_side = a ? row_tiles_ : col_tiles_, other_side = a ? col_tiles_ : row_tiles_;
        const int64_t part = t / (held_tiles_ * other_side), r = t - part * held_tiles_ * other_side;
        const int64_t size = std::min(held_tiles_, held_side - part * held_tiles_);
        const int64_t outer = r / size, inner = part * held_tiles_ + r % size;
        i = a ? inner : outer;
        j = a ? outer : inner;
    }
    offload_step s;
    s.first = g * group_;
    s.count = std::min(group_, batch_ - s.first);
    s.i0 = i * tm_;
    s.m = std::min(tm_, m_ - s.i0);
    s.j0 = j * tn_;
    s.n = std::min(tn_, n_ - s.j0);
    s.a = block_of(offload_operand::a, s.first, s.count, s.i0, s.m, s.j0, s.n);
    s.b = block_of(offload_operand::b, s.first, s.count, s.i0, s.m, s.j0, s.n);
    s.c = block_of(offload_operand::c, s.first, s.count, s.i0, s.m, s.j0, s.n);
    return s;
}

problem offload_plan::step_problem(const problem &p, const offload_step &s, char *base) const {
    problem dp = p;
    auto at = [&](offload_operand o, int slot) { return base && slot >= 0 ? base + slot_offset(o, slot) : nullptr; };
    dp.m = s.m;
    dp.n = s.n;
    dp.batch = s.count;
    dp.pointer_batch = false;
    const int64_t a_rows = op_a_ == transpose::n ? s.m : k_, a_cols = op_a_ == transpose::n ? k_ : s.m;
    const int64_t b_rows = op_b_ == transpose::n ? k_ : s.n, b_cols = op_b_ == transpose::n ? s.n : k_;
    dp.a = at(offload_operand::a, s.slot_a);
    dp.lda = offload_packed_ld(a_rows, elem_ab_);
    dp.stride_a = s.a.count > 1 ? offload_packed_stride(a_rows, a_cols, elem_ab_) : 0;
    dp.b = at(offload_operand::b, s.slot_b);
    dp.ldb = offload_packed_ld(b_rows, elem_ab_);
    dp.stride_b = s.b.count > 1 ? offload_packed_stride(b_rows, b_cols, elem_ab_) : 0;
    dp.c = at(offload_operand::c, s.slot_c);
    dp.ldc = offload_packed_ld(s.m, elem_c_);
    dp.stride_c = s.count > 1 ? offload_packed_stride(s.m, s.n, elem_c_) : 0;
    dp.space = memory_space::device;
    dp.stream = nullptr;
    dp.epilogue = {};
    return dp;
}

std::vector<offload_step> offload_plan::distinct_shapes() const {
    std::vector<offload_step> shapes;
    const int64_t last_group = batch_ - (ceil_div(batch_, group_) - 1) * group_;
    for (int64_t i : {int64_t(0), row_tiles_ - 1})
        for (int64_t j : {int64_t(0), col_tiles_ - 1})
            for (int64_t first : {int64_t(0), batch_ - last_group}) {
                offload_step s;
                s.first = first;
                s.count = std::min(group_, batch_ - first);
                s.i0 = i * tm_, s.m = std::min(tm_, m_ - s.i0);
                s.j0 = j * tn_, s.n = std::min(tn_, n_ - s.j0);
                s.a = block_of(offload_operand::a, s.first, s.count, s.i0, s.m, s.j0, s.n);
                s.b = block_of(offload_operand::b, s.first, s.count, s.i0, s.m, s.j0, s.n);
                s.c = block_of(offload_operand::c, s.first, s.count, s.i0, s.m, s.j0, s.n);
                s.slot_a = s.a.empty() ? -1 : 0;
                s.slot_b = s.b.empty() ? -1 : 0;
                s.slot_c = 0;
                bool seen = false;
                for (const offload_step &o : shapes)
                    seen = seen || (o.m == s.m && o.n == s.n && o.count == s.count && o.a.count == s.a.count &&
                                    o.b.count == s.b.count);
                if (!seen) shapes.push_back(s);
            }
    return shapes;
}

std::string offload_plan::describe() const {
    const int64_t tiles = row_tiles_ * col_tiles_;
    if (group_ > 1)
        return std::to_string(steps()) + (steps() == 1 ? " step of " : " steps of up to ") + std::to_string(group_) +
               " matrices";
    std::string text = std::to_string(tiles) + (tiles == 1 ? " tile of " : " tiles of ") + std::to_string(tm_) + "x" +
                       std::to_string(tn_);
    if (batch_ > 1) text += " per matrix";
    if (tiles == 1 || scales_only_) return text;
    if (both_stay_) return text + " (A and B stay on the device, each copied once)";
    const bool a = stationary_ == offload_operand::a;
    const int64_t p = passes();
    return text + " (" + (a ? "A" : "B") + " stays on the device, " + (a ? "B" : "A") + " streamed " +
           (p == 1 ? std::string("once") : std::to_string(p) + " times: out of core") + ")";
}

offload_plan::cursor::cursor(const offload_plan &plan) : plan_(plan) {
    for (int o = 0; o < 3; ++o) slots_[o].resize(std::size_t(plan.pools_[o].slots));
}

int offload_plan::cursor::place(offload_operand o, const offload_block &b, bool &load) {
    load = false;
    if (b.empty()) return -1;
    std::vector<slot_state> &pool = slots_[int(o)];
    int victim = 0;
    for (int s = 0; s < int(pool.size()); ++s) {
        if (pool[std::size_t(s)].used >= 0 && pool[std::size_t(s)].held == b) {
            pool[std::size_t(s)].used = step_;
            return s;
        }
        if (pool[std::size_t(s)].used < pool[std::size_t(victim)].used) victim = s;
    }
    pool[std::size_t(victim)] = {b, step_};
    load = true;
    return victim;
}

bool offload_plan::cursor::next(offload_step &out) {
    if (step_ >= plan_.steps()) return false;
    out = plan_.step_at(step_);
    out.slot_a = place(offload_operand::a, out.a, out.load_a);
    out.slot_b = place(offload_operand::b, out.b, out.load_b);
    bool fresh = false;
    out.slot_c = place(offload_operand::c, out.c, fresh);
    out.load_c = plan_.reads_c_;
    ++step_;
    return true;
}

problem offload_plan::first_shape(const problem &p, int64_t tile_m, int64_t tile_n) {
    offload_plan plan;
    std::string why;
    if (!make(p, std::numeric_limits<std::size_t>::max(), plan, why, tile_m, tile_n)) return p;
    offload_step first;
    offload_plan::cursor cursor(plan);
    cursor.next(first);
    return plan.step_problem(p, first, nullptr);
}

}  // namespace gemm::cuda
