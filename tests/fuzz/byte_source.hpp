// byte_source.hpp: turns a fuzzer's bytes into arguments, most of them small and valid, many at
// the boundaries where products and sums of int64_t overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gemm_fuzz {

class byte_source {
public:
    byte_source(const uint8_t *data, std::size_t size) : data_(data), size_(size) {}

    bool empty() const { return size_ == 0; }

    // Missing bytes read as zero, so every input is a complete program.
    uint8_t byte() {
        if (size_ == 0) return 0;
        --size_;
        return *data_++;
    }

    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = v << 8 | byte();
        return v;
    }

    bool one_in(unsigned n) { return byte() % n == 0; }

    // A size, leading dimension, stride or batch count: usually small, sometimes one of the
    // values where arithmetic on sizes wraps, sometimes anything.
    int64_t size_value() {
        static constexpr int64_t boundaries[] = {std::numeric_limits<int64_t>::max(),
                                                 std::numeric_limits<int64_t>::min(),
                                                 std::numeric_limits<int64_t>::max() - 1,
                                                 std::numeric_limits<int64_t>::max() / 2,
                                                 std::numeric_limits<int64_t>::max() / 2 + 1,
                                                 std::numeric_limits<int64_t>::max() / 4 + 1,
                                                 std::numeric_limits<int64_t>::max() / 8 + 1,
                                                 int64_t(1) << 31,
                                                 (int64_t(1) << 31) - 1,
                                                 int64_t(1) << 32,
                                                 (int64_t(1) << 32) + 1,
                                                 int64_t(1) << 40,
                                                 int64_t(1) << 60,
                                                 int64_t(1) << 61,
                                                 (int64_t(1) << 61) + 1,
                                                 int64_t(1) << 62,
                                                 3037000499,
                                                 3037000500,
                                                 4294967295,
                                                 2147483647,
                                                 2147483648,
                                                 -2147483648LL,
                                                 65536};
        uint8_t kind = byte();
        if (kind < 150) return byte() % 12;               // small, often valid
        if (kind < 170) return 12 + byte() % 40;          // larger, still in buffers' reach
        if (kind < 190) return -1 - int64_t(byte() % 3);  // negative
        if (kind < 240) return boundaries[byte() % (sizeof boundaries / sizeof boundaries[0])];
        return int64_t(u64());  // anything
    }

    // An enum argument: a valid value mostly, anything sometimes.
    int enum_value(const int *valid, std::size_t count) {
        uint8_t kind = byte();
        if (kind < 230) return valid[byte() % count];
        if (kind < 245) return int(byte()) - 128;
        return int(uint32_t(u64()));
    }

    // alpha or beta: 0 and 1 often (they select BLAS's special cases), NaN, anything.
    double scalar() {
        switch (byte() % 8) {
        case 0: return 0.0;
        case 1: return 1.0;
        case 2: return -1.0;
        case 3: return std::numeric_limits<double>::quiet_NaN();
        case 4: return 0.5;
        default: return double(int(byte()) - 128) / 16.0;
        }
    }

private:
    const uint8_t *data_;
    std::size_t size_;
};

}  // namespace gemm_fuzz
