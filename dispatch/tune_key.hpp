// tune_key.hpp: the class of problems one tune-cache entry stands for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "problem.hpp"

namespace gemm {

// What a tuned choice depends on, taken from the canonical problem. Zero-initialized and
// plain, so keys compare and hash reproducibly (STYLE item 6).
struct tune_key {
    dtype ab_type = dtype::f32;
    dtype c_type = dtype::f32;
    transpose op_a = transpose::n;
    transpose op_b = transpose::n;
    int64_t m = 0, n = 0, k = 0;
    int64_t batch = 1;
    bool padded_ld = false;     // some leading dimension larger than its matrix needs
    bool aligned_16 = true;     // every pointer, leading dimension and stride 16-byte aligned
    memory_space space = memory_space::host;
    bool beta_zero = true;
    // The epilogue's kind (none for a plain GEMM): its activation, bias axis, and whether a
    // forward activation saves its input (a backward one always reads aux).
    epilogue_act act = epilogue_act::none;
    epilogue_axis axis = epilogue_axis::none;
    bool saves_aux = false;
    // A group of `batch` matrices in a pointer-array batch or grouped call of several matrices
    // (gemm_*_batched, gemm_ex_grouped), rather than a strided batch or a plain call: served by
    // other library calls, so tuned apart.
    bool pointers = false;
    // An f32 class of a process with GEMM_ALLOW_TF32=1, whose choices were timed with TF32
    // math: tuned apart from the same class in full f32, as neither's choice holds for the other.
    bool tf32 = false;

    bool has_epilogue() const;
    bool operator==(const tune_key &o) const;
    bool operator!=(const tune_key &o) const { return !(*this == o); }

    // Everything but m, n, k: choices for one class may stand in for a nearby shape.
    bool same_class(const tune_key &o) const;

    // Whether every leading dimension and batch stride of the key's tight layout (ld=tight) is
    // a multiple of 16 bytes. Where not, no call is ld=tight align=16: such calls are align=elem.
    bool tight_layout_aligned() const;

    // "f32 f32 NN 1024 1024 1024 batch=1 ld=tight align=16 space=host beta=0", then for an
    // epilogue " epilogue=gelu+bias(rows)+aux" (epilogue_name's words), for a pointer-array
    // batch " form=pointers", and last, for a TF32 class, " math=tf32".
    std::string to_text() const;
    static std::optional<tune_key> parse(std::string_view text);
};

struct tune_key_hash {
    std::size_t operator()(const tune_key &k) const;
};

// p's key, TF32 when p is f32 and this process allows TF32.
tune_key key_of(const problem &p);

}  // namespace gemm
