// test_correctness.cpp: every available host backend against cpu_ref, and cpu_ref against the
// harness's double reference and an independent long double loop, over layouts, ops, alpha and
// beta, hostile sizes, padded leading dimensions, strided batches and every dtype combination.
//
// Rerun one failing case: GEMM_TEST_FILTER='<description it printed>' test_correctness
// (test cases and dtype subcases also filter with doctest's -tc / -sc).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

struct dtype_config {
    const char *name;  // subcase name
    gemm_dtype_t ab;
    gemm_dtype_t c;
    entry api;
};

// f32 and f64 through both the typed entry points and gemm_ex; f16/bf16 through gemm_ex
// with C in their own type and in f32; each type also through a plan made for the case;
// c32 and c64 through gemm_cgemm/gemm_zgemm, gemm_ex or a plan, with complex scalars.
constexpr dtype_config dtype_configs[] = {
    {"dtype=f32 api=typed", GEMM_F32, GEMM_F32, entry::typed},
    {"dtype=f32 api=ex", GEMM_F32, GEMM_F32, entry::ex},
    {"dtype=f64 api=typed", GEMM_F64, GEMM_F64, entry::typed},
    {"dtype=f64 api=ex", GEMM_F64, GEMM_F64, entry::ex},
    {"dtype=f16 api=ex", GEMM_F16, GEMM_F16, entry::ex},
    {"dtype=f16->f32 api=ex", GEMM_F16, GEMM_F32, entry::ex},
    {"dtype=bf16 api=ex", GEMM_BF16, GEMM_BF16, entry::ex},
    {"dtype=bf16->f32 api=ex", GEMM_BF16, GEMM_F32, entry::ex},
    {"dtype=f32 api=plan", GEMM_F32, GEMM_F32, entry::plan},
    {"dtype=f64 api=plan", GEMM_F64, GEMM_F64, entry::plan},
    {"dtype=f16->f32 api=plan", GEMM_F16, GEMM_F32, entry::plan},
    {"dtype=bf16 api=plan", GEMM_BF16, GEMM_BF16, entry::plan},
    {"dtype=c32 api=typed", GEMM_C32, GEMM_C32, entry::typed},
    {"dtype=c32 api=ex", GEMM_C32, GEMM_C32, entry::ex},
    {"dtype=c64 api=typed", GEMM_C64, GEMM_C64, entry::typed},
    {"dtype=c64 api=plan", GEMM_C64, GEMM_C64, entry::plan},
};

constexpr gemm_layout_t layouts[] = {GEMM_ROW_MAJOR, GEMM_COL_MAJOR};
constexpr gemm_op_t ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};
constexpr double alphas[] = {1.0, -1.5, 0.0};
constexpr double betas[] = {0.0, 1.0, 0.5};

// 0, 1, tiny, tile sizes and tile +- 1 for the usual 8/16/32/64 tiles, primes.
constexpr int64_t awkward_sizes[] = {0, 1, 2, 3, 7, 16, 17, 31, 33, 64, 65, 97, 127, 131};

gemm_case make_case(const dtype_config &d, gemm_layout_t layout, gemm_op_t ta, gemm_op_t tb, int64_t m, int64_t n,
                    int64_t k, int64_t pad, double alpha, double beta) {
    return gemm_test::make_case(d.ab, d.c, d.api, layout, ta, tb, m, n, k, pad, alpha, beta);
}

// A sweep over sizes also walks through layouts, ops, scalars and paddings: counter i picks
// them in mixed radix, so 108 consecutive cases cover every layout x ops x alpha x beta.
// alpha = 0 is left to the full grid; here it would skip the product the sweep is about.
gemm_case rotated_case(const dtype_config &d, int64_t m, int64_t n, int64_t k, uint64_t i) {
    constexpr double sweep_alphas[] = {1.0, -1.5};
    constexpr int64_t pads[] = {0, 1, 5};
    return make_case(d, layouts[i % 2], ops[(i / 2) % 3], ops[(i / 6) % 3], m, n, k, pads[(i / 3) % 3],
                     sweep_alphas[(i / 18) % 2], betas[(i / 36) % 3]);
}

struct suite_counts {
    skip_tally skips;
    int64_t cases = 0;         // cases run
    int64_t backend_runs = 0;  // (case, backend) pairs compared
};

std::string rerun_hint(const gemm_case &c) { return "rerun: GEMM_TEST_FILTER='" + c.describe() + "' test_correctness"; }

