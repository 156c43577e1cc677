// epilogue_pass.cpp: the epilogue as one more pass over C, on the host or through the device
// services.
#include "epilogue_pass.hpp"

#include <cstdint>
#include <vector>

#include "error.hpp"
#include "gemm/gemm.hpp"
#include "memory.hpp"

namespace gemm {
namespace {

// How elements of a 16-bit C type are read and written, and the type they are computed in
// (f32, as the GEMM accumulates).
struct f16_io {
    using value = float;
    static float load(const void *p, int64_t i) { return half::to_float(static_cast<const uint16_t *>(p)[i]); }
    static void store(void *p, int64_t i, float v) { static_cast<uint16_t *>(p)[i] = half::from_float(v); }
};
struct bf16_io {
    using value = float;
    static float load(const void *p, int64_t i) { return bfloat16::to_float(static_cast<const uint16_t *>(p)[i]); }
    static void store(void *p, int64_t i, float v) { static_cast<uint16_t *>(p)[i] = bfloat16::from_float(v); }
};

// f16 and bf16 C, column by column, so C and aux are read along their stored columns.
// bias_grad sums the new C as stored (rounded to its type), in the compute type.
template <class io> void pass(const problem &p) {
    using V = typename io::value;
    const epilogue_spec &e = p.epilogue;
    const bool backward = e.backward(), rows = e.axis == epilogue_axis::rows;
    const bool adds_bias = !backward && e.axis != epilogue_axis::none;
    const bool sums = backward && e.axis != epilogue_axis::none;
    std::vector<V> row_sums(sums && rows ? std::size_t(p.m) : 0, V(0));
    for (int64_t j = 0; j < p.n; ++j) {
        V column_sum = 0;
        for (int64_t i = 0; i < p.m; ++i) {
            const int64_t ci = i + j * p.ldc, ai = i + j * e.ld_aux;
            V z = io::load(p.c, ci);
            if (adds_bias) z += io::load(e.bias, rows ? i : j);
            if (!backward && e.aux) io::store(e.aux, ai, z);
            const V aux = backward ? io::load(e.aux, ai) : V(0);
            io::store(p.c, ci, activation_math::apply(e.act, z, aux));
            if (!sums) continue;
            const V stored = io::load(p.c, ci);
            if (rows) row_sums[std::size_t(i)] += stored;
            else column_sum += stored;
        }
        if (sums && !rows) io::store(e.bias_grad, j, column_sum);
    }
    for (std::size_t i = 0; i < row_sums.size(); ++i) io::store(e.bias_grad, int64_t(i), row_sums[i]);
}

// f32 and f64 C: apply_epilogue_block a column at a time, each column summed into bias_grad
// while it is in cache.
template <class T> void pass_in_place(const problem &p) {
    const epilogue_spec &e = p.epilogue;
    const bool sums = e.backward() && e.axis != epilogue_axis::none, rows = e.axis == epilogue_axis::rows;
    T *c = static_cast<T *>(p.c), *grad = static_cast<T *>(e.bias_grad);
    std::vector<T> row_sums(sums && rows ? std::size_t(p.m) : 0, T(0));
    for (int64_t j = 0; j < p.n; ++j) {
        apply_epilogue_block(e, c, p.ldc, 0, p.m, j, j + 1);
        if (!sums) continue;
        const T *cj = c + j * p.ldc;
        T column_sum = 0;
        for (int64_t i = 0; i < p.m; ++i) {
            if (rows) row_sums[std::size_t(i)] += cj[i];
            else column_sum += cj[i];
        }
        if (!rows) grad[j] = column_sum;
    }
    for (std::size_t i = 0; i < row_sums.size(); ++i) grad[i] = row_sums[i];
}

}  // namespace

void apply_epilogue_on_host(const problem &p) {
    switch (p.c_type) {
    case dtype::f64: return pass_in_place<double>(p);
    case dtype::f16: return pass<f16_io>(p);
    case dtype::bf16: return pass<bf16_io>(p);
    default: return pass_in_place<float>(p);
    }
}

gemm_status_t apply_epilogue(const problem &p) {
    if (p.space == memory_space::host) {
        apply_epilogue_on_host(p);
        return GEMM_STATUS_SUCCESS;
    }
    const device_services *services = installed_device_services();
    if (!services || !services->epilogue_pass)
        return set_error(GEMM_STATUS_INTERNAL_ERROR, "epilogue pass: no device services for device memory");
    return services->epilogue_pass(p);
}

}  // namespace gemm
