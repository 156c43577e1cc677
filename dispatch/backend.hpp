// backend.hpp: the contract every backend implements, and what the dispatcher promises it.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gemm/gemm.h"
#include "problem.hpp"
#include "sparse_problem.hpp"
#include "transpose_problem.hpp"

namespace gemm {

// Yes, or no with a reason a person can act on ("libopenblas.so.0 not found").
struct verdict {
    bool ok = true;
    std::string reason;  // why not, when !ok
    std::string detail;  // what it runs on, when ok ("libopenblas.so.0: OpenBLAS 0.3.21")

    static verdict yes(std::string detail = {}) { return {true, {}, std::move(detail)}; }
    static verdict no(std::string why) { return {false, std::move(why), {}}; }
};

// Filled by run() for the verbose trace. variant_used names the variant that ran; it views
// storage that stays valid until the dispatcher has written the trace (a literal, a variant
// table, the variant asked for, a per-thread cache entry), so that naming it costs no
// allocation on the hot path. note (e.g. "host pointers offloaded: ...") is for the rarer paths.
struct run_report {
    std::string_view variant_used;
    std::string note;
    std::string_view epilogue;  // "fused" or "pass" (the dispatcher's), for calls with one
};

// The matrices of a pointer-array batch or grouped call whose groups were all decided for
// one backend and variant: per group its shape (a canonical problem of batch 1 whose a, b, c
// are unused) and size; the matrices' canonical pointers, group after group.
struct problem_batch {
    std::vector<problem> shapes;
    std::vector<int64_t> sizes;
    std::vector<const void *> a, b;
    std::vector<void *> c;
};

// What a backend computes on. The built-in rule serves host pointers with host backends and
// device pointers with device backends, each in registry order; a multi-device backend
// (cuBLASXt, host memory spread over GPUs) runs only where the tune cache or the caller puts it.
enum class backend_kind : int { host = 1, device = 2, multi_device = 3 };

struct device_services;  // memory.hpp

// A GEMM_* variable a backend reads, declared next to its code. dispatch/settings.cpp reads and
// checks every backend's with the library's own, once: an invalid value fails every call with
// GEMM_STATUS_INVALID_CONFIG naming the variable, and `gemm info` lists each with its meaning.
struct backend_option {
    std::string_view name;      // "GEMM_CBLAS_LIB"
    std::string_view values;    // what it takes: "a path or soname"
    std::string_view fallback;  // what holds when it is unset
    std::string_view meaning;
    // Why value is not valid ("must be ..."), or "" when it is; nullptr: any value is.
    std::string (*invalid)(const std::string &value);
};

// The contract.
// Required:
//   name()       stable lower_snake name used by GEMM_BACKEND, caches and traces; a string
//                literal (the C API hands out its data()).
//   kind()       what it computes on (backend_kind).
//   probe()      whether this machine can run it. Called once, through available().
//   supports(p)  a promise: the dispatcher runs p only on a backend that said yes, and the
//                tests fail a backend that says yes and computes wrong. An FP8 problem with
//                p.pointer_batch is a group of gemm_ex_grouped(_scaled), every matrix with
//                the group's scaling. A host backend's run() gets its matrices one by one,
//                amax_d pointing at a host float the dispatcher combines over the group. A
//                device backend that says yes gets the group in one run_batch, which must
//                serve it (NOT_SUPPORTED there is the call's error, checked before any
//                matrix is computed) and store max |D| over the whole group in amax_d.
//   run(p, v, c) computes p with variant v ("" = the backend's default). The dispatcher has
//                already checked every argument (BLAS rules), returned early for empty
//                problems, and only calls run on available backends that support p.
//                Backends must honour: beta == 0 means C is written, never read (NaN in C
//                must not leak); k == 0 or alpha == 0 means C = beta * C without reading
//                A or B. Errors are returned as status and set_error(); never abort.
//                GEMM_STATUS_NOT_SUPPORTED (e.g. a variant this CPU or dtype cannot run) must
//                be returned before C is touched.
//                No allocation proportional to the problem on the hot path.
// Optional (default):
//   reference()  true for the oracle (cpu_ref): correct on every problem and never fast, so
//                the tuner and gemm bench time it only when named. (false)
//   variants(p)  configurations worth timing, as stable ids that parse back in run(). ({""})
//   options()    the GEMM_* variables it reads (backend_option); it reads them through
//                settings().option(name), never getenv. ({})
//   run_batch(b, v, c) every matrix of b in one library call (cuBLAS's grouped GEMM), where
//                that is faster than one run() each. GEMM_STATUS_NOT_SUPPORTED, returned
//                before any C is touched, lets the dispatcher run the matrices one by one.
//                (GEMM_STATUS_NOT_SUPPORTED)
//   fuses_epilogue(p) whether run(p) applies p.epilogue itself (cuBLASLt's fused epilogues);
//                else the dispatcher runs p without it and then its own pass over C. A run
//                that finds it cannot fuse after all returns GEMM_STATUS_NOT_SUPPORTED before
//                touching anything, and the dispatcher takes the pass. (false)
//   leads_batches(p) whether the built-in rule takes this backend first for p, a group of a
//                pointer-array or grouped call of several matrices (p.pointer_batch): where
//                its run_batch serves such groups better than the preference order's first
//                (cuda_tiled: small f16/bf16 GEMMs of any shapes in one launch). (false)
//   variant_ids() every id knows_variant() accepts, when they can be listed; else one line
//                saying what an id looks like (cuBLASLt's are built from its heuristic's
//                algorithms), starting with '<'. For messages and `gemm info`. ({})
//   identity()   what the machine's fingerprint (tune_cache.hpp) says of this backend; every
//                process's first auto call makes it. (available()'s detail, "available" when
//                it has none, or "unavailable") The cuBLAS backends say it without loading
//                cuBLAS (cublas_library.hpp).
//   runtime_services() the table of the device runtime it computes with (memory.hpp's
//                device_services: where pointers live, device memory and timing for the
//                measurement engine, the epilogue pass on device memory, the options of the
//                code the runtime's backends share), which dispatch, compiled without that
//                runtime, reaches only through it. Every backend built on CUDA returns the same
//                table (cuda::cuda_services()); dispatch takes the first the registry lists,
//                the first time it needs it. A backend hands it over rather than installing
//                it, so that no list outside the registry names the runtimes and a build
//                without them has nothing to install. (nullptr: host memory only)
//   supports_omatcopy(t) whether run_omatcopy computes the transpose problem t (gemm_omatcopy):
//                a promise as supports() is, with a reason when not. (no: "no transpose kernel")
//   run_omatcopy(t, c) computes B = alpha * op(A) for t. The dispatcher has checked every
//                argument, returned early for empty problems and refused overlapping A and B,
//                and calls it only on an available backend that said yes. Backends must honour:
//                alpha == 0 writes zeros into B without reading A (NaN in A must not leak);
//                alpha == 1 makes B exactly op(A); elements of B outside its b_rows() x b_cols()
//                window are never touched. Errors as for run(); NOT_SUPPORTED before B is
//                touched. (GEMM_STATUS_NOT_SUPPORTED)
//   leads_omatcopy(t) whether the built-in rule takes this backend first for t, ahead of the
//                preference order (cuda_tiled on device memory: its own kernel serves every
//                dtype, cuBLAS's geam only four). (false)
//   supports_spmm(s) whether run_spmm computes the sparse product s (gemm_spmm_csr,
//                gemm_spmm_coo): a promise as supports() is, with a reason when not (a format,
//                op or memory it has no kernel for). (no: "no sparse kernel")
//   run_spmm(s, c) computes C = alpha * op(A) * op(B) + beta * C for s. The dispatcher has
//                checked every argument and validated A when asked, returned early when C is
//                empty, and calls it only on an available backend that said yes. Backends must
//                honour: beta == 0 means C is written, never read; s.scales_only() means C =
//                beta * C without reading A's arrays or B; entries at one position add up (COO
//                duplicates, repeated CSR columns); elements of C outside its m x n window are
//                never touched. Errors as for run(); NOT_SUPPORTED before C is touched.
//                (GEMM_STATUS_NOT_SUPPORTED)
//   leads_spmm(s) whether the built-in rule takes this backend first for s, ahead of the
//                preference order. (false)
//   spmm_assumes_sorted() whether run_spmm is right only for A sorted without repeats (CSR
//                rows by column, COO entries by row then column, strictly), which a caller
//                may promise for device arrays but the library cannot check: such a backend
//                serves sparse products when forced, and auto takes it from the tune cache
//                only where `gemm tune --backends` named it. (false)
class backend {
public:
    virtual ~backend() = default;
    virtual std::string_view name() const = 0;
    virtual backend_kind kind() const = 0;
    virtual bool reference() const;
    // probe()'s answer, computed on first use and then constant. Thread-safe.
    const verdict &available() const;
    virtual verdict supports(const problem &p) const = 0;
    virtual std::vector<std::string> variants(const problem &p) const;
    // Whether v names one of this backend's variants (any problem); "" always does.
    virtual bool knows_variant(std::string_view v) const;
    virtual std::vector<std::string> variant_ids() const;
    virtual std::string identity() const;
    virtual std::vector<backend_option> options() const;
    virtual bool fuses_epilogue(const problem &p) const;
    virtual bool leads_batches(const problem &p) const;
    virtual const device_services *runtime_services() const;
    virtual gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) = 0;
    virtual gemm_status_t run_batch(const problem_batch &batch, std::string_view variant, run_report &ctx);
    virtual verdict supports_omatcopy(const transpose_problem &t) const;
    virtual gemm_status_t run_omatcopy(const transpose_problem &t, run_report &ctx);
    virtual bool leads_omatcopy(const transpose_problem &t) const;
    virtual verdict supports_spmm(const sparse_problem &s) const;
    virtual gemm_status_t run_spmm(const sparse_problem &s, run_report &ctx);
    virtual bool leads_spmm(const sparse_problem &s) const;
    virtual bool spmm_assumes_sorted() const;

protected:
    virtual verdict probe() const = 0;

private:
    mutable std::once_flag probed_;
    mutable verdict availability_;
};

using backend_ptr = std::unique_ptr<backend>;

}  // namespace gemm
