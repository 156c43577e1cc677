// blocked_gemm.hpp: the Goto/BLIS loop nest around one microkernel, and how it is spread
// over the calling thread and the worker pool's threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dispatch/backend.hpp"
#include "dispatch/epilogue_pass.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.hpp"
#include "microkernel.hpp"
#include "pack.hpp"
#include "pack_buffers.hpp"
#include "spin_then_block.hpp"
#include "worker_pool.hpp"

namespace gemm::cpu_omp_detail {

// Cache blocking: an mc x kc block of packed A stays in L2 while the microkernel sweeps it,
// a kc x NR micro-panel of packed B stays in L1 across that sweep, and the kc x nc panel of
// packed B lives in L3. mc is a multiple of MR and nc of NR.
struct blocking {
    int64_t mc;
    int64_t kc;
    int64_t nc;
};

// One matrix of the batch, with alpha and beta in the compute type T. A and B are stored as In
// and C as Out: T itself, or for T = float 16-bit types (gemm::half, gemm::bfloat16) for A and
// B, widened while packing, and for C, rounded once from the f32 sums (run_rounded).
template <class T, class In = T, class Out = T> struct operands {
    const In *a;
    int64_t lda;
    transpose op_a;
    const In *b;
    int64_t ldb;
    transpose op_b;
    Out *c;
    int64_t ldc;
    int64_t k;
    T alpha;
    T beta;
};

struct range {
    int64_t begin;
    int64_t end;
};

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t round_up(int64_t a, int64_t unit) { return ceil_div(a, unit) * unit; }

// The step that cuts total into the fewest blocks of at most max_step, all about equal, so
// the last block is never a sliver (k = KC + 1 gives two halves, not KC and 1).
inline int64_t balanced_step(int64_t total, int64_t max_step, int64_t unit) {
    int64_t blocks = ceil_div(total, max_step);
    return std::min(max_step, round_up(ceil_div(total, blocks), unit));
}

// Part `index` of `parts` of [0, total), cut at multiples of unit, sizes differing by at
// most one unit.
inline range split(int64_t total, int64_t unit, int64_t parts, int64_t index) {
    int64_t units = ceil_div(total, unit);
    int64_t base = units / parts, extra = units % parts;
    int64_t begin = index * base + std::min(index, extra);
    int64_t end = begin + base + (index < extra ? 1 : 0);
    return {std::min(begin * unit, total), std::min(end * unit, total)};
}

// C = beta * C on a rectangle, writing (not multiplying) when beta == 0 so NaN cannot leak;
// computed in T, rounded once to C's type.
template <class T, class In, class Out> void scale_rectangle(const operands<T, In, Out> &o, range rows, range cols) {
    for (int64_t j = cols.begin; j < cols.end; ++j) {
        Out *cj = o.c + j * o.ldc;
        if (o.beta == T(0))
            for (int64_t i = rows.begin; i < rows.end; ++i) cj[i] = Out(T(0));
        else if (o.beta != T(1))
            for (int64_t i = rows.begin; i < rows.end; ++i) cj[i] = Out(o.beta * T(cj[i]));
    }
}

// alpha or beta in the element type (the imaginary part is 0 for real types).
template <class T> T scalar(double real, double imag) {
    if constexpr (parts_v<T> == 1) return T(real);
    else return T(real_t<T>(real), real_t<T>(imag));
}

template <class T, class In = T, class Out = T> operands<T, In, Out> batch_operands(const problem &p, int64_t index) {
    operands<T, In, Out> o;
    // A and B may be NULL when not referenced (alpha = 0 or k = 0).
    o.a = p.a ? static_cast<const In *>(p.a) + index * p.stride_a : nullptr;
    o.b = p.b ? static_cast<const In *>(p.b) + index * p.stride_b : nullptr;
    o.c = static_cast<Out *>(p.c) + index * p.stride_c;
    o.lda = p.lda;
    o.ldb = p.ldb;
    o.ldc = p.ldc;
    o.op_a = p.op_a;
    o.op_b = p.op_b;
    o.k = p.k;
    o.alpha = scalar<T>(p.alpha, p.alpha_imag);
    o.beta = scalar<T>(p.beta, p.beta_imag);
    return o;
}

// What the threads of one call (its team) share: two panels of packed B (a thread may pack
// the next one while others still read the current one), the counter its threads take items
// from, and how many items of each kind are finished, per panel. There are no barriers: an
// item waits only for the items it depends on (a multiply item for the packing of its panel
// and, past the first block of k, for the multiplies of the previous block that add to the
// same C; a packing item for the multiplies that last read its buffer), so a thread that
// starts late or is descheduled by another process holds nobody up, and the others take over
// its share. A thread that waits longer than spin_time (50 us) sleeps in `progress` (woken
// by each finished item), so that its core can run the thread it waits for.
template <class T> struct team_state {
    real_t<T> *b_panels[2];
    alignas(64) std::atomic<int64_t> next_item{0};
    alignas(64) std::atomic<int64_t> packed[2] = {};
    alignas(64) std::atomic<int64_t> multiplied[2] = {};
    alignas(64) spin_then_block progress;
};

// Takes the next item below end, or returns -1 when there is none left. Never goes past
// end, so the counter stays exact for the next phase.
inline int64_t claim_item(std::atomic<int64_t> &next, int64_t end) {
    int64_t i = next.load(std::memory_order_relaxed);
    while (i < end)
        if (next.compare_exchange_weak(i, i + 1, std::memory_order_relaxed)) return i;
    return -1;
}

// Waits until counter reaches target. Sleeping after a short spin, rather than yielding:
// a thread that yields keeps its core busy, so the scheduler never moves the descheduled
// thread it waits for onto that core.
inline void wait_for(const std::atomic<int64_t> &counter, int64_t target, spin_then_block &progress) {
    progress.wait([&] { return counter.load(std::memory_order_acquire) >= target; });
}

// Counts one finished item and wakes the threads that may wait for it.
inline void finish_item(std::atomic<int64_t> &counter, spin_then_block &progress) {
    counter.fetch_add(1, std::memory_order_release);
    progress.wake();
}

// C[ic:ic+mc, jc+jr0 : jc+jr1] += the packed block of A times packed B columns [jr0, jr1)
// (alpha and beta applied as the kernel does), loops jr (NR) > ir (MR), on a C of type T.
template <class T, int MR, int NR, class In>
void multiply_block_in_place(const operands<T, In, T> &o, microkernel<T> kernel, const real_t<T> *abuf,
                             const real_t<T> *bbuf, int64_t ic, int64_t mc, int64_t jc, int64_t jr0, int64_t jr1,
                             int64_t kc, T beta) {
    for (int64_t jr = jr0; jr < jr1; jr += NR) {
        const int64_t nr = std::min<int64_t>(NR, jr1 - jr);
        const real_t<T> *bp = bbuf + jr * kc * parts_v<T>;
        for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = std::min<int64_t>(MR, mc - ir);
            const real_t<T> *ap = abuf + ir * kc * parts_v<T>;
            T *c = o.c + (ic + ir) + (jc + jr) * o.ldc;
            if (mr == MR && nr == NR) {
                kernel(kc, ap, bp, c, o.ldc, o.alpha, beta);
                continue;
            }
            // Edge tile: the kernel writes a full tile to the stack, and only the part
            // inside C is merged.
            alignas(64) T tile[MR * NR];
            kernel(kc, ap, bp, tile, MR, o.alpha, T(0));
            for (int64_t j = 0; j < nr; ++j)
                for (int64_t i = 0; i < mr; ++i) {
                    T &cij = c[i + j * o.ldc];
                    cij = beta == T(0) ? tile[i + j * MR] : tile[i + j * MR] + beta * cij;
                }
        }
    }
}

