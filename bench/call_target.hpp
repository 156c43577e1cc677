// call_target.hpp: where the benchmarked calls of one case run and how they are timed:
// host operands and a steady clock, or device copies of the same operands and events on
// the stream the library was given.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "device_buffers.hpp"
#include "gemm_case.hpp"
#include "operands.hpp"
#include "timer.hpp"

namespace gemm_cli {

class call_target {
public:
    virtual ~call_target() = default;

    virtual std::size_t set_count() const = 0;
    // One call on set i's A, B and C; on the device it is only enqueued.
    virtual gemm_status_t call(std::size_t set) = 0;
    // The checked call: set 0's A and B, C starting as c_before; result receives C (copied
    // back to the host) and *seconds the call's duration, waited for.
    virtual gemm_status_t call_checked(const aligned_buffer &c_before, aligned_buffer &result, double *seconds) = 0;
    // Times the calls made between the two: stop() waits for them and returns seconds.
    virtual void timer_start() = 0;
    virtual double timer_stop() = 0;
    // How long warm-up must last at least (host: other runtimes' idle threads spin on).
    virtual double min_warmup_seconds() const = 0;
};

// The pool's own host buffers.
class host_target final : public call_target {
public:
    host_target(const gemm_case &c, operand_pool &pool) : case_(c), pool_(pool) {}
    std::size_t set_count() const override { return pool_.size(); }
    gemm_status_t call(std::size_t set) override;
    gemm_status_t call_checked(const aligned_buffer &c_before, aligned_buffer &result, double *seconds) override;
    void timer_start() override { clock_.restart(); }
    double timer_stop() override { return clock_.seconds(); }
    // The previous backend's idle threads (OpenBLAS's pool; cpu_omp's spins for 50 us at most)
    // keep the cores busy for a while after its last call: 30-fold slower first calls were
    // seen on a 2-core machine.
    double min_warmup_seconds() const override { return 0.15; }

private:
    const gemm_case &case_;
    operand_pool &pool_;
    stopwatch clock_;
};

// Device copies of every set of the pool (rotated through more than twice the device's L2
// when the pool was built for it), and the timer whose stream the library enqueues on.
class device_target final : public call_target {
public:
    // Uploads the pool; throws device_error when the device lacks the memory.
    device_target(const gemm_case &c, const operand_pool &pool, device_stream_timer &timer);
    std::size_t set_count() const override { return sets_.size(); }
    gemm_status_t call(std::size_t set) override;
    gemm_status_t call_checked(const aligned_buffer &c_before, aligned_buffer &result, double *seconds) override;
    void timer_start() override { timer_.start(); }
    double timer_stop() override { return timer_.stop(); }
    double min_warmup_seconds() const override { return 0.0; }

private:
    struct device_set {
        device_buffer a, b, c;
    };
    const gemm_case &case_;
    device_stream_timer &timer_;
    std::vector<device_set> sets_;
};

}  // namespace gemm_cli
