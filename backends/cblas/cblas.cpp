// cblas.cpp: the system BLAS (OpenBLAS, reference BLAS, BLIS, MKL), loaded at run time so the
// library never links against one.
#include "cblas.hpp"

#include <dlfcn.h>

#include <climits>
#include <complex>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>

#include "dispatch/error.hpp"
#include "dispatch/host_scale.hpp"
#include "dispatch/log.hpp"
#include "dispatch/settings.hpp"

namespace gemm {
namespace {

// The Fortran ABI (LP64): everything by reference, then the hidden lengths of the two
// character arguments.
template <class T>
using fortran_gemm_fn = void (*)(const char *, const char *, const int *, const int *, const int *, const T *,
                                 const T *, const int *, const T *, const int *, const T *, T *, const int *,
                                 std::size_t, std::size_t);
// The CBLAS ABI: enums are ints with the values gemm.h shares, sizes are int.
template <class T>
using cblas_gemm_fn = void (*)(int, int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int);
// cblas_cgemm and cblas_zgemm take alpha and beta by pointer.
using cblas_complex_gemm_fn = void (*)(int, int, int, int, int, int, const void *, const void *, int, const void *, int,
                                       const void *, void *, int);
using config_fn = char *(*)();

// Tried in order when GEMM_CBLAS_LIB is unset: OpenBLAS first (the reference peer), then
// whatever Debian's BLAS alternative points at.
constexpr const char *default_libraries[] = {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblas.so.3"};

// "libopenblas.so.0, then libopenblas.so, ...": the order, as GEMM_CBLAS_LIB's fallback.
std::string default_libraries_text() {
    std::string text;
    for (std::size_t i = 0; i < std::size(default_libraries); ++i)
        text += std::string(i == 0 ? "" : i == 1 ? ", then " : ", ") + default_libraries[i];
    return text;
}

// The library's GEMM entry points. The Fortran ones are preferred: reference CBLAS's
// cblas_sgemm calls sgemm_ through the dynamic linker, which resolves to a preloaded
// libgemm_blas and so back into gemm, endlessly; the library's own sgemm_, found through
// its handle, computes without leaving it. CBLAS is used only by a library that has no
// Fortran GEMM (ATLAS's libcblas), whose CBLAS therefore cannot call one.
struct cblas_library {
    void *handle = nullptr;
    std::string path;
    fortran_gemm_fn<float> fortran_sgemm = nullptr;
    fortran_gemm_fn<double> fortran_dgemm = nullptr;
    cblas_gemm_fn<float> cblas_sgemm = nullptr;
    cblas_gemm_fn<double> cblas_dgemm = nullptr;
    // Complex: the Fortran pair when the real one is used, else the CBLAS pair; either may
    // be missing (a BLAS without complex types), and then complex problems are refused.
    fortran_gemm_fn<std::complex<float>> fortran_cgemm = nullptr;
    fortran_gemm_fn<std::complex<double>> fortran_zgemm = nullptr;
    cblas_complex_gemm_fn cblas_cgemm = nullptr;
    cblas_complex_gemm_fn cblas_zgemm = nullptr;
    std::string error;

    bool fortran() const { return fortran_sgemm && fortran_dgemm; }
    bool has_complex() const { return fortran() ? fortran_cgemm && fortran_zgemm : cblas_cgemm && cblas_zgemm; }
};

template <class F> F symbol(void *handle, const char *name) { return reinterpret_cast<F>(dlsym(handle, name)); }

// Symbols are looked up through the handle, so they come from that library (and its
// dependencies), never from a gemm_blas interposed with LD_PRELOAD.
cblas_library open_library(const std::string &path) {
    cblas_library lib;
    lib.path = path;
    lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
        const char *e = dlerror();
        lib.error = e ? e : "dlopen failed";
        return lib;
    }
    // gemm's own BLAS interface (libgemm_blas) would call back into gemm: refuse it.
    if (dlsym(lib.handle, "gemm_version")) {
        lib.error = path + " is gemm's own BLAS interface, not a system BLAS";
        dlclose(lib.handle);
        lib.handle = nullptr;
        return lib;
    }
    lib.fortran_sgemm = symbol<fortran_gemm_fn<float>>(lib.handle, "sgemm_");
    lib.fortran_dgemm = symbol<fortran_gemm_fn<double>>(lib.handle, "dgemm_");
    lib.cblas_sgemm = symbol<cblas_gemm_fn<float>>(lib.handle, "cblas_sgemm");
    lib.cblas_dgemm = symbol<cblas_gemm_fn<double>>(lib.handle, "cblas_dgemm");
    lib.fortran_cgemm = symbol<fortran_gemm_fn<std::complex<float>>>(lib.handle, "cgemm_");
    lib.fortran_zgemm = symbol<fortran_gemm_fn<std::complex<double>>>(lib.handle, "zgemm_");
    lib.cblas_cgemm = symbol<cblas_complex_gemm_fn>(lib.handle, "cblas_cgemm");
    lib.cblas_zgemm = symbol<cblas_complex_gemm_fn>(lib.handle, "cblas_zgemm");
    if (!lib.fortran() && !(lib.cblas_sgemm && lib.cblas_dgemm)) {
        lib.error = path + " has neither sgemm_/dgemm_ nor cblas_sgemm/cblas_dgemm";
        dlclose(lib.handle);
        lib.handle = nullptr;
    }
    return lib;
}

cblas_library find_library() {
    const std::string &chosen = settings().option("GEMM_CBLAS_LIB");
    if (!chosen.empty()) {
        cblas_library lib = open_library(chosen);
        if (!lib.handle) lib.error = "GEMM_CBLAS_LIB='" + chosen + "' cannot be used: " + lib.error;
        return lib;
    }
    std::string tried;
    for (const char *name : default_libraries) {
        cblas_library lib = open_library(name);
        if (lib.handle) return lib;
        tried += (tried.empty() ? "" : "; ") + lib.error;
    }
    cblas_library none;
    none.error = "no CBLAS library found (install libopenblas0 or set GEMM_CBLAS_LIB): " + tried;
    return none;
}

std::string describe(const cblas_library &lib) {
    auto config = symbol<config_fn>(lib.handle, "openblas_get_config");
    std::string entry = lib.fortran() ? " (sgemm_/dgemm_)" : " (cblas_sgemm/cblas_dgemm)";
    return (config ? lib.path + ": " + config() : lib.path) + entry;
}

bool fits_int(int64_t v) { return v <= INT_MAX; }

// A and B may be NULL when not referenced (alpha = 0 or k = 0).
template <class T> const T *at(const void *base, int64_t index) {
    return base ? static_cast<const T *>(base) + index : nullptr;
}

template <class T> T scalar_of(double re, double im) {
    if constexpr (std::is_floating_point_v<T>) return T(re);
    else return T(typename T::value_type(re), typename T::value_type(im));
}

template <class T> void run_fortran(fortran_gemm_fn<T> gemm_fn, const problem &p) {
    const char ta = *op_name(p.op_a), tb = *op_name(p.op_b);  // 'N', 'T' or 'C'
    const int m = int(p.m), n = int(p.n), k = int(p.k), lda = int(p.lda), ldb = int(p.ldb), ldc = int(p.ldc);
    const T alpha = scalar_of<T>(p.alpha, p.alpha_imag), beta = scalar_of<T>(p.beta, p.beta_imag);
    for (int64_t i = 0; i < p.batch; ++i)
        gemm_fn(&ta, &tb, &m, &n, &k, &alpha, at<T>(p.a, i * p.stride_a), &lda, at<T>(p.b, i * p.stride_b), &ldb, &beta,
                static_cast<T *>(p.c) + i * p.stride_c, &ldc, 1, 1);
}

template <class T> void run_cblas(cblas_gemm_fn<T> gemm_fn, const problem &p) {
    const int ta = p.op_a == transpose::n ? GEMM_OP_N : GEMM_OP_T;
    const int tb = p.op_b == transpose::n ? GEMM_OP_N : GEMM_OP_T;
    for (int64_t i = 0; i < p.batch; ++i)
        gemm_fn(GEMM_COL_MAJOR, ta, tb, int(p.m), int(p.n), int(p.k), T(p.alpha), at<T>(p.a, i * p.stride_a), int(p.lda),
                at<T>(p.b, i * p.stride_b), int(p.ldb), T(p.beta), static_cast<T *>(p.c) + i * p.stride_c, int(p.ldc));
}

int cblas_op(transpose o) { return o == transpose::n ? GEMM_OP_N : o == transpose::t ? GEMM_OP_T : GEMM_OP_C; }

template <class R> void run_cblas_complex(cblas_complex_gemm_fn gemm_fn, const problem &p) {
    using Z = std::complex<R>;
    const Z alpha(R(p.alpha), R(p.alpha_imag)), beta(R(p.beta), R(p.beta_imag));
    for (int64_t i = 0; i < p.batch; ++i)
        gemm_fn(GEMM_COL_MAJOR, cblas_op(p.op_a), cblas_op(p.op_b), int(p.m), int(p.n), int(p.k), &alpha,
                at<Z>(p.a, i * p.stride_a), int(p.lda), at<Z>(p.b, i * p.stride_b), int(p.ldb), &beta,
                static_cast<Z *>(p.c) + i * p.stride_c, int(p.ldc));
}

class cblas_backend final : public backend {
public:
    std::string_view name() const override { return "cblas"; }
    backend_kind kind() const override { return backend_kind::host; }