// The rounding microkernel (microkernel<float, S>) of an f32 kernel that has none of its own:
// the f32 tile summed on the stack, then rounded once into C with beta by this CPU's
// conversions (conversions.hpp). C's lines are asked for before the product, as the kernels do
// for their own C: without it the rounding's stores waited for them (backends/cpu_omp/NOTES.md,
// "16-bit operands and C").
template <int MR, int NR, microkernel<float> kernel, class S>
void rounded_from_stack(int64_t kc, const float *ap, const float *bp, S *c, int64_t ldc, float alpha, float beta) {
    for (int64_t j = 0; j < NR; ++j) {
        __builtin_prefetch(c + j * ldc, 1);
        __builtin_prefetch(c + j * ldc + MR - 1, 1);
    }
    alignas(64) float tile[MR * NR];
    kernel(kc, ap, bp, tile, MR, alpha, 0.0f);
    conversions<S>().round_block(tile, MR, beta, c, ldc, MR, NR);
}

// An edge tile of a 16-bit C, its mr x nr part inside C, by the rounding kernel on a full tile
// on the stack: C's part is copied in first where beta != 0 (beta == 0 never reads C), and only
// the part is copied back. Each value is rounded once, as in a full tile.
template <int MR, int NR, class Out>
void round_edge_tile(microkernel<float, Out> kernel, int64_t kc, const float *ap, const float *bp, Out *c, int64_t ldc,
                     int64_t mr, int64_t nr, float alpha, float beta) {
    alignas(64) Out tile[MR * NR] = {};
    if (beta != 0.0f)
        for (int64_t j = 0; j < nr; ++j)
            for (int64_t i = 0; i < mr; ++i) tile[i + j * MR] = c[i + j * ldc];
    kernel(kc, ap, bp, tile, MR, alpha, beta);
    for (int64_t j = 0; j < nr; ++j)
        for (int64_t i = 0; i < mr; ++i) c[i + j * ldc] = tile[i + j * MR];
}

// C[ic:ic+mc, jc+jr0 : jc+jr1] += the packed block of A times packed B columns [jr0, jr1)
// (alpha and beta applied as the kernel does), loops jr (NR) > ir (MR). A 16-bit C (Out, for
// T = float) is final after this one block of k (rounded_in_tiles): the rounding kernel
// (microkernel<T, Out>) rounds each tile into C with beta.
template <class T, int MR, int NR, class In, class Out = T>
void multiply_block(const operands<T, In, Out> &o, microkernel<T, Out> kernel, const real_t<T> *abuf,
                    const real_t<T> *bbuf, int64_t ic, int64_t mc, int64_t jc, int64_t jr0, int64_t jr1, int64_t kc,
                    T beta) {
    if constexpr (std::is_same_v<Out, T>) {
        multiply_block_in_place<T, MR, NR, In>(o, kernel, abuf, bbuf, ic, mc, jc, jr0, jr1, kc, beta);
    } else {
        for (int64_t jr = jr0; jr < jr1; jr += NR) {
            const int64_t nr = std::min<int64_t>(NR, jr1 - jr);
            for (int64_t ir = 0; ir < mc; ir += MR) {
                const int64_t mr = std::min<int64_t>(MR, mc - ir);
                Out *c = o.c + (ic + ir) + (jc + jr) * o.ldc;
                const float *ap = abuf + ir * kc, *bp = bbuf + jr * kc;
                if (mr == MR && nr == NR) kernel(kc, ap, bp, c, o.ldc, o.alpha, beta);
                else round_edge_tile<MR, NR>(kernel, kc, ap, bp, c, o.ldc, mr, nr, o.alpha, beta);
            }
        }
    }
}

// The epilogue on C's rows [rows) and columns [cols), which hold their final product: applied
// by the thread that wrote them, while they are still in its cache, instead of in a pass over
// all of C afterwards. Real types only (complex calls have no epilogue); the bias gradient,
// which sums across items, is left to the dispatcher's pass (fuses() in cpu_omp.cpp).
template <class T> void apply_epilogue(const epilogue_spec &e, T *c, int64_t ldc, range rows, range cols) {
    if constexpr (parts_v<T> == 1) apply_epilogue_block(e, c, ldc, rows.begin, rows.end, cols.begin, cols.end);
}

// How one call's matrices are cut: steps of the loops and the work items of each phase.
struct team_steps {
    int64_t nc_step;
    int64_t kc_step;
    int64_t m_blocks;    // row blocks, split(m, MR, m_blocks, index), at most mc rows each
    int64_t col_chunks;  // each row block is cut into this many column chunks per panel
};

// Row blocks come in a multiple of the thread count, so that with all threads equally fast
// each gets the same share, and differ by at most MR rows (with blocks of mc rows and a short
// last one, m = 2048 in 192-row blocks of a 32-row kernel gave 11 blocks, one thread taking
// 6 and the other 5 in every phase); when there are few row blocks (small m), the columns of
// the panel are cut too, so that every thread has items and a slow thread can be helped.
inline team_steps plan_steps(const problem &p, const blocking &bk, int threads, int mr, int nr) {
    team_steps st;
    st.nc_step = balanced_step(p.n, bk.nc, nr);
    st.kc_step = balanced_step(p.k, bk.kc, 1);
    int64_t blocks = ceil_div(p.m, bk.mc);
    if (threads > 1) blocks = round_up(blocks, threads);
    st.m_blocks = std::min(blocks, ceil_div(p.m, mr));
    st.col_chunks = 1;
    if (threads > 1) {
        const int64_t wanted = ceil_div(4 * threads, st.m_blocks);
        const int64_t most = std::max<int64_t>(1, ceil_div(st.nc_step, 4 * nr));
        st.col_chunks = std::clamp<int64_t>(wanted, 1, most);
    }
    return st;
}

// What the loop nest does with a block of C once its last block of k is in: the epilogue, where
// the call has one.
struct finish_with_epilogue {
    const epilogue_spec &epilogue;
    template <class O> void operator()(const O &o, range rows, range cols) const {
        if (epilogue.any()) apply_epilogue(epilogue, o.c, o.ldc, rows, cols);
    }
};

