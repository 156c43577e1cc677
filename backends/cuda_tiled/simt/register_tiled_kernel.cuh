// register_tiled_kernel.cuh: the register-tiled, multi-stage cp.async GEMM kernel family.
#pragma once

#include <cstdint>

#include "tiled_args.cuh"

namespace gemm::cuda_tiled {

// Asynchronous global -> shared copy of BYTES bytes, of which the first src_bytes are read and
// the rest zero-filled (src_bytes = 0 reads nothing: that is how edges become zero padding).
// 16-byte copies bypass L1 (.cg): each vector is used once per block. Smaller copies must use
// .ca, the only form PTX allows for 4 and 8 bytes.
template <int BYTES> __device__ __forceinline__ void copy_async(void *shared, const void *global, int src_bytes) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(src_bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(global), "n"(BYTES), "r"(src_bytes)
                     : "memory");
}

// The same copy, known to be fully in bounds: no source size operand to compute.
template <int BYTES> __device__ __forceinline__ void copy_async(void *shared, const void *global) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(global) : "memory");
    else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(global), "n"(BYTES) : "memory");
}

__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most PENDING of this thread's committed groups are still in flight.
template <int PENDING> __device__ __forceinline__ void copy_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// One 16-byte shared-memory access as a single LDS.128 / STG.128 (4 floats or 2 doubles).
template <typename T> struct vector16;
template <> struct vector16<float> { using type = float4; };
template <> struct vector16<double> { using type = double2; };

template <typename T> __device__ __forceinline__ void load16(const T *from, T *to) {
    const auto v = *reinterpret_cast<const typename vector16<T>::type *>(from);
    if constexpr (sizeof(T) == 4) {
        to[0] = v.x, to[1] = v.y, to[2] = v.z, to[3] = v.w;
    } else {
        to[0] = v.x, to[1] = v.y;
    }
}

template <typename T> __device__ __forceinline__ void store16(T *to, const T *from) {
    typename vector16<T>::type v;
    if constexpr (sizeof(T) == 4) {
        v.x = from[0], v.y = from[1], v.z = from[2], v.w = from[3];
    } else {
        v.x = from[0], v.y = from[1];
    }
    *reinterpret_cast<typename vector16<T>::type *>(to) = v;
}

