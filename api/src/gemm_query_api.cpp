// gemm_query_api.cpp: problem descriptions (gemm_desc_t) as problems, and the capability
// queries on them: which backends serve a problem, and with which variants.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "call.hpp"
#include "described_problem.hpp"
#include "dispatch/error.hpp"
#include "dispatch/policy.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/size_math.hpp"
#include "entry_points.h"
#include "guard.hpp"
#include "struct_size.hpp"

using namespace gemm;

namespace {

// What a call of p would run on under the selection in force, or why it would fail.
gemm_status_t selection_serves(const problem &p) {
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    choice c = sel.forced ? choose_backend(p, sel, false) : choose_builtin(p, false, rates_use::stored_only);
    return c.chosen ? GEMM_STATUS_SUCCESS : set_error(c.status, c.message);
}

// Whether a call of d forced onto spec ("name[:variant]"), or with spec NULL made under the
// selection in force, would be served; else the status it would fail with, in a call's order:
// the desc's arguments, then the GEMM_* settings, then the backend's verdict. b: the backend
// spec names (untouched when spec is NULL); p: the problem d describes.
gemm_status_t supports(const char *spec, const api_desc *d, backend *&b, problem &p) {
    if (spec) {
        std::string variant;
        if (gemm_status_t s = backend_named(spec, b, variant); s != GEMM_STATUS_SUCCESS) return s;
    }
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: desc is NULL", 2);
    if (gemm_status_t s = problem_of(*d, 2, p); s != GEMM_STATUS_SUCCESS) return s;
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS)
        return set_error(env.error, env.error_message);
    if (!spec) return selection_serves(p);
    if (verdict v = b->supports(p); !v.ok)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "backend '" + std::string(b->name()) + "': " + v.reason);
    return GEMM_STATUS_SUCCESS;
}

// What the last gemm_backend_variants on this thread handed out.
struct variant_list {
    std::vector<std::string> ids;
    std::vector<const char *> pointers;
};
thread_local variant_list tls_variants;

gemm_status_t variants(const char *spec, const api_desc *d, const char *const **ids, int64_t *count) {
    if (!spec) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: backend is NULL", 1);
    if (!ids || !count)
        return set_error(GEMM_STATUS_INVALID_POINTER, !ids ? "parameter 3: ids is NULL" : "parameter 4: count is NULL",
                         !ids ? 3 : 4);
    backend *b = nullptr;
    std::vector<std::string> found;
    if (d) {
        problem p;
        if (gemm_status_t s = supports(spec, d, b, p); s != GEMM_STATUS_SUCCESS) return s;
        found = b->variants(p);
    } else {  // the ids of the build, whether or not this machine can run them
        std::string variant;
        if (gemm_status_t s = backend_named(spec, b, variant, true); s != GEMM_STATUS_SUCCESS) return s;
        found = b->variant_ids();
        if (!found.empty() && !found[0].empty() && found[0][0] == '<')  // a description of the ids' form
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "backend '" + std::string(b->name()) +
                                                            "' makes its variant ids for a problem, " + found[0] +
                                                            ": give a desc");
    }
    variant_list &out = tls_variants;
    out.ids = std::move(found);
    out.pointers.clear();
    for (const std::string &id : out.ids) out.pointers.push_back(id.c_str());
    *ids = out.pointers.data();
    *count = int64_t(out.pointers.size());
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

gemm_status_t api_backend_supports(const char *backend_spec, const api_desc *desc) {
    clear_error();
    return guarded([&] {
        backend *b = nullptr;
        problem p;
        return supports(backend_spec, desc, b, p);
    });
}

gemm_status_t api_backend_variants(const char *backend_spec, const api_desc *desc, const char *const **ids,
                                   int64_t *count) {
    clear_error();
    return guarded([&] { return variants(backend_spec, desc, ids, count); });
}

gemm_status_t api_backend_get_traits(const char *spec, gemm_backend_traits_t *traits) {
    clear_error();
    return guarded([&] {
        if (!traits) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: traits is NULL", 2);
        if (gemm_status_t s =
                check_struct_size(traits, traits->struct_size, sizeof *traits, "parameter 2: traits->struct_size",
                                  "gemm_backend_traits_t", "set it to sizeof(gemm_backend_traits_t)", 2);
            s != GEMM_STATUS_SUCCESS)
            return s;
        backend *b = nullptr;
        std::string variant;
        if (gemm_status_t s = backend_named(spec, b, variant, true); s != GEMM_STATUS_SUCCESS && !b) return s;
        clear_error();
        traits->kind = gemm_backend_kind_t(b->kind());
        traits->reference = b->reference() ? 1 : 0;
        traits->builtin_rank = -1;
        if (b->kind() != backend_kind::multi_device) {
            int rank = 0;
            for (backend *other : registered_backends()) {
                if (other == b) break;
                if (other->kind() == b->kind()) ++rank;
            }
            traits->builtin_rank = rank;
        }
        return GEMM_STATUS_SUCCESS;
    });
}

gemm_status_t api_check_desc_size(const gemm_desc_t *desc, int position) {
    clear_error();
    return guarded([&] {
        return check_struct_size(desc, desc->struct_size, sizeof *desc, "gemm_desc_t: struct_size", "gemm_desc_t",
                                 "initialize it with gemm_desc_init", position);
    });
}

gemm_status_t api_check_epilogue_size(const gemm_epilogue_t *epilogue, int position) {
    clear_error();
    return guarded([&] {
        return check_struct_size(epilogue, epilogue->struct_size, sizeof *epilogue,
                                 "parameter " + std::to_string(position) + ": epilogue->struct_size", "gemm_epilogue_t",
                                 "initialize it with gemm_epilogue_init", position);
    });
}

gemm_status_t api_check_scaling_size(const gemm_scaling_t *scaling, int position) {
    clear_error();
    return guarded([&] {
        return check_struct_size(scaling, scaling->struct_size, sizeof *scaling,
                                 "parameter " + std::to_string(position) + ": scaling->struct_size", "gemm_scaling_t",
                                 "initialize it with gemm_scaling_init", position);
    });
}

}  // extern "C"