// One thread's part of C = alpha * op(A) * op(B) + beta * C for every matrix of the batch,
// in a team planned for `threads` threads, of which any number may come, at any time (the
// items are cut for `threads`; whoever comes takes them). The loops jc (nc) > pc (kc) form
// phases; a phase's items are first the packing of its kc x nc panel of B, cut into groups
// of micro-panels, then (row block, column chunk) multiplies, each packing the mc x kc block
// of A it needs, and finish(o, rows, cols) on each block of C after its last block of k.
// Every thread walks all phases and takes what is left. C is stored as Out: T, or a 16-bit
// type only where k is one block (rounded_in_tiles).
template <class T, int MR, int NR, class In, class Out = T, class Finish>
void multiply_team(const problem &p, const blocking &bk, microkernel<T, Out> kernel, int threads, real_t<T> *abuf,
                   team_state<T> &team, const Finish &finish) {
    const team_steps st = plan_steps(p, bk, threads, MR, NR);
    int64_t base = 0;  // first item number of the current phase
    int64_t phase = 0;
    // Items of each kind, per panel parity, in all phases so far (what the counters reach).
    int64_t packed_total[2] = {0, 0}, multiplied_total[2] = {0, 0};
    for (int64_t b = 0; b < p.batch; ++b) {
        const operands<T, In, Out> o = batch_operands<T, In, Out>(p, b);
        for (int64_t jc = 0; jc < p.n; jc += st.nc_step) {
            const int64_t nc = std::min(st.nc_step, p.n - jc);
            const int64_t panels = ceil_div(nc, NR);
            const int64_t chunk_panels = ceil_div(panels, st.col_chunks);
            const int64_t chunks = ceil_div(panels, chunk_panels);
            const int64_t pack_panels = ceil_div(panels, std::min<int64_t>(panels, 4 * threads));
            const int64_t packs = ceil_div(panels, pack_panels);
            const int64_t multiplies = st.m_blocks * chunks;
            for (int64_t pc = 0; pc < o.k; pc += st.kc_step, ++phase) {
                const int64_t kc = std::min(st.kc_step, o.k - pc);
                const int parity = int(phase & 1);
                real_t<T> *bbuf = team.b_panels[parity];
                const int64_t buffer_free = multiplied_total[parity];
                packed_total[parity] += packs;
                multiplied_total[parity] += multiplies;

                for (int64_t it; (it = claim_item(team.next_item, base + packs)) >= 0;) {
                    wait_for(team.multiplied[parity], buffer_free, team.progress);
                    const int64_t j0 = (it - base) * pack_panels * NR;
                    const int64_t j1 = std::min(nc, j0 + pack_panels * NR);
                    pack_b<T, NR>(o.b, o.ldb, o.op_b, pc, kc, jc + j0, j1 - j0, bbuf + j0 * kc * parts_v<T>);
                    finish_item(team.packed[parity], team.progress);
                }
                base += packs;

                // Later blocks of k add to what the first one wrote.
                const T beta = pc == 0 ? o.beta : T(1);
                int64_t in_abuf = -1;  // row block whose A this thread has packed
                for (int64_t it; (it = claim_item(team.next_item, base + multiplies)) >= 0;) {
                    const int64_t ib = (it - base) / chunks, jb = (it - base) % chunks;
                    const range rows = split(p.m, MR, st.m_blocks, ib);
                    const int64_t ic = rows.begin, mc = rows.end - rows.begin;
                    if (ib != in_abuf) {
                        pack_a<T, MR>(o.a, o.lda, o.op_a, ic, mc, pc, kc, abuf);
                        in_abuf = ib;
                    }
                    wait_for(team.packed[parity], packed_total[parity], team.progress);
                    // The previous block of k must be done with this part of C.
                    if (pc > 0) wait_for(team.multiplied[parity ^ 1], multiplied_total[parity ^ 1], team.progress);
                    const int64_t jr0 = jb * chunk_panels * NR;
                    const int64_t jr1 = std::min(nc, (jb + 1) * chunk_panels * NR);
                    multiply_block<T, MR, NR, In, Out>(o, kernel, abuf, bbuf, ic, mc, jc, jr0, jr1, kc, beta);
                    if (pc + kc == o.k)  // the last block of k: C is final
                        finish(o, range{ic, ic + mc}, range{jc + jr0, jc + jr1});
                    finish_item(team.multiplied[parity], team.progress);
                }
                base += multiplies;
            }
        }
    }
}

// Below this many flops per thread (f32 flops: thread_work), waking another thread costs more
// than it saves.
constexpr double min_flops_per_thread = 1.0e6;

// One matrix's flops (a complex multiply-add is four real ones), k counted as at least 1 so
// that scaling C (k = 0) still counts its m n; problem::flops() counts the batch and k as is.
inline double product_flops(const problem &p) {
    const double per_term = is_complex(p.ab_type) ? 8.0 : 2.0;
    return per_term * double(p.m) * double(p.n) * double(std::max<int64_t>(p.k, 1));
}

// Its work for the thread rules, in f32 flops: a vector holds half as many doubles, so a flop
// of f64 or c64 counts twice and such products take a second thread from half f32's flops
// (backends/cpu_omp/NOTES.md, "Threads counted in f32 flops").
inline double thread_work(const problem &p) {
    const bool doubles = p.ab_type == dtype::f64 || p.ab_type == dtype::c64;
    return product_flops(p) * (doubles ? 2.0 : 1.0);
}

// Matrices smaller than this are better given whole to one thread when the batch has
// enough of them to keep every thread busy.
constexpr double max_flops_per_batch_matrix = 3.2e7;

struct thread_plan {
    int threads = 1;
    bool split_batch = false;  // each matrix on one thread, instead of a team per matrix
};

inline thread_plan plan_threads(const problem &p, int max_threads) {
    thread_plan plan;
    const double work = thread_work(p) * double(p.batch);
    plan.threads = int(std::min<int64_t>(max_threads, int64_t(std::max(1.0, work / min_flops_per_thread))));
    plan.split_batch = plan.threads > 1 && p.batch >= plan.threads && product_flops(p) <= max_flops_per_batch_matrix;
    return plan;
}

// C = beta * C for columns [cols) of every matrix.
template <class T, class In, class Out> void scale_columns(const problem &p, range cols) {
    for (int64_t b = 0; b < p.batch; ++b) scale_rectangle(batch_operands<T, In, Out>(p, b), range{0, p.m}, cols);
}

// C = beta * C (alpha == 0 or k == 0), in parts of the columns that the threads take in turn.
template <class T, class In = T, class Out = T> void scale_all(const problem &p, int threads) {
    const int64_t parts = std::min<int64_t>(p.n, 4 * int64_t(threads));
    std::atomic<int64_t> next_part{0};
    auto work = [&]() noexcept {
        for (int64_t i; (i = claim_item(next_part, parts)) >= 0;) scale_columns<T, In, Out>(p, split(p.n, 1, parts, i));
    };
    run_on_threads(threads, work);
}

// Operands both stored along k (op(A) = t, op(B) = n: a row-major X·Wᵀ) and C at most
// dot_max_side lines wide on one side: each element of C is a dot product of the two operands
// where they lie (dot_kernel). Packing would copy the wide operand (W) once more than it is
// read, for a few FMAs per value, and takes most of the time there. 256 bytes of a line is
// where the dot products stop beating packing, in f32 and f64, with AVX-512 and AVX2
// (backends/cpu_omp/NOTES.md, "Dot products in place: 256 bytes of C").
template <class T> constexpr int64_t dot_max_side = 256 / int64_t(sizeof(T));

// A single row of op(A) (column of op(B)) stored with leading dimension 1 is contiguous along
// k whatever its op: a matrix-vector product.
inline bool a_along_k(const problem &p) { return p.op_a != transpose::n || (p.m == 1 && p.lda == 1); }
inline bool b_along_k(const problem &p) { return p.op_b == transpose::n || (p.n == 1 && p.ldb == 1); }

// A stored along m with at most dot_copy_max_rows rows (column-major NN with few rows of A):
// its rows are copied along k into the thread's scratch, a block of k at a time, and the dot
// products read the copy; B, the wide operand, is still read where it lies. Beyond 32 rows,
// packing is faster than the copy (backends/cpu_omp/NOTES.md, "Dot products over a copy of A:
// 32 rows").
constexpr int64_t dot_copy_max_rows = 32;

template <class T> bool dot_copies_a(const problem &p) { return !a_along_k(p) && p.m <= dot_copy_max_rows; }

// Below this k a dot product is too short for the sums of its lanes, and packing is faster
// (backends/cpu_omp/NOTES.md, "Dot products: k of 256 or more").
constexpr int64_t dot_min_k = 256;

template <class T> bool takes_dot(const problem &p, dot_kernel<T> dot) {
    return dot != nullptr && p.k >= dot_min_k && (a_along_k(p) || dot_copies_a<T>(p)) && b_along_k(p) &&
           std::min(p.m, p.n) <= dot_max_side<T>;
}

// The scratch a thread needs for dot_copies_a: the copy of at most dot_copy_max_rows rows of A
// by a block of k.
constexpr std::size_t dot_copy_bytes = 128 * 1024;

// The copy's rows are one cache line longer than its block of k: rows a power of two of KB
// apart fell into the same few sets of L1 as they were written, a column of A at a time
// (backends/cpu_omp/NOTES.md, "Dot products over a copy of A: 32 rows").
template <class T> constexpr int64_t dot_copy_pad = 64 / int64_t(sizeof(T));

// k in blocks of this many bytes of each line, so that the narrow side's lines (at most
// dot_max_side of them) stay in L2 while the wide side's stream past.
constexpr int64_t dot_k_bytes = 32 * 1024;
// The wide side is cut into parts of multiples of this many lines (a multiple of every dot
// kernel's tile, 3 and 4).
constexpr int64_t dot_part_unit = 48;

