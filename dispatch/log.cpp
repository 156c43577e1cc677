// log.cpp: loggers built once, never registered globally, so they cannot clash with the
// application's own spdlog setup.
#include "log.hpp"

#include <string>

#include <spdlog/sinks/stdout_sinks.h>

#include "launcher.hpp"
#include "settings.hpp"

namespace gemm {
namespace {

spdlog::level::level_enum to_spdlog(log_level l) {
    switch (l) {
    case log_level::trace: return spdlog::level::trace;
    case log_level::debug: return spdlog::level::debug;
    case log_level::info: return spdlog::level::info;
    case log_level::warn: return spdlog::level::warn;
    case log_level::error: return spdlog::level::err;
    case log_level::off: return spdlog::level::off;
    }
    return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> make_logger(const char *name, const char *pattern) {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>(name, sink);
    l->set_pattern(pattern);
    return l;
}

// Under a launcher the ranks share one stderr: each line names its rank.
std::string rank_tag(const char *before, const char *after) {
    const int rank = this_launch_rank().rank;
    return rank < 0 ? std::string() : before + std::to_string(rank) + after;
}

}  // namespace

spdlog::logger &logger() {
    static std::shared_ptr<spdlog::logger> l = [] {
        auto made = make_logger("gemm", ("[gemm] [%l] " + rank_tag("rank ", ": ") + "%v").c_str());
        made->set_level(to_spdlog(settings().level));
        return made;
    }();
    return *l;
}

void trace_line(const std::string &line) {
    static std::shared_ptr<spdlog::logger> l =
        make_logger("gemm.trace", ("[gemm] " + rank_tag("rank=", " ") + "%v").c_str());
    l->info(line);
}

}  // namespace gemm
