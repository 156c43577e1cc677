// gemm_query_api.cpp: problem descriptions (gemm_desc_t) as problems, and the capability
// queries on them: which backends serve a problem, and with which variants.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "call.hpp"
#include "dispatch/error.hpp"
#include "dispatch/policy.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/settings.hpp"
#include "dispatch/size_math.hpp"
#include "entry_points.h"
#include "guard.hpp"

using namespace gemm;

namespace {

int64_t least_ld(int layout, int64_t rows, int64_t cols) {
    return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? rows : cols);
}

// One stored matrix's span in elements, when the sizes are sane; 0 otherwise (check_call
// then refuses the desc for the reason that made them insane).
int64_t span(int layout, int64_t rows, int64_t cols, int64_t ld) {
    if (rows <= 0 || cols <= 0 || ld <= 0) return 0;
    bool col = layout == GEMM_COL_MAJOR;
    std::optional<int64_t> s = span_elements(col ? cols : rows, ld, col ? rows : cols);
    return s ? *s : 0;
}

// Pointers that say nothing but their alignment (no call reads through them).
const void *pointer_aligned_to(int alignment) {
    uintptr_t base = uintptr_t(1) << 30;
    return reinterpret_cast<const void *>(base + uintptr_t(alignment > 0 && alignment < (1 << 30) ? alignment : 0));
}

// The call a desc stands for, with its defaults filled in.
struct described_call {
    user_call call{};
    float alpha_f = 1, beta_f = 0;
    double alpha_d = 1, beta_d = 0;
};

void fill_call(const api_desc &d, described_call &out) {
    user_call &c = out.call;
    c.layout = d.layout;
    c.transa = d.transa;
    c.transb = d.transb;
    c.m = d.m;
    c.n = d.n;
    c.k = d.k;
    c.a_type = d.a_type;
    c.b_type = d.b_type;
    c.c_type = d.c_type;
    c.compute = d.compute;
    bool an = d.transa == GEMM_OP_N, bn = d.transb == GEMM_OP_N;
    int64_t a_rows = an ? d.m : d.k, a_cols = an ? d.k : d.m, b_rows = bn ? d.k : d.n, b_cols = bn ? d.n : d.k;
    c.lda = d.lda ? d.lda : least_ld(d.layout, a_rows, a_cols);
    c.ldb = d.ldb ? d.ldb : least_ld(d.layout, b_rows, b_cols);
    c.ldc = d.ldc ? d.ldc : least_ld(d.layout, d.m, d.n);
    c.batch = d.batch;
    bool batched = d.batch > 1;
    c.stride_a = !batched ? 0 : d.stride_a == GEMM_DESC_TIGHT ? span(d.layout, a_rows, a_cols, c.lda) : d.stride_a;
    c.stride_b = !batched ? 0 : d.stride_b == GEMM_DESC_TIGHT ? span(d.layout, b_rows, b_cols, c.ldb) : d.stride_b;
    c.stride_c = !batched ? 0 : d.stride_c == GEMM_DESC_TIGHT ? span(d.layout, d.m, d.n, c.ldc) : d.stride_c;
    bool f64 = d.compute == GEMM_F64;
    out.beta_f = d.beta_zero ? 0.0f : 1.0f;
    out.beta_d = d.beta_zero ? 0.0 : 1.0;
    c.alpha = f64 ? static_cast<const void *>(&out.alpha_d) : &out.alpha_f;
    c.beta = f64 ? static_cast<const void *>(&out.beta_d) : &out.beta_f;
    c.a = c.b = pointer_aligned_to(d.alignment);
    c.c = const_cast<void *>(pointer_aligned_to(d.alignment));
    c.entry = api_entry_desc;
}

