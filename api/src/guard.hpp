// guard.hpp: no exception crosses the C API: every exported entry point runs its body here,
// and a failed allocation anywhere below becomes GEMM_STATUS_ALLOC_FAILED.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "dispatch/error.hpp"

namespace gemm {

template <class F> gemm_status_t guarded(F &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return set_fixed_error(GEMM_STATUS_ALLOC_FAILED, "out of memory");
    } catch (const std::length_error &) {  // a container asked for more than it can hold
        return set_fixed_error(GEMM_STATUS_ALLOC_FAILED, "out of memory: a size exceeds what can be allocated");
    } catch (const std::exception &e) {
        try {
            return set_error(GEMM_STATUS_INTERNAL_ERROR, std::string("internal error: ") + e.what());
        } catch (...) {
            return set_fixed_error(GEMM_STATUS_INTERNAL_ERROR, "internal error: unexpected exception");
        }
    } catch (...) {
        return set_fixed_error(GEMM_STATUS_INTERNAL_ERROR, "internal error: unexpected exception");
    }
}

// For the entry points that answer a value instead of a status: on_error when body throws.
template <class T, class F> T guarded_value(T on_error, F &&body) noexcept {
    try {
        return body();
    } catch (...) {
        return on_error;
    }
}

}  // namespace gemm