// One case on every available backend and on `pinned` ("name:variant" forms): cpu_ref
// against the harness's double reference, then every other against cpu_ref's result.
// NOT_SUPPORTED is a counted skip; any other status than SUCCESS fails.
void check_case(const gemm_case &c, suite_counts &counts, const std::vector<std::string> &pinned = {}) {
    if (!case_selected(c.describe())) return;
    ++counts.cases;
    operands o = make_operands(c);
    reference ref = compute_reference(c, o);

    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    run_result oracle = run_host(c, o);
    CHECK_MESSAGE(oracle.status == GEMM_STATUS_SUCCESS,
                  "backend=cpu_ref " << c.describe() << ": " << std::string(gemm_status_string(oracle.status)) << " "
                                     << oracle.error << "\n"
                                     << rerun_hint(c));
    if (oracle.status != GEMM_STATUS_SUCCESS) return;
    comparison self = compare_result(c, o, oracle.c, ref.value);
    CHECK_MESSAGE(self.ok, "backend=cpu_ref vs double reference " << c.describe() << ": " << self.first << "\n"
                                                                  << rerun_hint(c));
    if (c.amax) {
        const std::string wrong = amax_mismatch(c, o, oracle.amax, ref.amax);
        CHECK_MESSAGE(wrong.empty(), "backend=cpu_ref " << c.describe() << ": " << wrong << "\n" << rerun_hint(c));
    }
    std::vector<double> expected = window_values(c, oracle.c);

    std::vector<std::string> names = available_backends();
    names.insert(names.end(), pinned.begin(), pinned.end());
    for (const std::string &name : names) {
        if (name == "cpu_ref") continue;
        REQUIRE_MESSAGE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS,
                        name << ": " << std::string(gemm_last_error()));
        run_result got = run_host(c, o);
        if (got.status == GEMM_STATUS_NOT_SUPPORTED) {
            counts.skips.add(name, c);
            continue;
        }
        ++counts.backend_runs;
        CHECK_MESSAGE(got.status == GEMM_STATUS_SUCCESS, "backend=" << name << " " << c.describe() << ": "
                                                                    << std::string(gemm_status_string(got.status))
                                                                    << " " << got.error << "\n"
                                                                    << rerun_hint(c));
        if (got.status != GEMM_STATUS_SUCCESS) continue;
        comparison cmp = compare_result(c, o, got.c, expected);
        CHECK_MESSAGE(cmp.ok, "backend=" << name << " vs cpu_ref " << c.describe() << ": " << cmp.first << "\n"
                                         << rerun_hint(c));
        if (c.amax) {
            const std::string wrong = amax_mismatch(c, o, got.amax, ref.amax);
            CHECK_MESSAGE(wrong.empty(), "backend=" << name << " " << c.describe() << ": " << wrong << "\n"
                                                    << rerun_hint(c));
        }
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

// Every kernel variant of cpu_omp in this build for type ab (its ids name it), pinned: the
// instruction sets below this CPU's best, which calls never choose here, are tested too
// (those it lacks decline: skips).
std::vector<std::string> cpu_omp_variants(gemm_dtype_t ab) {
    std::vector<std::string> pinned;
    const char *const *ids = nullptr;
    int64_t count = 0;
    const std::vector<std::string> available = available_backends();
    if (std::find(available.begin(), available.end(), "cpu_omp") == available.end()) return pinned;
    REQUIRE(gemm_backend_variants("cpu_omp", nullptr, &ids, &count) == GEMM_STATUS_SUCCESS);
    const std::string type = std::string("_") + gemm_dtype_name(ab) + "_";
    for (int64_t i = 0; i < count; ++i)
        if (std::string(ids[i]).find(type) != std::string::npos) pinned.push_back(std::string("cpu_omp:") + ids[i]);
    return pinned;
}

void report(const suite_counts &counts) {
    MESSAGE(counts.cases << " cases, " << counts.backend_runs << " backend runs compared with cpu_ref; "
                         << counts.skips.summary());
}

}  // namespace

TEST_CASE("correctness backends listed: cpu_ref is registered and available") {
    std::string listing;
    bool ref_ok = false;
    for (const backend_entry &b : all_backends()) {
        listing += "\n  " + b.name + (b.available ? ": available" : ": unavailable (" + b.reason + ")");
        ref_ok = ref_ok || (b.name == "cpu_ref" && b.available);
    }
    MESSAGE("backends under test:" << listing);
    CHECK(ref_ok);
}

