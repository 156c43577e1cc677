// cublaslt.cpp: cuBLASLt matmul; the heuristic's candidates are the variants, named by their
// algorithm configuration so that a tuned choice parses back in a later process.
#include "cublaslt.hpp"

#include <array>
#include <climits>
#include <cstdio>
#include <map>

#include <spdlog/fmt/fmt.h>

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/kernels/scale_c.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/runtime/cublas_verdict.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/cuda_types.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "dispatch/error.hpp"

namespace gemm {
namespace {

using cuda::cublas;  // the loaded functions (cublas_library.hpp)

constexpr int max_candidates = 16;
constexpr std::size_t max_cached_plans = 64;  // per (thread, device); cleared when full

// ---- variant ids -----------------------------------------------------------------------------

// Every settable field of cublasLtMatmulAlgoConfigAttributes_t, in one id such as
// "algo23_tile15_stages8_splitk1_red0_swz0_cust0_inner0_cluster0".
struct algo_config {
    int32_t algo = 0;
    uint32_t tile = 0, stages = 0;
    int32_t splitk = 1;
    uint32_t reduction = 0, swizzle = 0, custom = 0;
    uint16_t inner = 0, cluster = 0;
};

std::string to_id(const algo_config &c) {
    char text[200];
    std::snprintf(text, sizeof text, "algo%d_tile%u_stages%u_splitk%d_red%u_swz%u_cust%u_inner%u_cluster%u", c.algo,
                  c.tile, c.stages, c.splitk, c.reduction, c.swizzle, c.custom, unsigned(c.inner), unsigned(c.cluster));
    return text;
}

// Accepts exactly the ids to_id writes: parse, then print again and compare.
bool parse_id(std::string_view id, algo_config &out) {
    std::string text(id);
    unsigned inner = 0, cluster = 0;
    algo_config c;
    int consumed = -1;
    int fields =
        std::sscanf(text.c_str(), "algo%d_tile%u_stages%u_splitk%d_red%u_swz%u_cust%u_inner%u_cluster%u%n", &c.algo,
                    &c.tile, &c.stages, &c.splitk, &c.reduction, &c.swizzle, &c.custom, &inner, &cluster, &consumed);
    if (fields != 9 || consumed != int(text.size()) || inner > 0xffff || cluster > 0xffff) return false;
    c.inner = uint16_t(inner);
    c.cluster = uint16_t(cluster);
    if (to_id(c) != text) return false;
    out = c;
    return true;
}

template <class T>
cublasStatus_t get_config(const cublasLtMatmulAlgo_t &a, cublasLtMatmulAlgoConfigAttributes_t attr, T &v) {
    std::size_t written = 0;
    return cublas().cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof v, &written);
}

template <class T> cublasStatus_t set_config(cublasLtMatmulAlgo_t &a, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
    return cublas().cublasLtMatmulAlgoConfigSetAttribute(&a, attr, &v, sizeof v);
}

gemm_status_t read_config(const cublasLtMatmulAlgo_t &a, algo_config &c) {
    cublasStatus_t s = get_config(a, CUBLASLT_ALGO_CONFIG_ID, c.algo);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
    if (s == CUBLAS_STATUS_SUCCESS) s = get_config(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
    return cuda::cublas_status(s, "cublasLtMatmulAlgoConfigGetAttribute");
}

// ---- types -------------------------------------------------------------------------------------

using cuda::use_tf32;

bool doubles(const problem &p) { return p.ab_type == dtype::f64 || p.ab_type == dtype::c64; }

// Complex types accumulate in their part type: c32 in f32, c64 in f64.
cublasComputeType_t compute_of(const problem &p) {
    if (doubles(p)) return CUBLAS_COMPUTE_64F;
    return use_tf32(p) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// alpha and beta: complex for the complex types.
cudaDataType_t scale_of(const problem &p) {
    if (is_complex(p.ab_type)) return p.ab_type == dtype::c64 ? CUDA_C_64F : CUDA_C_32F;
    return doubles(p) ? CUDA_R_64F : CUDA_R_32F;
}

// Largest power of two up to 256 dividing the address and, for batches, the byte stride.
uint32_t alignment(const void *ptr, int64_t stride, dtype t, int64_t batch) {
    uint64_t bits = reinterpret_cast<uintptr_t>(ptr) | 256u;
    if (batch > 1 && stride != 0) bits |= uint64_t(stride) * dtype_size(t);
    return uint32_t(bits & (~bits + 1));
}

// ---- epilogues ---------------------------------------------------------------------------------

// cuBLASLt's epilogue equal to p's, if it has one. Its bias runs along D's rows (a per-row bias
// of the canonical C); it saves GELU's input in C's type with a leading dimension that is a
// multiple of 8, but ReLU's as a bit mask, so ReLU with aux, ReLU's backward form and an
// activation-free aux have no equal; neither has a bias gradient without GELU's backward form.
// Its GELU evaluates tanh to about 2^-11 (in the GPU suite its f32 results were 6e-5 off, its
// f64 results 2e-10 off), within an f16 or bf16 result's rounding but not an f32 or f64 one's:
// GELU is fused only for 16-bit C. Its bias gradient (DGELU_BGRAD) was slower than cuBLAS's
// GEMM followed by the library's pass (docs/PERFORMANCE.md, "Fused epilogues"), so GELU's
// backward form is fused only without one.
bool lt_epilogue_of(const problem &p, cublasLtEpilogue_t &out) {
    const epilogue_spec &e = p.epilogue;
    if (e.axis == epilogue_axis::columns || (e.aux && e.ld_aux % 8 != 0)) return false;
    const bool gelu = e.act == epilogue_act::gelu || e.act == epilogue_act::gelu_backward;
    if (gelu && p.c_type != dtype::f16 && p.c_type != dtype::bf16) return false;
    const bool bias = e.axis == epilogue_axis::rows;
    switch (e.act) {
    case epilogue_act::none:
        if (e.aux) return false;
        out = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
        return true;
    case epilogue_act::relu:
        if (e.aux) return false;
        out = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
        return true;
    case epilogue_act::gelu:
        out = e.aux ? (bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX)
                    : (bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU);
        return true;
    case epilogue_act::gelu_backward:
        if (bias) return false;
        out = CUBLASLT_EPILOGUE_DGELU;
        return true;
    case epilogue_act::relu_backward: break;
    }
    return false;
}

// ---- plans: per-shape descriptors and algorithms, cached in the thread's device context ------

// What a plan depends on: everything the descriptors and the heuristic read. Zero-filled array,
// so it compares reproducibly.
using plan_key = std::array<int64_t, 25>;

plan_key plan_key_of(const problem &p) {
    bool batched = p.batch > 1;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (p.epilogue.any()) lt_epilogue_of(p, epilogue);
    return {int64_t(p.ab_type),
            int64_t(p.c_type),
            int64_t(use_tf32(p)),
            int64_t(p.op_a),
            int64_t(p.op_b),
            p.m,
            p.n,
            p.k,
            p.lda,
            p.ldb,
            p.ldc,
            p.batch,
            batched ? p.stride_a : 0,
            batched ? p.stride_b : 0,
            batched ? p.stride_c : 0,
            alignment(p.a, p.stride_a, p.ab_type, p.batch),
            alignment(p.b, p.stride_b, p.ab_type, p.batch),
            alignment(p.c, p.stride_c, p.c_type, p.batch),
            int64_t(epilogue),
            p.epilogue.aux ? p.epilogue.ld_aux : 0,
            alignment(p.epilogue.bias, 0, p.c_type, 1),
            alignment(p.epilogue.aux, 0, p.c_type, 1),
            int64_t(p.scaling.a.kind) * 4 + int64_t(p.scaling.b.kind),
            int64_t(p.scaling.d_scale != nullptr),
            int64_t(p.scaling.amax_d != nullptr)};
}

struct checked_algo {
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
};

struct lt_plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    bool heuristic_done = false;
    std::vector<std::pair<std::string, checked_algo>> candidates;  // heuristic order
    std::map<std::string, checked_algo, std::less<>> parsed;       // ids not among them

    lt_plan() = default;
    lt_plan(const lt_plan &) = delete;
    lt_plan &operator=(const lt_plan &) = delete;
    ~lt_plan() {
        if (c) cublas().cublasLtMatrixLayoutDestroy(c);
        if (b) cublas().cublasLtMatrixLayoutDestroy(b);
        if (a) cublas().cublasLtMatrixLayoutDestroy(a);
        if (desc) cublas().cublasLtMatmulDescDestroy(desc);
    }
};

struct lt_cache final : cuda::context_attachment {
    std::map<plan_key, std::unique_ptr<lt_plan>> plans;
};

gemm_status_t make_layout(cublasLtMatrixLayout_t &out, dtype t, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                          int64_t batch) {
    cublasStatus_t s =
        cublas().cublasLtMatrixLayoutCreate(&out, cuda::data_type_of(t), uint64_t(rows), uint64_t(cols), ld);
    if (s != CUBLAS_STATUS_SUCCESS) {
        out = nullptr;
        return cuda::cublas_status(s, "cublasLtMatrixLayoutCreate");
    }
    if (batch > 1) {
        int32_t count = int32_t(batch);
        s = cublas().cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublas().cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                          sizeof stride);
    }
    return cuda::cublas_status(s, "cublasLtMatrixLayoutSetAttribute");
}

gemm_status_t build_plan(const problem &p, lt_plan &plan) {
    cublasStatus_t s = cublas().cublasLtMatmulDescCreate(&plan.desc, compute_of(p), scale_of(p));
    if (s != CUBLAS_STATUS_SUCCESS) {
        plan.desc = nullptr;
        return cuda::cublas_status(s, "cublasLtMatmulDescCreate");
    }
    cublasOperation_t ta = cuda::operation_of(p.op_a), tb = cuda::operation_of(p.op_b);
    s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (p.epilogue.any() && s == CUBLAS_STATUS_SUCCESS && lt_epilogue_of(p, epilogue)) {
        s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                    sizeof epilogue);
        const int64_t ld_aux = p.epilogue.ld_aux;
        if (s == CUBLAS_STATUS_SUCCESS && p.epilogue.aux)
            s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld_aux,
                                                        sizeof ld_aux);
    }
    gemm_status_t g = cuda::cublas_status(s, "cublasLtMatmulDescSetAttribute");
    if (g == GEMM_STATUS_SUCCESS)
        g = make_layout(plan.a, p.ab_type, p.a_rows(), p.a_cols(), p.lda, p.stride_a, p.batch);
    if (g == GEMM_STATUS_SUCCESS)
        g = make_layout(plan.b, p.ab_type, p.b_rows(), p.b_cols(), p.ldb, p.stride_b, p.batch);
    if (g == GEMM_STATUS_SUCCESS) g = make_layout(plan.c, p.c_type, p.m, p.n, p.ldc, p.stride_c, p.batch);
    return g;
}