// Lines [wide) of matrix o's wide side (rows of C when m >= n, else columns) by all of its
// narrow side, then the epilogue on them. scratch (scratch_elems values) holds A's copy where
// dot_copies_a. A and B stored as In: T, or for T = float a 16-bit type that the kernel widens
// (copied as it is stored).
template <class T, class In = T, class Kernel = dot_kernel<T>>
void dot_part(const problem &p, const operands<T, In, T> &o, Kernel dot, range wide, In *scratch,
              int64_t scratch_elems) {
    const bool tall = p.m >= p.n, copy = dot_copies_a<T>(p);
    const range rows = tall ? wide : range{0, p.m}, cols = tall ? range{0, p.n} : wide;
    const int64_t nrows = rows.end - rows.begin;
    int64_t kb = dot_k_bytes / int64_t(sizeof(In));
    if (copy) kb = std::max<int64_t>(1, std::min(kb, scratch_elems / nrows - dot_copy_pad<In>));
    for (int64_t l = 0; l < o.k; l += kb) {
        const int64_t kc = std::min(kb, o.k - l);
        // (The pointer to A's lines is formed only for the layout it walks: with A along m,
        // rows.begin * lda need not lie inside A.)
        const In *a = scratch;
        int64_t lda = kc + dot_copy_pad<In>;
        if (copy) {
            for (int64_t q = 0; q < kc; ++q) {
                const In *column = o.a + rows.begin + (l + q) * o.lda;
                for (int64_t i = 0; i < nrows; ++i) scratch[i * lda + q] = column[i];
            }
        } else {
            a = o.a + rows.begin * o.lda + l, lda = o.lda;
        }
        dot(nrows, cols.end - cols.begin, kc, a, lda, o.b + cols.begin * o.ldb + l, o.ldb,
            o.c + rows.begin + cols.begin * o.ldc, o.ldc, o.alpha, l == 0 ? o.beta : T(1));
    }
    if (p.epilogue.any()) apply_epilogue(p.epilogue, o.c, o.ldc, rows, cols);
}

// Operand A stored along m (op(A) = n), B along k (as for takes_dot) and C of at most
// axpy_max_columns columns: a row-major x·W for a few rows of x. Each step of k adds columns
// of op(A), read where they lie, times the columns' values of op(B) to C's rows, summed in
// L1 (axpy_kernel): op(A) read once for every 4 columns of C, nothing packed. Up to 12
// columns this beats packing in f32 and f64; at 16 the two tie
// (backends/cpu_omp/NOTES.md, "Sums of columns in L1: 12 rows").
constexpr int64_t axpy_max_columns = 12;
// C's rows are cut into parts of the kernel's chunks of 4 KB of a column of op(A) (1024 f32
// values; smaller parts were slower, backends/cpu_omp/NOTES.md, "Sums of columns in L1: 12
// rows"), or of multiples of 64 rows where that leaves a thread without a part.
template <class T> constexpr int64_t axpy_part_unit = 4096 / int64_t(sizeof(T));
constexpr int64_t axpy_part_granule = 64;

template <class T> bool takes_axpy(const problem &p, axpy_kernel<T> axpy) {
    return axpy != nullptr && p.op_a == transpose::n && b_along_k(p) && p.n <= axpy_max_columns;
}

// Rows [rows) of matrix o's C, all of its columns, then the epilogue on them. A and B stored
// as In, as for dot_part.
template <class T, class In = T, class Kernel = axpy_kernel<T>>
void axpy_part(const problem &p, const operands<T, In, T> &o, Kernel axpy, range rows) {
    axpy(rows.end - rows.begin, p.n, o.k, o.a + rows.begin, o.lda, o.b, o.ldb, o.c + rows.begin, o.ldc, o.alpha, o.beta);
    if (p.epilogue.any()) apply_epilogue(p.epilogue, o.c, o.ldc, rows, range{0, p.n});
}

// A product that plan_threads leaves to one thread (thread_work under twice min_flops_per_thread:
// 2e6 flops in f32, 1e6 in f64) is multiplied by the small kernel, nothing packed but the rows of
// an A stored along k (microkernel_small.hpp), unless C is narrow enough for the dot products in
// place or the sums of columns (choose_direct). Packing A and B for so few uses costs a large
// share of such a product, and the small kernel is faster than packing, and than the dot
// products' copy of A, at every such shape measured (backends/cpu_omp/NOTES.md, "Small
// products on one thread").
template <class T> bool takes_small(const problem &p, small_kernel<T> small) {
    // Rows along k are gathered with 32-bit offsets: small_panel_rows rows of lda values.
    const bool offsets_fit = p.op_a == transpose::n || p.lda <= INT32_MAX / small_panel_rows;
    return small != nullptr && offsets_fit && thread_work(p) < 2 * min_flops_per_thread;
}

// Matrix o by the small kernel, k in blocks that fill the panel, then the epilogue.
template <class T>
void small_part(const problem &p, const operands<T> &o, small_kernel<T> small, T *panel, int64_t panel_elems) {
    const bool a_m = o.op_a == transpose::n, b_k = o.op_b == transpose::n;
    const int64_t step = panel_elems / small_panel_rows;
    for (int64_t l = 0; l < o.k; l += step) {
        const int64_t kc = std::min(step, o.k - l);
        small(p.m, p.n, kc, o.a + l * (a_m ? o.lda : 1), a_m ? 1 : o.lda, a_m ? o.lda : 1, o.b + l * (b_k ? 1 : o.ldb),
              b_k ? 1 : o.ldb, b_k ? o.ldb : 1, o.c, o.ldc, o.alpha, l == 0 ? o.beta : T(1), panel);
    }
    if (p.epilogue.any()) apply_epilogue(p.epilogue, o.c, o.ldc, range{0, p.m}, range{0, p.n});
}

// Where a product is small enough for the small kernel and C narrow enough for the dot
// products or the sums of columns, those win while they read op(A) in few sweeps, on one
// thread with operands rotated through memory (gemm bench, row-major, ms, small against
// them): dot products at 16 rows of X (f32 NT 16x64x256 0.0078-0.0090 / 0.0078), not at 32
// (32x32x256 0.0057 / 0.0077; f64 0.011 / 0.017). The sums of columns (a sweep of op(A) for
// every 4 columns of C) win at 1 to 4 rows of x once op(A) is 16 KB or more (us: f32 NN
// 1x64x256 3.6 / 2.9, 4x128x128 3.6 / 3.2, 2x24x256 1.86 / 1.30; f64 4x64x128 3.8 / 3.3); below
// that their set-up costs more than the sweeps save (f32 4x4x4 0.072 / 0.132, 1x16x64 0.13 /
// 0.19, 4x64x16 0.14 / 0.22); and from 5 rows they lose (f32 7x64x256 3.9 / 4.9, 6x256x64
// 3.7 / 4.3; f64 5x256x64 7.4 / 8.1).
constexpr int64_t dot_over_small_max_side = 16;
constexpr int64_t axpy_over_small_max_columns = 4;
constexpr int64_t axpy_over_small_min_bytes = 16 * 1024;

// Whether the kernels that read A and B where they lie (dot, axpy, small) may serve a call:
// real types stored as they are computed. 16-bit operands always take the packed path, whose
// packing widens them to f32.
template <class T, class In> constexpr bool reads_in_place = parts_v<T> == 1 && std::is_same_v<In, T>;

// Which kernel multiplies p without packing B, on `threads` threads; none: the packed loop
// nest.
enum class direct_path { none, dot, axpy, small };

template <class T> direct_path choose_direct(const problem &p, const direct_kernels<T> &kernels, int threads) {
    if constexpr (parts_v<T> == 1) {
        const bool small = threads == 1 && takes_small(p, kernels.small);
        const bool dot = takes_dot(p, kernels.dot);
        if (dot && !dot_copies_a<T>(p) && (!small || std::min(p.m, p.n) <= dot_over_small_max_side))
            return direct_path::dot;
        if (takes_axpy(p, kernels.axpy) && (!small || (p.n <= axpy_over_small_max_columns &&
                                                       p.m * p.k * int64_t(sizeof(T)) >= axpy_over_small_min_bytes)))
            return direct_path::axpy;
        if (small) return direct_path::small;
        if (dot) return direct_path::dot;
    }
    return direct_path::none;
}

