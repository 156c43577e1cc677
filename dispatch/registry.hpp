// registry.hpp: every backend of this build, registered once per process.
#pragma once

#include <string_view>
#include <vector>

#include "backend.hpp"

namespace gemm {

// In registration order; built on first use, thread-safe, lives until exit.
const std::vector<backend *> &registered_backends();

// nullptr when no backend has that name.
backend *find_backend(std::string_view name);

}  // namespace gemm
