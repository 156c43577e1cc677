// operand_sets.hpp: the operands a problem class is measured on: random values in [-1, 1], in
// as many sets as it takes to exceed twice the cache of what computes, so that timed runs
// taking the sets in turn do not find their inputs in cache; device copies for device
// problems.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "dispatch/problem.hpp"
#include "dispatch/problem_class.hpp"
#include "gemm/gemm.h"

namespace gemm {

// How the engine lays out and scales a class's operands: what the class leaves open. The
// tuner takes the layout that stands for the class's calls (layout_for, tuner.hpp);
// gemm_measure and gemm_tune take the caller's.
struct operand_layout {
    int64_t ld_padding = 0;             // elements added to every leading dimension; -1: the least
                                        // padding that keeps them 16-byte aligned (a padded class)
    int64_t lda = 0, ldb = 0, ldc = 0;  // given leading dimensions (0: rows plus ld_padding)
    bool aligned = true;                // false: operands start one element past a 64-byte boundary
    double alpha = 1.0;
    double beta = 0.0;
    int device = 0;       // CUDA ordinal of device problems
    bool pinned = false;  // host operands page-locked (host problems, CUDA builds only)
    int64_t ld_aux = 0;   // an epilogue's aux (0: C's leading dimension)
    // FP8: how the canonical problem's A and B are scaled (none: scales of 1), block scales
    // at their least leading dimensions; values in [1/2, 2).
    scale_kind a_scale = scale_kind::none, b_scale = scale_kind::none;
};

class operand_sets {
public:
    // The class's dtypes, ops, shape, batch and its form, memory space and epilogue's kind,
    // laid out as `layout` says; its other fields (ld, align, beta) are what the layout gives.
    operand_sets(const problem_class &c, const operand_layout &layout);
    ~operand_sets();
    operand_sets(const operand_sets &) = delete;
    operand_sets &operator=(const operand_sets &) = delete;

    // Plans, allocates and fills the sets: INVALID_SIZE when an operand would span more than
    // 2^63 - 1 bytes or a given leading dimension is below its operand's rows, ALLOC_FAILED
    // when they cannot be allocated or would not fit this machine's memory (refused before
    // allocating what would push it into the OOM killer), NOT_SUPPORTED for managed memory.
    gemm_status_t allocate();

    // At most `most` sets (before allocate()): for a brief measurement that times each target
    // warm in cache rather than spend longer making the sets than timing them.
    void limit_sets(std::size_t most) { most_sets_ = most; }

    bool on_device() const { return class_.space == memory_space::device; }

    // The problem on the next set in turn: each timed run takes one.
    const problem &next();
    // The problem on set 0, for questions about the problem (supports, variants, its key).
    const problem &first() const { return problems_.front(); }

    // Before a checked run: set 0's C as the check expects it (its initial values, or NaN
    // when beta = 0, so that a backend reading C shows), and set 0 next in turn.
    gemm_status_t prepare_check();

    // The problem on set 0 as host memory (a device C is copied back first): what the check
    // reads after a checked run.
    gemm_status_t checked_result(problem &view);

    // What the reference reads: the problem's shape and set 0's host A, B and initial C, an
    // FP8 problem's scales in host memory, and for an epilogue its bias and the aux a
    // backward activation reads (never written).
    const problem &base() const { return base_; }
    const void *host_a() const;
    const void *host_b() const;
    const void *initial_c() const { return initial_c_.get(); }
    const void *host_bias() const;
    const void *host_saved_aux() const;

    int device() const { return layout_.device; }
    void *stream() const { return stream_; }

private:
    struct release_host {
        void operator()(void *p) const { std::free(p); }
    };
    using host_buffer = std::unique_ptr<char, release_host>;

    // The operands of a set, by index: A, B, C, and for an epilogue its vector (the bias, or
    // the bias gradient a backward activation writes) and aux. An operand the class does not
    // have takes 0 bytes and stays null.
    static constexpr int operand_count = 5;
    enum operand_index { a_index, b_index, c_index, vector_index, aux_index };

    struct set {
        host_buffer buffers[operand_count];
        void *host[operand_count] = {};  // the operands inside them (maybe one element misaligned)
        void *device_allocation[operand_count] = {};
        void *device[operand_count] = {};
    };

    // An FP8 operand's scales: one array shared by every set (a value per 128 values of an
    // operand at most, too few to matter to the cache), and its device copy.
    struct scale_array {
        operand_scale host, device;  // the same kind and ld, the values in each memory
        host_buffer buffer;
        void *device_allocation = nullptr;
    };

    gemm_status_t plan();
    gemm_status_t make_scales();
    scaling_spec scaling_in(bool device) const;
    gemm_status_t plan_epilogue();
    std::optional<int64_t> leading_dim(int64_t rows, std::size_t element) const;
    bool operand(std::optional<int64_t> ld, int64_t cols, std::size_t element, int64_t &ld_out, int64_t &stride_out,
                 std::size_t &bytes_out) const;
    gemm_status_t make_set(set &s, bool first);
    gemm_status_t copy_to_device(set &s);
    problem problem_on(const set &s) const;

    problem_class class_;
    operand_layout layout_;
    problem base_;
    std::vector<set> sets_;
    std::vector<problem> problems_;  // the problem on each set
    std::size_t next_ = 0;
    host_buffer initial_c_;
    host_buffer check_c_;                    // a device C copied back for the check (device sets only)
    host_buffer check_vector_, check_aux_;   // likewise the epilogue's written vector and aux
    std::size_t bytes_[operand_count] = {};  // each operand, for the whole batch
    scale_array scales_[2];                  // the canonical A's, B's
    std::vector<void *> pinned_;
    void *stream_ = nullptr;
    std::size_t most_sets_ = 256;  // bounds the memory the sets take
};

}  // namespace gemm
