// progress_line.hpp: the progress of `gemm tune` and `gemm bench` on stderr, item by item.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "timer.hpp"

namespace gemm_cli {

// "m:ss" of a duration in seconds.
std::string clock_text(double seconds);

// On a terminal a bar redrawn twice a second (item i of N, what it is, elapsed time, time
// left); otherwise one line as each item starts ("gemm tune: [2/6] f32 row NN 16x16x16
// (elapsed 0:03, about 0:09 left)"). The time left is the mean time of the items done times
// the items left: not weighted by size, as an item's time is its budget for small shapes and
// grows with the shape only past that.
class progress_line {
public:
    progress_line(std::string command, std::size_t total);
    ~progress_line();
    progress_line(const progress_line &) = delete;
    progress_line &operator=(const progress_line &) = delete;

    void begin(std::size_t index, const std::string &what);

    // Runs print (which writes to stdout) with the bar cleared, then redraws the bar.
    template <class F> void print_between(F print) {
        std::lock_guard<std::mutex> lock(mutex_);
        clear_locked();
        print();
        if (tty_ && !stop_) draw_locked();
    }

    double elapsed() const { return clock_.seconds(); }

private:
    void draw_locked();
    std::string times_text_locked() const;  // "elapsed 0:42, about 2:10 left"
    void clear_locked();
    void tick();

    std::string command_;
    std::size_t total_, index_ = 0;
    double begun_s_ = 0;           // when the current item began
    double left_at_begin_s_ = -1;  // the estimate then; < 0 before an item is done
    bool tty_;
    std::string what_;
    stopwatch clock_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false, visible_ = false;
    std::thread ticker_;
};

}  // namespace gemm_cli
