// operands.hpp: the matrices a benchmark case runs on: aligned buffers of random values in
// [-1, 1], enough copies to rotate through so that timed calls do not find them in cache.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "gemm_case.hpp"

namespace gemm_cli {

class aligned_buffer {
public:
    aligned_buffer() = default;
    explicit aligned_buffer(std::size_t bytes);
    unsigned char *data() { return data_.get(); }
    const unsigned char *data() const { return data_.get(); }
    std::size_t bytes() const { return bytes_; }

private:
    struct release {
        void operator()(unsigned char *p) const { std::free(p); }
    };
    std::unique_ptr<unsigned char, release> data_;
    std::size_t bytes_ = 0;
};

// A, B and C of every matrix in the batch, stored one after another.
struct operand_set {
    aligned_buffer a, b, c;
};

class operand_pool {
public:
    // As many sets as it takes to exceed twice cache_bytes (at least one, at most a cap).
    operand_pool(const gemm_case &c, int64_t cache_bytes, uint64_t seed);

    std::size_t size() const { return sets_.size(); }
    operand_set &at(std::size_t i) { return sets_[i]; }
    const operand_set &at(std::size_t i) const { return sets_[i]; }
    // C of set 0 as generated, before any call wrote to it.
    const aligned_buffer &c_initial() const { return c_initial_; }
    int64_t bytes_total() const;

private:
    std::vector<operand_set> sets_;
    aligned_buffer c_initial_;
};

// Element i of a buffer of type t, widened to double.
double element_load(const unsigned char *base, int64_t i, gemm_dtype_t t);
void buffer_fill_nan(aligned_buffer &buffer, gemm_dtype_t t);
void buffer_copy(aligned_buffer &to, const aligned_buffer &from);

// One call of the case on these operands, through the typed entry point a user would call:
// gemm_sgemm / gemm_dgemm, gemm_ex for f16 and bf16, the strided forms when batch > 1.
gemm_status_t gemm_case_call(const gemm_case &c, const unsigned char *a, const unsigned char *b,
                             unsigned char *cm);

}  // namespace gemm_cli