// ---- FP8 ------------------------------------------------------------------------------------

// Why cuBLASLt cannot serve FP8 problem p here, or "" when it can. On compute capability 9.0
// its FP8 kernels take only the "TN" form: A transposed and B not, column-major (the
// canonical problem's), so the other op pairs are refused rather than transposed behind the
// caller's back; and they multiply e4m3 by e4m3 or e5m2, never e5m2 by e5m2 (A and B share
// one type here, so e5m2 is refused). The scales are device pointers (cuBLASLt reads them on
// the device), so host and managed operands, which the library would stage, are refused.
// Block scales are refused: cuBLASLt's heuristic finds no algorithm for its VEC128_32F and
// BLK128x128_32F scale modes on compute capability 9.0 (docs/FP8.md, the cublaslt row). An
// output scale or amax is refused: cuBLASLt takes them for FP8 D only, and this API's D is
// bf16, f16 or f32 (docs/FP8.md, the cublaslt row); cuda_tiled's kernels serve them. A group
// of a grouped call (pointer_batch) runs in run_batch, a matmul per matrix with the group's
// scales.
std::string fp8_refusal(const problem &p) {
    if (p.space != memory_space::device)
        return "FP8 takes device memory here (its scales are device pointers), not " +
               std::string(memory_space_name(p.space));
    if (p.ab_type == dtype::e5m2)
        return "e5m2 x e5m2 not supported: cuBLASLt's FP8 kernels take e4m3 for at least one operand";
    if (p.op_a != transpose::t || p.op_b != transpose::n)
        return std::string("FP8 on cuBLASLt takes only the TN form (canonical op(A) = T, op(B) = N; row-major: ") +
               "transa = N, transb = T), not " + op_name(p.op_a) + op_name(p.op_b);
    if (p.scaling.blocks())
        return "FP8 block scaling: cuBLASLt has no block-scaled kernel for compute capability 9.0 (cuda_tiled, "
               "cpu_omp and cpu_ref serve it)";
    if (p.scaling.d_scale || p.scaling.amax_d)
        return "an FP8 output scale or amax: cuBLASLt takes them only for FP8 D, and D here is bf16, f16 or f32 "
               "(cuda_tiled serves them)";
    return {};
}

