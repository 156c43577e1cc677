// cblas.cpp: any system CBLAS, loaded at run time so the library never links against one.
#include "cblas.hpp"

#include <dlfcn.h>

#include <climits>
#include <string>

#include "dispatch/error.hpp"
#include "dispatch/settings.hpp"

namespace gemm {
namespace {

// The CBLAS ABI: enums are ints with the values gemm.h shares, sizes are int.
using sgemm_fn = void (*)(int, int, int, int, int, int, float, const float *, int, const float *,
                          int, float, float *, int);
using dgemm_fn = void (*)(int, int, int, int, int, int, double, const double *, int,
                          const double *, int, double, double *, int);
using config_fn = char *(*)();

// Tried in order when GEMM_CBLAS_LIB is unset: OpenBLAS first (the reference peer), then
// whatever Debian's BLAS alternative points at.
constexpr const char *default_libraries[] = {"libopenblas.so.0", "libopenblas.so",
                                             "libcblas.so.3", "libblas.so.3"};

struct cblas_library {
    void *handle = nullptr;
    std::string path;
    sgemm_fn sgemm = nullptr;
    dgemm_fn dgemm = nullptr;
    std::string error;
};

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
    lib.sgemm = reinterpret_cast<sgemm_fn>(dlsym(lib.handle, "cblas_sgemm"));
    lib.dgemm = reinterpret_cast<dgemm_fn>(dlsym(lib.handle, "cblas_dgemm"));
    if (!lib.sgemm || !lib.dgemm) {
        lib.error = path + " has no cblas_sgemm/cblas_dgemm";
        dlclose(lib.handle);
        lib.handle = nullptr;
    }
    return lib;
}

cblas_library find_library() {
    const std::string &chosen = settings().cblas_lib;
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
    auto config = reinterpret_cast<config_fn>(dlsym(lib.handle, "openblas_get_config"));
    return config ? lib.path + ": " + config() : lib.path;
}

bool fits_int(int64_t v) { return v <= INT_MAX; }

class cblas_backend final : public backend {
public:
    std::string_view name() const override { return "cblas"; }

    verdict probe() const override {
        lib_ = find_library();
        if (!lib_.handle) return verdict::no(lib_.error);
        return verdict::yes(describe(lib_));
    }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64)
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64 only)");
        for (int64_t v : {p.m, p.n, p.k, p.lda, p.ldb, p.ldc})
            if (!fits_int(v)) return verdict::no("a size or leading dimension exceeds the CBLAS int range");
        return verdict::yes();
    }

    gemm_status_t run(const problem &p, std::string_view, run_context &ctx) override {
        ctx.variant_used = p.ab_type == dtype::f32 ? "cblas_sgemm" : "cblas_dgemm";
        int ta = p.op_a == transpose::n ? GEMM_OP_N : GEMM_OP_T;
        int tb = p.op_b == transpose::n ? GEMM_OP_N : GEMM_OP_T;
        int m = int(p.m), n = int(p.n), k = int(p.k), lda = int(p.lda), ldb = int(p.ldb), ldc = int(p.ldc);
        for (int64_t i = 0; i < p.batch; ++i) {
            if (p.ab_type == dtype::f32)
                lib_.sgemm(GEMM_COL_MAJOR, ta, tb, m, n, k, float(p.alpha),
                           at<float>(p.a, i * p.stride_a), lda, at<float>(p.b, i * p.stride_b), ldb,
                           float(p.beta), const_cast<float *>(at<float>(p.c, i * p.stride_c)), ldc);
            else
                lib_.dgemm(GEMM_COL_MAJOR, ta, tb, m, n, k, p.alpha,
                           at<double>(p.a, i * p.stride_a), lda, at<double>(p.b, i * p.stride_b), ldb,
                           p.beta, const_cast<double *>(at<double>(p.c, i * p.stride_c)), ldc);
        }
        return GEMM_STATUS_SUCCESS;
    }

private:
    // A and B may be NULL when not referenced (alpha = 0 or k = 0).
    template <class T> static const T *at(const void *base, int64_t index) {
        return base ? static_cast<const T *>(base) + index : nullptr;
    }

    mutable cblas_library lib_;  // written once by probe(), under available()'s once_flag
};

}  // namespace

backend_ptr make_cblas_backend() { return std::make_unique<cblas_backend>(); }

}  // namespace gemm
