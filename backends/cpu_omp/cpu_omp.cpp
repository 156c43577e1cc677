// cpu_omp.cpp: the packed, SIMD, multithreaded CPU backend: kernel table, run-time ISA choice
// and the backend contract.
#include "cpu_omp.hpp"

#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "blocked_gemm.hpp"
#include "dispatch/element.hpp"
#include "dispatch/error.hpp"
#include "dispatch/fp8.hpp"
#include "sparse_product.hpp"
#include "transpose_tiles.hpp"

namespace gemm {
namespace {

using namespace cpu_omp_detail;

// Instruction sets in increasing order of preference.
enum class isa : int { generic = 0, avx2_fma = 1, avx512f = 2 };

const char *isa_name(isa i) {
    switch (i) {
    case isa::generic: return "generic";
    case isa::avx2_fma: return "avx2_fma";
    case isa::avx512f: return "avx512f";
    }
    return "?";
}

// What this CPU (and its OS, which must save the wider registers) can run; GCC's
// __builtin_cpu_supports checks both.
isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#if GEMM_CPU_OMP_AVX512
    if (__builtin_cpu_supports("avx512f")) return isa::avx512f;
#endif
#if GEMM_CPU_OMP_AVX2
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return isa::avx2_fma;
#endif
#endif
    return isa::generic;
}

isa cpu_isa() {
    static const isa detected = detect_isa();
    return detected;
}

#if GEMM_CPU_OMP_F16C
// F16C as CPUID reports it (leaf 1, ECX): clang does not know __builtin_cpu_supports("f16c").
// The OS's saving of the registers it uses is what the AVX2 check beside it asks.
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

// The 16-bit conversions' instruction set: AVX2 ones need F16C as well (every AVX2 CPU we
// know has it, but the flags are separate).
isa conversion_isa() {
#if defined(__x86_64__) || defined(__i386__)
#if GEMM_CPU_OMP_AVX512
    if (cpu_isa() == isa::avx512f) return isa::avx512f;
#endif
#if GEMM_CPU_OMP_F16C
    if (__builtin_cpu_supports("avx2") && cpu_has_f16c()) return isa::avx2_fma;
#endif
#endif
    return isa::generic;
}

// The set of conversions for conversion_isa(), from those this build has (null where not built).
template <class S>
const conversion_kernels<S> &choose_conversions(const conversion_kernels<S> *avx512, const conversion_kernels<S> *avx2,
                                                const conversion_kernels<S> &generic) {
    const isa chosen = conversion_isa();
    if (chosen == isa::avx512f && avx512) return *avx512;
    if (chosen == isa::avx2_fma && avx2) return *avx2;
    return generic;
}

#if GEMM_CPU_OMP_AVX512BF16
// Whether this CPU has AVX512-BF16's conversions, and AVX512-DQ's classes that find the
// subnormals they read as zero (microkernel_avx512_bf16.cpp).
bool has_avx512_bf16() {
    static const bool has = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512dq");
    return has;
}
#endif

#if GEMM_CPU_OMP_AVX512
// The AVX-512 f32 kernel's rounding kernels (a Rounding of run_f32_table): bf16 by AVX512-BF16's
// conversion where the CPU has it, which rounds every value to the same bits.
struct avx512_rounding {
    static microkernel<float, half> f16() { return microkernel_avx512_f32_32x12_into_f16; }
    static microkernel<float, bfloat16> bf16() {
#if GEMM_CPU_OMP_AVX512BF16
        if (has_avx512_bf16()) return microkernel_avx512bf16_f32_32x12_into_bf16;
#endif
        return microkernel_avx512_f32_32x12_into_bf16;
    }
};
#endif

// One variant: a microkernel, the cache blocking it runs with, and the loop nest
// instantiated for its MR x NR. The id says ISA, dtype, method (4m: complex on split real
// and imaginary planes) and MR x NR (in complex values for complex types).
template <class T> struct kernel_config {
    const char *id;
    isa needs;
    blocking sizes;
    microkernel<T> kernel;
    const direct_kernels<T> *direct;  // the kernels that need no packing (blocked_gemm.hpp); null: none
    bool (*run)(const problem &, const blocking &, microkernel<T>, direct_kernels<T>);
    batch_outcome (*run_batch)(const problem_batch &, const blocking &, microkernel<T>, direct_kernels<T>);
};

// Blocking for the CPUs each ISA implies. AVX2 sizes are for Zen 3-class caches (32 KiB L1d,
// 512 KiB L2): a kc x NR panel of B uses about a third of L1, an mc x kc block of A 40% of L2
// (f32) or 94% (f64), and a kc x nc panel of B a few MB of L3. AVX-512 parts have 1-2 MiB of
// L2, so their A block is larger. fit_to_l2 shrinks mc on CPUs with a smaller L2.
// f64 AVX2 fills L2: with a block of A of 38 % of L2, cpu_omp fell into phases of seconds
// well behind OpenBLAS beside it, which the larger block removed (backends/cpu_omp/NOTES.md,
// "f64 AVX2 A block fills L2", with our explanation: each row block re-reads the packed B
// panel from the L3 that other tenants share, and fewer, larger blocks re-read it less often).
const kernel_config<float> f32_kernels[] = {
#if GEMM_CPU_OMP_AVX512
    {"avx512f_f32_32x12",
     isa::avx512f,
     {256, 384, 3072},
     microkernel_avx512_f32_32x12,
     &direct_avx512_f32,
     run_f32_table<32, 12, avx512_rounding>,
     run_f32_table_batch<32, 12>},
#endif
#if GEMM_CPU_OMP_AVX2
    {"avx2_f32_16x6",
     isa::avx2_fma,
     {144, 384, 3072},
     microkernel_avx2_f32_16x6,
     &direct_avx2_f32,
     run_f32_table<16, 6, rounding_from_stack<16, 6, microkernel_avx2_f32_16x6>>,
     run_f32_table_batch<16, 6>},
#endif
    {"generic_f32_8x4",
     isa::generic,
     {128, 256, 2048},
     microkernel_generic_f32_8x4,
     nullptr,
     run_f32_table<8, 4, rounding_from_stack<8, 4, microkernel_generic_f32_8x4>>,
     run_f32_table_batch<8, 4>},
};

const kernel_config<double> f64_kernels[] = {
#if GEMM_CPU_OMP_AVX512
    {"avx512f_f64_16x12",
     isa::avx512f,
     {144, 256, 2040},
     microkernel_avx512_f64_16x12,
     &direct_avx512_f64,
     run_blocked<double, 16, 12>,
     run_blocked_batch<double, 16, 12>},
#endif
#if GEMM_CPU_OMP_AVX2
    {"avx2_f64_8x6",
     isa::avx2_fma,
     {240, 256, 2046},
     microkernel_avx2_f64_8x6,
     &direct_avx2_f64,
     run_blocked<double, 8, 6>,
     run_blocked_batch<double, 8, 6>},
#endif
    {"generic_f64_4x4",
     isa::generic,
     {64, 256, 2048},
     microkernel_generic_f64_4x4,
     nullptr,
     run_blocked<double, 4, 4>,
     run_blocked_batch<double, 4, 4>},
};

// Complex values are 8 (c32) or 16 (c64) bytes and a step of k of a packed panel holds both
// planes, so the blocks hold fewer values than f32's: kc x NR of B is 12 KiB for the 32x6 and
// 16x6 kernels (kc = 256 for c32, 128 for c64). The kernels with more columns (NR = 12) are
// for the tuner to time: the taller ones were faster (backends/cpu_omp/NOTES.md, "Complex
// kernels: 6 columns by default").
const kernel_config<c32> c32_kernels[] = {
#if GEMM_CPU_OMP_AVX512
    {"avx512f_c32_4m_32x6",
     isa::avx512f,
     {192, 256, 2040},
     microkernel_avx512_c32_4m_32x6,
     nullptr,
     run_blocked<c32, 32, 6>,
     run_blocked_batch<c32, 32, 6>},
    {"avx512f_c32_4m_16x12",
     isa::avx512f,
     {192, 256, 2040},
     microkernel_avx512_c32_4m_16x12,
     nullptr,
     run_blocked<c32, 16, 12>,
     run_blocked_batch<c32, 16, 12>},
#endif
#if GEMM_CPU_OMP_AVX2
    {"avx2_c32_4m_8x6",
     isa::avx2_fma,
     {120, 256, 3072},
     microkernel_avx2_c32_4m_8x6,
     nullptr,
     run_blocked<c32, 8, 6>,
     run_blocked_batch<c32, 8, 6>},
#endif
    {"generic_c32_4m_4x4",
     isa::generic,
     {64, 256, 2048},
     microkernel_generic_c32_4m_4x4,
     nullptr,
     run_blocked<c32, 4, 4>,
     run_blocked_batch<c32, 4, 4>},
};

const kernel_config<c64> c64_kernels[] = {
#if GEMM_CPU_OMP_AVX512
    {"avx512f_c64_4m_16x6",
     isa::avx512f,
     {192, 128, 2040},
     microkernel_avx512_c64_4m_16x6,
     nullptr,
     run_blocked<c64, 16, 6>,
     run_blocked_batch<c64, 16, 6>},
    {"avx512f_c64_4m_8x12",
     isa::avx512f,
     {192, 128, 2040},
     microkernel_avx512_c64_4m_8x12,
     nullptr,
     run_blocked<c64, 8, 12>,
     run_blocked_batch<c64, 8, 12>},
#endif
#if GEMM_CPU_OMP_AVX2
    {"avx2_c64_4m_4x6",
     isa::avx2_fma,
     {120, 128, 2046},
     microkernel_avx2_c64_4m_4x6,
     nullptr,
     run_blocked<c64, 4, 6>,
     run_blocked_batch<c64, 4, 6>},
#endif
    {"generic_c64_4m_2x4",
     isa::generic,
     {64, 128, 2048},
     microkernel_generic_c64_4m_2x4,
     nullptr,
     run_blocked<c64, 2, 4>,
     run_blocked_batch<c64, 2, 4>},
};

// f16 and bf16 run the f32 kernels, with the f32 blocking, on A and B widened to f32 while
// packing (blocked_gemm.hpp: run_f32_table), under ids that name their own type:
// avx512f_f32_32x12 serves bf16 as avx512f_bf16_32x12. The f32 table is their one source; the
// ids are made from it once, and live as long as the process (run_report views them).
// FP8 runs them too, on A and B decoded and scaled into f32 first (run_fp8), under ids of its
// own made the same way (avx512f_e4m3_32x12).
bool widened(dtype t) { return t == dtype::f16 || t == dtype::bf16; }

const std::vector<std::string> &widened_ids(dtype t) {
    auto make = [](dtype type) {
        std::vector<std::string> ids;
        for (const kernel_config<float> &k : f32_kernels) {
            std::string id = k.id;
            id.replace(id.find("_f32_"), 5, std::string("_") + dtype_name(type) + "_");
            ids.push_back(std::move(id));
        }
        return ids;
    };
    static const std::vector<std::string> f16 = make(dtype::f16), bf16 = make(dtype::bf16), e4m3 = make(dtype::e4m3),
                                          e5m2 = make(dtype::e5m2);
    switch (t) {
    case dtype::f16: return f16;
    case dtype::e4m3: return e4m3;
    case dtype::e5m2: return e5m2;
    default: return bf16;
    }
}

// Entry k of table under the id it has for A and B of type t.
template <class T, std::size_t N>
std::string_view config_id(const kernel_config<T> (&table)[N], const kernel_config<T> &k, dtype t) {
    if constexpr (std::is_same_v<T, float>)
        if (widened(t) || is_fp8(t)) return widened_ids(t)[std::size_t(&k - table)];
    return k.id;
}

// The variant's unpacked kernels, all null where it has none.
template <class T> direct_kernels<T> direct_of(const kernel_config<T> &k) {
    return k.direct ? *k.direct : direct_kernels<T>{};
}

// The table of each dtype served, as a visitor that hands it to f.
template <class F> auto with_table(dtype t, F &&f) {
    switch (t) {
    case dtype::f64: return f(f64_kernels);
    case dtype::c32: return f(c32_kernels);
    case dtype::c64: return f(c64_kernels);
    default: return f(f32_kernels);  // f32, f16, bf16
    }
}

constexpr dtype served_types[] = {dtype::f32, dtype::f64, dtype::f16,  dtype::bf16,
                                  dtype::c32, dtype::c64, dtype::e4m3, dtype::e5m2};

// The table's blocking, with mc cut (in steps of 32 rows, a multiple of every MR) so that
// the mc x kc block of A is no larger than this CPU's L2 where that is smaller than the table
// assumes; otherwise the block would be re-read from L3 for every micro-panel of B. Called on
// every call: where the block fits, as on every CPU the table was written for, it divides
// nothing (its two divisions showed on the smallest calls; backends/cpu_omp/NOTES.md, "f64
// AVX2 A block fills L2").
blocking fit_to_l2(blocking b, std::size_t element) {
    static const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0 || b.mc * b.kc * int64_t(element) <= l2) return b;
    const int64_t rows = int64_t(l2) / (b.kc * int64_t(element)) / 32 * 32;
    if (rows >= 32 && rows < b.mc) b.mc = rows;
    return b;
}

