// gemm_api.cpp: the exported C entry points that take no enum arguments (gemm_entry.c has
// those), the status texts and the dtype names.
#include <string>

#include "call.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/settings.hpp"
#include "gemm/gemm.h"
#include "guard.hpp"

using namespace gemm;

extern "C" {

const char *gemm_version(void) { return GEMM_VERSION_STRING; }

const char *api_status_text(int status) {
    switch (status) {
    case GEMM_STATUS_SUCCESS: return "GEMM_STATUS_SUCCESS: success";
    case GEMM_STATUS_INVALID_LAYOUT: return "GEMM_STATUS_INVALID_LAYOUT: layout is not row- or column-major";
    case GEMM_STATUS_INVALID_OP: return "GEMM_STATUS_INVALID_OP: transpose is not N, T or C";
    case GEMM_STATUS_INVALID_SIZE:
        return "GEMM_STATUS_INVALID_SIZE: a size or batch count is negative, or a matrix too large to address";
    case GEMM_STATUS_INVALID_LEADING_DIM: return "GEMM_STATUS_INVALID_LEADING_DIM: a leading dimension is too small";
    case GEMM_STATUS_INVALID_STRIDE:
        return "GEMM_STATUS_INVALID_STRIDE: a batch stride is negative or C matrices overlap";
    case GEMM_STATUS_INVALID_POINTER: return "GEMM_STATUS_INVALID_POINTER: a needed pointer is NULL";
    case GEMM_STATUS_INVALID_DTYPE: return "GEMM_STATUS_INVALID_DTYPE: not a gemm_dtype_t value";
    case GEMM_STATUS_INVALID_VALUE: return "GEMM_STATUS_INVALID_VALUE: an argument is invalid";
    case GEMM_STATUS_MIXED_MEMORY_SPACES:
        return "GEMM_STATUS_MIXED_MEMORY_SPACES: A, B and C are not in one memory space";
    case GEMM_STATUS_NOT_SUPPORTED: return "GEMM_STATUS_NOT_SUPPORTED: the chosen backend cannot serve this call";
    case GEMM_STATUS_UNKNOWN_BACKEND: return "GEMM_STATUS_UNKNOWN_BACKEND: no backend of that name in this build";
    case GEMM_STATUS_BACKEND_UNAVAILABLE:
        return "GEMM_STATUS_BACKEND_UNAVAILABLE: the backend cannot run on this machine";
    case GEMM_STATUS_INVALID_CONFIG: return "GEMM_STATUS_INVALID_CONFIG: a GEMM_* environment variable is invalid";
    case GEMM_STATUS_ALLOC_FAILED: return "GEMM_STATUS_ALLOC_FAILED: memory allocation failed";
    case GEMM_STATUS_EXECUTION_FAILED: return "GEMM_STATUS_EXECUTION_FAILED: the backend failed while computing";
    case GEMM_STATUS_INTERNAL_ERROR: return "GEMM_STATUS_INTERNAL_ERROR: internal error";
    }
    return "unknown gemm_status_t value";
}

const char *api_dtype_name(int type) { return valid_dtype(type) ? dtype_name(static_cast<dtype>(type)) : nullptr; }

const char *gemm_last_error(void) { return last_error_message(); }

int gemm_last_error_parameter(void) { return last_error_parameter(); }

int64_t gemm_backend_count(void) {
    return guarded_value<int64_t>(0, [] { return int64_t(registered_backends().size()); });
}

gemm_status_t gemm_backend_get_info(int64_t index, gemm_backend_info_t *info) {
    clear_error();
    return guarded([&] {
        const auto &all = registered_backends();
        if (index < 0 || index >= int64_t(all.size()))
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             "parameter 1: index = " + std::to_string(index) + " must be in [0, " +
                                 std::to_string(all.size()) + ")",
                             1);
        if (!info) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: info is NULL", 2);
        backend *b = all[std::size_t(index)];
        const verdict &v = b->available();  // constant once probed: its reason outlives the call
        info->name = b->name().data();
        info->available = v.ok ? 1 : 0;
        info->reason = v.reason.c_str();
        info->detail = v.detail.c_str();
        return GEMM_STATUS_SUCCESS;
    });
}

int64_t gemm_option_count(void) {
    return guarded_value<int64_t>(0, [] { return int64_t(settings().options.size()); });
}

gemm_status_t gemm_option_get_info(int64_t index, gemm_option_info_t *info) {
    clear_error();
    return guarded([&] {
        const std::vector<option_entry> &all = settings().options;  // constant once read
        if (index < 0 || index >= int64_t(all.size()))
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             "parameter 1: index = " + std::to_string(index) + " must be in [0, " +
                                 std::to_string(all.size()) + ")",
                             1);
        if (!info) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: info is NULL", 2);
        const option_entry &e = all[std::size_t(index)];
        // name, values, fallback and meaning are literals of the tables that declare the options;
        // owner and value are strings of settings(), constant once read: all outlive the call.
        info->name = e.option.name.data();
        info->owner = e.owner.c_str();
        info->value = e.value ? e.value->c_str() : nullptr;
        info->values = e.option.values.data();
        info->fallback = e.option.fallback.data();
        info->meaning = e.option.meaning.data();
        return GEMM_STATUS_SUCCESS;
    });
}

gemm_status_t gemm_set_backend(const char *name) {
    clear_error();
    return guarded([&] { return select_backend(name); });
}

gemm_status_t gemm_set_thread_backend(const char *name) {
    clear_error();
    return guarded([&] { return select_thread_backend(name); });
}

gemm_status_t gemm_set_stream(void *stream) {
    clear_error();
    set_thread_stream(stream);
    return GEMM_STATUS_SUCCESS;
}

void *gemm_get_stream(void) { return thread_stream(); }

const char *gemm_get_backend(void) {
    return guarded_value<const char *>("", [] { return current_selection().spec.c_str(); });
}

const char *gemm_get_backend_source(void) {
    return guarded_value<const char *>("", [] { return current_selection().source.c_str(); });
}

}  // extern "C"
