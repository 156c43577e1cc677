// device_buffers.hpp: what the CLI needs from a GPU (device memory, copies, timing with
// events on a stream handed to the library, the device's facts) with no CUDA type in sight.
// device_buffers_cuda.cpp implements it with the CUDA runtime; device_buffers_none.cpp,
// compiled when the build has no CUDA, refuses every request with a clear message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gemm_cli {

// Device work that cannot be done: no CUDA in this build, no such device, a CUDA error.
class device_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct device_properties {
    int ordinal = -1;
    std::string name;
    int major = 0, minor = 0;  // compute capability
    int sm_count = 0;
    int64_t l2_bytes = 0;
    int64_t memory_bytes = 0;
};

// True when this build can use CUDA devices at all.
bool device_support_compiled();

// How many CUDA devices this process can use now: 0 without CUDA in the build or without a
// device (then *why, when given, says which).
int device_count(std::string *why);

// Makes ordinal the current device of this thread and describes it; throws device_error
// when it cannot be used.
device_properties device_select(int ordinal);

// Describes device ordinal (0 <= ordinal < device_count()) without making it current;
// throws device_error when its properties cannot be read.
device_properties device_describe(int ordinal);

// Memory on the current device; move-only. Copies are synchronous.
class device_buffer {
public:
    device_buffer() = default;
    explicit device_buffer(std::size_t bytes);  // throws device_error
    ~device_buffer();
    device_buffer(device_buffer &&other) noexcept;
    device_buffer &operator=(device_buffer &&other) noexcept;
    device_buffer(const device_buffer &) = delete;
    device_buffer &operator=(const device_buffer &) = delete;

    unsigned char *data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    void upload(const void *host, std::size_t bytes);  // from the start of the buffer
    void download(void *host, std::size_t bytes) const;

private:
    unsigned char *data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Page-locks host memory the caller owns (cudaHostRegister) until destroyed, so that copies
// to and from the GPU run at full speed: `gemm bench --memory pinned`. Move-only.
class host_pin {
public:
    host_pin(void *host, std::size_t bytes);  // throws device_error
    ~host_pin();
    host_pin(host_pin &&other) noexcept;
    host_pin(const host_pin &) = delete;
    host_pin &operator=(const host_pin &) = delete;
    host_pin &operator=(host_pin &&) = delete;

private:
    void *host_ = nullptr;
};

// A stream of the current device, handed to the library with gemm_set_stream so that every
// device-pointer call of this thread is enqueued on it, and two events that time the work
// enqueued between start() and stop(). The library's stream returns to NULL when destroyed.
class device_stream_timer {
public:
    device_stream_timer();  // throws device_error
    ~device_stream_timer();
    device_stream_timer(const device_stream_timer &) = delete;
    device_stream_timer &operator=(const device_stream_timer &) = delete;

    void start();
    // Waits for the work enqueued since start() and returns its device time in seconds;
    // throws device_error when that work failed.
    double stop();
    void synchronize();

private:
    void *stream_ = nullptr, *start_ = nullptr, *stop_ = nullptr;
};

}  // namespace gemm_cli