TEST_CASE("correctness grid=layout_ops_alpha_beta") {
    // Every layout x op(A) x op(B) x alpha x beta on a few small shapes of distinct m, n, k.
    struct shape {
        int64_t m, n, k, pad;
    };
    constexpr shape shapes[] = {{17, 33, 31, 3}, {2, 7, 3, 0}, {1, 1, 65, 1}, {64, 16, 17, 0}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            for (const shape &s : shapes)
                for (gemm_layout_t layout : layouts)
                    for (gemm_op_t ta : ops)
                        for (gemm_op_t tb : ops)
                            for (double alpha : alphas)
                                for (double beta : betas)
                                    check_case(make_case(d, layout, ta, tb, s.m, s.n, s.k, s.pad, alpha, beta), counts);
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=m_n") {
    // Every pair of awkward m and n, k cycling through small values.
    constexpr int64_t ks[] = {1, 3, 17, 33};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 0;
            for (int64_t m : awkward_sizes)
                for (int64_t n : awkward_sizes) {
                    check_case(rotated_case(d, m, n, ks[i % 4], i), counts);
                    ++i;
                }
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=k") {
    // Every awkward k (and two longer ones, for accumulation error) on a few m x n.
    struct mn {
        int64_t m, n;
    };
    constexpr mn mns[] = {{1, 1}, {3, 17}, {33, 7}, {31, 65}};
    std::vector<int64_t> ks(std::begin(awkward_sizes), std::end(awkward_sizes));
    ks.push_back(200);
    ks.push_back(257);
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 0;
            for (int64_t k : ks)
                for (const mn &s : mns) check_case(rotated_case(d, s.m, s.n, k, i++), counts);
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=cube") {
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 0;
            for (int64_t s : awkward_sizes) check_case(rotated_case(d, s, s, s, i++), counts);
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=mixed") {
    // Non-square shapes mixing primes, tile +- 1 and degenerate dimensions.
    struct shape {
        int64_t m, n, k;
    };
    constexpr shape shapes[] = {{131, 2, 97}, {1, 127, 65}, {97, 33, 1},  {7, 131, 17},  {127, 64, 3},
                                {2, 3, 131},  {65, 97, 7},  {33, 1, 127}, {16, 131, 64}, {131, 17, 2},
                                {0, 17, 33},  {17, 0, 33},  {17, 33, 0},  {1, 1, 1}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 0;
            for (const shape &s : shapes)
                for (int rep = 0; rep < 4; ++rep) {  // each shape under four layout/op/scalar choices
                    check_case(rotated_case(d, s.m, s.n, s.k, i), counts);
                    i += 29;  // coprime with 108: the four picks differ in every digit
                }
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=blocking") {
    // Longer k and larger m, n: cache-blocked backends split k (and m, n) into panels of a
    // few hundred, so the accumulation across panels and the partial last panel get checked.
    struct shape {
        int64_t m, n, k;
    };
    constexpr shape shapes[] = {{67, 45, 255},  {45, 67, 256},   {33, 31, 257}, {17, 130, 385},
                                {130, 17, 513}, {161, 150, 300}, {260, 7, 129}, {5, 260, 64}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 3;
            for (const shape &s : shapes) {
                check_case(rotated_case(d, s.m, s.n, s.k, i), counts);
                i += 41;
            }
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=direct") {
    // The shapes cpu_omp multiplies without packing (backends/cpu_omp/blocked_gemm.hpp).
    // Operands both along k (row-major NT, column-major TN, or one row of A or column of B
    // with leading dimension 1; or column-major NN with at most 32 rows of A, copied along k)
    // with a side of C at most 64 (f32) or 32 (f64) lines and k from 256: dot products, k in
    // blocks of 8192 (f32) or 4096 (f64) values, or as many as the copy's scratch holds. A
    // along m and B along k
    // (row-major NN with at most 12 rows of A, column-major NN with at most 12 columns of C;
    // one small enough for one thread only at 1 to 4 such rows or columns and op(A) of 16 KB
    // or more, else the small kernel takes it): sums in chunks of 4 KB of a column, 4 columns of C and
    // 4 steps of k at a time. The
    // sides straddle the limits and the kernels' tiles; k crosses the blocks, with tails past
    // the last whole vector and step; rows cross the chunks; C is NaN where beta = 0. Every
    // kernel variant runs them.
    struct shape {
        gemm_layout_t layout;
        gemm_op_t ta, tb;
        int64_t m, n, k, pad, batch;
    };
    constexpr gemm_layout_t row = GEMM_ROW_MAJOR, col = GEMM_COL_MAJOR;
    constexpr gemm_op_t N = GEMM_OP_N, T = GEMM_OP_T;
    constexpr shape shapes[] = {
        {row, N, T, 5, 130, 8193, 0, 1}, {col, T, N, 130, 1, 8201, 1, 1}, {row, N, T, 33, 67, 4100, 2, 2},
        {col, T, N, 31, 50, 4099, 0, 1}, {row, N, T, 64, 67, 300, 1, 1},  {col, T, N, 65, 67, 77, 2, 1},
        {row, N, T, 97, 32, 17, 0, 3},   {col, T, N, 2, 3, 8192, 1, 1},   {col, N, N, 1, 130, 4100, 0, 1},
        {col, N, T, 1, 1, 8200, 0, 1},   {row, N, N, 70, 1, 4099, 0, 1},  {col, N, N, 1, 9, 33, 1, 1},
        {row, N, N, 1, 1100, 37, 0, 1},  {row, N, N, 3, 2053, 66, 1, 2},  {row, N, N, 4, 130, 5, 2, 1},
        {row, N, N, 7, 130, 9, 0, 1},    {col, N, N, 1030, 2, 9, 1, 1},   {col, N, T, 517, 1, 50, 0, 1},
        {col, N, N, 33, 4, 1, 0, 3},     {col, N, N, 200, 12, 12, 0, 1},  {row, N, N, 13, 70, 8, 1, 1},
        {col, N, N, 1100, 9, 6, 2, 2},   {col, N, N, 17, 130, 300, 1, 1}, {col, N, N, 32, 50, 8200, 0, 1},
        {col, N, N, 33, 70, 260, 0, 1},  {row, N, T, 5, 130, 255, 0, 1},  {row, N, N, 7, 1030, 150, 1, 1},
        {row, N, N, 12, 600, 150, 0, 1}, {row, N, N, 4, 64, 64, 0, 1},    {row, N, N, 4, 63, 64, 1, 1}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            const std::vector<std::string> pinned = cpu_omp_variants(d.ab);
            suite_counts counts;
            uint64_t i = 0;
            for (const shape &s : shapes) {
                gemm_case c = make_case(d, s.layout, s.ta, s.tb, s.m, s.n, s.k, s.pad, i % 2 ? -1.5 : 1.0, betas[i % 3]);
                if (s.batch > 1) set_batch(c, s.batch, false, false, 2);
                check_case(c, counts, pinned);
                ++i;
            }
            report(counts);
        }
    }
}

TEST_CASE("correctness sweep=small") {
    // Products of less than 2 x 10^6 flops (10^6 in f64: thread_work), which cpu_omp
    // multiplies on one thread by its small kernel (backends/cpu_omp/blocked_gemm.hpp) unless C is narrow enough for
    // the dot products or sums of columns, on every kernel variant: tiles of 32 (AVX-512 f32), 16 or 8 rows and 12 or 6
    // columns. Rows cross the tiles' vectors, with A read in place (along m: op n), copied for a partial tile, or
    // gathered (along k); columns end at every count of a partial tile; B is read in place either way. k crosses the
    // panel's blocks (3072 f32, 1152 f64 values on AVX-512); batches run in a loop on one thread or split over threads,
    // each matrix alone. C is NaN where beta = 0. The rows past the whole tiles, up to 3/8 of a vector of them (1 to 6
    // here, tiled past that), or 3/16 after a whole vector (17 to 19 rows here), go a row at a time: along B's rows, or
    // as dot products with A's rows read in place or copied.
    constexpr int64_t ms[] = {1, 7, 8, 9, 16, 17, 19, 20, 31, 32, 33, 34, 36, 40, 48, 65};
    constexpr int64_t ns[] = {1, 5, 6, 7, 11, 12, 13, 25};
    constexpr int64_t ks[] = {1, 3, 19, 64};
    constexpr gemm_op_t N = GEMM_OP_N, T = GEMM_OP_T;
    constexpr gemm_op_t op_pairs[][2] = {{N, N}, {N, T}, {T, N}, {T, T}};
    struct shape {
        gemm_layout_t layout;
        gemm_op_t ta, tb;
        int64_t m, n, k, batch;
    };
    constexpr gemm_layout_t col = GEMM_COL_MAJOR, row = GEMM_ROW_MAJOR;
    constexpr shape long_k[] = {{col, N, T, 8, 9, 5000, 1}, {col, T, T, 5, 7, 4000, 1}, {row, T, N, 3, 40, 2500, 1},
                                {col, N, N, 20, 21, 22, 3}, {row, T, N, 33, 13, 30, 2}, {col, T, T, 40, 40, 40, 16}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            const std::vector<std::string> pinned = cpu_omp_variants(d.ab);
            suite_counts counts;
            uint64_t i = 0;
            // Each m x n under every layout and op pair, with one k; k, the padding, alpha and
            // beta cycle at other rates.
            for (int64_t m : ms)
                for (int64_t n : ns)
                    for (gemm_layout_t layout : layouts)
                        for (const auto &ops : op_pairs) {
                            check_case(make_case(d, layout, ops[0], ops[1], m, n, ks[(i / 8) % 4],
                                                 2 * int64_t((i / 3) % 3), i % 5 ? 1.0 : -1.5, betas[i % 3]),
                                       counts, pinned);
                            ++i;
                        }
            for (const shape &s : long_k) {
                gemm_case c = make_case(d, s.layout, s.ta, s.tb, s.m, s.n, s.k, int64_t(i % 2), 1.0, betas[i % 3]);
                if (s.batch > 1) set_batch(c, s.batch, false, false, 2);
                check_case(c, counts, pinned);
                ++i;
            }
            report(counts);
        }
    }
}

TEST_CASE("correctness small_in_place: a partial tile of A read in place reads nothing past A") {
    // The small kernel reads a partial row tile of an A stored along m in place from 64 steps
    // of k, its last vector through a mask (backends/cpu_omp/microkernel_small.hpp): here the
    // canonical A (B of a row-major NN product, 9 rows of x: neither the sums of columns nor the
    // dot products take it) ends right before an unreadable page, so an unmasked read faults.
    const long page = sysconf(_SC_PAGESIZE);
    int64_t checked = 0;
    for (gemm_dtype_t t : {GEMM_F32, GEMM_F64}) {
        const std::size_t size = t == GEMM_F32 ? 4 : 8;
        for (const std::string &variant : cpu_omp_variants(t))
            for (int64_t n : {9, 20, 24, 40, 44})
                for (int64_t k : {64, 100}) {
                    const int64_t m = 9;
                    const std::size_t b_bytes = std::size_t(k * n) * size;
                    const std::size_t pages = (b_bytes + std::size_t(page) - 1) / std::size_t(page) + 1;
                    const std::size_t mapped = pages * std::size_t(page);
                    char *base = static_cast<char *>(
                        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
                    REQUIRE(base != MAP_FAILED);
                    char *guard = base + mapped - std::size_t(page);
                    REQUIRE(mprotect(guard, std::size_t(page), PROT_NONE) == 0);
                    char *b = guard - b_bytes;
                    std::vector<double> ad(std::size_t(m * k)), bd(std::size_t(k * n)), want(std::size_t(m * n));
                    for (std::size_t i = 0; i < ad.size(); ++i) ad[i] = double(int(i % 7) - 3);
                    for (std::size_t i = 0; i < bd.size(); ++i) bd[i] = double(int(i % 5) - 2);
                    for (int64_t i = 0; i < m; ++i)
                        for (int64_t j = 0; j < n; ++j)
                            for (int64_t l = 0; l < k; ++l)
                                want[std::size_t(i * n + j)] += ad[std::size_t(i * k + l)] * bd[std::size_t(l * n + j)];
                    std::vector<double> cd(std::size_t(m * n));
                    REQUIRE(gemm_set_backend(variant.c_str()) == GEMM_STATUS_SUCCESS);
                    gemm_status_t s;
                    if (t == GEMM_F32) {
                        std::vector<float> a(ad.begin(), ad.end()), c(std::size_t(m * n));
                        float *bf = reinterpret_cast<float *>(b);
                        std::copy(bd.begin(), bd.end(), bf);
                        s = gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0f, a.data(), k, bf, n, 0.0f,
                                       c.data(), n);
                        std::copy(c.begin(), c.end(), cd.begin());
                    } else {
                        double *bf = reinterpret_cast<double *>(b);
                        std::copy(bd.begin(), bd.end(), bf);
                        s = gemm_dgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, 1.0, ad.data(), k, bf, n, 0.0,
                                       cd.data(), n);
                    }
                    munmap(base, mapped);
                    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
                    if (s == GEMM_STATUS_NOT_SUPPORTED) continue;  // an ISA this CPU lacks
                    INFO(variant << " n = " << n << " k = " << k);
                    REQUIRE(s == GEMM_STATUS_SUCCESS);
                    CHECK(cd == want);  // small integers: exact in every order
                    ++checked;
                }
    }
    CHECK(checked > 0);
    MESSAGE(checked << " products read up to a guard page");
}