// The per-tensor scales of this call on the plan's descriptor (NULL where p has none: cuBLASLt
// then takes 1). fp8_refusal has refused an output scale and amax, so those stay NULL.
gemm_status_t set_scale_pointers(const problem &p, lt_plan &plan) {
    if (!is_fp8(p.ab_type)) return GEMM_STATUS_SUCCESS;
    const struct {
        cublasLtMatmulDescAttributes_t attribute;
        const void *pointer;
    } scales[] = {{CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.scaling.a.values},
                  {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.scaling.b.values},
                  {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, p.scaling.d_scale},
                  {CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, p.scaling.amax_d}};
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (const auto &x : scales)
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, x.attribute, &x.pointer, sizeof x.pointer);
    return cuda::cublas_status(s, "cublasLtMatmulDescSetAttribute (FP8 scale pointers)");
}

// The epilogue's vectors of this call on the plan's descriptor: the heuristic reads their
// alignment from them, and the matmul their data.
gemm_status_t set_epilogue_pointers(const problem &p, lt_plan &plan) {
    if (!p.epilogue.any()) return GEMM_STATUS_SUCCESS;
    const void *bias = p.epilogue.bias, *aux = p.epilogue.aux;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (bias)
        s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (aux && s == CUBLAS_STATUS_SUCCESS)
        s = cublas().cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                                                    sizeof aux);
    return cuda::cublas_status(s, "cublasLtMatmulDescSetAttribute (epilogue pointers)");
}

