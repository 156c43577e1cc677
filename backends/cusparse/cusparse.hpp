// cusparse.hpp: registration of the cuSPARSE backend (sparse products only).
#pragma once

#include "dispatch/backend.hpp"

namespace gemm {
backend_ptr make_cusparse_backend();
}
