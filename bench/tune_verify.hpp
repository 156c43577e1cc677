// tune_verify.hpp: `gemm tune --verify [--drop]`, the tune cache's entries measured again.
#pragma once

#include <string>

#include "tune_options.hpp"

namespace gemm_cli {

// Verifies every entry of the cache in use; command is the line that reproduces the run.
// Returns the exit code.
int tune_verify_command(const tune_options &o, const std::string &command);

}  // namespace gemm_cli