gemm_status_t find_plan(cuda::device_context &dc, const problem &p, lt_plan *&out) {
    lt_cache &cache = dc.attachment<lt_cache>();
    plan_key key = plan_key_of(p);
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) {
        out = it->second.get();
        return GEMM_STATUS_SUCCESS;
    }
    if (cache.plans.size() >= max_cached_plans) cache.plans.clear();
    auto plan = std::make_unique<lt_plan>();
    gemm_status_t s = build_plan(p, *plan);
    if (s != GEMM_STATUS_SUCCESS) return s;
    out = plan.get();
    cache.plans.emplace(key, std::move(plan));
    return GEMM_STATUS_SUCCESS;
}

// Up to max_candidates algorithms the heuristic proposes for this plan's shape and alignments,
// each named by its configuration; duplicates (same configuration) are dropped.
gemm_status_t run_heuristic(cublasLtHandle_t lt, const problem &p, lt_plan &plan) {
    if (plan.heuristic_done) return GEMM_STATUS_SUCCESS;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasStatus_t s = cublas().cublasLtMatmulPreferenceCreate(&pref);
    if (s != CUBLAS_STATUS_SUCCESS) return cuda::cublas_status(s, "cublasLtMatmulPreferenceCreate");
    uint64_t workspace = cuda::device_context::workspace_bytes;
    uint32_t align[4] = {alignment(p.a, p.stride_a, p.ab_type, p.batch), alignment(p.b, p.stride_b, p.ab_type, p.batch),
                         alignment(p.c, p.stride_c, p.c_type, p.batch), alignment(p.c, p.stride_c, p.c_type, p.batch)};
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    s = cublas().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                      sizeof workspace);
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; ++i)
        s = cublas().cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &align[i], sizeof align[i]);
    // Split-k partial sums are added in the compute type, never in C's: for f16 and bf16 C that
    // would be several roundings of partial sums larger than the result (the tolerance rule
    // allows one rounding of the result).
    const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_MASK & ~uint32_t(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublas().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions,
                                                          sizeof reductions);
    cublasLtMatmulHeuristicResult_t results[max_candidates] = {};
    int returned = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublas().cublasLtMatmulAlgoGetHeuristic(lt, plan.desc, plan.a, plan.b, plan.c, plan.c, pref, max_candidates,
                                                    results, &returned);
    cublas().cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS) return cuda::cublas_status(s, "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; i < returned; ++i) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
        algo_config config;
        gemm_status_t g = read_config(results[i].algo, config);
        if (g != GEMM_STATUS_SUCCESS) return g;
        std::string id = to_id(config);
        bool seen = false;
        for (auto &c : plan.candidates) seen = seen || c.first == id;
        if (!seen) plan.candidates.push_back({id, {results[i].algo, results[i].workspaceSize}});
    }
    plan.heuristic_done = true;
    return GEMM_STATUS_SUCCESS;
}

