// one_line.hpp: registration of `one_line`, a backend that exists to prove that adding a
// backend is its folder and one gemm_backend() line (tests/one_line_backend/).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_one_line_backend();
}