// Copies BK-deep slices of one operand (op(A) as X = m, or op(B) as X = n) into shared memory,
// always stored k-major, s[kk * LD + x], so that the inner product reads a run of x values at
// one kk as 16-byte vectors.
//
// K_CONTIGUOUS: the stored operand runs along k (A op T: a[l + i * lda]; B op N: b[l + j * ldb]).
// Its slice must be transposed on the way in, so it is copied element by element, kk fastest
// across threads (global reads coalesce into whole sectors); the shared rows get 16 bytes of
// padding so that those transposing stores from one warp spread over the banks.
// Otherwise the operand runs along x (A op N, B op T) and the copy is a straight one, in
// 16-byte vectors when VECTOR (the caller has checked alignment), x fastest across threads.
template <typename T, int X, int BK, int THREADS, bool K_CONTIGUOUS, bool VECTOR> struct operand_loader {
    static constexpr int G = 16 / int(sizeof(T));
    static constexpr int PAD = K_CONTIGUOUS ? G : 0;
    static constexpr int LD = X + PAD;                           // shared row stride, elements
    static constexpr int STAGE_ELEMS = BK * LD;                  // shared elements per stage
    static constexpr int V = (!K_CONTIGUOUS && VECTOR) ? G : 1;  // elements per copy
    static constexpr int BYTES = V * int(sizeof(T));
    static constexpr int COPIES = BK * X / (V * THREADS);  // per thread per stage
    // Straight copies: a thread keeps its x and steps through kk; transposing copies: a thread
    // keeps its kk and steps through x.
    static constexpr int XV = X / V;
    static constexpr int K_STEP = K_CONTIGUOUS ? 0 : THREADS / XV;
    static constexpr int X_STEP = K_CONTIGUOUS ? THREADS / BK : 0;
    static constexpr int SHARED_STEP = K_STEP * LD + X_STEP;  // between a thread's copies
    static_assert(COPIES >= 1 && BK * X == COPIES * V * THREADS, "slice must split evenly");
    static_assert(K_CONTIGUOUS ? THREADS % BK == 0 : THREADS % XV == 0, "thread map");
    static_assert((LD * sizeof(T)) % 16 == 0, "shared rows must keep 16-byte alignment");

    // Kept to four registers and a pointer: the main loop already holds TM x TN accumulators
    // and two fragments, and everything else here competes with them for the 128 available.
    const T *next;     // this thread's first element of the next slice to copy
    int shared_first;  // shared offset of this thread's first copy
    int kk0;           // kk of this thread's first copy
    int x_left;        // valid x from this thread's first copy on (<= 0: none)

    __device__ __forceinline__ operand_loader(const T *matrix, int64_t ld, int x0, int x_size, int tid) {
        int x;
        if constexpr (K_CONTIGUOUS) {
            kk0 = tid % BK;
            x = tid / BK;
            next = matrix + kk0 + (int64_t(x0) + x) * ld;
        } else {
            kk0 = tid / XV;
            x = (tid % XV) * V;
            next = matrix + (int64_t(x0) + x) + kk0 * ld;
        }
        shared_first = kk0 * LD + x;
        x_left = x_size - x0 - x;
    }

    // Issues the copies of the next slice, whose first k is k0, into stage, and moves on to the
    // slice after it. FULL: the slice lies inside the matrix, so no copy needs a bound (the
    // common case, kept free of predicates). Zero-filled copies point at `anywhere`, a valid
    // address of the matrix, so that no copy ever names an address outside it.
    template <bool FULL> __device__ __forceinline__ void load(T *stage, int k0, int k, int64_t ld, const T *anywhere) {
        const int64_t copy_step = K_CONTIGUOUS ? X_STEP * ld : K_STEP * ld;
        const T *src = next;
        T *dst = stage + shared_first;
        const int k_left = k - k0 - kk0;  // valid kk from this thread's first copy on
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
            if constexpr (FULL) {
                copy_async<BYTES>(dst, src);
            } else {
                // A copy is whole or nothing: the host runs vector copies only where no
                // vector straddles the matrix's edge (vectors_aligned), because a 16-byte copy
                // with a shorter source size still names 16 bytes (compute-sanitizer counts
                // them), and copying such a vector element by element here cost the main loop
                // registers (it spilled in every 128x128x16 variant: NOTES.md, Vector ids and edges).
                const bool valid =
                    K_CONTIGUOUS ? (k_left > 0 && c * X_STEP < x_left) : (c * K_STEP < k_left && x_left > 0);
                copy_async<BYTES>(dst, valid ? src : anywhere, valid ? BYTES : 0);
            }
            src += copy_step;
            dst += SHARED_STEP;
        }
        next += K_CONTIGUOUS ? int64_t(BK) : BK * ld;
    }
};