// An id that is not among the heuristic's candidates: rebuilt from its configuration, then
// checked against this plan's shape (and the pointers' alignment) before it may run.
gemm_status_t parse_algo(cublasLtHandle_t lt, const problem &p, lt_plan &plan, std::string_view id, checked_algo &out) {
    algo_config c;
    if (!parse_id(id, c))
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: '" + std::string(id) + "' is not a variant id");
    // As the heuristic is asked (run_heuristic): partial sums never added in C's type.
    if (c.reduction & CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: variant " + std::string(id) +
                                                        " adds split-k partial sums in C's type, which this library "
                                                        "never runs (they are added in the compute type)");
    checked_algo ca;
    cudaDataType_t ab = cuda::data_type_of(p.ab_type), ct = cuda::data_type_of(p.c_type);
    cublasStatus_t s = cublas().cublasLtMatmulAlgoInit(lt, compute_of(p), scale_of(p), ab, ab, ct, ct, c.algo, &ca.algo);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_config(ca.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
    cublasLtMatmulHeuristicResult_t check{};
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublas().cublasLtMatmulAlgoCheck(lt, plan.desc, plan.a, plan.b, plan.c, plan.c, &ca.algo, &check);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cudaGetLastError();
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: variant " + std::string(id) +
                                                        " cannot run this problem (" + cublas().cublasGetStatusName(s) +
                                                        ")");
    }
    if (check.workspaceSize > cuda::device_context::workspace_bytes)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: variant " + std::string(id) + " needs " +
                                                        std::to_string(check.workspaceSize) + " bytes of workspace");
    // AlgoCheck does not see the pointers: compare the algorithm's alignment needs with ours.
    const cublasLtMatmulAlgoCapAttributes_t caps[3] = {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES,
                                                       CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
                                                       CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES};
    const uint32_t have[3] = {alignment(p.a, p.stride_a, p.ab_type, p.batch),
                              alignment(p.b, p.stride_b, p.ab_type, p.batch),
                              alignment(p.c, p.stride_c, p.c_type, p.batch)};
    for (int i = 0; i < 3; ++i) {
        uint32_t need = 0;
        std::size_t written = 0;
        cublasStatus_t asked =
            cublas().cublasLtMatmulAlgoCapGetAttribute(&ca.algo, caps[i], &need, sizeof need, &written);
        if (asked == CUBLAS_STATUS_SUCCESS && need > have[i])
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: variant " + std::string(id) + " needs " +
                                                            std::to_string(need) + "-byte alignment of " + "ABC"[i] +
                                                            ", this call has " + std::to_string(have[i]));
    }
    ca.workspace = check.workspaceSize;
    out = ca;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t choose_algo(cublasLtHandle_t lt, const problem &p, lt_plan &plan, std::string_view variant,
                          checked_algo &out, run_report &ctx) {
    if (variant.empty()) {
        gemm_status_t s = run_heuristic(lt, p, plan);
        if (s != GEMM_STATUS_SUCCESS) return s;
        if (plan.candidates.empty())
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "cublaslt: the heuristic found no algorithm for this problem");
        ctx.variant_used = plan.candidates.front().first;
        out = plan.candidates.front().second;
        return GEMM_STATUS_SUCCESS;
    }
    ctx.variant_used = variant;
    for (auto &c : plan.candidates)
        if (c.first == variant) {
            out = c.second;
            return GEMM_STATUS_SUCCESS;
        }
    if (auto it = plan.parsed.find(variant); it != plan.parsed.end()) {
        out = it->second;
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t s = parse_algo(lt, p, plan, variant, out);
    if (s == GEMM_STATUS_SUCCESS) plan.parsed.emplace(std::string(variant), out);
    return s;
}

// The thread's context and handle on dp.device, dp's plan (its epilogue pointers set) and the
// algorithm of this variant: the host work of a launch, before anything is enqueued.
gemm_status_t prepare(const problem &dp, std::string_view variant, cuda::device_context *&dc, cublasLtHandle_t &lt,
                      lt_plan *&plan, checked_algo &algo, run_report &ctx) {
    gemm_status_t s = cuda::context_for(dp.device, dc);
    if (s == GEMM_STATUS_SUCCESS) s = dc->blas_lt(lt);
    if (s == GEMM_STATUS_SUCCESS) s = find_plan(*dc, dp, plan);
    if (s == GEMM_STATUS_SUCCESS) s = set_epilogue_pointers(dp, *plan);
    if (s == GEMM_STATUS_SUCCESS) s = set_scale_pointers(dp, *plan);
    if (s == GEMM_STATUS_SUCCESS) s = choose_algo(lt, dp, *plan, variant, algo, ctx);
    return s;
}