template <class T, std::size_t N>
const kernel_config<T> *find_config(const kernel_config<T> (&table)[N], std::string_view id, dtype t) {
    for (const kernel_config<T> &k : table)
        if (id == config_id(table, k, t)) return &k;
    return nullptr;
}

// The first (best) kernel of the table this CPU can run; the generic one always can.
template <class T, std::size_t N> const kernel_config<T> &best_config(const kernel_config<T> (&table)[N]) {
    for (const kernel_config<T> &k : table)
        if (k.needs <= cpu_isa()) return k;
    return table[N - 1];
}

// The kernel variant names for ab (the best this CPU runs for ""), or NOT_SUPPORTED.
template <class T, std::size_t N>
gemm_status_t config_for(const kernel_config<T> (&table)[N], dtype ab, std::string_view variant,
                         const kernel_config<T> *&out) {
    out = variant.empty() ? &best_config(table) : find_config(table, variant, ab);
    if (!out)
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cpu_omp: variant '" + std::string(variant) + "' does not compute " + dtype_name(ab));
    if (out->needs > cpu_isa())
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cpu_omp: variant '" + std::string(variant) + "' needs " +
                                                        isa_name(out->needs) + ", this CPU has " + isa_name(cpu_isa()));
    return GEMM_STATUS_SUCCESS;
}

