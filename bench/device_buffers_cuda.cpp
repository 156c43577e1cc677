// device_buffers_cuda.cpp: device_buffers.hpp over the CUDA runtime API (no kernels here,
// so the host compiler builds it; CUDA::cudart links it).
#include "device_buffers.hpp"

#include <cuda_runtime_api.h>

#include <utility>

#include "gemm/gemm.h"

namespace gemm_cli {
namespace {

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw device_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Why the library's CUDA backends are unavailable: they share one device check, which puts a
// failed cudaGetDeviceCount in the user's terms (no driver at all reads "driver version is
// insufficient" in the runtime's). "" when they are available or not in this build.
std::string library_device_reason() {
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS && std::string(info.name) == "cuda_naive")
            return info.available ? "" : info.reason;
    }
    return "";
}

cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void *e) { return static_cast<cudaEvent_t>(e); }

}  // namespace

bool device_support_compiled() { return true; }

int device_count(std::string *why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        std::string reason = library_device_reason();
        if (reason.empty()) reason = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
        if (why) *why = reason;
        return 0;
    }
    if (count == 0 && why) *why = "no CUDA device (cudaGetDeviceCount found none)";
    return count;
}

device_properties device_select(int ordinal) {
    std::string why;
    int count = device_count(&why);
    if (count == 0) throw device_error("--device " + std::to_string(ordinal) + ": " + why);
    if (ordinal < 0 || ordinal >= count)
        throw device_error("--device " + std::to_string(ordinal) + ": this machine has " + std::to_string(count) +
                           " CUDA device" + (count == 1 ? "" : "s") + " (0 to " + std::to_string(count - 1) + ")");
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    return device_describe(ordinal);
}

device_properties device_describe(int ordinal) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    device_properties d;
    d.ordinal = ordinal;
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.l2_bytes = prop.l2CacheSize;
    d.memory_bytes = int64_t(prop.totalGlobalMem);
    return d;
}

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes) {
    void *p = nullptr;
    // Never 0 bytes, so that data() is a real device pointer the library can classify.
    check(cudaMalloc(&p, bytes > 0 ? bytes : 1), "cudaMalloc");
    data_ = static_cast<unsigned char *>(p);
}

host_pin::host_pin(void *host, std::size_t bytes) {
    if (!host || bytes == 0) return;
    check(cudaHostRegister(host, bytes, cudaHostRegisterDefault), "cudaHostRegister");
    host_ = host;
}

host_pin::~host_pin() {
    if (host_) cudaHostUnregister(host_);
}

host_pin::host_pin(host_pin &&other) noexcept : host_(std::exchange(other.host_, nullptr)) {}

device_buffer::~device_buffer() {
    if (data_) cudaFree(data_);
}

device_buffer::device_buffer(device_buffer &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

device_buffer &device_buffer::operator=(device_buffer &&other) noexcept {
    if (this != &other) {
        if (data_) cudaFree(data_);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void device_buffer::upload(const void *host, std::size_t bytes) {
    check(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
}

void device_buffer::download(void *host, std::size_t bytes) const {
    check(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
}

// A blocking stream (not cudaStreamNonBlocking): the synchronous cudaMemcpy of the buffers
// above then orders itself after the GEMMs enqueued on it.
device_stream_timer::device_stream_timer() {
    cudaStream_t stream = nullptr;
    cudaEvent_t begin = nullptr, end = nullptr;
    cudaError_t e = cudaStreamCreate(&stream);
    if (e == cudaSuccess) e = cudaEventCreate(&begin);
    if (e == cudaSuccess) e = cudaEventCreate(&end);
    if (e != cudaSuccess) {
        if (begin) cudaEventDestroy(begin);
        if (stream) cudaStreamDestroy(stream);
        check(e, "creating the timing stream and events");
    }
    stream_ = stream;
    start_ = begin;
    stop_ = end;
    gemm_set_stream(stream_);
}

device_stream_timer::~device_stream_timer() {
    gemm_set_stream(nullptr);
    if (stop_) cudaEventDestroy(as_event(stop_));
    if (start_) cudaEventDestroy(as_event(start_));
    if (stream_) {
        cudaStreamSynchronize(as_stream(stream_));
        cudaStreamDestroy(as_stream(stream_));
    }
}

void device_stream_timer::start() { check(cudaEventRecord(as_event(start_), as_stream(stream_)), "cudaEventRecord"); }

double device_stream_timer::stop() {
    check(cudaEventRecord(as_event(stop_), as_stream(stream_)), "cudaEventRecord");
    check(cudaEventSynchronize(as_event(stop_)), "device work between the timing events");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, as_event(start_), as_event(stop_)), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
}

void device_stream_timer::synchronize() { check(cudaStreamSynchronize(as_stream(stream_)), "cudaStreamSynchronize"); }

}  // namespace gemm_cli
