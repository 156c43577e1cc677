// pack_buffers.cpp: per-thread, 64-byte aligned packing memory.
#include "pack_buffers.hpp"

#include <cstdlib>

namespace gemm::cpu_omp_detail {
namespace {

constexpr std::size_t alignment = 64;  // a cache line, and the widest vector load

// Grows *block to at least bytes; on failure the old block stays valid.
bool grow(void *&block, std::size_t &capacity, std::size_t bytes) {
    if (bytes <= capacity) return true;
    std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void *fresh = nullptr;
    if (posix_memalign(&fresh, alignment, rounded) != 0) return false;
    std::free(block);
    block = fresh;
    capacity = rounded;
    return true;
}

}  // namespace

pack_buffers::~pack_buffers() {
    std::free(a_);
    std::free(b_);
    std::free(sums_);
}

bool pack_buffers::reserve(std::size_t a_bytes, std::size_t b_bytes, std::size_t sums_bytes) {
    return grow(a_, a_bytes_, a_bytes) && grow(b_, b_bytes_, b_bytes) && grow(sums_, sums_bytes_, sums_bytes);
}

pack_buffers &thread_pack_buffers() {
    thread_local pack_buffers buffers;
    return buffers;
}

}  // namespace gemm::cpu_omp_detail
