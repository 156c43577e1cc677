// problem_class.hpp: a class of calls without their data: what a tuned choice depends on, so
// the key of a tune-cache entry (its text form is the cache file's), what auto looks up for a
// call, and what the measurement engine makes operands for (dispatch/measure/operand_sets.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "problem.hpp"
#include "sparse_problem.hpp"
#include "transpose_problem.hpp"

namespace gemm {

// The library call a class is of: GEMM (every gemm_* product), or one of the calls beside it,
// which the tune cache keys apart (their text starts with the call's name).
enum class call_kind : int { gemm = 0, omatcopy = 1, spmm_csr = 2, spmm_coo = 3 };

const char *call_kind_name(call_kind c);  // "gemm", "omatcopy", "spmm_csr", "spmm_coo"

// Taken from the canonical problem (class_of). Zero-initialized and plain, so classes compare
// and hash reproducibly (STYLE item 6).
struct problem_class {
    dtype ab_type = dtype::f32;
    dtype c_type = dtype::f32;
    transpose op_a = transpose::n;
    transpose op_b = transpose::n;
    int64_t m = 0, n = 0, k = 0;
    int64_t batch = 1;
    bool padded_ld = false;  // some leading dimension larger than its matrix needs
    bool aligned_16 = true;  // every pointer, leading dimension and stride 16-byte aligned
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
    // An FP8 class of block-scaled calls: how its canonical A and B are scaled (vec128 or
    // blk128; a row-major call's weights are A). Per-tensor scales only multiply alpha, so
    // their calls run as unscaled ones do and are keyed none, as are other dtypes.
    scale_kind a_scale = scale_kind::none;
    scale_kind b_scale = scale_kind::none;
    // A call beside GEMM (class_of's overloads for them): a transpose keys its dtype (ab_type
    // and c_type), op (op_a), rows (m) and cols (n) and space, canonical as its problem is
    // (column-major); a sparse product its dtype, the layout of B and C (row_major), op_a,
    // op_b, m, n, k, space, beta and the decade of A's density (round(log10(nnz / (rows *
    // cols))), clamped to [density_floor, 0]). Their other fields keep their defaults.
    call_kind call = call_kind::gemm;
    bool row_major = false;
    int density = 0;

    bool side_call() const { return call != call_kind::gemm; }
    bool has_epilogue() const;
    bool backward() const { return act == epilogue_act::relu_backward || act == epilogue_act::gelu_backward; }
    bool operator==(const problem_class &o) const;
    bool operator!=(const problem_class &o) const { return !(*this == o); }

    // Equal but for m, n, k: the choice for one may stand in for the other's nearby shape.
    bool same_but_shape(const problem_class &o) const;

    // Whether every leading dimension and batch stride of the key's tight layout (ld=tight) is
    // a multiple of 16 bytes. Where not, no call is ld=tight align=16: such calls are align=elem.
    bool tight_layout_aligned() const;

    // "f32 f32 NN 1024 1024 1024 batch=1 ld=tight align=16 space=host beta=0", then for an
    // epilogue " epilogue=gelu+bias(rows)+aux" (epilogue_name's words), for a pointer-array
    // batch " form=pointers", for block scales " scales=1x128,128x128" (A's then B's: vec128
    // is 1x128, blk128 128x128), and last, for a TF32 class, " math=tf32". A transpose: "omatcopy
    // f32 T 4096 1024 space=host"; a sparse product: "spmm_csr f32 col NN 4096 64 4096
    // density=1e-2 space=host beta=0".
    std::string to_text() const;
    static std::optional<problem_class> parse(std::string_view text);
};

struct problem_class_hash {
    std::size_t operator()(const problem_class &k) const;
};

// The least density decade a sparse key names: sparser matrices (and empty ones) are 1e-9.
constexpr int density_floor = -9;

// p's class, TF32 when p is f32 and this process allows TF32.
problem_class class_of(const problem &p);
// The class of a transpose and of a sparse product (the call beside GEMM they are).
problem_class class_of(const transpose_problem &t);
problem_class class_of(const sparse_problem &s);

}  // namespace gemm