template <class T, std::size_t N>
gemm_status_t run_with(const kernel_config<T> (&table)[N], const problem &p, std::string_view variant, run_report &ctx) {
    const kernel_config<T> *k = nullptr;
    if (gemm_status_t s = config_for(table, p.ab_type, variant, k); s != GEMM_STATUS_SUCCESS) return s;
    ctx.variant_used = config_id(table, *k, p.ab_type);
    if (!k->run(p, fit_to_l2(k->sizes, sizeof(T)), k->kernel, direct_of(*k)))
        return set_error(GEMM_STATUS_ALLOC_FAILED, "cpu_omp: cannot allocate the per-thread packing buffers");
    return GEMM_STATUS_SUCCESS;
}

// A batch's matrices in one parallel region, or NOT_SUPPORTED (nothing touched) where a team
// per matrix serves better (run_blocked_batch).
template <class T, std::size_t N>
gemm_status_t run_batch_with(const kernel_config<T> (&table)[N], const problem_batch &b, std::string_view variant,
                             run_report &ctx) {
    const kernel_config<T> *k = nullptr;
    if (gemm_status_t s = config_for(table, b.shapes.front().ab_type, variant, k); s != GEMM_STATUS_SUCCESS) return s;
    switch (k->run_batch(b, fit_to_l2(k->sizes, sizeof(T)), k->kernel, direct_of(*k))) {
    case batch_outcome::declined: return GEMM_STATUS_NOT_SUPPORTED;
    case batch_outcome::no_memory:
        return set_error(GEMM_STATUS_ALLOC_FAILED, "cpu_omp: cannot allocate the per-thread packing buffers");
    case batch_outcome::done: break;
    }
    ctx.variant_used = config_id(table, *k, b.shapes.front().ab_type);
    ctx.note = fmt::format("{} matrices in one parallel region, each on one thread", b.c.size());
    return GEMM_STATUS_SUCCESS;
}

