// cuda_library_open.hpp: how a CUDA library (cuBLAS, cuBLASLt, cuSPARSE) is opened at first use
// and its functions found, shared by the loaders. The including target defines
// GEMM_CUDA_LIBRARY_DIR, the toolkit's library directory the build linked against.
#pragma once

#include <dlfcn.h>

#include <string>

#ifndef GEMM_CUDA_LIBRARY_DIR
#error "GEMM_CUDA_LIBRARY_DIR must name the CUDA toolkit's library directory"
#endif

namespace gemm::cuda {

// The soname first; then the file in the directory the build linked against, for hosts whose
// loader does not search it (the toolkit under /usr/local/cuda, say). Local: the program's own
// copy, if it links one, is the same library (one soname, loaded once), and no symbol of these
// leaks into later lookups. nullptr with the loader's message in error when neither opens.
inline void *open_cuda_library(const char *soname, std::string &error) {
    if (void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
    const char *e = dlerror();
    error = e ? e : soname;
    const std::string built = std::string(GEMM_CUDA_LIBRARY_DIR) + "/" + soname;
    if (void *h = dlopen(built.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    return nullptr;
}

// Each symbol through its library's handle; missing names the first that is not there.
template <class F> void find_symbol(void *handle, const char *symbol, F &out, std::string &missing) {
    out = reinterpret_cast<F>(dlsym(handle, symbol));
    if (!out && missing.empty()) missing = symbol;
}

}  // namespace gemm::cuda
