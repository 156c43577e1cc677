// cpu_ref.hpp: registration of the reference backend (the oracle every test compares with).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cpu_ref_backend();
}