gemm_status_t launch(const problem &dp, cudaStream_t stream, std::string_view variant, run_report &ctx) {
    // k == 0 or alpha == 0: C = beta * C without touching A or B (which may be NULL).
    if (dp.scales_only()) {
        ctx.variant_used = "scale_c";
        return cuda::scale_c(dp, stream);
    }
    cuda::device_context *dc = nullptr;
    cublasLtHandle_t lt = nullptr;
    lt_plan *plan = nullptr;
    checked_algo algo;
    void *workspace = nullptr;
    gemm_status_t s = prepare(dp, variant, dc, lt, plan, algo, ctx);
    // An algorithm that needs no workspace (common at small sizes, where host cost shows)
    // skips the workspace and the event that guards it.
    const bool uses_workspace = algo.workspace > 0;
    if (s == GEMM_STATUS_SUCCESS && uses_workspace) s = dc->acquire_workspace(stream, algo.workspace, workspace);
    if (s != GEMM_STATUS_SUCCESS) return s;
    // As scale_of says: a real type reads the first of each pair.
    const double alpha64[2] = {dp.alpha, dp.alpha_imag}, beta64[2] = {dp.beta, dp.beta_imag};
    const float alpha32[2] = {float(dp.alpha), float(dp.alpha_imag)}, beta32[2] = {float(dp.beta), float(dp.beta_imag)};
    const bool d = doubles(dp);
    s = cuda::cublas_status(cublas().cublasLtMatmul(lt, plan->desc, d ? static_cast<const void *>(alpha64) : alpha32,
                                                    dp.a, plan->a, dp.b, plan->b,
                                                    d ? static_cast<const void *>(beta64) : beta32, dp.c, plan->c, dp.c,
                                                    plan->c, &algo.algo, workspace, algo.workspace, stream),
                            "cublasLtMatmul");
    if (!uses_workspace) return s;
    gemm_status_t r = dc->release_workspace(stream, workspace);
    return s != GEMM_STATUS_SUCCESS ? s : r;
}

// Whether launch would run dp with this variant (its plan and algorithm, host work only): a
// tuned algorithm chosen for a host problem is checked against each shape of its offload's
// steps before anything is copied.
gemm_status_t check(const problem &dp, std::string_view variant) {
    if (dp.scales_only()) return GEMM_STATUS_SUCCESS;
    cuda::device_context *dc = nullptr;
    cublasLtHandle_t lt = nullptr;
    lt_plan *plan = nullptr;
    checked_algo algo;
    run_report unused;
    return prepare(dp, variant, dc, lt, plan, algo, unused);
}

// check() on every matrix of b, before any of them runs.
gemm_status_t check_batch(const problem_batch &b, std::string_view variant) {
    std::size_t item = 0;
    for (std::size_t g = 0; g < b.shapes.size(); ++g) {
        problem p = b.shapes[g];
        for (int64_t i = 0; i < b.sizes[g]; ++i, ++item) {
            p.a = b.a[item], p.b = b.b[item], p.c = b.c[item];
            if (gemm_status_t s = check(p, variant); s != GEMM_STATUS_SUCCESS) return s;
        }
    }
    return GEMM_STATUS_SUCCESS;
}

