// log.hpp: the library's spdlog logger (GEMM_LOG_LEVEL) and the per-call trace (GEMM_VERBOSE).
#pragma once

#include <spdlog/spdlog.h>

#include "gemm/gemm.h"

namespace gemm {

// Writes to stderr as "[gemm] [level] message"; level from GEMM_LOG_LEVEL (default warn).
// Under a launcher that sets a rank (launcher.hpp): "[gemm] [level] rank 3: message".
spdlog::logger &logger();

// Writes one GEMM_VERBOSE line to stderr as "[gemm] message", whatever the log level; under a
// launcher, "[gemm] rank=3 message".
void trace_line(const std::string &line);

// The words trace lines give the caller's layout and ops: "row" or "col"; 'N', 'T' or 'C'.
inline const char *layout_name(gemm_layout_t l) { return l == GEMM_ROW_MAJOR ? "row" : "col"; }
inline char op_letter(gemm_op_t o) { return o == GEMM_OP_N ? 'N' : o == GEMM_OP_T ? 'T' : 'C'; }

}  // namespace gemm
