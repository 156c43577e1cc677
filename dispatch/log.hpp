// log.hpp: the library's spdlog logger (GEMM_LOG_LEVEL) and the per-call trace (GEMM_VERBOSE).
#pragma once

#include <spdlog/spdlog.h>

namespace gemm {

// Writes to stderr as "[gemm] [level] message"; level from GEMM_LOG_LEVEL (default warn).
// Under a launcher that sets a rank (launcher.hpp): "[gemm] [level] rank 3: message".
spdlog::logger &logger();

// Writes one GEMM_VERBOSE line to stderr as "[gemm] message", whatever the log level; under a
// launcher, "[gemm] rank=3 message".
void trace_line(const std::string &line);

}  // namespace gemm