// Every matrix of p by part(p, matrix, kernel, lines), in parts of `wide` lines (C's wide
// side) that the threads take in turn: parts of about `unit` lines, at least one a thread
// where `granule` allows, at most four a thread; cut at multiples of `granule`. A thread for
// which ready() is false (its scratch could not be allocated) takes no part. A and B stored
// as In, C as Out (operands).
template <class T, class In = T, class Out = T, class Kernel, class Part, class Ready>
void multiply_direct(const problem &p, Kernel kernel, Part part, Ready ready, int64_t wide, int64_t unit,
                     int64_t granule, int threads) {
    const int64_t fewest = std::min<int64_t>(threads, ceil_div(wide, granule));
    const int64_t parts = std::clamp<int64_t>(ceil_div(wide, unit), std::max<int64_t>(fewest, 1), 4 * int64_t(threads));
    std::atomic<int64_t> next_part{0};
    auto work = [&]() noexcept {
        if (!ready()) return;
        for (int64_t i; (i = claim_item(next_part, p.batch * parts)) >= 0;)
            part(p, batch_operands<T, In, Out>(p, i / parts), kernel, split(wide, granule, parts, i % parts));
    };
    run_on_threads(threads, work);
}

// One matrix (batch 1) on this thread alone, with its own panels of B in `alone`.
template <class T, int MR, int NR, class In>
void multiply_alone(const problem &one, const blocking &bk, microkernel<T> kernel, direct_kernels<T> direct,
                    real_t<T> *abuf, team_state<T> &alone) {
    if (one.scales_only()) {
        scale_rectangle(batch_operands<T, In, T>(one, 0), range{0, one.m}, range{0, one.n});
        return;
    }
    if constexpr (reads_in_place<T, In>) {
        const operands<T> o = batch_operands<T>(one, 0);
        const int64_t abuf_elems = round_up(bk.mc, MR) * bk.kc;
        switch (choose_direct(one, direct, 1)) {
        case direct_path::dot:
            dot_part<T>(one, o, direct.dot, range{0, std::max(one.m, one.n)}, abuf, abuf_elems);
            return;
        case direct_path::axpy: axpy_part<T>(one, o, direct.axpy, range{0, one.m}); return;
        case direct_path::small: small_part<T>(one, o, direct.small, abuf, abuf_elems); return;
        case direct_path::none: break;
        }
    }
    alone.next_item.store(0, std::memory_order_relaxed);
    for (auto &c : alone.packed) c.store(0, std::memory_order_relaxed);
    for (auto &c : alone.multiplied) c.store(0, std::memory_order_relaxed);
    multiply_team<T, MR, NR, In>(one, bk, kernel, 1, abuf, alone, finish_with_epilogue{one.epilogue});
}

// A split batch: the thread takes whole matrices in turn and multiplies each alone, with its
// own panels of B. matrix(i) is matrix i as a problem of batch 1.
template <class T, int MR, int NR, class In, class Matrix>
void multiply_matrices_alone(int64_t count, const Matrix &matrix, const blocking &bk, microkernel<T> kernel,
                             direct_kernels<T> direct, real_t<T> *abuf, real_t<T> *bbuf, std::size_t panel,
                             std::atomic<int64_t> &next_matrix) {
    team_state<T> alone;
    alone.b_panels[0] = bbuf;
    alone.b_panels[1] = bbuf + panel;
    for (int64_t i; (i = claim_item(next_matrix, count)) >= 0;)
        multiply_alone<T, MR, NR, In>(matrix(i), bk, kernel, direct, abuf, alone);
}

// The f32 sums of a 16-bit C are kept for a strip of C of at most this many values (4 MiB), so
// that the workspace stays the size of a cache blocking whatever C's size: 512^2 and 1024^2
// are one strip.
constexpr int64_t rounded_strip_values = int64_t(1) << 20;

// Finishes a block of a strip: its f32 sums (strip coordinates, leading dimension ld) plus
// beta * C, in f32, rounded once into C's type at the strip's place (row0, col0) in C.
template <class T, class Out> struct round_into_c {
    const T *sums;
    int64_t ld;
    Out *c;
    int64_t ldc;
    int64_t row0, col0;
    T beta;
    // A column of the block at a time, by the conversions of this CPU's vectors (beta == 0:
    // C written, never read, so NaN in C cannot leak).
    template <class O> void operator()(const O &, range rows, range cols) const {
        const round_fn<Out> round = conversions<Out>().round;
        for (int64_t j = cols.begin; j < cols.end; ++j)
            round(sums + rows.begin + j * ld, beta, c + row0 + rows.begin + (col0 + j) * ldc, rows.end - rows.begin);
    }
};

// Rows [rows) and columns [cols) of matrix o as a problem of batch 1 whose C is `sums` (f32,
// leading dimension its rows, beta 0: written, never read).
template <class T, class In, class Out>
problem strip_problem(const problem &p, const operands<T, In, Out> &o, range rows, range cols, T *sums) {
    problem s = p;
    s.batch = 1;
    s.stride_a = s.stride_b = s.stride_c = 0;
    s.m = rows.end - rows.begin;
    s.n = cols.end - cols.begin;
    s.a = o.a + rows.begin * (o.op_a == transpose::n ? 1 : o.lda);
    s.b = o.b + cols.begin * (o.op_b == transpose::n ? o.ldb : 1);
    s.c = sums;
    s.ldc = s.m;
    s.c_type = p.compute_type;
    s.beta = s.beta_imag = 0;
    s.epilogue = {};
    return s;
}

// Nothing left to do with a block of C: a 16-bit C's tiles are final once rounded
// (multiply_block), and its epilogue is the dispatcher's (run_rounded).
struct finish_nothing {
    template <class O> void operator()(const O &, range, range) const {}
};

// Where k is one block of k, each tile of C is final after one call of the microkernel, so a
// 16-bit C is rounded from the tile the kernel leaves on the stack, without the strip of f32
// sums: that strip (4 MiB, above L2) was written and read once more for every value of C,
// a large share of the work where k is short (backends/cpu_omp/NOTES.md, "16-bit operands
// and C").
inline bool rounded_in_tiles(const problem &p, const blocking &bk) { return p.k <= bk.kc; }

// p multiplied by a team of `threads` (multiply_team, each block finished by `finish`): B's
// two panels of `panel` values at b, in the calling thread's buffer; each thread's A in its
// own buffer of a_bytes (a thread that cannot have it takes no part).
template <class T, int MR, int NR, class In, class Out, class Finish>
void run_team(const problem &p, const blocking &bk, microkernel<T, Out> kernel, int threads, std::size_t a_bytes, T *b,
              std::size_t panel, const Finish &finish) {
    team_state<T> team;
    team.b_panels[0] = b;
    team.b_panels[1] = b + panel;
    auto work = [&]() noexcept {
        pack_buffers &buffers = thread_pack_buffers();
        if (!buffers.reserve(a_bytes, 0)) return;
        multiply_team<T, MR, NR, In, Out>(p, bk, kernel, threads, static_cast<T *>(buffers.a()), team, finish);
    };
    run_on_threads(threads, work);
}

// p with a 16-bit C (Out) rounded tile by tile by the rounding kernel (rounded_in_tiles), by the
// team of run_blocked. Returns false, C untouched, without the calling thread's buffers.
template <class T, int MR, int NR, class In, class Out>
bool run_rounded_tiles(const problem &p, const blocking &bk, microkernel<T, Out> rounding) {
    const int threads = plan_threads(p, call_threads()).threads;
    const std::size_t a_bytes = std::size_t(round_up(bk.mc, MR) * bk.kc) * sizeof(T);
    const std::size_t panel = std::size_t(round_up(bk.nc, NR) * bk.kc);
    pack_buffers &own = thread_pack_buffers();
    if (!own.reserve(a_bytes, 2 * panel * sizeof(T))) return false;
    run_team<T, MR, NR, In, Out>(p, bk, rounding, threads, a_bytes, static_cast<T *>(own.b()), panel, finish_nothing{});
    return true;
}

