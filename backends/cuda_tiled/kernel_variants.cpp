// kernel_variants.cpp: the variants kernel_table's lines make, their ids, and the family that
// launches or refuses each.
#include "backends/cuda_tiled/kernel_variants.hpp"

#include <string>

#include "backends/cuda_tiled/simt/simt_launch.hpp"
#include "backends/cuda_tiled/wmma/mma_batch.hpp"
#if GEMM_CUDA_TILED_WGMMA
#include "backends/cuda_tiled/hopper/wgmma_gemm.hpp"
#include "backends/cuda_tiled/skinny/skinny_gemm.hpp"
#endif

namespace gemm::cuda_tiled {
namespace {

const char *family_prefix(kernel_family f) {
    switch (f) {
    case kernel_family::textbook: return "textbook";
    case kernel_family::register_tiled: return "tiled";
    case kernel_family::wmma: return "mma";
    case kernel_family::wgmma: return "wgmma";
    case kernel_family::skinny: return "skinny";
    }
    return "";
}

// The input types in the order their ids are listed within a family, each with its bit in
// kernel_config::types.
struct type_bit {
    dtype type;
    unsigned bit;
};
constexpr type_bit id_types[] = {{dtype::f16, types::f16}, {dtype::bf16, types::bf16}, {dtype::f32, types::f32},
                                 {dtype::f64, types::f64}, {dtype::e4m3, types::e4m3}, {dtype::e5m2, types::e5m2}};
constexpr kernel_family families[] = {kernel_family::textbook, kernel_family::register_tiled, kernel_family::wmma,
                                      kernel_family::wgmma, kernel_family::skinny};

// Whether this build has line c's kernels: the Hopper families only with their sm_90a part.
constexpr bool built(const kernel_config &c) {
    return GEMM_CUDA_TILED_WGMMA || (c.family != kernel_family::wgmma && c.family != kernel_family::skinny);
}

// The variants by family, then input type, then table line.
std::vector<variant_info> expand_table() {
    std::vector<variant_info> table;
    for (kernel_family f : families)
        for (const type_bit &t : id_types)
            for (const kernel_config &c : kernel_table) {
                if (c.family != f || !c.computes(t.bit) || !built(c)) continue;
                if (c.family != kernel_family::register_tiled) {
                    table.push_back({kernel_id(c, t.type, false), t.type, &c, false, ""});
                    continue;
                }
                const std::string scalar = kernel_id(c, t.type, false);
                table.push_back({kernel_id(c, t.type, true), t.type, &c, true, scalar});
                table.push_back({scalar, t.type, &c, false, ""});
            }
    return table;
}

}  // namespace

std::string kernel_id(const kernel_config &c, dtype t, bool vector) {
    auto s = [](int v) { return std::to_string(v); };
    const bool tf32 = c.family == kernel_family::wgmma && t == dtype::f32;
    std::string id = std::string(family_prefix(c.family)) + "_" + (tf32 ? "tf32" : dtype_name(t)) + "_";
    if (c.family == kernel_family::textbook) return id + "t" + s(c.bm);
    id += s(c.bm) + "x" + s(c.bn);
    if (c.family == kernel_family::register_tiled) {
        const int align = vector ? int(16 / dtype_size(t)) : 1;
        return id + "x" + s(c.bk) + "_" + s(c.tm) + "x" + s(c.tn) + "_s" + s(c.stages) + "_a" + s(align);
    }
    if (c.family == kernel_family::wgmma)
        return id + "x" + s(int(128 / dtype_size(t))) + "_s" + s(c.stages) + (c.split_k ? "_splitk" : "");
    if (c.family == kernel_family::skinny && c.operands == operand_form::a_along_m) return id + "_nn";
    return id;
}

const std::vector<variant_info> &variant_table() {
    static const std::vector<variant_info> table = expand_table();
    return table;
}

const variant_info *find_variant(std::string_view id) {
    for (const variant_info &v : variant_table())
        if (v.id == id) return &v;
    return nullptr;
}

std::string refusal([[maybe_unused]] const variant_info &v, [[maybe_unused]] const problem &dp) {
#if GEMM_CUDA_TILED_WGMMA
    if (v.family() == kernel_family::wgmma) return wgmma_refusal(*v.config, dp);
    if (v.family() == kernel_family::skinny) return skinny_refusal(*v.config, dp);
#endif
    return "";
}

gemm_status_t launch(const variant_info &v, const problem &dp, cudaStream_t stream) {
    switch (v.family()) {
    case kernel_family::textbook:
    case kernel_family::register_tiled: return launch_simt(*v.config, v.vector, dp, stream);
    case kernel_family::wmma: return launch_mma(dp, stream);
#if GEMM_CUDA_TILED_WGMMA
    case kernel_family::wgmma: return launch_wgmma(*v.config, dp, stream);
    case kernel_family::skinny: return launch_skinny(*v.config, dp, stream);
#else
    case kernel_family::wgmma:
    case kernel_family::skinny: break;
#endif
    }
    return GEMM_STATUS_NOT_SUPPORTED;  // not reached: variant_table holds only what the build has
}

}  // namespace gemm::cuda_tiled
