// described_problem.cpp: from a gemm_desc_t to the canonical problem, through the same checks
// a call makes.
#include "described_problem.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "dispatch/error.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/size_math.hpp"

namespace gemm {
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

// A desc's stride as a strided call takes it: GEMM_DESC_TIGHT is one matrix's span; a stride
// matters only between matrices, except that a negative one is refused whatever the batch
// count, as the strided calls refuse it.
int64_t call_stride(int64_t given, bool batched, int64_t tight) {
    if (given == GEMM_DESC_TIGHT) return batched ? tight : 0;
    return batched || given < 0 ? given : 0;
}

// Pointers that say nothing but their alignment (no call reads through them).
const void *pointer_aligned_to(int alignment) {
    uintptr_t base = uintptr_t(1) << 30;
    return reinterpret_cast<const void *>(base + uintptr_t(alignment > 0 && alignment < (1 << 30) ? alignment : 0));
}

// The call a desc stands for, with its defaults filled in.
// The scalars, as complex pairs: a real compute type reads the first part.
struct described_call {
    user_call call{};
    float alpha_f[2] = {1, 0}, beta_f[2] = {0, 0};
    double alpha_d[2] = {1, 0}, beta_d[2] = {0, 0};
    api_epilogue epilogue{};
    api_scaling scaling{};
};

// The desc's scale mode as a call's scaling, its scales placeholders (never read): what
// supports() and the plan judge. A desc of another type with mode NONE has none.
void fill_scaling(const api_desc &d, described_call &out) {
    const bool fp8 = d.a_type == GEMM_F8_E4M3 || d.a_type == GEMM_F8_E5M2;
    if (!fp8 && d.scale_mode == GEMM_SCALE_NONE) return;
    api_scaling &x = out.scaling;
    x.mode = d.scale_mode;
    if (d.scale_mode != GEMM_SCALE_NONE)
        x.a_scale = x.b_scale = static_cast<const float *>(pointer_aligned_to(int(sizeof(float))));
    out.call.scaling = &x;
}

// The desc's epilogue as a call's, its pointers placeholders where a run needs them (all at
// one address: check_call judges no overlap between a desc's placeholders).
void fill_epilogue(const api_desc &d, described_call &out) {
    if (d.activation == GEMM_ACTIVATION_NONE && d.bias_axis == GEMM_BIAS_NONE && !d.aux) return;
    api_epilogue &e = out.epilogue;
    const bool backward = d.activation == GEMM_ACTIVATION_RELU_BACKWARD || d.activation == GEMM_ACTIVATION_GELU_BACKWARD;
    const bool axis = d.bias_axis != GEMM_BIAS_NONE;
    e.activation = d.activation;
    e.bias_axis = d.bias_axis;
    void *placeholder = const_cast<void *>(pointer_aligned_to(d.alignment));
    e.bias = axis && !backward ? placeholder : nullptr;
    e.bias_grad = axis && backward ? placeholder : nullptr;
    e.aux = d.aux || backward ? placeholder : nullptr;
    e.ld_aux = d.ld_aux ? d.ld_aux : least_ld(d.layout, d.m, d.n);
    out.call.epilogue = &e;
}

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
    c.stride_a = call_stride(d.stride_a, batched, span(d.layout, a_rows, a_cols, c.lda));
    c.stride_b = call_stride(d.stride_b, batched, span(d.layout, b_rows, b_cols, c.ldb));
    c.stride_c = call_stride(d.stride_c, batched, span(d.layout, d.m, d.n, c.ldc));
    bool doubles = d.compute == GEMM_F64 || d.compute == GEMM_C64;
    out.beta_f[0] = d.beta_zero ? 0.0f : 1.0f;
    out.beta_d[0] = d.beta_zero ? 0.0 : 1.0;
    c.alpha = doubles ? static_cast<const void *>(out.alpha_d) : out.alpha_f;
    c.beta = doubles ? static_cast<const void *>(out.beta_d) : out.beta_f;
    c.a = c.b = pointer_aligned_to(d.alignment);
    c.c = const_cast<void *>(pointer_aligned_to(d.alignment));
    c.entry = api_entry_desc;
    fill_epilogue(d, out);
    fill_scaling(d, out);
}

}  // namespace

gemm_status_t problem_of(const api_desc &d, int position, problem &p, call_shape *call, user_call *described) {
    if (d.alignment <= 0 || (d.alignment & (d.alignment - 1)) != 0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_desc_t: alignment = " + std::to_string(d.alignment) + " must be a power of 2", position);
    if (d.device < -1)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_desc_t: device = " + std::to_string(d.device) + " must be -1 (host) or an ordinal",
                         position);
    // A flag is 0 or 1: anything else there (a count, garbage) is a mistake, not "true".
    for (const auto &[name, value] :
         {std::pair{"beta_zero", d.beta_zero}, std::pair{"aux", d.aux}, std::pair{"check_pointers", d.check_pointers}})
        if (value != 0 && value != 1)
            return set_error(GEMM_STATUS_INVALID_VALUE,
                             std::string("gemm_desc_t: ") + name + " = " + std::to_string(value) + " must be 0 or 1",
                             position);
    described_call dc;
    fill_call(d, dc);
    if (gemm_status_t s = check_call(dc.call); s != GEMM_STATUS_SUCCESS) return set_error_parameter(s, position);
    p = canonicalize(dc.call);
    p.space = d.device < 0 ? memory_space::host : memory_space::device;
    p.device = d.device;
    if (call) *call = shape_of(dc.call);
    if (described) {
        *described = dc.call;
        described->alpha = described->beta = nullptr;  // they point into dc
        described->epilogue = nullptr;
        described->scaling = nullptr;
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t backend_named(const char *spec, backend *&b, std::string &variant, bool any_machine) {
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

}  // namespace gemm
