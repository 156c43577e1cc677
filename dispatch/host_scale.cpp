// host_scale.cpp: C = beta * C on host memory.
#include "host_scale.hpp"

namespace gemm {
namespace {

template <class T> void scale(const problem &p) {
    const T beta = T(p.beta);
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
    if (p.c_type == dtype::f64) scale<double>(p);
    else scale<float>(p);
}

}  // namespace gemm