// A 16-bit C (T = float) where k is one block, tile by tile by `rounding` (run_rounded_tiles); otherwise
// each matrix in strips of C, each strip's product summed in f32 in
// the calling thread's `sums` by the team (A and B widened while packing, as for an f32 C),
// and each block rounded into C by the thread that finished it, while it is in its cache.
// Rounding once, from the f32 sums, is the result of f32 arithmetic; storing the sums of each
// block of k in C would round them again for every block. The epilogue is not fused (cpu_omp's
// fuses_epilogue): the dispatcher's pass applies it to the rounded C, as it would for a
// backend computing in C's type. Returns false, C untouched, without the calling thread's buffers.
template <class T, int MR, int NR, class In, class Out>
bool run_rounded(const problem &p, const blocking &bk, microkernel<T> kernel, microkernel<T, Out> rounding) {
    if (p.scales_only()) {
        scale_all<T, In, Out>(p, plan_threads(p, call_threads()).threads);
        return true;
    }
    if (rounded_in_tiles(p, bk)) return run_rounded_tiles<T, MR, NR, In, Out>(p, bk, rounding);
    const int64_t strip_cols = std::min(p.n, std::max<int64_t>(NR, rounded_strip_values / p.m / NR * NR));
    const int64_t strip_rows = std::min(p.m, std::max<int64_t>(MR, rounded_strip_values / strip_cols));
    const std::size_t a_bytes = std::size_t(round_up(bk.mc, MR) * bk.kc) * sizeof(T);
    const std::size_t panel = std::size_t(round_up(bk.nc, NR) * bk.kc);
    const std::size_t b_bytes = 2 * panel * sizeof(T);
    pack_buffers &own = thread_pack_buffers();
    if (!own.reserve(a_bytes, b_bytes, std::size_t(strip_rows * strip_cols) * sizeof(T))) return false;
    T *sums = static_cast<T *>(own.sums());
    for (int64_t b = 0; b < p.batch; ++b) {
        const operands<T, In, Out> o = batch_operands<T, In, Out>(p, b);
        for (int64_t r0 = 0; r0 < p.m; r0 += strip_rows)
            for (int64_t c0 = 0; c0 < p.n; c0 += strip_cols) {
                const problem strip = strip_problem(p, o, range{r0, std::min(p.m, r0 + strip_rows)},
                                                    range{c0, std::min(p.n, c0 + strip_cols)}, sums);
                const round_into_c<T, Out> finish{sums, strip.ldc, o.c, o.ldc, r0, c0, o.beta};
                const int threads = plan_threads(strip, call_threads()).threads;
                run_team<T, MR, NR, In, T>(strip, bk, kernel, threads, a_bytes, static_cast<T *>(own.b()), panel,
                                           finish);
            }
    }
    return true;
}

// The whole call, on the calling thread and the pool threads that join it. Returns false
// only when the calling thread's packing memory could not be allocated, in which case C has
// not been touched. A and B stored as In (widened while packing), C as T (run_rounded serves
// a 16-bit C).
template <class T, int MR, int NR, class In = T>
bool run_blocked(const problem &p, const blocking &bk, microkernel<T> kernel, direct_kernels<T> direct) {
    const thread_plan plan = plan_threads(p, call_threads());
    if (p.scales_only()) {
        scale_all<T, In>(p, plan.threads);
        return true;
    }
    const std::size_t a_bytes = std::size_t(round_up(bk.mc, MR) * bk.kc) * sizeof(T);
    if constexpr (reads_in_place<T, In>) {
        switch (choose_direct(p, direct, plan.threads)) {
        case direct_path::dot: {
            // The scratch for A's copy: the calling thread's first, so that a call that cannot
            // have it fails with C untouched.
            const bool copy = dot_copies_a<T>(p);
            auto ready = [copy] { return !copy || thread_pack_buffers().reserve(dot_copy_bytes, 0); };
            if (!ready()) return false;
            auto part = [copy](const problem &q, const operands<T> &o, dot_kernel<T> dot, range lines) {
                T *scratch = copy ? static_cast<T *>(thread_pack_buffers().a()) : nullptr;
                dot_part<T>(q, o, dot, lines, scratch, int64_t(dot_copy_bytes / sizeof(T)));
            };
            multiply_direct<T>(p, direct.dot, part, ready, std::max(p.m, p.n), dot_part_unit, dot_part_unit,
                               plan.threads);
            return true;
        }
        case direct_path::axpy:
            multiply_direct<T>(
                p, direct.axpy, axpy_part<T>, [] { return true; }, p.m, axpy_part_unit<T>, axpy_part_granule,
                plan.threads);
            return true;
        case direct_path::small: {
            // On the calling thread alone, its A buffer holding the panel.
            pack_buffers &own = thread_pack_buffers();
            if (!own.reserve(a_bytes, 0)) return false;
            for (int64_t b = 0; b < p.batch; ++b)
                small_part<T>(p, batch_operands<T>(p, b), direct.small, static_cast<T *>(own.a()),
                              int64_t(a_bytes / sizeof(T)));
            return true;
        }
        case direct_path::none: break;
        }
    }

    const std::size_t panel = std::size_t(round_up(bk.nc, NR) * bk.kc * parts_v<T>);  // reals
    const std::size_t b_bytes = 2 * panel * sizeof(real_t<T>);

    // The calling thread's B buffers hold the panels its team shares.
    pack_buffers &own = thread_pack_buffers();
    if (!own.reserve(a_bytes, b_bytes)) return false;
    team_state<T> team;
    team.b_panels[0] = static_cast<real_t<T> *>(own.b());
    team.b_panels[1] = team.b_panels[0] + panel;

    // A thread that cannot get its own buffers takes no items; the calling thread has its
    // buffers, so the work is always done.
    std::atomic<int64_t> next_matrix{0};
    auto work = [&]() noexcept {
        pack_buffers &buffers = thread_pack_buffers();
        // In a split batch every thread packs its own B as well.
        if (!buffers.reserve(a_bytes, plan.split_batch ? b_bytes : 0)) return;
        real_t<T> *abuf = static_cast<real_t<T> *>(buffers.a());
        auto matrix = [&p](int64_t i) {
            problem one = p;
            one.batch = 1;
            one.a = p.a ? static_cast<const In *>(p.a) + i * p.stride_a : nullptr;
            one.b = p.b ? static_cast<const In *>(p.b) + i * p.stride_b : nullptr;
            one.c = static_cast<T *>(p.c) + i * p.stride_c;
            return one;
        };
        if (plan.split_batch)
            multiply_matrices_alone<T, MR, NR, In>(p.batch, matrix, bk, kernel, direct, abuf,
                                                   static_cast<real_t<T> *>(buffers.b()), panel, next_matrix);
        else multiply_team<T, MR, NR, In>(p, bk, kernel, plan.threads, abuf, team, finish_with_epilogue{p.epilogue});
    };
    run_on_threads(plan.threads, work);
    return true;
}

enum class batch_outcome { done, declined, no_memory };