TEST_CASE("correctness cpu_omp=half: f16 and bf16 served by cpu_omp and each of its variants") {
    // cpu_omp widens f16 and bf16 to f32 while packing and rounds a 16-bit C once from f32
    // sums kept for strips of at most 2^20 values of C (backends/cpu_omp/blocked_gemm.hpp):
    // forced, it must serve every case (never NOT_SUPPORTED) and match cpu_ref. Odd sizes,
    // transposes, padded leading dimensions; beta = 0 over C full of NaN and beta != 0; k across
    // blocks of k (kc = 256 or 384); C of more than one strip by columns and by rows; batches;
    // products small enough to be widened whole (run_widened_direct); products read in place
    // by the widening dot products and sums of columns (run_widening_direct).
    struct shape {
        gemm_layout_t layout;
        gemm_op_t ta, tb;
        int64_t m, n, k, pad, batch;
        double beta;
    };
    constexpr gemm_layout_t row = GEMM_ROW_MAJOR, col = GEMM_COL_MAJOR;
    constexpr gemm_op_t N = GEMM_OP_N, T = GEMM_OP_T;
    constexpr shape shapes[] = {{col, N, N, 1, 1, 1, 0, 1, 0.0},
                                {row, N, T, 33, 17, 65, 3, 1, 0.5},
                                {col, T, N, 97, 31, 130, 1, 1, 0.0},
                                {row, T, T, 67, 45, 385, 2, 1, 1.0},
                                {col, N, T, 130, 17, 513, 5, 1, 0.0},
                                {row, N, N, 16, 300, 800, 0, 1, -2.0},
                                {col, N, N, 1100, 1000, 3, 1, 1, 0.0},
                                {row, T, N, 1100, 1000, 2, 0, 1, 0.5},
                                {col, N, T, 90000, 13, 2, 2, 1, 1.0},
                                {col, T, N, 90000, 13, 3, 0, 1, 0.0},
                                {row, N, T, 7, 5, 3, 1, 3, 0.0},
                                {col, T, T, 17, 16, 33, 2, 4, 0.5},
                                // One-thread products the f32 kernels reading in place take, on
                                // A and B widened whole: dot products (k odd, past a vector),
                                // sums of columns, the small kernel with A gathered along k.
                                {row, N, T, 4, 64, 301, 3, 1, 0.5},
                                {row, N, N, 2, 24, 259, 1, 1, 0.0},
                                {col, T, N, 45, 37, 29, 4, 2, 1.0},
                                // Products on any thread count that f32 runs in place, by the
                                // kernels widening 16-bit operands in registers
                                // (run_widening_direct): dot products (odd k, past the vectors;
                                // A copied along k for column-major NN), sums of columns, m = 1
                                // and n = 1, a batch; parts of the wide side (at most 4 a
                                // thread) past one slice of a 16-bit C's sums (32768 values:
                                // 480 lines by 64, 2688 by 12), so that a part is rounded in
                                // several.
                                {row, N, T, 64, 3900, 257, 3, 1, 0.5},
                                {col, T, N, 700, 50, 257, 1, 1, 0.0},
                                {col, N, N, 16, 2100, 300, 2, 1, 1.0},
                                {col, N, N, 31, 90, 333, 0, 2, 0.0},
                                {row, N, N, 12, 30000, 8, 1, 1, -2.0},
                                {row, N, N, 1, 40000, 9, 0, 1, 0.0},
                                {col, N, N, 5000, 1, 300, 2, 1, 0.5},
                                {row, T, N, 1, 1024, 1024, 1, 1, 0.0},
                                {row, N, T, 3, 130, 2049, 0, 3, 0.5}};
    for (const dtype_config &d : dtype_configs) {
        if ((d.ab != GEMM_F16 && d.ab != GEMM_BF16) || d.api != entry::ex) continue;
        SUBCASE(d.name) {
            const std::vector<std::string> pinned = cpu_omp_variants(d.ab);
            CHECK(pinned.size() >= 1);  // at least the generic kernel, under its own id
            suite_counts counts;
            uint64_t i = 0;
            for (const shape &s : shapes) {
                gemm_case c = make_case(d, s.layout, s.ta, s.tb, s.m, s.n, s.k, s.pad, i % 2 ? -1.5 : 1.0, s.beta);
                if (s.batch > 1) set_batch(c, s.batch, false, false, 2);
                check_case(c, counts, pinned);
                ++i;
            }
            report(counts);
            CHECK(counts.cases == int64_t(std::size(shapes)));
            CHECK(counts.skips.of("cpu_omp") == 0);
            for (const std::string &id : pinned)
                if (id.find("generic_") != std::string::npos) CHECK(counts.skips.of(id) == 0);
        }
    }
}

