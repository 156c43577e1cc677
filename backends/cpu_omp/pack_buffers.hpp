// pack_buffers.hpp: the per-thread panels of packed A and B, allocated once and reused.
#pragma once

#include <cstddef>

namespace gemm::cpu_omp_detail {

// Three 64-byte aligned blocks owned by one thread: packed A, packed B, and the f32 sums of a
// strip of a 16-bit C (blocked_gemm.hpp). They grow to the largest cache blocking and strip
// the thread has run with (a few MB), never with the size of the matrices.
class pack_buffers {
public:
    pack_buffers() = default;
    pack_buffers(const pack_buffers &) = delete;
    pack_buffers &operator=(const pack_buffers &) = delete;
    ~pack_buffers();

    // Makes a() at least a_bytes, b() at least b_bytes and sums() at least sums_bytes long;
    // false if memory ran out (the buffers then keep their previous size).
    bool reserve(std::size_t a_bytes, std::size_t b_bytes, std::size_t sums_bytes = 0);
    void *a() const { return a_; }
    void *b() const { return b_; }
    void *sums() const { return sums_; }

private:
    void *a_ = nullptr;
    void *b_ = nullptr;
    void *sums_ = nullptr;
    std::size_t a_bytes_ = 0;
    std::size_t b_bytes_ = 0;
    std::size_t sums_bytes_ = 0;
};

// The calling thread's buffers (pool threads keep theirs between calls).
pack_buffers &thread_pack_buffers();

}  // namespace gemm::cpu_omp_detail