// An FP8 problem as an f32 one: op(A) and op(B) decoded through the type's 256-entry table
// (exact: every FP8 value is a float), each multiplied by its scale (one f32 rounding), into
// the calling thread's buffers, stored as A and B are (so the f32 packing reads them as it
// reads any f32 operand); then the f32 kernels. C of f32 is computed where it lies; a 16-bit
// C, or any C with an output scale or amax, is summed in an f32 buffer (holding beta * C's
// widened values when beta != 0), and one pass takes amax, applies d_scale and rounds into
// C once. The buffers are the thread's, kept between calls (grown, never shrunk).
struct fp8_buffers {
    std::vector<float> a, b, c;
};

fp8_buffers &thread_fp8_buffers() {
    thread_local fp8_buffers buffers;
    return buffers;
}

// The stored rows x cols operand x (ld, FP8 of type t) decoded into dst (ld = rows), each
// value times scale(outer, l) where (outer, l) are its coordinates in op(x): `outer_is_row`
// says whether the stored row is the outer coordinate (op(A) = A, op(B) = B^T).
void decode_operand(const uint8_t *x, int64_t ld, int64_t rows, int64_t cols, dtype t, const operand_scale &scale,
                    bool outer_is_row, float *dst) {
    const std::array<float, 256> &table = fp8_table(t);
    for (int64_t col = 0; col < cols; ++col) {
        const uint8_t *src = x + col * ld;
        float *d = dst + col * rows;
        if (scale.kind == scale_kind::none) {
            for (int64_t r = 0; r < rows; ++r) d[r] = table[src[r]];
        } else if (scale.kind == scale_kind::tensor) {
            const float s = scale.values[0];
            for (int64_t r = 0; r < rows; ++r) d[r] = table[src[r]] * s;
        } else {
            for (int64_t r = 0; r < rows; ++r)
                d[r] = table[src[r]] * (outer_is_row ? scale.at(r, col) : scale.at(col, r));
        }
    }
}