TEST_CASE("correctness strided_batch") {
    // Packed and gapped strides, stride 0 for A or B (one matrix shared by the batch), and
    // batch 1 through the strided entry point.
    struct stride_mode {
        bool share_a, share_b;
        int64_t gap;
    };
    constexpr stride_mode modes[] = {
        {false, false, 0}, {false, false, 5}, {true, false, 0}, {false, true, 3}, {true, true, 1}};
    struct shape {
        int64_t m, n, k, batch;
    };
    constexpr shape shapes[] = {{7, 5, 3, 3}, {17, 16, 33, 4}, {1, 31, 2, 2}, {5, 6, 7, 1}};
    for (const dtype_config &d : dtype_configs) {
        SUBCASE(d.name) {
            suite_counts counts;
            uint64_t i = 0;
            for (const shape &s : shapes)
                for (const stride_mode &mode : modes)
                    for (int rep = 0; rep < 2; ++rep) {
                        gemm_case c = make_case(d, layouts[i % 2], ops[(i / 2) % 3], ops[(i / 6) % 3], s.m, s.n, s.k,
                                                int64_t(i % 3), (i / 3) % 2 ? -1.5 : 1.0, betas[(i / 18) % 3]);
                        set_batch(c, s.batch, mode.share_a, mode.share_b, mode.gap);
                        check_case(c, counts);
                        i += 7;
                    }
            report(counts);
        }
    }
}

