// one_line.cpp: `one_line`, a host backend for f32 and f64 (a loop in the element
// type, with two variants that order it differently), written only against the backend
// contract: nothing else in the library knows its name.
#include "one_line.hpp"

#include <string>

#include "dispatch/error.hpp"

namespace gemm {
namespace {

template <class T> T at(const void *base, int64_t i) { return static_cast<const T *>(base)[i]; }

int64_t offset(transpose o, int64_t row, int64_t col, int64_t ld) {
    return o == transpose::n ? row + col * ld : col + row * ld;
}

// C = alpha op(A) op(B) + beta C for one matrix; beta = 0 writes C without reading it, and
// A and B are not read when k = 0 or alpha = 0.
template <class T> void multiply(const problem &p, const void *a, const void *b, T *c, bool reversed_k) {
    const T alpha = T(p.alpha), beta = T(p.beta);
    const bool reads_ab = p.k > 0 && p.alpha != 0.0;
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            T sum = 0;
            for (int64_t s = 0; reads_ab && s < p.k; ++s) {
                int64_t l = reversed_k ? p.k - 1 - s : s;
                sum += at<T>(a, offset(p.op_a, i, l, p.lda)) * at<T>(b, offset(p.op_b, l, j, p.ldb));
            }
            T &cij = c[i + j * p.ldc];
            cij = (reads_ab ? alpha * sum : T(0)) + (beta != T(0) ? beta * cij : T(0));
        }
}

class one_line_backend final : public backend {
public:
    std::string_view name() const override { return "one_line"; }
    backend_kind kind() const override { return backend_kind::host; }
    verdict probe() const override { return verdict::yes("a loop in the element type"); }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64)
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64 only)");
        return verdict::yes();
    }

    std::vector<std::string> variants(const problem &) const override { return {"forward_k", "reversed_k"}; }
    bool knows_variant(std::string_view v) const override { return v.empty() || v == "forward_k" || v == "reversed_k"; }
    std::vector<std::string> variant_ids() const override { return {"forward_k", "reversed_k"}; }

    gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) override {
        const bool reversed = variant == "reversed_k";
        ctx.variant_used = reversed ? "reversed_k" : "forward_k";
        const std::size_t ab = dtype_size(p.ab_type);
        for (int64_t i = 0; i < p.batch; ++i) {
            const void *a = p.a ? static_cast<const char *>(p.a) + i * p.stride_a * int64_t(ab) : nullptr;
            const void *b = p.b ? static_cast<const char *>(p.b) + i * p.stride_b * int64_t(ab) : nullptr;
            if (p.ab_type == dtype::f64) multiply(p, a, b, static_cast<double *>(p.c) + i * p.stride_c, reversed);
            else multiply(p, a, b, static_cast<float *>(p.c) + i * p.stride_c, reversed);
        }
        return GEMM_STATUS_SUCCESS;
    }
};

}  // namespace

backend_ptr make_one_line_backend() { return std::make_unique<one_line_backend>(); }

}  // namespace gemm