template <std::size_t N>
gemm_status_t run_fp8(const kernel_config<float> (&table)[N], const problem &p, std::string_view variant,
                      run_report &ctx) {
    // The f32 id of the variant the caller named by its FP8 id.
    std::string_view f32_variant;
    if (!variant.empty()) {
        const std::vector<std::string> &ids = widened_ids(p.ab_type);
        for (std::size_t i = 0; i < N; ++i)
            if (ids[i] == variant) f32_variant = table[i].id;
        if (f32_variant.empty())
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "cpu_omp: variant '" + std::string(variant) +
                                                            "' does not compute " + dtype_name(p.ab_type));
    }
    fp8_buffers &buf = thread_fp8_buffers();
    problem q = p;
    q.ab_type = q.c_type = q.compute_type = dtype::f32;
    q.scaling = {};
    if (!p.scales_only()) {
        buf.a.resize(std::size_t(p.a_rows() * p.a_cols()));
        buf.b.resize(std::size_t(p.b_rows() * p.b_cols()));
        decode_operand(static_cast<const uint8_t *>(p.a), p.lda, p.a_rows(), p.a_cols(), p.ab_type, p.scaling.a,
                       p.op_a == transpose::n, buf.a.data());
        decode_operand(static_cast<const uint8_t *>(p.b), p.ldb, p.b_rows(), p.b_cols(), p.ab_type, p.scaling.b,
                       p.op_b != transpose::n, buf.b.data());
        q.a = buf.a.data();
        q.b = buf.b.data();
        q.lda = std::max<int64_t>(1, p.a_rows());
        q.ldb = std::max<int64_t>(1, p.b_rows());
    }
    const bool pass = p.c_type != dtype::f32 || p.scaling.d_scale || p.scaling.amax_d;
    const bool in_buffer = p.c_type != dtype::f32;
    if (in_buffer) {
        buf.c.resize(std::size_t(p.m * p.n));
        for (int64_t j = 0; !p.beta_zero() && j < p.n; ++j)
            for (int64_t i = 0; i < p.m; ++i)
                buf.c[std::size_t(i + j * p.m)] = float(load_element(p.c, i + j * p.ldc, p.c_type));
        q.c = buf.c.data();
        q.ldc = p.m;
    }
    const kernel_config<float> *k = nullptr;
    if (gemm_status_t s = config_for(table, dtype::f32, f32_variant, k); s != GEMM_STATUS_SUCCESS) return s;
    if (!k->run(q, fit_to_l2(k->sizes, sizeof(float)), k->kernel, direct_of(*k)))
        return set_error(GEMM_STATUS_ALLOC_FAILED, "cpu_omp: cannot allocate the per-thread packing buffers");
    ctx.variant_used = config_id(table, *k, p.ab_type);
    if (!pass) return GEMM_STATUS_SUCCESS;
    const float *sums = in_buffer ? buf.c.data() : static_cast<const float *>(p.c);
    const int64_t ld_sums = in_buffer ? p.m : p.ldc;
    const double d_scale = p.scaling.d_scale ? double(*p.scaling.d_scale) : 1.0;
    double amax = 0.0;
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            const double v = sums[i + j * ld_sums];
            if (!std::isnan(amax) && !(std::fabs(v) <= amax)) amax = std::fabs(v);  // NaN stays
            store_element(p.c, i + j * p.ldc, p.c_type, v * d_scale);
        }
    if (p.scaling.amax_d) *p.scaling.amax_d = float(amax);
    return GEMM_STATUS_SUCCESS;
}

