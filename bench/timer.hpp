// timer.hpp: a monotonic stopwatch in seconds for host-side timing.
#pragma once

#include <chrono>

namespace gemm_cli {

class stopwatch {
public:
    stopwatch() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

private:
    std::chrono::steady_clock::time_point start_;
};

}  // namespace gemm_cli