    // A library the user named that cannot be used is said on stderr (log level warn): auto
    // would otherwise pass over cblas with nothing but gemm info's list to say so.
    verdict probe() const override {
        lib_ = find_library();
        if (!lib_.handle) {
            if (!settings().option("GEMM_CBLAS_LIB").empty())
                logger().warn("cblas is unavailable, so no call runs on it: {}", lib_.error);
            return verdict::no(lib_.error);
        }
        return verdict::yes(describe(lib_));
    }

    std::vector<backend_option> options() const override {
        static const std::string fallback = default_libraries_text();
        return {{"GEMM_CBLAS_LIB", "a path or soname", fallback, "the system BLAS the cblas backend loads", nullptr}};
    }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        if (is_complex(p.ab_type) && !lib_.has_complex())
            return verdict::no(lib_.path + " has neither cgemm_/zgemm_ nor cblas_cgemm/cblas_zgemm");
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64 && !is_complex(p.ab_type))
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64, c32, c64 only)");
        for (int64_t v : {p.m, p.n, p.k, p.lda, p.ldb, p.ldc})
            if (!fits_int(v)) return verdict::no("a size or leading dimension exceeds the BLAS int range");
        return verdict::yes();
    }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        // Some kernels read A and B even then (OpenBLAS's small-matrix kernels on AVX-512
        // do), and they may be NULL.
        if (p.scales_only()) {
            ctx.variant_used = "scale_c";
            scale_c_on_host(p);
            return GEMM_STATUS_SUCCESS;
        }
        if (is_complex(p.ab_type)) return run_complex(p, ctx);
        const bool f32 = p.ab_type == dtype::f32;
        if (lib_.fortran()) {
            ctx.variant_used = f32 ? "sgemm_" : "dgemm_";
            f32 ? run_fortran(lib_.fortran_sgemm, p) : run_fortran(lib_.fortran_dgemm, p);
        } else {
            ctx.variant_used = f32 ? "cblas_sgemm" : "cblas_dgemm";
            f32 ? run_cblas(lib_.cblas_sgemm, p) : run_cblas(lib_.cblas_dgemm, p);
        }
        return GEMM_STATUS_SUCCESS;
    }

private:
    gemm_status_t run_complex(const problem &p, run_report &ctx) const {
        const bool c32 = p.ab_type == dtype::c32;
        if (lib_.fortran()) {
            ctx.variant_used = c32 ? "cgemm_" : "zgemm_";
            c32 ? run_fortran(lib_.fortran_cgemm, p) : run_fortran(lib_.fortran_zgemm, p);
        } else {
            ctx.variant_used = c32 ? "cblas_cgemm" : "cblas_zgemm";
            c32 ? run_cblas_complex<float>(lib_.cblas_cgemm, p) : run_cblas_complex<double>(lib_.cblas_zgemm, p);
        }
        return GEMM_STATUS_SUCCESS;
    }

    mutable cblas_library lib_;  // written once by probe(), under available()'s once_flag
};

}  // namespace

backend_ptr make_cblas_backend() { return std::make_unique<cblas_backend>(); }

}  // namespace gemm