TEST_CASE("correctness complex_scalars") {
    // Scalars whose real part is 0 are not 0: alpha = i must compute the product and beta = i
    // must read C. And one product small enough to work out by hand, on every backend that
    // serves complex: conj(1 + 2i) * (3 - i) = 1 - 7i, times alpha = i gives 7 + i.
    for (gemm_dtype_t t : {GEMM_C32, GEMM_C64}) {
        SUBCASE(gemm_dtype_name(t)) {
            suite_counts counts;
            dtype_config d{"", t, t, entry::ex};
            for (gemm_op_t ta : ops) {
                gemm_case c = make_case(d, GEMM_COL_MAJOR, ta, GEMM_OP_C, 9, 7, 5, 1, 0.0, 0.0);
                c.alpha_imag = 1.0;
                check_case(c, counts);
                c.beta_imag = 1.0;
                check_case(c, counts);
            }
            report(counts);

            const double a[2] = {1, 2}, b[2] = {3, -1}, alpha[2] = {0, 1}, beta[2] = {0, 0};
            const float af[2] = {1, 2}, bf[2] = {3, -1}, alphaf[2] = {0, 1}, betaf[2] = {0, 0};
            bool z = t == GEMM_C64;
            for (const std::string &name : available_backends()) {
                REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
                double cd[2] = {std::nan(""), std::nan("")};
                float cf[2] = {std::nanf(""), std::nanf("")};
                gemm_status_t s =
                    z ? gemm_zgemm(GEMM_ROW_MAJOR, GEMM_OP_C, GEMM_OP_N, 1, 1, 1, alpha, a, 1, b, 1, beta, cd, 1)
                      : gemm_cgemm(GEMM_ROW_MAJOR, GEMM_OP_C, GEMM_OP_N, 1, 1, 1, alphaf, af, 1, bf, 1, betaf, cf, 1);
                if (s == GEMM_STATUS_NOT_SUPPORTED) continue;
                INFO("backend=" << name << " " << gemm_dtype_name(t));
                REQUIRE(s == GEMM_STATUS_SUCCESS);
                CHECK((z ? cd[0] : double(cf[0])) == 7.0);
                CHECK((z ? cd[1] : double(cf[1])) == 1.0);
            }
            REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        }
    }
}

