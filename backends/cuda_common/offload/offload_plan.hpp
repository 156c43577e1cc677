// offload_plan.hpp: how a GEMM on host memory is cut for one GPU. C in tiles, the blocks of A
// and B each tile needs, the device slots they occupy, and the order of the tiles, chosen so
// that each byte crosses the link as few times as the device memory allows. Plain C++ (no
// CUDA), so that it is tested without a GPU.
//
// When all of A and B fit in the device memory the engine may hold (the usual case), both stay:
// each block crosses the link once, and the tiles go in the order their blocks arrive
// (offload_plan::shell_order), so that the GEMMs start on the first blocks and follow the link.
// Otherwise one operand is stationary: its tiles stay in device slots for a whole pass over
// the other, streamed operand. With A stationary the tiles are visited column of tiles by
// column of tiles, each column's B panel loaded once and used by every row tile of A:
//
//     for each group of S row tiles (S: as many A tiles as the device memory holds)
//         for each column tile j          B panel j loaded (3 slots, reused in turn)
//             for each row tile i         A tile i loaded on its first use, then kept
//                 C tile (i, j) = GEMM, stored back to the host (3 slots)
//
// When every A tile fits, A, B and C each cross the link once; otherwise B crosses once per
// group (out of core). B stationary is the same with the roles swapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/problem.hpp"

namespace gemm::cuda {

enum class offload_operand : int { a = 0, b = 1, c = 2 };

// A rectangle of one operand's stored (column-major) matrices: rows [row0, row0 + rows) and
// columns [col0, col0 + cols) of each batch matrix in [first, first + count). count == 0: none.
struct offload_block {
    int64_t first = 0, count = 0;
    int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;

    bool empty() const { return count == 0; }
    bool operator==(const offload_block &o) const {
        return first == o.first && count == o.count && row0 == o.row0 && rows == o.rows && col0 == o.col0 &&
               cols == o.cols;
    }
    bool operator!=(const offload_block &o) const { return !(*this == o); }
};

// How a block lies in its device slot: columns packed_ld elements apart (rows rounded up to 16
// bytes), matrices packed_stride elements apart (a matrix rounded up to 256 bytes, what
// cudaMalloc aligns to): every slot is as aligned as vector loads, TMA and cuBLASLt's fastest
// kernels want, whatever the caller's leading dimensions.
int64_t offload_packed_ld(int64_t rows, std::size_t elem);
int64_t offload_packed_stride(int64_t rows, int64_t cols, std::size_t elem);
std::size_t offload_packed_bytes(const offload_block &b, std::size_t elem);

// One GEMM of the schedule: rows [i0, i0 + m) and columns [j0, j0 + n) of C in the batch
// matrices [first, first + count), over all of k. a and b are empty when the problem only
// scales C (k == 0 or alpha == 0). load_x: the block is not in its slot yet and must be copied
// there first (C only when beta != 0).
struct offload_step {
    int64_t first = 0, count = 0, i0 = 0, m = 0, j0 = 0, n = 0;
    offload_block a, b, c;
    int slot_a = -1, slot_b = -1, slot_c = -1;
    bool load_a = false, load_b = false, load_c = false;
};

class offload_plan {
public:
    // The plan of p (a host problem; only its shape, ops, types, batch and strides are read)
    // whose slots take at most device_bytes together; tile_m and tile_n (when > 0) replace the
    // rule's tile sizes. False, with why, when not even the smallest tiles fit.
    static bool make(const problem &p, std::size_t device_bytes, offload_plan &out, std::string &why,
                     int64_t tile_m = 0, int64_t tile_n = 0);

    int64_t tile_m() const { return tm_; }
    int64_t tile_n() const { return tn_; }
    int64_t group() const { return group_; }  // batch matrices per step (1 unless C is one tile)
    offload_operand stationary() const { return stationary_; }
    bool both_stay() const { return both_stay_; }
    int64_t passes() const;  // loads of the streamed operand, per matrix
    int64_t steps() const;

    int slots(offload_operand o) const { return pools_[int(o)].slots; }
    std::size_t slot_bytes(offload_operand o) const { return pools_[int(o)].bytes; }
    std::size_t slot_offset(offload_operand o, int slot) const;  // from the start of the device memory
    std::size_t device_bytes() const;

    // The device problem of a step: p's shape cut to the step, its operands at their slots in
    // the device memory at `base` (null: null pointers, for planning by shape), packed.
    problem step_problem(const problem &p, const offload_step &s, char *base) const;

    // The different device problems the steps run (at most 8: full and last tiles along m and
    // n, full and last group), so that a backend can refuse before anything is copied.
    std::vector<offload_step> distinct_shapes() const;

    // The device problem of the first step of p's plan when memory is no limit, with null
    // pointers: what backends plan by shape (cuBLASLt's heuristic, variant refusals) for a host
    // problem. Every step's operands are packed as this one's, so they are aligned alike.
    static problem first_shape(const problem &p, int64_t tile_m = 0, int64_t tile_n = 0);

    // "16 tiles of 2048x2048 (A and B stay on the device, each copied once)", for traces.
    std::string describe() const;

    // Walks the steps in order, tracking which block each slot holds (least recently used
    // slot first when a block must be loaded), so it decides the loads.
    class cursor {
    public:
        explicit cursor(const offload_plan &plan);
        bool next(offload_step &out);

    private:
        struct slot_state {
            offload_block held;
            int64_t used = -1;  // step that last used it
        };
        int place(offload_operand o, const offload_block &b, bool &load);

        const offload_plan &plan_;
        int64_t step_ = 0;
        std::vector<slot_state> slots_[3];
    };

private:
    struct pool {
        int slots = 0;
        std::size_t bytes = 0;  // per slot, rounded up to 256
    };
    bool fit(std::size_t device_bytes);
    offload_block block_of(offload_operand o, int64_t first, int64_t count, int64_t i0, int64_t m, int64_t j0,
                           int64_t n) const;
    offload_step step_at(int64_t index) const;  // the step's geometry, before slots are decided
    void shell_order();

    // What the plan was made from.
    transpose op_a_ = transpose::n, op_b_ = transpose::n;
    int64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 1;
    bool shared_a_ = false, shared_b_ = false;  // stride 0: one matrix for the whole batch
    bool scales_only_ = false, reads_c_ = false;
    std::size_t elem_ab_ = 4, elem_c_ = 4;

    int64_t tm_ = 0, tn_ = 0, group_ = 1;
    int64_t row_tiles_ = 1, col_tiles_ = 1;
    offload_operand stationary_ = offload_operand::a;
    int64_t held_tiles_ = 1;  // stationary tiles kept at once (S)
    bool both_stay_ = false;
    std::vector<std::pair<int32_t, int32_t>> order_;  // (row tile, column tile), when both stay
    pool pools_[3];
};

}  // namespace gemm::cuda