// The register-tiled kernel. A block computes a BM x BN tile of C; its warps split that into
// WM x WN warp tiles with WM = 8 * TM and WN = 4 * TN, lanes arranged 8 (m) x 4 (n); each thread
// accumulates TM x TN outputs in registers. A thread's rows are not contiguous: they come in
// groups of G (one 16-byte vector) spaced 8 * G apart (the "4 + 4 split" for f32), so that each
// LDS.128 of a warp reads 8 distinct, contiguous vectors (no bank conflicts, the 4 lanes sharing
// one get it by broadcast) and each store to C writes 128 contiguous bytes per column.
// Likewise columns come in groups of G spaced 4 * G apart.
//
// K is walked in slices of BK through a ring of STAGES shared-memory buffers filled by cp.async,
// STAGES - 1 slices ahead of the one being multiplied; one barrier per slice.
// VECTOR (alignment checked on the host): 16-byte global copies for the operands that run
// along m or n, and 16-byte loads and stores of C.
template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES, bool A_T, bool B_T, bool VECTOR>
struct register_tiled_shape {
    static constexpr int G = 16 / int(sizeof(T));
    static constexpr int WM = 8 * TM, WN = 4 * TN;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    // Register budget of 128 per thread: 2 blocks of 256 threads or 4 of 128 per SM.
    static constexpr int MIN_BLOCKS = 65536 / (THREADS * 128);
    using a_loader = operand_loader<T, BM, BK, THREADS, A_T, VECTOR>;
    using b_loader = operand_loader<T, BN, BK, THREADS, !B_T, VECTOR>;
    static constexpr int SHARED_BYTES = STAGES * (a_loader::STAGE_ELEMS + b_loader::STAGE_ELEMS) * int(sizeof(T));
    static_assert(BM % WM == 0 && BN % WN == 0, "block tile must hold whole warp tiles");
    static_assert(TM % G == 0 && TN % G == 0, "thread tile must hold whole vectors");
    static_assert(STAGES >= 2, "need at least double buffering");
};

template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES, bool A_T, bool B_T, bool VECTOR>
__global__ void __launch_bounds__((register_tiled_shape<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>::THREADS),
                                  (register_tiled_shape<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>::MIN_BLOCKS))
    register_tiled_kernel(tiled_args<T> p) {
    using shape = register_tiled_shape<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>;
    using a_loader = typename shape::a_loader;
    using b_loader = typename shape::b_loader;
    constexpr int G = shape::G;

    extern __shared__ __align__(16) unsigned char shared_raw[];
    T *a_stages = reinterpret_cast<T *>(shared_raw);
    T *b_stages = a_stages + STAGES * a_loader::STAGE_ELEMS;

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp % shape::WARPS_M, warp_n = warp / shape::WARPS_M;
    const int lane_m = lane % 8, lane_n = lane / 8;
    // This thread's first row and column inside the block tile.
    const int row0 = warp_m * shape::WM + lane_m * G;
    const int col0 = warp_n * shape::WN + lane_n * G;
    const int tiles_n = (p.n + BN - 1) / BN;
    const int k_tiles = (p.k + BK - 1) / BK;
    const int k_full = p.k / BK;  // slices that need no bound on k

    for (int z = blockIdx.z; z < p.batch; z += gridDim.z) {
        for (int tile_n = blockIdx.y; tile_n < tiles_n; tile_n += gridDim.y) {
            const int m0 = blockIdx.x * BM, n0 = tile_n * BN;
            a_loader la(p.a + z * p.stride_a, p.lda, m0, p.m, tid);
            b_loader lb(p.b + z * p.stride_b, p.ldb, n0, p.n, tid);
            const bool inside = m0 + BM <= p.m && n0 + BN <= p.n;

            // Slices are loaded in order, kt = 0, 1, ...; each call moves the loaders on.
            auto load_slice = [&](int kt, int stage) {
                T *as = a_stages + stage * a_loader::STAGE_ELEMS;
                T *bs = b_stages + stage * b_loader::STAGE_ELEMS;
                if (inside && kt < k_full) {
                    la.template load<true>(as, kt * BK, p.k, p.lda, p.a);
                    lb.template load<true>(bs, kt * BK, p.k, p.ldb, p.b);
                } else {
                    la.template load<false>(as, kt * BK, p.k, p.lda, p.a);
                    lb.template load<false>(bs, kt * BK, p.k, p.ldb, p.b);
                }
            };

            T acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

                    // Prologue: STAGES - 1 slices in flight. Every thread commits one group per slice,
                    // empty or not, so the wait counts below stay exact.
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < k_tiles) load_slice(s, s);
                copy_async_commit();
            }

            // One step of the k-loop: wait for slice kt, refill the stage freed last step with
            // slice kt + STAGES - 1 (through `refill`), multiply slice kt.
            int stage_read = 0, stage_write = STAGES - 1;
            auto step = [&](int kt, auto refill) {
                // Slice kt has landed (for this thread); the barrier makes every thread's copies
                // visible and guarantees the stage refilled below is no longer being read.
                copy_async_wait<STAGES - 2>();
                __syncthreads();
                refill(kt + STAGES - 1, stage_write);
                copy_async_commit();

                const T *as = a_stages + stage_read * a_loader::STAGE_ELEMS + row0;
                const T *bs = b_stages + stage_read * b_loader::STAGE_ELEMS + col0;
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) {
                    T af[TM], bf[TN];
#pragma unroll
                    for (int g = 0; g < TM / G; ++g) load16(as + kk * a_loader::LD + g * 8 * G, af + g * G);
#pragma unroll
                    for (int h = 0; h < TN / G; ++h) load16(bs + kk * b_loader::LD + h * 4 * G, bf + h * G);
#pragma unroll
                    for (int i = 0; i < TM; ++i)
#pragma unroll
                        for (int j = 0; j < TN; ++j) acc[i][j] = fma(af[i], bf[j], acc[i][j]);
                }
                stage_read = stage_read + 1 == STAGES ? 0 : stage_read + 1;
                stage_write = stage_write + 1 == STAGES ? 0 : stage_write + 1;
            };
            // The main loop: every slice it refills lies inside the matrix, so it holds only the
            // predicate-free copies. Keeping the bounds code out of it keeps the bounds' registers
            // out of it too; with both in one loop the compiler spilled inside it (NOTES.md,
            // Register-tiled k-loop).
            const int k_main = inside ? max(k_full - (STAGES - 1), 0) : 0;
            int kt = 0;
