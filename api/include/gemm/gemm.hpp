// gemm.hpp: C++ façade over gemm.h: typed overloads, 16-bit float types, matrix views, a
// scoped backend choice and an owned plan. Header-only; errors stay values (gemm::status),
// never exceptions. Needs C++14 (default member initializers in aggregates such as status).
#pragma once

#if defined(__cplusplus) && __cplusplus < 201402L && !defined(_MSVC_LANG)
#error "gemm.hpp needs C++14 or later (gemm.h serves C and older C++)"
#endif

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "gemm.h"

namespace gemm {

enum class layout : int { row_major = GEMM_ROW_MAJOR, col_major = GEMM_COL_MAJOR };
enum class op : int { n = GEMM_OP_N, t = GEMM_OP_T, c = GEMM_OP_C };

// The status of a call and, on failure, the thread's message captured right after it.
struct status {
    gemm_status_t code = GEMM_STATUS_SUCCESS;
    std::string message;

    bool ok() const { return code == GEMM_STATUS_SUCCESS; }
    explicit operator bool() const { return ok(); }
};

inline status make_status(gemm_status_t code) {
    return {code, code == GEMM_STATUS_SUCCESS ? std::string() : std::string(gemm_last_error())};
}

// IEEE binary16 and bfloat16 as 16 stored bits; conversions round to nearest even.
struct half {
    uint16_t bits = 0;
    half() = default;
    explicit half(float f) : bits(from_float(f)) {}
    explicit operator float() const { return to_float(bits); }

    static uint16_t from_float(float f) {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u;
        uint32_t abs = x & 0x7fffffffu;
        if (abs >= 0x7f800000u)  // inf or NaN (keep NaN quiet)
            return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
        if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
        if (abs < 0x38800000u) {                                  // below the smallest normal half: subnormal or zero
            if (abs < 0x33000000u) return uint16_t(sign);         // rounds to zero
            uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
            int shift = 126 - int(abs >> 23);  // value / 2^-24 = mant * 2^(exponent - 126)
            uint32_t kept = mant >> shift;
            uint32_t rest = mant & ((1u << shift) - 1u);
            uint32_t halfway = 1u << (shift - 1);
            if (rest > halfway || (rest == halfway && (kept & 1u))) ++kept;
            return uint16_t(sign | kept);
        }
        uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
        return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
    }

