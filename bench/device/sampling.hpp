// sampling.hpp: how the device benchmark programs take their samples: warm-up calls apart from
// the timed ones, device time between two CUDA events or host time on the steady clock, rounds
// that take the ways compared in turn, and the median. A header alone, so that run.sh still
// builds each program from its one source file.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace bench_device {

// The middle sample (the upper of the two middle ones of an even count).
inline double median(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// The median of each way's samples.
inline std::vector<double> medians(const std::vector<std::vector<double>> &samples) {
    std::vector<double> out;
    for (const std::vector<double> &way : samples) out.push_back(median(way));
    return out;
}

// Call i of a run: call(i) where the call takes the index (to rotate through operand sets),
// call() where it takes nothing.
template <class F> void invoke(F &call, int i) {
    if constexpr (std::is_invocable_v<F &, int>) call(i);
    else call();
}

// `calls` calls of `call`, whose results nothing times.
template <class F> void warm_up(F &&call, int calls) {
    for (int i = 0; i < calls; ++i) invoke(call, i);
}

// Device time per call of calls enqueued back to back on one stream: the span between an event
// recorded before the first and one after the last, so that no host work between the calls
// counts.
class event_timer {
public:
    explicit event_timer(cudaStream_t stream) : stream_(stream) {
        cudaEventCreate(&start_);
        cudaEventCreate(&stop_);
    }
    ~event_timer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    event_timer(const event_timer &) = delete;
    event_timer &operator=(const event_timer &) = delete;

    // Milliseconds per call of `calls` calls, after `warmup` calls outside the events.
    template <class F> double ms_per_call(F &&call, int calls, int warmup = 0) {
        warm_up(call, warmup);
        cudaEventRecord(start_, stream_);
        for (int i = 0; i < calls; ++i) invoke(call, i);
        cudaEventRecord(stop_, stream_);
        cudaEventSynchronize(stop_);
        float ms = 0;
        cudaEventElapsedTime(&ms, start_, stop_);
        return double(ms) / calls;
    }

private:
    cudaStream_t stream_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Host time of one call, in seconds: all of its work where the call returns when that is done.
template <class F> double host_seconds(F &&call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Host time per call, in microseconds, of `calls` calls back to back: what the caller's thread
// spends on each (enqueueing, for asynchronous calls; the caller synchronizes if it needs to).
template <class F> double host_us_per_call(F &&call, int calls) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) invoke(call, i);
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(end - start).count() / calls;
}

// samples[w][r] = sample(w) in round r, for `ways` ways over `rounds` rounds. The ways take
// turns within a round, each round starting one way further on, so that a drift of the GPU's
// clocks or of the host's load falls on every way alike rather than on whichever runs last.
template <class F> std::vector<std::vector<double>> interleaved_samples(std::size_t ways, int rounds, F &&sample) {
    std::vector<std::vector<double>> samples(ways);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t turn = 0; turn < ways; ++turn) {
            const std::size_t w = (turn + std::size_t(round)) % ways;
            samples[w].push_back(sample(w));
        }
    return samples;
}

// The median over `rounds` samples of one way's device time per call: each sample `warmup` calls
// and then `calls` calls between two events.
template <class F> double median_ms_per_call(cudaStream_t stream, F &&call, int rounds, int calls, int warmup) {
    event_timer timer(stream);
    std::vector<double> samples;
    for (int round = 0; round < rounds; ++round) samples.push_back(timer.ms_per_call(call, calls, warmup));
    return median(samples);
}

}  // namespace bench_device