namespace {

// Value of one stored element, independent of the harness's indexing.
long double element_ld(const void *base, int64_t index, gemm_dtype_t t) { return (long double)load(base, index, t); }

// C = alpha op(A) op(B) + beta C0 in long double, written out per layout and op without the
// harness's index helpers, so a shared indexing mistake cannot hide.
std::vector<long double> long_double_gemm(const gemm_case &c, const operands &o) {
    std::vector<long double> out(std::size_t(c.m * c.n));
    bool row = c.layout == GEMM_ROW_MAJOR;
    for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
            long double sum = 0.0L;
            for (int64_t l = 0; l < c.k; ++l) {
                // op(A)(i, l): A(i, l) when N, A(l, i) when T or C.
                int64_t ar = c.transa == GEMM_OP_N ? i : l, ac = c.transa == GEMM_OP_N ? l : i;
                int64_t br = c.transb == GEMM_OP_N ? l : j, bc = c.transb == GEMM_OP_N ? j : l;
                int64_t ai = row ? ar * c.lda + ac : ar + ac * c.lda;
                int64_t bi = row ? br * c.ldb + bc : br + bc * c.ldb;
                sum += element_ld(o.a.data(), ai, c.ab_type) * element_ld(o.b.data(), bi, c.ab_type);
            }
            int64_t ci = row ? i * c.ldc + j : i + j * c.ldc;
            long double v = (long double)c.alpha * sum;
            if (c.beta != 0.0) v += (long double)c.beta * element_ld(o.c0.data(), ci, c.c_type);
            out[std::size_t(i + j * c.m)] = v;
        }
    return out;
}

}  // namespace

