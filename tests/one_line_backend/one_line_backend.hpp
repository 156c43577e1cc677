// one_line_backend.hpp: registration of `one_line`, a backend that exists to prove that adding
// a backend is one folder and one line in dispatch/registry.cpp (tests/one_line_backend/).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_one_line_backend();
}
