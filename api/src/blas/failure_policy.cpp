// failure_policy.cpp: the system BLAS's own GEMM as the drop-in's fallback, or a stop.
#include "failure_policy.hpp"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_NEXT, dladdr
#endif
#include <dlfcn.h>

#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace gemm_blas {
namespace {

template <class T>
using fortran_gemm = void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *,
                              const int *, const T *, const int *, const T *, T *, const int *, std::size_t,
                              std::size_t);

template <class T> struct names;
template <> struct names<float> { static constexpr const char *fortran = "sgemm_"; };
template <> struct names<double> { static constexpr const char *fortran = "dgemm_"; };
template <> struct names<std::complex<float>> { static constexpr const char *fortran = "cgemm_"; };
template <> struct names<std::complex<double>> { static constexpr const char *fortran = "zgemm_"; };

enum class policy { system, stop };

// Ends the program. Everything here runs inside the BLAS entry points, which cannot return an
// error and must not throw, often right after gemm ran out of memory: the reasons are printed
// with fprintf from the texts gemm already holds, never built in allocated strings.
[[noreturn]] void stop_program() noexcept {
    std::fflush(nullptr);
    std::_Exit(EXIT_FAILURE);
}

// routine failed with status; detail ("" or "; ...") says why that stops the program.
[[noreturn]] void stop(const char *routine, gemm_status_t status, const char *detail) noexcept {
    std::fprintf(stderr, "gemm_blas: %s: %s: %s%s; stopping the program (a BLAS call cannot return an error)\n",
                 routine, gemm_status_string(status), gemm_last_error(), detail);
    stop_program();
}

// GEMM_BLAS_ON_FAILURE (declared in blas_on_failure_option.hpp): system (default) or stop. Any
// other value stops the program at the first failure, naming the variable, rather than guess.
policy chosen_policy() noexcept {
    const char *v = std::getenv("GEMM_BLAS_ON_FAILURE");
    if (!v || !*v || !std::strcmp(v, "system")) return policy::system;
    if (!std::strcmp(v, "stop")) return policy::stop;
    std::fprintf(stderr,
                 "gemm_blas: GEMM_BLAS_ON_FAILURE='%s' must be system or stop; stopping the program (a BLAS call "
                 "cannot return an error)\n",
                 v);
    stop_program();
}

// Whether the library f lives in is gemm's (this one, a second copy, or the libblas.so.3
// alternative): calling it would come back here.
bool in_gemm(void *f) {
    Dl_info info;
    if (!dladdr(f, &info) || !info.dli_fname) return false;
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    bool ours = h && dlsym(h, "gemm_version");
    if (h) dlclose(h);
    return ours;
}

// The system BLAS's GEMM: the next one in the program's search order after this library
// (the one the program would have called without the preload; OpenBLAS behind the
// alternative), else one loaded by name.
template <class T> fortran_gemm<T> find_system_gemm() {
    void *f = dlsym(RTLD_NEXT, names<T>::fortran);
    if (f && !in_gemm(f)) return reinterpret_cast<fortran_gemm<T>>(f);
    for (const char *library : {"libopenblas.so.0", "libblas.so.3"}) {
        void *h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        void *g = dlsym(h, names<T>::fortran);
        if (g && !dlsym(h, "gemm_version")) return reinterpret_cast<fortran_gemm<T>>(g);
        dlclose(h);
    }
    return nullptr;
}

template <class T> fortran_gemm<T> system_gemm() {
    static const fortran_gemm<T> found = find_system_gemm<T>();
    return found;
}

const char *library_of(void *f) noexcept {
    Dl_info info;
    return dladdr(f, &info) && info.dli_fname ? info.dli_fname : "the system BLAS";
}

// Once per routine and status, so that a program making a million calls says it once; said
// again when there is no memory to remember that it was said.
void say_once(const char *routine, gemm_status_t status, const char *library) noexcept {
    bool first = true;
    try {
        static std::mutex mutex;
        static std::set<std::pair<std::string, int>> said;
        std::lock_guard<std::mutex> lock(mutex);
        first = said.emplace(routine, int(status)).second;
    } catch (...) {
    }
    if (first)
        std::fprintf(stderr,
                     "gemm_blas: %s: %s: %s; computed by %s instead (said once; GEMM_BLAS_ON_FAILURE=stop stops "
                     "the program instead)\n",
                     routine, gemm_status_string(status), gemm_last_error(), library);
}

}  // namespace

template <class T> void on_failure(const char *routine, gemm_status_t status, const fortran_call<T> &c) noexcept {
    // Arguments BLAS does not check but gemm does (a NULL operand, operands spanning more
    // than 2^63 bytes): the system BLAS would crash on them.
    if (status < GEMM_STATUS_NOT_SUPPORTED) stop(routine, status, "");
    if (chosen_policy() == policy::stop) stop(routine, status, " (GEMM_BLAS_ON_FAILURE=stop)");
    // A call that failed while computing may have written part of C: its old values, which
    // beta != 0 needs, are gone.
    bool c_untouched = status < GEMM_STATUS_ALLOC_FAILED;
    if (!c_untouched && c.beta != T(0))
        stop(routine, status, "; C may be partly written, so it cannot be computed again");
    fortran_gemm<T> gemm_fn = system_gemm<T>();
    if (!gemm_fn) stop(routine, status, "; no system BLAS found to compute it instead");
    say_once(routine, status, library_of(reinterpret_cast<void *>(gemm_fn)));
    // With alpha = 0, A and B are not read (NaN there must not come through), but OpenBLAS
    // reads them: given k = 0 it only scales C. The leading dimensions stay valid for k = 0.
    const int k = c.alpha == T(0) ? 0 : c.k;
    gemm_fn(&c.transa, &c.transb, &c.m, &c.n, &k, &c.alpha, c.a, &c.lda, c.b, &c.ldb, &c.beta, c.c, &c.ldc, 1, 1);
}

template void on_failure(const char *, gemm_status_t, const fortran_call<float> &) noexcept;
template void on_failure(const char *, gemm_status_t, const fortran_call<double> &) noexcept;
template void on_failure(const char *, gemm_status_t, const fortran_call<std::complex<float>> &) noexcept;
template void on_failure(const char *, gemm_status_t, const fortran_call<std::complex<double>> &) noexcept;

}  // namespace gemm_blas
