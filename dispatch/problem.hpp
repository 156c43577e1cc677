// problem.hpp: the canonical GEMM problem every layer below the API speaks in.
#pragma once

#include <cstdint>
#include <string>

namespace gemm {

// c32 and c64: complex, each element its real then its imaginary part (float or double).
// e4m3 and e5m2: the 8-bit floating-point types (fp8.hpp), inputs only.
enum class dtype : int { f32 = 0, f64 = 1, f16 = 2, bf16 = 3, c32 = 4, c64 = 5, e4m3 = 6, e5m2 = 7 };

// c (conjugate transpose) only with complex types: for real types the API makes it t.
enum class transpose : int { n = 0, t = 1, c = 2 };

enum class memory_space : int { host = 0, device = 1, managed = 2 };

// Values equal gemm_activation_t's and gemm_bias_t's.
enum class epilogue_act : int { none = 0, relu = 1, gelu = 2, relu_backward = 3, gelu_backward = 4 };
enum class epilogue_axis : int { none = 0, rows = 1, columns = 2 };

// What follows the product Z = alpha * op(A) * op(B) + beta * C (gemm_epilogue_t, canonical:
// for a row-major call rows and columns are swapped, as C is). Forward activations: C =
// act(Z + bias), aux (when set) = Z + bias. Backward ones: C = Z * act'(aux), and with an axis
// bias_grad = the sums of the new C along it. bias, bias_grad and aux have C's type; aux is
// stored as C is, with ld_aux.
struct epilogue_spec {
    epilogue_act act = epilogue_act::none;
    epilogue_axis axis = epilogue_axis::none;
    const void *bias = nullptr;
    void *bias_grad = nullptr;
    void *aux = nullptr;
    int64_t ld_aux = 0;

    bool any() const { return act != epilogue_act::none || axis != epilogue_axis::none || aux; }
    bool backward() const { return act == epilogue_act::relu_backward || act == epilogue_act::gelu_backward; }
    // Values along the axis: m for rows, n for columns.
    int64_t axis_length(int64_t m, int64_t n) const { return axis == epilogue_axis::rows ? m : n; }
};

// How the values of an FP8 operand are scaled before they are multiplied (gemm_scaling_t,
// canonical: for a row-major call A and B, and with them their scales, are swapped).
// tensor: one f32 for the whole operand. Block scales are f32 arrays indexed by an operand's
// outer coordinate (i of op(A) = m x k, j of op(B) = k x n) and its block of k (l / 128):
// vec128: one value per outer index and block of k, at values[i + (l / 128) * ld], the outer
// index fastest; blk128: one value per 128 outer indices and block of k, at values[l / 128 +
// (i / 128) * ld], the block of k fastest (DeepSeek-V3's weight scales).
enum class scale_kind : int { none = 0, tensor = 1, vec128 = 2, blk128 = 3 };

constexpr int64_t scale_block = 128;  // the k extent (and blk128's outer extent) of a block

struct operand_scale {
    scale_kind kind = scale_kind::none;
    const float *values = nullptr;  // in the operands' memory; nullptr with kind none
    int64_t ld = 0;                 // block kinds: values between blocks of k

    // The scale of element (outer, l): 1 for none. Host memory only (the CPU backends').
    float at(int64_t outer, int64_t l) const {
        switch (kind) {
        case scale_kind::none: return 1.0f;
        case scale_kind::tensor: return values[0];
        case scale_kind::vec128: return values[outer + (l / scale_block) * ld];
        case scale_kind::blk128: return values[l / scale_block + (outer / scale_block) * ld];
        }
        return 1.0f;
    }
};

// The scaling of an FP8 problem: D = d_scale * (alpha * sum_l a_scale(i,l) A(i,l) b_scale(l,j)
// B(l,j) + beta * C), and amax_d = max |D| before d_scale (NaN when an element is NaN).
// All pointers in the operands' memory; none set for a problem without scaling.
struct scaling_spec {
    operand_scale a, b;
    const float *d_scale = nullptr;  // nullptr: 1
    float *amax_d = nullptr;         // nullptr: not computed

    bool any() const { return a.kind != scale_kind::none || b.kind != scale_kind::none || d_scale || amax_d; }
    bool blocks() const { return a.kind >= scale_kind::vec128 || b.kind >= scale_kind::vec128; }
};

// C = alpha * op(A) * op(B) + beta * C, column-major, for batch matrices.
// Fields are zero-initialized so problems compare and hash reproducibly.
struct problem {
    transpose op_a = transpose::n;
    transpose op_b = transpose::n;
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;

