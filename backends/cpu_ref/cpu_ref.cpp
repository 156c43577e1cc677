// cpu_ref.cpp: the plain triple loop for every dtype, layout and op; accumulates in double.
#include "cpu_ref.hpp"

#include <vector>

#include "dispatch/element.hpp"

namespace gemm {
namespace {

int64_t offset(transpose o, int64_t row, int64_t col, int64_t ld) {
    return o == transpose::n ? row + col * ld : col + row * ld;
}

// One matrix of the batch. The column of sums is walked along l so that A is read down its
// stored columns when not transposed.
void multiply_one(const problem &p, const char *a, const char *b, char *c, std::vector<double> &sums) {
    const bool reads_ab = p.k > 0 && p.alpha != 0.0;
    for (int64_t j = 0; j < p.n; ++j) {
        sums.assign(std::size_t(p.m), 0.0);
        for (int64_t l = 0; reads_ab && l < p.k; ++l) {
            double blj = load_element(b, offset(p.op_b, l, j, p.ldb), p.ab_type);
            for (int64_t i = 0; i < p.m; ++i)
                sums[std::size_t(i)] += load_element(a, offset(p.op_a, i, l, p.lda), p.ab_type) * blj;
        }
        for (int64_t i = 0; i < p.m; ++i) {
            int64_t ci = i + j * p.ldc;
            double v = reads_ab ? p.alpha * sums[std::size_t(i)] : 0.0;
            if (p.beta != 0.0) v += p.beta * load_element(c, ci, p.c_type);  // beta = 0: C is not read
            store_element(c, ci, p.c_type, v);
        }
    }
}

// A and B may be NULL when they are not referenced (alpha = 0 or k = 0).
const char *element(const void *base, int64_t index, std::size_t size) {
    return base ? static_cast<const char *>(base) + std::size_t(index) * size : nullptr;
}

class cpu_ref final : public backend {
public:
    std::string_view name() const override { return "cpu_ref"; }
    backend_kind kind() const override { return backend_kind::host; }
    bool reference() const override { return true; }
    verdict probe() const override { return verdict::yes(); }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        ctx.variant_used = "triple_loop_f64_accumulate";
        std::size_t ab = dtype_size(p.ab_type), cs = dtype_size(p.c_type);
        thread_local std::vector<double> sums;
        for (int64_t i = 0; i < p.batch; ++i)
            multiply_one(p, element(p.a, i * p.stride_a, ab), element(p.b, i * p.stride_b, ab),
                         const_cast<char *>(element(p.c, i * p.stride_c, cs)), sums);
        return GEMM_STATUS_SUCCESS;
    }
};

}  // namespace

backend_ptr make_cpu_ref_backend() { return std::make_unique<cpu_ref>(); }

}  // namespace gemm
