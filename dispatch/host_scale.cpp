// host_scale.cpp: C = beta * C on host memory.
#include "host_scale.hpp"

#include <complex>

namespace gemm {
namespace {

template <class T> void scale(const problem &p, T beta) {
    for (int64_t batch = 0; batch < p.batch; ++batch) {
        T *c = static_cast<T *>(p.c) + batch * p.stride_c;
        for (int64_t j = 0; j < p.n; ++j) {
            T *column = c + j * p.ldc;
            for (int64_t i = 0; i < p.m; ++i) column[i] = beta == T(0) ? T(0) : beta * column[i];
        }
    }
}

}  // namespace

void scale_c_on_host(const problem &p) {
    switch (p.c_type) {
    case dtype::f64: return scale<double>(p, p.beta);
    case dtype::c32: return scale<std::complex<float>>(p, {float(p.beta), float(p.beta_imag)});
    case dtype::c64: return scale<std::complex<double>>(p, {p.beta, p.beta_imag});
    default: return scale<float>(p, float(p.beta));
    }
}

}  // namespace gemm