    dtype ab_type = dtype::f32;  // A and B share one type
    dtype c_type = dtype::f32;
    dtype compute_type = dtype::f32;  // also the type of alpha and beta

    const void *a = nullptr;
    int64_t lda = 0;
    int64_t stride_a = 0;  // elements between batch matrices
    const void *b = nullptr;
    int64_t ldb = 0;
    int64_t stride_b = 0;
    void *c = nullptr;
    int64_t ldc = 0;
    int64_t stride_c = 0;
    int64_t batch = 1;
    // The batch is a group of a pointer-array batch or grouped call of several matrices
    // (gemm_*_batched, gemm_ex_grouped): what the dispatcher decides such a group on (batch
    // its matrices, a, b and c its first matrix's, strides 0; its tune key says form=pointers)
    // and what the measurement engine times as one (its matrices at the strides, run as a
    // caller's pointer arrays would be).
    // A backend's supports() and variants() may see it; its run() gets the matrices one by
    // one, or run_batch all of them.
    bool pointer_batch = false;

    // Exact for every compute type: every float is a double. The imaginary parts are 0 for
    // real types.
    double alpha = 1.0;
    double beta = 0.0;
    double alpha_imag = 0.0;
    double beta_imag = 0.0;

    memory_space space = memory_space::host;
    int device = -1;  // CUDA ordinal when space != host
    // Host problems: every operand the call touches is page-locked (registered with or
    // allocated by CUDA), so a GPU backend copies it by DMA without staging.
    bool page_locked = false;
    void *stream = nullptr;  // cudaStream_t of the caller, device problems only

    epilogue_spec epilogue;  // none for every call but gemm_ex_epilogue's (batch 1, real types)
    // FP8 only (batch 1, or a grouped call's group as a pointer batch, each of its matrices
    // carrying the group's): none for scales of 1.
    scaling_spec scaling;
    // One matrix of a masked batch on device memory (gemm_ex_masked_scaled), nullptr for every
    // other problem: only the first *row_count rows of the caller's C are computed, the rest
    // neither read nor written; canonically the first rows (m), or columns (n) where
    // row_count_on_n (a row-major call). The count is read on the device, in stream order, a
    // value outside [0, m] (or [0, n]) taken as the nearer bound. A backend that does not read
    // it must refuse the problem in supports(): computing every row would write the rows the
    // caller keeps.
    const int32_t *row_count = nullptr;
    bool row_count_on_n = false;

    // Rows and columns of A and B as stored (before op).
    int64_t a_rows() const { return op_a == transpose::n ? m : k; }
    int64_t a_cols() const { return op_a == transpose::n ? k : m; }
    int64_t b_rows() const { return op_b == transpose::n ? k : n; }
    int64_t b_cols() const { return op_b == transpose::n ? n : k; }

    // alpha = 0: A and B are not read; beta = 0: C is written without being read.
    bool alpha_zero() const { return alpha == 0.0 && alpha_imag == 0.0; }
    bool beta_zero() const { return beta == 0.0 && beta_imag == 0.0; }
    // k = 0 or alpha = 0: C = beta * C, A and B not read (and may be NULL).
    bool scales_only() const { return k == 0 || alpha_zero(); }

    // A complex multiply-add is 8 real operations, as BLAS benchmarks count them.
    double flops() const;
};

const char *dtype_name(dtype t);  // "f32": the one table of names, gemm_dtype_name's
std::size_t dtype_size(dtype t);  // bytes per element
bool is_complex(dtype t);
bool is_fp8(dtype t);  // e4m3 or e5m2

// The library's type rules, one place for the API's checks and the backends' promises:
// inputs accumulate in f64 for f64, in c32 for c32 and c64 for c64, and in f32 otherwise
// (f16, bf16 and the FP8 types included), and C has the inputs' type, or f32 for f16/bf16
// inputs; FP8 inputs write C in f32, f16 or bf16 (never FP8).
dtype compute_type_for(dtype ab);
bool c_type_allowed(dtype ab, dtype c);
const char *op_name(transpose o);  // "N" / "T" / "C"
const char *memory_space_name(memory_space s);
// "relu", "gelu+bias(rows)+aux", "gelu_backward+bias_grad(columns)": for traces and tune keys.
std::string epilogue_name(const epilogue_spec &e);

}  // namespace gemm