#pragma unroll 1
            for (; kt < k_main; ++kt)
                step(kt, [&](int next, int stage) {
                    la.template load<true>(a_stages + stage * a_loader::STAGE_ELEMS, next * BK, p.k, p.lda, p.a);
                    lb.template load<true>(b_stages + stage * b_loader::STAGE_ELEMS, next * BK, p.k, p.ldb, p.b);
                });
                // The rest: edge blocks, the k tail, and the last STAGES - 1 steps (nothing to refill).
#pragma unroll 1
            for (; kt < k_tiles; ++kt)
                step(kt, [&](int next, int stage) {
                    if (next < k_tiles) load_slice(next, stage);
                });
            // Only empty groups can be pending here; the barrier lets the next tile's prologue
            // overwrite stages that slower warps may still be reading.
            copy_async_wait<0>();
            __syncthreads();

            // Epilogue: C = alpha * acc (+ beta * C). beta == 0 never reads C.
            T *c = p.c + z * p.stride_c;
#pragma unroll
            for (int h = 0; h < TN / G; ++h) {
#pragma unroll
                for (int f = 0; f < G; ++f) {
                    const int j = n0 + col0 + h * 4 * G + f;
                    if (j >= p.n) continue;
#pragma unroll
                    for (int g = 0; g < TM / G; ++g) {
                        const int i = m0 + row0 + g * 8 * G;
                        T *out = c + i + int64_t(j) * p.ldc;
                        T v[G];
#pragma unroll
                        for (int e = 0; e < G; ++e) v[e] = p.alpha * acc[g * G + e][h * G + f];
                        if (VECTOR && i + G <= p.m) {
                            if (p.beta != T(0)) {
                                T old[G];
                                load16(out, old);
#pragma unroll
                                for (int e = 0; e < G; ++e) v[e] = fma(p.beta, old[e], v[e]);
                            }
                            store16(out, v);
                        } else {
#pragma unroll
                            for (int e = 0; e < G; ++e) {
                                if (i + e >= p.m) break;
                                out[e] = p.beta != T(0) ? fma(p.beta, out[e], v[e]) : v[e];
                            }
                        }
                    }
                }
            }
        }
    }
}

}  // namespace gemm::cuda_tiled