class cublaslt_backend final : public backend {
public:
    std::string_view name() const override { return "cublaslt"; }
    backend_kind kind() const override { return backend_kind::device; }
    verdict probe() const override { return cuda::cublas_verdict(); }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }
    std::string identity() const override { return cuda::cublas_identity(); }

    // Device and managed pointers run in place; host pointers are offloaded (run_on_device).
    verdict supports(const problem &p) const override {
        if (p.row_count)
            return verdict::no("a masked batch: cuBLASLt cannot read a row count on the device (cuda_tiled serves it)");
        if (verdict v = cuda::library_supports_types(p); !v.ok) return v;
        if (is_fp8(p.ab_type))
            if (std::string why = fp8_refusal(p); !why.empty()) return verdict::no(why);
        if (p.batch > INT_MAX) return verdict::no("batch count exceeds cuBLASLt's int32 range");
        return verdict::yes();
    }

    // The heuristic's candidates for this problem (for host pointers: the shape of its offload's
    // first step), best first.
    std::vector<std::string> variants(const problem &p) const override {
        problem dp = cuda::offload_shape(p);
        if (dp.scales_only()) return {""};
        int device = 0;
        cuda::device_guard guard;
        cuda::device_context *dc = nullptr;
        cublasLtHandle_t lt = nullptr;
        lt_plan *plan = nullptr;
        gemm_status_t s = cuda::device_of(p, device);
        if (s == GEMM_STATUS_SUCCESS) s = guard.enter(device);
        if (s == GEMM_STATUS_SUCCESS) s = cuda::context_for(device, dc);
        if (s == GEMM_STATUS_SUCCESS) s = dc->blas_lt(lt);
        if (s == GEMM_STATUS_SUCCESS) s = find_plan(*dc, dp, plan);
        if (s == GEMM_STATUS_SUCCESS) s = set_epilogue_pointers(dp, *plan);
        if (s == GEMM_STATUS_SUCCESS) s = set_scale_pointers(dp, *plan);
        if (s == GEMM_STATUS_SUCCESS) s = run_heuristic(lt, dp, *plan);
        if (s != GEMM_STATUS_SUCCESS || plan->candidates.empty()) return {""};
        std::vector<std::string> ids;
        for (auto &c : plan->candidates) ids.push_back(c.first);
        return ids;
    }

    // On device memory (host pointers are offloaded without the epilogue's vectors), for the
    // epilogues cuBLASLt has (lt_epilogue_of) and a product to fuse them into.
    bool fuses_epilogue(const problem &p) const override {
        cublasLtEpilogue_t e;
        return p.space != memory_space::host && !p.scales_only() && lt_epilogue_of(p, e);
    }

    bool knows_variant(std::string_view v) const override {
        algo_config c;
        return v.empty() || parse_id(v, c);
    }

    std::vector<std::string> variant_ids() const override {
        return {"<algo<a>_tile<t>_stages<s>_splitk<k>_red<r>_swz<w>_cust<u>_inner<i>_cluster<c>: one per "
                "algorithm cuBLASLt's heuristic offers for a problem>"};
    }

    gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) override {
        return cuda::run_on_device(
            p, ctx, [&](const problem &dp, cudaStream_t stream) { return launch(dp, stream, variant, ctx); },
            [&](const problem &dp) { return check(dp, variant); });
    }

    // A batch on device memory: one launch per matrix on the caller's stream, without the
    // dispatcher's work per matrix. cuBLASLt has no grouped call, and its host cost per launch
    // (plans and heuristic answers kept per shape) is below cuBLAS's. An FP8 group (which
    // backend.hpp says must not be refused part way) has every matrix checked before any
    // runs. Host and managed memory: NOT_SUPPORTED (offloaded one by one).
    gemm_status_t run_batch(const problem_batch &b, std::string_view variant, run_report &ctx) override {
        const problem &first = b.shapes.front();
        if (first.space != memory_space::device) return GEMM_STATUS_NOT_SUPPORTED;
        cuda::device_guard guard;
        gemm_status_t s = guard.enter(first.device);
        if (s == GEMM_STATUS_SUCCESS && is_fp8(first.ab_type)) s = check_batch(b, variant);
        cudaStream_t stream = static_cast<cudaStream_t>(first.stream);
        std::size_t item = 0;
        for (std::size_t g = 0; g < b.shapes.size() && s == GEMM_STATUS_SUCCESS; ++g) {
            problem p = b.shapes[g];
            for (int64_t i = 0; i < b.sizes[g] && s == GEMM_STATUS_SUCCESS; ++i, ++item) {
                p.a = b.a[item], p.b = b.b[item], p.c = b.c[item];
                run_report each;  // the batch's report names the way, not each matrix's algorithm
                s = launch(p, stream, variant, each);
            }
        }
        ctx.variant_used = variant.empty() ? std::string_view("default") : variant;
        ctx.note = fmt::format("{} matrices, one launch each", b.c.size());
        return s;
    }
};

}  // namespace

backend_ptr make_cublaslt_backend() { return std::make_unique<cublaslt_backend>(); }

}  // namespace gemm
