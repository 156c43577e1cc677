// device_buffers_none.cpp: device_buffers.hpp for builds without CUDA: every request fails.
#include "device_buffers.hpp"

namespace gemm_cli {
namespace {

constexpr const char *no_cuda = "this build has no CUDA (configure with a CUDA compiler and GEMM_WITH_CUDA=ON)";

}  // namespace

bool device_support_compiled() { return false; }

int device_count(std::string *why) {
    if (why) *why = no_cuda;
    return 0;
}

device_properties device_select(int) { throw device_error(no_cuda); }
device_properties device_describe(int) { throw device_error(no_cuda); }

device_buffer::device_buffer(std::size_t) { throw device_error(no_cuda); }
device_buffer::~device_buffer() = default;
device_buffer::device_buffer(device_buffer &&other) noexcept : data_(other.data_), bytes_(other.bytes_) {}
device_buffer &device_buffer::operator=(device_buffer &&) noexcept { return *this; }
void device_buffer::upload(const void *, std::size_t) { throw device_error(no_cuda); }
void device_buffer::download(void *, std::size_t) const { throw device_error(no_cuda); }

host_pin::host_pin(void *, std::size_t) { throw device_error(no_cuda); }
host_pin::~host_pin() = default;
host_pin::host_pin(host_pin &&) noexcept {}

device_stream_timer::device_stream_timer() { throw device_error(no_cuda); }
device_stream_timer::~device_stream_timer() = default;
void device_stream_timer::start() {}
double device_stream_timer::stop() { return 0; }
void device_stream_timer::synchronize() {}

}  // namespace gemm_cli
