// call_target.cpp: the host and device places a benchmarked call runs in.
#include "call_target.hpp"

namespace gemm_cli {

gemm_status_t host_target::call(std::size_t set) {
    operand_set &s = pool_.at(set);
    return gemm_case_call(case_, s.a.data(), s.b.data(), s.c.data());
}

gemm_status_t host_target::call_checked(const aligned_buffer &c_before, aligned_buffer &result, double *seconds) {
    buffer_copy(result, c_before);
    stopwatch clock;
    gemm_status_t s = gemm_case_call(case_, pool_.at(0).a.data(), pool_.at(0).b.data(), result.data());
    *seconds = clock.seconds();
    return s;
}

device_target::device_target(const gemm_case &c, const operand_pool &pool, device_stream_timer &timer)
    : case_(c), timer_(timer) {
    for (std::size_t i = 0; i < pool.size(); ++i) {
        const operand_set &h = pool.at(i);
        device_set d{device_buffer(h.a.bytes()), device_buffer(h.b.bytes()), device_buffer(h.c.bytes())};
        d.a.upload(h.a.data(), h.a.bytes());
        d.b.upload(h.b.data(), h.b.bytes());
        d.c.upload(h.c.data(), h.c.bytes());
        sets_.push_back(std::move(d));
    }
}

gemm_status_t device_target::call(std::size_t set) {
    device_set &s = sets_[set];
    return gemm_case_call(case_, s.a.data(), s.b.data(), s.c.data());
}

gemm_status_t device_target::call_checked(const aligned_buffer &c_before, aligned_buffer &result, double *seconds) {
    device_set &s = sets_[0];
    s.c.upload(c_before.data(), c_before.bytes());
    timer_.start();
    gemm_status_t status = gemm_case_call(case_, s.a.data(), s.b.data(), s.c.data());
    *seconds = timer_.stop();  // also waits, so the copy below reads the finished C
    if (status == GEMM_STATUS_SUCCESS) s.c.download(result.data(), result.bytes());
    return status;
}

}  // namespace gemm_cli