// The canonical problem a desc describes, or the status a call of it would fail with.
gemm_status_t problem_of(const api_desc &d, problem &p) {
    if (d.alignment <= 0 || (d.alignment & (d.alignment - 1)) != 0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_desc_t: alignment = " + std::to_string(d.alignment) + " must be a power of 2");
    if (d.device < -1)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_desc_t: device = " + std::to_string(d.device) + " must be -1 (host) or an ordinal");
    described_call dc;
    fill_call(d, dc);
    if (gemm_status_t s = check_call(dc.call); s != GEMM_STATUS_SUCCESS) return s;
    p = canonicalize(dc.call);
    p.space = d.device < 0 ? memory_space::host : memory_space::device;
    p.device = d.device;
    return GEMM_STATUS_SUCCESS;
}

// The backend a "name[:variant]" names, if it knows the variant and (unless any_machine) can
// run here.
gemm_status_t backend_named(const char *spec, backend *&b, std::string &variant, bool any_machine = false) {
    if (!spec) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 1: backend is NULL", 1);
    std::string name = spec;
    if (auto colon = name.find(':'); colon != std::string::npos) {
        variant = name.substr(colon + 1);
        name.resize(colon);
    }
    b = find_backend(name);
    if (!b) return set_error(GEMM_STATUS_UNKNOWN_BACKEND, "no backend named '" + name + "' in this build", 1);
    if (const verdict &v = b->available(); !v.ok && !any_machine)
        return set_error(GEMM_STATUS_BACKEND_UNAVAILABLE, "backend '" + name + "' is unavailable: " + v.reason, 1);
    if (!b->knows_variant(variant))
        return set_error(GEMM_STATUS_INVALID_VALUE, "backend '" + name + "' has no variant '" + variant + "'", 1);
    return GEMM_STATUS_SUCCESS;
}

// What a call of p would run on under the selection in force, or why it would fail.
gemm_status_t selection_serves(const api_desc *d) {
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: desc is NULL", 2);
    if (const env_settings &env = settings(); env.error != GEMM_STATUS_SUCCESS) return set_error(env.error, env.error_message);
    const selection &sel = current_selection();
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message);
    problem p;
    if (gemm_status_t s = problem_of(*d, p); s != GEMM_STATUS_SUCCESS) return s;
    choice c = sel.forced ? choose_backend(p, sel, false) : choose_builtin(p, false);
    return c.chosen ? GEMM_STATUS_SUCCESS : set_error(c.status, c.message);
}

gemm_status_t supports(const char *spec, const api_desc *d, backend *&b) {
    if (!spec) return selection_serves(d);
    std::string variant;
    if (gemm_status_t s = backend_named(spec, b, variant); s != GEMM_STATUS_SUCCESS) return s;
    if (!d) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: desc is NULL", 2);
    problem p;
    if (gemm_status_t s = problem_of(*d, p); s != GEMM_STATUS_SUCCESS) return s;
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
    if (!ids || !count) return set_error(GEMM_STATUS_INVALID_POINTER, !ids ? "parameter 3: ids is NULL" : "parameter 4: count is NULL", !ids ? 3 : 4);
    backend *b = nullptr;
    std::vector<std::string> found;
    if (d) {
        if (gemm_status_t s = supports(spec, d, b); s != GEMM_STATUS_SUCCESS) return s;
        problem p;
        problem_of(*d, p);
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
        return supports(backend_spec, desc, b);
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
        if (traits->struct_size < int64_t(sizeof *traits))
            return set_error(GEMM_STATUS_INVALID_VALUE, "parameter 2: traits->struct_size = " +
                                                            std::to_string(traits->struct_size) + " must be sizeof(gemm_backend_traits_t)", 2);
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

gemm_status_t api_desc_too_small(int64_t struct_size) {
    clear_error();
    return set_error(GEMM_STATUS_INVALID_VALUE,
                     "gemm_desc_t: struct_size = " + std::to_string(struct_size) +
                         " is smaller than this library's gemm_desc_t (" + std::to_string(sizeof(gemm_desc_t)) +
                         " bytes): initialize it with gemm_desc_init");
}

}  // extern "C"
