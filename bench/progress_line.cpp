// progress_line.cpp: the progress bar, or one line per item when stderr is no terminal.
#include "progress_line.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

namespace gemm_cli {

std::string clock_text(double seconds) {
    long s = std::lround(seconds);
    char text[32];
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
    return text;
}

progress_line::progress_line(std::string command, std::size_t total)
    : command_(std::move(command)), total_(total), tty_(isatty(fileno(stderr)) != 0) {
    if (tty_) ticker_ = std::thread([this] { tick(); });
}

progress_line::~progress_line() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        clear_locked();
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
}

void progress_line::begin(std::size_t index, const std::string &what) {
    std::lock_guard<std::mutex> lock(mutex_);
    index_ = index;
    what_ = what;
    begun_s_ = clock_.seconds();
    left_at_begin_s_ = index > 0 ? begun_s_ / double(index) * double(total_ - index) : -1;
    if (tty_) draw_locked();
    else
        std::fprintf(stderr, "%s: [%zu/%zu] %s (%s)\n", command_.c_str(), index + 1, total_, what.c_str(),
                     times_text_locked().c_str());
}

void progress_line::draw_locked() {
    constexpr std::size_t width = 24;
    std::size_t done = total_ ? index_ * width / total_ : 0;
    std::string bar = std::string(done, '#') + std::string(width - done, '.');
    std::fprintf(stderr, "\r\033[K[%s] %zu/%zu  %s  %s", bar.c_str(), index_ + 1, total_, what_.c_str(),
                 times_text_locked().c_str());
    std::fflush(stderr);
    visible_ = true;
}

// The estimate counts down while the item runs.
std::string progress_line::times_text_locked() const {
    double now = clock_.seconds();
    std::string text = "elapsed " + clock_text(now);
    if (left_at_begin_s_ < 0) return text;
    return text + ", about " + clock_text(std::max(0.0, left_at_begin_s_ - (now - begun_s_))) + " left";
}

void progress_line::clear_locked() {
    if (!visible_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    visible_ = false;
}

void progress_line::tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
        wake_.wait_for(lock, std::chrono::milliseconds(500));
        if (!stop_ && visible_) draw_locked();
    }
}

}  // namespace gemm_cli