// The matrices of a pointer-array batch or grouped call (shapes of their own, one type), each
// whole on one thread, the threads taking them in turn in one parallel region: what a split
// strided batch does, for the same reason and under the same rule (plan_threads). Declined,
// with nothing touched, where a team per matrix serves better: a matrix above
// max_flops_per_batch_matrix, fewer matrices than threads, or too little work for two.
// no_memory: the calling thread's packing buffers could not be allocated (nothing touched).
// A and B stored as In, C as T (run_stored_batch declines a 16-bit C).
template <class T, int MR, int NR, class In = T>
batch_outcome run_blocked_batch(const problem_batch &batch, const blocking &bk, microkernel<T> kernel,
                                direct_kernels<T> direct) {
    const int64_t count = int64_t(batch.c.size());
    double work = 0, largest = 0;
    std::vector<int64_t> starts{0};  // matrix index where each group starts
    for (std::size_t g = 0; g < batch.shapes.size(); ++g) {
        const problem &s = batch.shapes[g];
        largest = std::max(largest, product_flops(s));
        work += thread_work(s) * double(batch.sizes[g]);
        starts.push_back(starts.back() + batch.sizes[g]);
    }
    const int threads = int(std::min<int64_t>(call_threads(), int64_t(std::max(1.0, work / min_flops_per_thread))));
    if (threads <= 1 || count < threads || largest > max_flops_per_batch_matrix) return batch_outcome::declined;

    const std::size_t a_bytes = std::size_t(round_up(bk.mc, MR) * bk.kc) * sizeof(T);
    const std::size_t panel = std::size_t(round_up(bk.nc, NR) * bk.kc * parts_v<T>);  // reals
    const std::size_t b_bytes = 2 * panel * sizeof(real_t<T>);
    if (!thread_pack_buffers().reserve(a_bytes, b_bytes)) return batch_outcome::no_memory;
    auto matrix = [&](int64_t i) {
        const std::size_t g = std::size_t(std::upper_bound(starts.begin(), starts.end(), i) - starts.begin()) - 1;
        problem one = batch.shapes[g];
        one.a = batch.a[std::size_t(i)], one.b = batch.b[std::size_t(i)], one.c = batch.c[std::size_t(i)];
        return one;
    };
    // A thread that cannot get its own buffers takes no matrices; the calling thread has its
    // buffers, so every matrix is done.
    std::atomic<int64_t> next_matrix{0};
    auto work_fn = [&]() noexcept {
        pack_buffers &buffers = thread_pack_buffers();
        if (!buffers.reserve(a_bytes, b_bytes)) return;
        multiply_matrices_alone<T, MR, NR, In>(count, matrix, bk, kernel, direct, static_cast<real_t<T> *>(buffers.a()),
                                               static_cast<real_t<T> *>(buffers.b()), panel, next_matrix);
    };
    run_on_threads(threads, work_fn);
    return batch_outcome::done;
}

}  // namespace gemm::cpu_omp_detail