class cpu_omp final : public backend {
public:
    std::string_view name() const override { return "cpu_omp"; }
    backend_kind kind() const override { return backend_kind::host; }

    // Named cpu_omp because OpenMP's settings (OMP_NUM_THREADS, omp_set_num_threads, nesting)
    // set its thread count; the threads are the caller's and the backend's own pool
    // (worker_pool.hpp).
    verdict probe() const override {
        const int threads = call_threads();
        std::string detail = std::string(isa_name(cpu_isa())) + ", " + std::to_string(threads);
        if (threads == 1) return verdict::yes(detail + " thread (the caller's)");
        return verdict::yes(detail + " threads (the caller and " + std::to_string(threads - 1) +
                            (threads == 2 ? " pool thread)" : " pool threads)"));
    }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        if (is_fp8(p.ab_type)) {
            if (!c_type_allowed(p.ab_type, p.c_type) || p.compute_type != dtype::f32)
                return verdict::no(std::string("FP8 takes C of f32, f16 or bf16 and compute f32, not C ") +
                                   dtype_name(p.c_type) + ", compute " + dtype_name(p.compute_type));
            // A group of a grouped call (pointer_batch) runs matrix by matrix (backend.hpp).
            if (p.batch != 1 && !p.pointer_batch) return verdict::no("FP8 takes one matrix or a group's matrices");
            return verdict::yes();
        }
        // f16 and bf16 are computed in f32, into C of their type or f32.
        const dtype compute = widened(p.ab_type) ? dtype::f32 : p.ab_type;
        const bool c_ok = p.c_type == p.ab_type || (widened(p.ab_type) && p.c_type == dtype::f32);
        if (!c_ok || p.compute_type != compute)
            return verdict::no(std::string("mixed types not supported: A and B ") + dtype_name(p.ab_type) + ", C " +
                               dtype_name(p.c_type) + ", compute " + dtype_name(p.compute_type));
        return verdict::yes();
    }

    // Each thread applies the epilogue to the blocks of C it finishes (blocked_gemm.hpp), but
    // not the bias gradient, a sum over every block of a row or column, nor on a call that
    // only scales C, nor for a 16-bit C, rounded from f32 sums as its blocks finish
    // (run_rounded): the dispatcher's pass applies it to the rounded C.
    bool fuses_epilogue(const problem &p) const override {
        return !is_fp8(p.ab_type) && !p.scales_only() && !widened(p.c_type) &&
               !(p.epilogue.backward() && p.epilogue.axis != epilogue_axis::none);
    }

    // The kernels of the best ISA this CPU has: the only ones worth timing here.
    std::vector<std::string> variants(const problem &p) const override {
        std::vector<std::string> ids;
        with_table(p.ab_type, [&](const auto &table) {
            for (const auto &k : table)
                if (k.needs == best_config(table).needs) ids.emplace_back(config_id(table, k, p.ab_type));
        });
        return ids;
    }

    // Every id of this build, including ISAs this CPU lacks (run() then says so).
    bool knows_variant(std::string_view v) const override {
        if (v.empty()) return true;
        for (dtype t : served_types)
            if (with_table(t, [&](const auto &table) { return find_config(table, v, t) != nullptr; })) return true;
        return false;
    }

    std::vector<std::string> variant_ids() const override {
        std::vector<std::string> ids;
        for (dtype t : served_types)
            with_table(t, [&](const auto &table) {
                for (const auto &k : table) ids.emplace_back(config_id(table, k, t));
            });
        return ids;
    }

    gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) override {
        try {
            if (is_fp8(p.ab_type)) return run_fp8(f32_kernels, p, variant, ctx);
            return with_table(p.ab_type, [&](const auto &table) { return run_with(table, p, variant, ctx); });
        } catch (const std::bad_alloc &) {
            return set_error(GEMM_STATUS_ALLOC_FAILED, "cpu_omp: out of memory");
        } catch (...) {
            return set_error(GEMM_STATUS_INTERNAL_ERROR, "cpu_omp: unexpected exception");
        }
    }

    // Every dtype, on host memory (transpose_tiles.cpp).
    verdict supports_omatcopy(const transpose_problem &t) const override {
        if (t.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    gemm_status_t run_omatcopy(const transpose_problem &t, run_report &ctx) override { return transpose_tiles(t, ctx); }

    // CSR and COO, every op, f32, f64, c32 and c64 (the types the API passes), on host memory
    // (sparse_product.cpp).
    verdict supports_spmm(const sparse_problem &s) const override {
        if (s.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    gemm_status_t run_spmm(const sparse_problem &s, run_report &ctx) override { return sparse_product(s, ctx); }

    gemm_status_t run_batch(const problem_batch &b, std::string_view variant, run_report &ctx) override {
        try {
            return with_table(b.shapes.front().ab_type,
                              [&](const auto &table) { return run_batch_with(table, b, variant, ctx); });
        } catch (const std::bad_alloc &) {
            return set_error(GEMM_STATUS_ALLOC_FAILED, "cpu_omp: out of memory");
        } catch (...) {
            return set_error(GEMM_STATUS_INTERNAL_ERROR, "cpu_omp: unexpected exception");
        }
    }
};

}  // namespace

namespace cpu_omp_detail {

#if GEMM_CPU_OMP_AVX512
constexpr const conversion_kernels<half> *built_avx512_f16 = &conversions_avx512_f16;
constexpr const conversion_kernels<bfloat16> *built_avx512_bf16 = &conversions_avx512_bf16;
#else
constexpr const conversion_kernels<half> *built_avx512_f16 = nullptr;
constexpr const conversion_kernels<bfloat16> *built_avx512_bf16 = nullptr;
#endif
#if GEMM_CPU_OMP_F16C
constexpr const conversion_kernels<half> *built_avx2_f16 = &conversions_avx2_f16;
constexpr const conversion_kernels<bfloat16> *built_avx2_bf16 = &conversions_avx2_bf16;
#else
constexpr const conversion_kernels<half> *built_avx2_f16 = nullptr;
constexpr const conversion_kernels<bfloat16> *built_avx2_bf16 = nullptr;
#endif

const conversion_kernels<half> &f16_conversions() {
    static const conversion_kernels<half> &chosen =
        choose_conversions(built_avx512_f16, built_avx2_f16, conversions_generic_f16);
    return chosen;
}

const conversion_kernels<bfloat16> &bf16_conversions() {
    static const conversion_kernels<bfloat16> &chosen =
        choose_conversions(built_avx512_bf16, built_avx2_bf16, conversions_generic_bf16);
    return chosen;
}

}  // namespace cpu_omp_detail

backend_ptr make_cpu_omp_backend() { return std::make_unique<cpu_omp>(); }

}  // namespace gemm
