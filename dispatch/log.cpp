// log.cpp: loggers built once, never registered globally, so they cannot clash with the
// application's own spdlog setup.
#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

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

}  // namespace

spdlog::logger &logger() {
    static std::shared_ptr<spdlog::logger> l = [] {
        auto made = make_logger("gemm", "[gemm] [%l] %v");
        made->set_level(to_spdlog(settings().level));
        return made;
    }();
    return *l;
}

void trace_line(const std::string &line) {
    static std::shared_ptr<spdlog::logger> l = make_logger("gemm.trace", "[gemm] %v");
    l->info(line);
}

}  // namespace gemm