namespace gemm::cpu_omp_detail {

// A stored matrix of `rows` x `cols` 16-bit values (leading dimension ld) as f32 in dst,
// leading dimension rows: a column at a time by this CPU's conversions.
template <class S> void widen_matrix(const S *src, int64_t ld, int64_t rows, int64_t cols, float *dst) {
    const widen_fn<S> widen = conversions<S>().widen;
    for (int64_t j = 0; j < cols; ++j) widen(src + j * ld, dst + j * rows, rows);
}

// The stored rows and columns of op(X), an m_op x k_op matrix.
inline int64_t stored_rows(transpose op, int64_t m_op, int64_t k_op) { return op == transpose::n ? m_op : k_op; }
inline int64_t stored_cols(transpose op, int64_t m_op, int64_t k_op) { return op == transpose::n ? k_op : m_op; }

// Matrix 0 of p with A and B widened into wa and wb (leading dimensions their stored rows),
// as an f32 problem of batch 1; C stays p's.
inline problem widened_problem(const problem &p, float *wa, float *wb) {
    problem q = p;
    q.batch = 1;
    q.stride_a = q.stride_b = q.stride_c = 0;
    q.ab_type = dtype::f32;
    q.a = wa;
    q.b = wb;
    q.lda = std::max<int64_t>(1, stored_rows(p.op_a, p.m, p.k));
    q.ldb = std::max<int64_t>(1, stored_rows(p.op_b, p.k, p.n));
    return q;
}

// Which f32 kernel reading its operands in place would serve p's 16-bit product once A and B
// are widened whole (none: the packed loop nest). Taken only where one thread serves the
// call (plan_threads), so that widening both operands costs little beside the product, and
// where the widened operands fit the B panels' buffer of the blocking bk (f32 B panels of
// `panel` values each): the buffers never grow past what the packed path would use. The
// packed path is otherwise what a one-thread 16-bit product would run, where packing costs as
// much as the product (takes_small; backends/cpu_omp/NOTES.md, "Small products on one
// thread").
inline direct_path widened_direct_path(const problem &p, const direct_kernels<float> &direct, std::size_t panel) {
    if (p.scales_only() || plan_threads(p, call_threads()).threads != 1) return direct_path::none;
    const int64_t a_values = round_up(p.m * p.k, 16), b_values = p.k * p.n;
    if (std::size_t(a_values + b_values) > 2 * panel) return direct_path::none;
    float none = 0;
    return choose_direct(widened_problem(p, &none, &none), direct, 1);
}

// p (16-bit A and B stored as In, C as Out: In or f32) by the kernel widened_direct_path
// chose, on the calling thread: each matrix's A and B widened into its B buffer, the product
// summed into C (f32) or into its sums buffer, rounded once into C (16-bit; the epilogue is
// then the dispatcher's, as in run_rounded). Returns false, C untouched, without the
// buffers.
template <class In, class Out>
bool run_widened_direct(const problem &p, direct_kernels<float> direct, direct_path path, std::size_t a_bytes,
                        std::size_t panel) {
    constexpr bool rounded = !std::is_same_v<Out, float>;
    pack_buffers &own = thread_pack_buffers();
    const std::size_t sums_bytes = rounded ? std::size_t(p.m * p.n) * sizeof(float) : 0;
    if (!own.reserve(a_bytes, 2 * panel * sizeof(float), sums_bytes)) return false;
    float *const wa = static_cast<float *>(own.b());
    float *const wb = wa + round_up(p.m * p.k, 16);
    float *const scratch = static_cast<float *>(own.a());
    const int64_t scratch_values = int64_t(a_bytes / sizeof(float));
    for (int64_t b = 0; b < p.batch; ++b) {
        const operands<float, In, Out> o = batch_operands<float, In, Out>(p, b);
        widen_matrix(o.a, o.lda, stored_rows(o.op_a, p.m, p.k), stored_cols(o.op_a, p.m, p.k), wa);
        widen_matrix(o.b, o.ldb, stored_rows(o.op_b, p.k, p.n), stored_cols(o.op_b, p.k, p.n), wb);
        problem q = widened_problem(p, wa, wb);
        if constexpr (rounded) {
            q.c = own.sums();
            q.ldc = std::max<int64_t>(1, p.m);
            q.c_type = dtype::f32;
            q.beta = 0;
            q.epilogue = {};
        } else {
            q.c = o.c;
        }
        const operands<float> f = batch_operands<float>(q, 0);
        switch (path) {
        case direct_path::dot:
            dot_part<float>(q, f, direct.dot, range{0, std::max(q.m, q.n)}, scratch, scratch_values);
            break;
        case direct_path::axpy: axpy_part<float>(q, f, direct.axpy, range{0, q.m}); break;
        case direct_path::small: small_part<float>(q, f, direct.small, scratch, scratch_values); break;
        case direct_path::none: break;
        }
        if constexpr (rounded) {
            const round_into_c<float, Out> finish{f.c, q.ldc, o.c, o.ldc, 0, 0, o.beta};
            finish(f, range{0, p.m}, range{0, p.n});
        }
    }
    return true;
}

// The kernels reading 16-bit operands of type S in place, from the f32 set of one ISA.
template <class S> widening_kernels<S> widening_of(const direct_kernels<float> &direct) {
    if constexpr (std::is_same_v<S, half>) return direct.f16;
    else return direct.bf16;
}

// The path a 16-bit product takes in place, on the threads f32 would use: the dot products or
// sums of columns where f32 takes them for the same shape (choose_direct), the widening
// kernels reading the 16-bit values where they lie, half the bytes of f32's. Packing instead
// widened the wide operand into panels read once, several times slower than f32
// (backends/cpu_omp/NOTES.md, "16-bit operands and C"). none: the small kernel on operands
// widened whole (widened_direct_path), or the packed loop nest.
template <class S> direct_path widening_path(const problem &p, const direct_kernels<float> &direct) {
    if (p.scales_only()) return direct_path::none;
    const widening_kernels<S> kernels = widening_of<S>(direct);
    switch (choose_direct(p, direct, plan_threads(p, call_threads()).threads)) {
    case direct_path::dot: return kernels.dot ? direct_path::dot : direct_path::none;
    case direct_path::axpy: return kernels.axpy ? direct_path::axpy : direct_path::none;
    default: return direct_path::none;
    }
}

// A 16-bit C's f32 sums are kept a slice of at most this many values (128 KB, in L2) of a
// part's lines at a time, in the thread's sums buffer, then rounded into C by that thread.
constexpr int64_t widening_slice_values = 32 * 1024;

// Lines [lines) of matrix o's wide side (rows where wide_rows, else columns) by `part_of`
// (dot_part or axpy_part, on an f32 C), into a 16-bit C: a slice of at most
// widening_slice_values sums at a time, cut at multiples of granule lines, each rounded once
// into C (round_into_c).
template <class In, class Out, class PartOf>
void round_part(const problem &p, const operands<float, In, Out> &o, range lines, bool wide_rows, int64_t granule,
                float *sums, const PartOf &part_of) {
    const bool tall = wide_rows;
    const int64_t narrow = std::max<int64_t>(1, tall ? p.n : p.m);
    const int64_t slice = std::max(granule, widening_slice_values / narrow / granule * granule);
    for (int64_t l0 = lines.begin; l0 < lines.end; l0 += slice) {
        const range part{l0, std::min(lines.end, l0 + slice)};
        const range rows = tall ? part : range{0, p.m}, cols = tall ? range{0, p.n} : part;
        const problem q = strip_problem(p, o, rows, cols, sums);
        const operands<float, In, float> f = batch_operands<float, In, float>(q, 0);
        part_of(q, f, range{0, std::max(q.m, q.n)});
        const round_into_c<float, Out> finish{sums, q.ldc, o.c, o.ldc, rows.begin, cols.begin, o.beta};
        finish(f, range{0, q.m}, range{0, q.n});
    }
}

// p (16-bit A and B stored as In, C as Out: In or f32) by the widening kernels on the path
// widening_path chose, its wide side in parts the threads take in turn (multiply_direct). An
// f32 C is summed into where it lies, with the epilogue; a 16-bit C through round_part (the
// epilogue is then the dispatcher's, as in run_rounded). Returns false, C untouched, without
// the calling thread's scratch.
template <class In, class Out>
bool run_widening_direct(const problem &p, widening_kernels<In> kernels, direct_path path) {
    constexpr bool rounded = !std::is_same_v<Out, float>;
    const int threads = plan_threads(p, call_threads()).threads;
    const bool dot = path == direct_path::dot;
    const int64_t granule = dot ? dot_part_unit : axpy_part_granule;
    const std::size_t scratch_bytes = dot && dot_copies_a<float>(p) ? dot_copy_bytes : 0;
    const std::size_t sums_bytes = rounded ? std::size_t(widening_slice_values) * sizeof(float) : 0;
    auto ready = [=] { return thread_pack_buffers().reserve(scratch_bytes, 0, sums_bytes); };
    if (!ready()) return false;
    // The product of lines [lines) of q into its f32 C.
    auto product = [dot, kernels](const problem &q, const operands<float, In, float> &f, range lines) {
        if (!dot) return axpy_part<float>(q, f, kernels.axpy, lines);
        In *scratch = static_cast<In *>(thread_pack_buffers().a());
        dot_part<float>(q, f, kernels.dot, lines, scratch, int64_t(dot_copy_bytes / sizeof(In)));
    };
    auto part = [&](const problem &q, const operands<float, In, Out> &o, widening_kernel<In>, range lines) {
        if constexpr (rounded)
            round_part(q, o, lines, !dot || q.m >= q.n, granule, static_cast<float *>(thread_pack_buffers().sums()),
                       product);
        else product(q, o, lines);
    };
    const widening_kernel<In> kernel = dot ? kernels.dot : kernels.axpy;
    if (dot)
        multiply_direct<float, In, Out>(p, kernel, part, ready, std::max(p.m, p.n), dot_part_unit, granule, threads);
    else multiply_direct<float, In, Out>(p, kernel, part, ready, p.m, axpy_part_unit<float>, granule, threads);
    return true;
}

// A and B of the 16-bit type S, C of S (Out) or f32: read in place (run_widening_direct), or
// widened whole for one thread (run_widened_direct), or widened while packing (run_rounded,
// with `rounding` for a C of S, run_blocked).
template <int MR, int NR, class S>
bool run_16bit(const problem &p, const blocking &bk, microkernel<float> kernel, direct_kernels<float> direct,
               microkernel<float, S> rounding) {
    const bool c_own = p.c_type == p.ab_type;
    const direct_path in_place = widening_path<S>(p, direct);
    if (in_place != direct_path::none)
        return c_own ? run_widening_direct<S, S>(p, widening_of<S>(direct), in_place)
                     : run_widening_direct<S, float>(p, widening_of<S>(direct), in_place);
    const std::size_t a_bytes = std::size_t(round_up(bk.mc, MR) * bk.kc) * sizeof(float);
    const std::size_t panel = std::size_t(round_up(bk.nc, NR) * bk.kc);
    const direct_path widened = widened_direct_path(p, direct, panel);
    if (widened != direct_path::none)
        return c_own ? run_widened_direct<S, S>(p, direct, widened, a_bytes, panel)
                     : run_widened_direct<S, float>(p, direct, widened, a_bytes, panel);
    return c_own ? run_rounded<float, MR, NR, S, S>(p, bk, kernel, rounding)
                 : run_blocked<float, MR, NR, S>(p, bk, kernel, direct_kernels<float>{});
}

// The rounding kernels (microkernel<float, S>) of an f32 kernel F32 that has none of its own:
// its tile rounded from the stack. A Rounding of run_f32_table.
template <int MR, int NR, microkernel<float> F32> struct rounding_from_stack {
    static microkernel<float, half> f16() { return rounded_from_stack<MR, NR, F32, half>; }
    static microkernel<float, bfloat16> bf16() { return rounded_from_stack<MR, NR, F32, bfloat16>; }
};

// The f32 table's kernels for MR x NR as p's types need them: f32 itself, or A and B of a
// 16-bit type with C of that type or f32 (run_16bit; supports() in cpu_omp.cpp admits no other
// mix). Rounding::f16() and Rounding::bf16() give the table kernel's rounding kernels for this
// CPU (rounding_from_stack, or the kernel's own).
template <int MR, int NR, class Rounding>
bool run_f32_table(const problem &p, const blocking &bk, microkernel<float> kernel, direct_kernels<float> direct) {
    switch (p.ab_type) {
    case dtype::f16: return run_16bit<MR, NR, half>(p, bk, kernel, direct, Rounding::f16());
    case dtype::bf16: return run_16bit<MR, NR, bfloat16>(p, bk, kernel, direct, Rounding::bf16());
    default: return run_blocked<float, MR, NR>(p, bk, kernel, direct);
    }
}

// The same for a pointer-array batch. A 16-bit C is declined: its matrices run one by one,
// each through run_rounded.
template <int MR, int NR>
batch_outcome run_f32_table_batch(const problem_batch &batch, const blocking &bk, microkernel<float> kernel,
                                  direct_kernels<float> direct) {
    const problem &p = batch.shapes.front();
    const bool c_own = p.c_type == p.ab_type;
    switch (p.ab_type) {
    case dtype::f16:
        return c_own ? batch_outcome::declined
                     : run_blocked_batch<float, MR, NR, half>(batch, bk, kernel, direct_kernels<float>{});
    case dtype::bf16:
        return c_own ? batch_outcome::declined
                     : run_blocked_batch<float, MR, NR, bfloat16>(batch, bk, kernel, direct_kernels<float>{});
    default: return run_blocked_batch<float, MR, NR>(batch, bk, kernel, direct);
    }
}

}  // namespace gemm::cpu_omp_detail