    static float to_float(uint16_t h) {
        uint32_t sign = uint32_t(h & 0x8000u) << 16;
        uint32_t exp = (h >> 10) & 0x1fu;
        uint32_t mant = h & 0x3ffu;
        uint32_t x;
        if (exp == 0x1f) {
            x = sign | 0x7f800000u | (mant << 13);
        } else if (exp != 0) {
            x = sign | ((exp + 112u) << 23) | (mant << 13);
        } else if (mant == 0) {
            x = sign;
        } else {  // subnormal: normalize
            int e = -1;
            do {
                mant <<= 1;
                ++e;
            } while (!(mant & 0x400u));
            x = sign | (uint32_t(112 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

struct bfloat16 {
    uint16_t bits = 0;
    bfloat16() = default;
    explicit bfloat16(float f) : bits(from_float(f)) {}
    explicit operator float() const { return to_float(bits); }

    static uint16_t from_float(float f) {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
        x += 0x7fffu + ((x >> 16) & 1u);
        return uint16_t(x >> 16);
    }

    static float to_float(uint16_t b) {
        uint32_t x = uint32_t(b) << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "16-bit types must be 2 bytes");

// FP8 storage (GEMM_F8_E4M3, GEMM_F8_E5M2): the byte as stored, for A and B only (docs/FP8.md).
// The library decodes it; these types only name the format in the overloads below.
struct float8_e4m3 {
    uint8_t bits = 0;
};
struct float8_e5m2 {
    uint8_t bits = 0;
};
static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1, "FP8 types must be 1 byte");

// Maps an element type to its gemm_dtype_t and the type of alpha and beta.
template <class T> struct type_of;
template <> struct type_of<float> {
    static constexpr gemm_dtype_t value = GEMM_F32;
    using scalar = float;
};
template <> struct type_of<double> {
    static constexpr gemm_dtype_t value = GEMM_F64;
    using scalar = double;
};
template <> struct type_of<half> {
    static constexpr gemm_dtype_t value = GEMM_F16;
    using scalar = float;
};
template <> struct type_of<bfloat16> {
    static constexpr gemm_dtype_t value = GEMM_BF16;
    using scalar = float;
};
template <> struct type_of<float8_e4m3> {
    static constexpr gemm_dtype_t value = GEMM_F8_E4M3;
    using scalar = float;
};
template <> struct type_of<float8_e5m2> {
    static constexpr gemm_dtype_t value = GEMM_F8_E5M2;
    using scalar = float;
};
// std::complex stores the real then the imaginary part, as GEMM_C32 and GEMM_C64 do.
template <> struct type_of<std::complex<float>> {
    static constexpr gemm_dtype_t value = GEMM_C32;
    using scalar = std::complex<float>;
};
template <> struct type_of<std::complex<double>> {
    static constexpr gemm_dtype_t value = GEMM_C64;
    using scalar = std::complex<double>;
};

// A matrix in caller memory: rows x cols with leading dimension ld in the given layout.
template <class T> struct matrix_view {
    T *data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t ld = 0;
    layout order = layout::row_major;
};

// C = alpha * op(A) * op(B) + beta * C with the parameters of gemm_sgemm. C may have another
// element type than A and B where gemm_ex supports it (f16/bf16 inputs with f32 output; FP8
// inputs, with scales of 1, into float, half or bfloat16).
template <class T, class TC>
status gemm(layout l, op transa, op transb, int64_t m, int64_t n, int64_t k, typename type_of<T>::scalar alpha,
            const T *A, int64_t lda, const T *B, int64_t ldb, typename type_of<T>::scalar beta, TC *C, int64_t ldc) {
    return make_status(gemm_ex(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(transa),
                               static_cast<gemm_op_t>(transb), m, n, k, &alpha, A, type_of<T>::value, lda, B,
                               type_of<T>::value, ldb, &beta, C, type_of<TC>::value, ldc,
                               type_of<typename type_of<T>::scalar>::value));
}

// FP8 A and B with scales, as gemm_ex_scaled: T is float8_e4m3 or float8_e5m2, TC float, half
// or bfloat16; scaling as gemm_scaling_init made it, then set (its pointers in the operands'
// memory).
template <class T, class TC>
status gemm_scaled(layout l, op transa, op transb, int64_t m, int64_t n, int64_t k, float alpha, const T *A,
                   int64_t lda, const T *B, int64_t ldb, float beta, TC *C, int64_t ldc, const gemm_scaling_t &scaling) {
    return make_status(gemm_ex_scaled(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(transa),
                                      static_cast<gemm_op_t>(transb), m, n, k, &alpha, A, type_of<T>::value, lda, B,
                                      type_of<T>::value, ldb, &beta, C, type_of<TC>::value, ldc, GEMM_F32, &scaling));
}

// A masked FP8 batch, as gemm_ex_masked_scaled: matrix i of the strided batch of m x n x k
// computes only the first rows[i] rows of its C (rows in the operands' memory); scalings is
// nullptr or batch_count of them, matrix i's at [i].
template <class T, class TC>
status gemm_masked_scaled(layout l, op transa, op transb, int64_t m, int64_t n, int64_t k, float alpha, const T *A,
                          int64_t lda, int64_t stride_a, const T *B, int64_t ldb, int64_t stride_b, float beta, TC *C,
                          int64_t ldc, int64_t stride_c, int64_t batch_count, const int32_t *rows,
                          const gemm_scaling_t *scalings) {
    return make_status(gemm_ex_masked_scaled(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(transa),
                                             static_cast<gemm_op_t>(transb), m, n, k, &alpha, A, type_of<T>::value, lda,
                                             stride_a, B, type_of<T>::value, ldb, stride_b, &beta, C,
                                             type_of<TC>::value, ldc, stride_c, batch_count, rows, GEMM_F32, scalings));
}

// Strided batches, as gemm_ex_strided_batched.
template <class T, class TC>
status gemm_strided_batched(layout l, op transa, op transb, int64_t m, int64_t n, int64_t k,
                            typename type_of<T>::scalar alpha, const T *A, int64_t lda, int64_t stride_a, const T *B,
                            int64_t ldb, int64_t stride_b, typename type_of<T>::scalar beta, TC *C, int64_t ldc,
                            int64_t stride_c, int64_t batch_count) {
    return make_status(gemm_ex_strided_batched(
        static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(transa), static_cast<gemm_op_t>(transb), m, n, k, &alpha,
        A, type_of<T>::value, lda, stride_a, B, type_of<T>::value, ldb, stride_b, &beta, C, type_of<TC>::value, ldc,
        stride_c, batch_count, type_of<typename type_of<T>::scalar>::value));
}

// C = alpha * op(A) * op(B) + beta * C on views; sizes come from the views. All three views
// must share one layout (checked: a mismatch is GEMM_STATUS_INVALID_LAYOUT).
template <class T, class TC>
status gemm(typename type_of<T>::scalar alpha, matrix_view<const T> A, op transa, matrix_view<const T> B, op transb,
            typename type_of<T>::scalar beta, matrix_view<TC> C) {
    if (A.order != C.order || B.order != C.order)
        return {GEMM_STATUS_INVALID_LAYOUT, "matrix views A, B and C must share one layout"};
    int64_t k = transa == op::n ? A.cols : A.rows;
    int64_t kb = transb == op::n ? B.rows : B.cols;
    int64_t m = transa == op::n ? A.rows : A.cols;
    int64_t n = transb == op::n ? B.cols : B.rows;
    if (kb != k || C.rows != m || C.cols != n)
        return {GEMM_STATUS_INVALID_SIZE, "matrix views: op(A) is " + std::to_string(m) + "x" + std::to_string(k) +
                                              ", op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + ", C is " +
                                              std::to_string(C.rows) + "x" + std::to_string(C.cols)};
    return gemm<T, TC>(C.order, transa, transb, m, n, k, alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld);
}

// B = alpha * op(A), out of place, as gemm_omatcopy: A is rows x cols in layout l, B is op(A)'s
// shape in the same layout; alpha in the compute type (float for half and bfloat16).
template <class T>
status omatcopy(layout l, op trans, int64_t rows, int64_t cols, typename type_of<T>::scalar alpha, const T *A,
                int64_t lda, T *B, int64_t ldb) {
    return make_status(gemm_omatcopy(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(trans), rows, cols, &alpha,
                                     A, lda, B, ldb, type_of<T>::value));
}

// The same on views, sizes from A; B's view must have op(A)'s shape and A's layout (checked:
// GEMM_STATUS_INVALID_LAYOUT or GEMM_STATUS_INVALID_SIZE).
template <class T>
status omatcopy(typename type_of<T>::scalar alpha, matrix_view<const T> A, op trans, matrix_view<T> B) {
    if (A.order != B.order) return {GEMM_STATUS_INVALID_LAYOUT, "matrix views A and B must share one layout"};
    const int64_t rows = trans == op::n ? A.rows : A.cols, cols = trans == op::n ? A.cols : A.rows;
    if (B.rows != rows || B.cols != cols)
        return {GEMM_STATUS_INVALID_SIZE, "matrix views: op(A) is " + std::to_string(rows) + "x" + std::to_string(cols) +
                                              ", B is " + std::to_string(B.rows) + "x" + std::to_string(B.cols)};
    return omatcopy<T>(A.order, trans, A.rows, A.cols, alpha, A.data, A.ld, B.data, B.ld);
}

// C = alpha * op(A) * op(B) + beta * C with a sparse A, as gemm_spmm_csr and gemm_spmm_coo: T
// is the values', B's and C's type (float, double, std::complex<float> or <double>), the
// descriptor's arrays hold T values.
template <class T>
status spmm(layout l, op op_a, op op_b, int64_t m, int64_t n, int64_t k, T alpha, const gemm_csr_t &A, const T *B,
            int64_t ldb, T beta, T *C, int64_t ldc) {
    return make_status(gemm_spmm_csr(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(op_a),
                                     static_cast<gemm_op_t>(op_b), m, n, k, &alpha, &A, B, ldb, &beta, C, ldc,
                                     type_of<T>::value));
}
template <class T>
status spmm(layout l, op op_a, op op_b, int64_t m, int64_t n, int64_t k, T alpha, const gemm_coo_t &A, const T *B,
            int64_t ldb, T beta, T *C, int64_t ldc) {
    return make_status(gemm_spmm_coo(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(op_a),
                                     static_cast<gemm_op_t>(op_b), m, n, k, &alpha, &A, B, ldb, &beta, C, ldc,
                                     type_of<T>::value));
}

// An epilogue (gemm_epilogue_t) built by its parts: gemm::epilogue::gelu().with_bias(
// bias_axis::columns, b).saving(Z, ld) for a training forward pass,
// gemm::epilogue::backward(activation::gelu_backward, Z, ld).with_bias_grad(bias_axis::columns,
// db) for the backward one. The vectors and aux are C's type, in C's memory.
enum class activation : int {
    none = GEMM_ACTIVATION_NONE,
    relu = GEMM_ACTIVATION_RELU,
    gelu = GEMM_ACTIVATION_GELU,
    relu_backward = GEMM_ACTIVATION_RELU_BACKWARD,
    gelu_backward = GEMM_ACTIVATION_GELU_BACKWARD
};
enum class bias_axis : int { none = GEMM_BIAS_NONE, rows = GEMM_BIAS_ROWS, columns = GEMM_BIAS_COLUMNS };

class epilogue {
public:
    epilogue() { gemm_epilogue_init(&e_); }
    static epilogue none() { return epilogue(); }
    static epilogue relu() { return with_activation(activation::relu); }
    static epilogue gelu() { return with_activation(activation::gelu); }
    // A backward activation reads the forward's saved input from aux (ld: its leading dimension).
    static epilogue backward(activation a, const void *aux, int64_t ld) {
        epilogue e = with_activation(a);
        e.e_.aux = const_cast<void *>(aux);
        e.e_.ld_aux = ld;
        return e;
    }
    epilogue &with_bias(bias_axis axis, const void *bias) {
        e_.bias_axis = static_cast<gemm_bias_t>(axis);
        e_.bias = bias;
        return *this;
    }
    epilogue &with_bias_grad(bias_axis axis, void *bias_grad) {
        e_.bias_axis = static_cast<gemm_bias_t>(axis);
        e_.bias_grad = bias_grad;
        return *this;
    }
    // Forward: aux receives the activation's input.
    epilogue &saving(void *aux, int64_t ld) {
        e_.aux = aux;
        e_.ld_aux = ld;
        return *this;
    }
    const gemm_epilogue_t *get() const { return &e_; }

private:
    static epilogue with_activation(activation a) {
        epilogue e;
        e.e_.activation = static_cast<gemm_activation_t>(a);
        return e;
    }
    gemm_epilogue_t e_;
};

// gemm() followed by the epilogue, as gemm_ex_epilogue (real types).
template <class T, class TC>
status gemm(layout l, op transa, op transb, int64_t m, int64_t n, int64_t k, typename type_of<T>::scalar alpha,
            const T *A, int64_t lda, const T *B, int64_t ldb, typename type_of<T>::scalar beta, TC *C, int64_t ldc,
            const epilogue &ep) {
    return make_status(gemm_ex_epilogue(static_cast<gemm_layout_t>(l), static_cast<gemm_op_t>(transa),
                                        static_cast<gemm_op_t>(transb), m, n, k, &alpha, A, type_of<T>::value, lda, B,
                                        type_of<T>::value, ldb, &beta, C, type_of<TC>::value, ldc,
                                        type_of<typename type_of<T>::scalar>::value, ep.get()));
}

namespace detail {
// A selection made with set (gemm_set_backend or gemm_set_thread_backend) until destroyed,
// then the previous one put back: what that setter had set (the selection in force came from
// `source`), or else nothing of its own (NULL).
template <gemm_status_t (*set)(const char *)> class scoped_selection {
public:
    scoped_selection(const char *name, const char *source)
        : previous_(gemm_get_backend()), previous_was_set_(std::string(gemm_get_backend_source()) == source) {
        status_ = make_status(set(name));
    }
    ~scoped_selection() {
        if (status_.ok()) set(previous_was_set_ ? previous_.c_str() : nullptr);
    }
    scoped_selection(const scoped_selection &) = delete;
    scoped_selection &operator=(const scoped_selection &) = delete;
    const status &result() const { return status_; }
    bool ok() const { return status_.ok(); }

private:
    std::string previous_;
    bool previous_was_set_;
    status status_;
};
}  // namespace detail

// Forces a backend ("cpu_omp", "cpu_omp:variant", "auto") until destroyed, then restores
// the choice that was in force: the previous gemm_set_backend choice, or else the
// environment's (even an invalid GEMM_BACKEND, which keeps failing calls as before). On a
// thread with its own choice (scoped_thread_backend), which hides the process's, it restores
// the environment's. Check ok() before relying on it.
class scoped_backend : public detail::scoped_selection<gemm_set_backend> {
public:
    explicit scoped_backend(const char *name) : scoped_selection(name, "gemm_set_backend") {}
};

// The same for the calling thread alone (gemm_set_thread_backend): other threads keep theirs.
class scoped_thread_backend : public detail::scoped_selection<gemm_set_thread_backend> {
public:
    explicit scoped_thread_backend(const char *name) : scoped_selection(name, "gemm_set_thread_backend") {}
};

// Owns a gemm_plan_t: made by create(), destroyed with the object, movable, not copyable.
// run() takes the scalars in the compute type (float; double for f64 plans; std::complex<float>
// or std::complex<double> for complex ones).
class plan {
public:
    plan() = default;
    ~plan() { gemm_plan_destroy(handle_); }
    plan(plan &&other) noexcept : handle_(other.handle_), compute_(other.compute_) { other.handle_ = nullptr; }
    plan &operator=(plan &&other) noexcept {
        if (this != &other) {
            gemm_plan_destroy(handle_);
            handle_ = other.handle_;
            compute_ = other.compute_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    plan(const plan &) = delete;
    plan &operator=(const plan &) = delete;

    // Decides the plan for desc; on failure the plan this object held (if any) is kept.
    status create(const gemm_desc_t &desc) {
        gemm_plan_t made = nullptr;
        status s = make_status(gemm_plan_create(&desc, &made));
        if (s.ok()) {
            gemm_plan_destroy(handle_);
            handle_ = made;
            compute_ = desc.compute_type;
        }
        return s;
    }

    // The scalars' type must be the plan's compute type: checked, since the library reads
    // them through untyped pointers.
    template <class S> status run(S alpha, const void *A, const void *B, S beta, void *C) const {
        static_assert(std::is_same<S, typename type_of<S>::scalar>::value,
                      "alpha and beta are float, double, std::complex<float> or std::complex<double>");
        if (handle_ && type_of<S>::value != compute_)
            return {GEMM_STATUS_INVALID_VALUE, "plan::run: alpha and beta must be of the plan's compute type"};
        return make_status(gemm_plan_run(handle_, &alpha, A, B, &beta, C));
    }

    // A run of a plan made with an epilogue (desc.activation, bias_axis, aux): this run's.
    template <class S> status run(S alpha, const void *A, const void *B, S beta, void *C, const epilogue &ep) const {
        static_assert(std::is_same<S, typename type_of<S>::scalar>::value,
                      "alpha and beta are float, double, std::complex<float> or std::complex<double>");
        if (handle_ && type_of<S>::value != compute_)
            return {GEMM_STATUS_INVALID_VALUE, "plan::run: alpha and beta must be of the plan's compute type"};
        return make_status(gemm_plan_run_epilogue(handle_, &alpha, A, B, &beta, C, ep.get()));
    }

    // "cpu_omp", "" for an empty class or no plan.
    std::string backend() const { return text(0); }
    std::string variant() const { return text(1); }
    std::string why() const { return text(2); }

    explicit operator bool() const { return handle_ != nullptr; }
    gemm_plan_t get() const { return handle_; }

private:
    std::string text(int which) const {
        const char *t[3] = {"", "", ""};
        if (handle_) gemm_plan_get_backend(handle_, &t[0], &t[1], &t[2]);
        return t[which];
    }

    gemm_plan_t handle_ = nullptr;
    gemm_dtype_t compute_ = GEMM_F32;
};

}  // namespace gemm