TEST_CASE("correctness cpu_ref=long_double") {
    // cpu_ref accumulates in double and rounds C once, so it must be within about one rounding
    // of C's type of the long double result: u_out |C| plus double accumulation error.
    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    int64_t checked = 0;
    for (const dtype_config &d : dtype_configs) {
        if (is_complex(d.ab)) continue;  // the harness's complex reference is written apart from cpu_ref's
        struct shape {
            int64_t m, n, k;
            gemm_layout_t layout;
            gemm_op_t ta, tb;
            double alpha, beta;
        };
        const shape shapes[] = {{5, 7, 3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 1.0, 0.0},
                                {17, 4, 33, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, -1.5, 0.5},
                                {3, 31, 65, GEMM_ROW_MAJOR, GEMM_OP_C, GEMM_OP_C, 1.0, 1.0},
                                {16, 17, 1, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, -1.5, 1.0}};
        for (const shape &s : shapes) {
            gemm_case c = make_case(d, s.layout, s.ta, s.tb, s.m, s.n, s.k, 2, s.alpha, s.beta);
            if (!case_selected(c.describe())) continue;
            operands o = make_operands(c);
            run_result got = run_host(c, o);
            REQUIRE_MESSAGE(got.status == GEMM_STATUS_SUCCESS, c.describe() << ": " << got.error);
            std::vector<long double> exact = long_double_gemm(c, o);
            reference ref = compute_reference(c, o);  // magnitudes only
            double u_out = unit_roundoff(c.c_type);
            // 16-bit results round twice (double -> float -> half): allow u_out + u_f32.
            double once = u_out + (c.c_type == GEMM_F32 || c.c_type == GEMM_F64 ? 0.0 : 0x1p-24);
            int64_t wrong = 0;
            std::string first;
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t i = 0; i < c.m; ++i) {
                    bool row = c.layout == GEMM_ROW_MAJOR;
                    double g = load(got.c.data(), row ? i * c.ldc + j : i + j * c.ldc, c.c_type);
                    long double x = exact[std::size_t(i + j * c.m)];
                    double mag = ref.magnitude[std::size_t(window_index(c, 0, i, j))];
                    double bound =
                        once * double(fabsl(x)) + double(c.k + 3) * 0x1p-52 * mag + smallest_subnormal(c.c_type);
                    if (fabsl((long double)g - x) <= (long double)bound) continue;
                    if (wrong++ == 0)
                        first = "C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(g) +
                                ", long double " + std::to_string(double(x));
                }
            CHECK_MESSAGE(wrong == 0, "backend=cpu_ref vs long double " << c.describe() << ": " << wrong
                                                                        << " wrong, first " << first);
            ++checked;
        }
    }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    MESSAGE(checked << " cases of cpu_ref checked against long double");
}

// FP8 on every backend that serves it: both types into each C type, through gemm_ex (scales
// of 1), gemm_ex_scaled and plans, per-tensor and block scales (in both layouts: a row-major
// call swaps A's and B's scales), output scale and amax, every op pair, ragged shapes
// (k across blocks of 128, n across 128-column blocks), padded leading dimensions and
// scale arrays, beta = 0 with NaN in C. Values span the whole range (448 / 57344 and the
// subnormals) except into f16 C.
TEST_CASE("correctness fp8: e4m3 and e5m2 with every scaling, on every backend that serves them") {
    struct shape {
        int64_t m, n, k, pad;
    };
    constexpr shape shapes[] = {{17, 33, 31, 3}, {1, 1, 1, 0}, {5, 131, 257, 1}, {129, 3, 130, 0}, {2, 7, 0, 2}};
    constexpr gemm_op_t real_ops[] = {GEMM_OP_N, GEMM_OP_T};
    struct scaling_config {
        gemm_scale_mode_t mode;
        bool d_scale, amax;
        entry api;
        int64_t ld_extra;
    };
    constexpr scaling_config scalings[] = {
        {GEMM_SCALE_NONE, false, false, entry::ex, 0},     {GEMM_SCALE_TENSOR, true, true, entry::ex, 0},
        {GEMM_SCALE_BLOCK, false, true, entry::ex, 3},     {GEMM_SCALE_BLOCK, true, false, entry::plan, 0},
        {GEMM_SCALE_TENSOR, false, false, entry::plan, 0}, {GEMM_SCALE_NONE, true, true, entry::plan, 0}};
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
        for (gemm_dtype_t ct : {GEMM_BF16, GEMM_F32, GEMM_F16}) {
            const std::string name = std::string(gemm_dtype_name(ab)) + "->" + gemm_dtype_name(ct);
            SUBCASE(name.c_str()) {
                suite_counts counts;
                uint64_t i = 0;
                for (const shape &s : shapes)
                    for (const scaling_config &x : scalings)
                        for (gemm_layout_t layout : layouts)
                            for (gemm_op_t ta : real_ops)
                                for (gemm_op_t tb : real_ops) {
                                    const double beta = betas[i++ % 3];
                                    gemm_case c = gemm_test::make_case(ab, ct, x.api, layout, ta, tb, s.m, s.n, s.k,
                                                                       s.pad, i % 4 == 3 ? -0.75 : 1.0, beta);
                                    c.scaling_mode = x.mode;
                                    c.d_scale = x.d_scale;
                                    c.amax = x.amax;
                                    if (x.ld_extra) {
                                        c.ld_a_scale = std::max<int64_t>(1, s.m) + x.ld_extra;
                                        c.ld_b_scale = std::max<int64_t>(1, (s.k + 127) / 128) + x.ld_extra;
                                    }
                                    check_case(c, counts);
                                }
                report(counts);
                // cpu_omp serves FP8 on every host (unless GEMM_TEST_FILTER left no case).
                if (counts.cases > 0) CHECK(counts.backend_runs > 0);
            }
        }
}
