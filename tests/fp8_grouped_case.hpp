// fp8_grouped_case.hpp: a grouped FP8 call (gemm_ex_grouped_scaled) of a mixture of experts'
// shape: ragged groups with scales, d_scale and amax_d of their own, random operands, C
// poisoned where beta = 0, and the check of its result against a float64 loop over the
// dequantized inputs. Doctest-free, for the host suite and the GPU one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace gemm_test {

// What an amax_d no call wrote holds.
inline constexpr float amax_sentinel = 12345.0f;

// A scale between 1/4 and 3/2, not a power of two (a dropped scale shows in every bit), small
// enough that no sum here passes f16's range.
inline float scale_value(random_source &rng) {
    return std::ldexp(float(1.0 + 0.5 * std::fabs(rng.uniform())), int(rng.next() % 3) - 2);
}

// One group's shape, scalars and scaling as the test chooses them.
struct group_spec {
    gemm_op_t ta = GEMM_OP_N, tb = GEMM_OP_N;
    int64_t m = 0, n = 0, k = 0, size = 1;
    gemm_scale_mode_t mode = GEMM_SCALE_NONE;
    float alpha = 1, beta = 0;
    bool d_scale = false, amax = false;
    // Rows of C (and of op(A)) as stored, when more than m: a masked batch's matrix computes m
    // of them (masked_call).
    int64_t stored_m = 0;
};

// A grouped call's operands: every matrix's A, B and C (C prefilled: NaN where beta = 0, so
// that a read shows, else random), each group's scales (block arrays padded with NaN past
// their least leading dimension), d_scale and amax_d; and the arrays gemm_ex_grouped takes.
struct grouped_call {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_dtype_t ab = GEMM_F8_E4M3, ct = GEMM_F32;
    std::vector<group_spec> groups;
    // Leading dimensions a multiple of this many elements (1: any), as the GPU's FP8 kernels
    // need 16 bytes.
    int64_t ld_multiple = 1;

    std::vector<bytes> a, b, c, c0;
    std::vector<std::vector<float>> a_scales, b_scales;
    std::vector<float> d_scales, amaxes;
    std::vector<gemm_scaling_t> scalings;
    std::vector<gemm_op_t> ta, tb;
    std::vector<int64_t> m, n, k, lda, ldb, ldc, sizes;
    std::vector<float> alpha, beta;
    std::vector<const void *> pa, pb;
    std::vector<void *> pc;

    // Stored rows and columns of A (B) of group g in the layout, and its element (r, c).
    int64_t a_rows(const group_spec &s) const { return s.ta == GEMM_OP_N ? s.m : s.k; }
    int64_t a_cols(const group_spec &s) const { return s.ta == GEMM_OP_N ? s.k : s.m; }
    int64_t b_rows(const group_spec &s) const { return s.tb == GEMM_OP_N ? s.k : s.n; }
    int64_t b_cols(const group_spec &s) const { return s.tb == GEMM_OP_N ? s.n : s.k; }
    int64_t least_ld(int64_t rows, int64_t cols) const {
        return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? rows : cols);
    }
    // ld plus `extra` elements, rounded up to ld_multiple.
    int64_t padded_ld(int64_t ld, int64_t extra) const {
        return (ld + extra + ld_multiple - 1) / ld_multiple * ld_multiple;
    }
    int64_t index(int64_t r, int64_t col, int64_t ld) const {
        return layout == GEMM_COL_MAJOR ? r + col * ld : r * ld + col;
    }
    int64_t elements(int64_t rows, int64_t cols, int64_t ld) const {
        return rows == 0 || cols == 0 ? 0 : index(rows - 1, cols - 1, ld) + 1;
    }

    void build(uint64_t seed) {
        random_source rng(seed);
        int64_t item = 0;
        scalings.assign(groups.size(), gemm_scaling_t{});
        a_scales.assign(groups.size(), {});
        b_scales.assign(groups.size(), {});
        d_scales.assign(groups.size(), 1.0f);
        amaxes.assign(groups.size(), amax_sentinel);
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const group_spec &s = groups[g];
            group_spec stored = s;  // the extents its operands are stored with
            stored.m = std::max(s.m, s.stored_m);
            ta.push_back(s.ta);
            tb.push_back(s.tb);
            m.push_back(s.m);
            n.push_back(s.n);
            k.push_back(s.k);
            sizes.push_back(s.size);
            alpha.push_back(s.alpha);
            beta.push_back(s.beta);
            // Leading dimensions larger than needed: a backend that assumes tight ones shows.
            lda.push_back(padded_ld(least_ld(a_rows(stored), a_cols(stored)), 3));
            ldb.push_back(padded_ld(least_ld(b_rows(s), b_cols(s)), 2));
            ldc.push_back(padded_ld(least_ld(stored.m, s.n), 1));
            for (int64_t i = 0; i < s.size; ++i, ++item) {
                bytes x(std::size_t(elements(a_rows(stored), a_cols(stored), lda[g])) + 1);
                for (auto &v : x) v = fp8_from_double(rng.uniform(), ab);
                bytes y(std::size_t(elements(b_rows(s), b_cols(s), ldb[g])) + 1);
                for (auto &v : y) v = fp8_from_double(rng.uniform(), ab);
                bytes z(std::size_t(elements(stored.m, s.n, ldc[g]) + 1) * dtype_size(ct));
                for (int64_t e = 0; e * int64_t(dtype_size(ct)) < int64_t(z.size()); ++e)
                    if (s.beta == 0) store_poison(z.data(), e, ct);
                    else store(z.data(), e, ct, rng.uniform());
                a.push_back(std::move(x));
                b.push_back(std::move(y));
                c0.push_back(z);
                c.push_back(std::move(z));
            }
            gemm_scaling_t &x = scalings[g];
            gemm_scaling_init(&x);
            x.mode = s.mode;
            const int64_t kb = std::max<int64_t>(1, detail::scale_blocks(s.k));
            if (s.mode == GEMM_SCALE_TENSOR) {
                a_scales[g] = {scale_value(rng)};
                b_scales[g] = {scale_value(rng)};
            } else if (s.mode == GEMM_SCALE_BLOCK) {
                x.ld_a_scale = std::max<int64_t>(1, stored.m) + 1;
                x.ld_b_scale = kb + 1;
                const int64_t nb = detail::scale_blocks(s.n);
                a_scales[g].assign(std::size_t(x.ld_a_scale * kb), NAN);
                b_scales[g].assign(std::size_t(x.ld_b_scale * std::max<int64_t>(1, nb)), NAN);
                for (int64_t l = 0; l < kb; ++l) {
                    for (int64_t i = 0; i < s.m; ++i) a_scales[g][std::size_t(i + l * x.ld_a_scale)] = scale_value(rng);
                    for (int64_t j = 0; j < nb; ++j) b_scales[g][std::size_t(l + j * x.ld_b_scale)] = scale_value(rng);
                }
            }
            if (s.d_scale) d_scales[g] = scale_value(rng);
        }
        for (std::size_t g = 0; g < groups.size(); ++g) point(g);
        for (std::size_t i = 0; i < a.size(); ++i) {
            pa.push_back(a[i].data());
            pb.push_back(b[i].data());
            pc.push_back(c[i].data());
        }
    }

    // scalings[g]'s pointers at this call's storage (after a copy, or to undo a test's edit).
    void point(std::size_t g) {
        gemm_scaling_t &x = scalings[g];
        x.a_scale = a_scales[g].empty() ? nullptr : a_scales[g].data();
        x.b_scale = b_scales[g].empty() ? nullptr : b_scales[g].data();
        x.d_scale = groups[g].d_scale ? &d_scales[g] : nullptr;
        x.amax_d = groups[g].amax ? &amaxes[g] : nullptr;
    }

    gemm_status_t run(bool scaled, gemm_dtype_t ab_type, gemm_dtype_t c_type, gemm_dtype_t compute = GEMM_F32) {
        if (!scaled)
            return gemm_ex_grouped(layout, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(), pa.data(),
                                   ab_type, lda.data(), pb.data(), ab_type, ldb.data(), beta.data(), pc.data(), c_type,
                                   ldc.data(), int64_t(groups.size()), sizes.data(), compute);
        return gemm_ex_grouped_scaled(layout, ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(),
                                      pa.data(), ab_type, lda.data(), pb.data(), ab_type, ldb.data(), beta.data(),
                                      pc.data(), c_type, ldc.data(), int64_t(groups.size()), sizes.data(), compute,
                                      scalings.data());
    }
    gemm_status_t run() { return run(true, ab, ct); }

    // Every C and amax_d as the call found them.
    bool untouched() const {
        for (float v : amaxes)
            if (v != amax_sentinel) return false;
        for (std::size_t i = 0; i < c.size(); ++i)
            if (std::memcmp(c[i].data(), c0[i].data(), c[i].size()) != 0) return false;
        return true;
    }

    std::string describe() const {
        std::ostringstream o;
        o << (layout == GEMM_ROW_MAJOR ? "row" : "col") << " " << gemm_dtype_name(ab) << "->" << gemm_dtype_name(ct);
        for (const group_spec &s : groups)
            o << " [" << op_letter(s.ta) << op_letter(s.tb) << " " << s.m << "x" << s.n << "x" << s.k << " x" << s.size
              << " mode " << int(s.mode) << " beta " << s.beta << (s.d_scale ? " d" : "") << (s.amax ? " amax" : "")
              << "]";
        return o.str();
    }
};

// op(A)(i, l) of matrix `item` of group g, dequantized (with its scale).
inline double op_a(const grouped_call &t, std::size_t g, std::size_t item, int64_t i, int64_t l) {
    const group_spec &s = t.groups[g];
    const int64_t e = s.ta == GEMM_OP_N ? t.index(i, l, t.lda[g]) : t.index(l, i, t.lda[g]);
    double scale = 1.0;
    if (s.mode == GEMM_SCALE_TENSOR) scale = t.a_scales[g][0];
    if (s.mode == GEMM_SCALE_BLOCK) scale = t.a_scales[g][std::size_t(i + (l / 128) * t.scalings[g].ld_a_scale)];
    return scale * fp8_to_double(t.a[item][std::size_t(e)], t.ab);
}

inline double op_b(const grouped_call &t, std::size_t g, std::size_t item, int64_t l, int64_t j) {
    const group_spec &s = t.groups[g];
    const int64_t e = s.tb == GEMM_OP_N ? t.index(l, j, t.ldb[g]) : t.index(j, l, t.ldb[g]);
    double scale = 1.0;
    if (s.mode == GEMM_SCALE_TENSOR) scale = t.b_scales[g][0];
    if (s.mode == GEMM_SCALE_BLOCK) scale = t.b_scales[g][std::size_t(l / 128 + (j / 128) * t.scalings[g].ld_b_scale)];
    return scale * fp8_to_double(t.b[item][std::size_t(e)], t.ab);
}

// The largest relative rounding of one result into C's type.
inline double c_rounding(gemm_dtype_t t) { return t == GEMM_BF16 ? 0x1p-8 : t == GEMM_F16 ? 0x1p-11 : 0x1p-23; }

// Every C of t (computed) against the float64 loop, every element outside the m x n windows
// untouched, and each group's amax_d: max |D| over the group's matrices before d_scale, the
// sentinel where the group writes no C or asks for none. tensor_share: what the tensor cores
// may lose of each element's sum of |scaled products| beyond f32 arithmetic (0 for the CPU
// backends; tolerance.hpp's tensor_core_fp8_share for the GPU's). "" when right, else the
// first problem in words.
inline std::string grouped_mismatch(const grouped_call &t, double tensor_share = 0.0) {
    std::ostringstream o;
    o.precision(17);
    std::size_t item = 0;
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
        const group_spec &s = t.groups[g];
        const double d = s.d_scale ? double(t.d_scales[g]) : 1.0;
        double amax = 0.0, amax_bound = 0.0;
        for (int64_t x = 0; x < s.size; ++x, ++item) {
            const bytes &got = t.c[item], &before = t.c0[item];
            std::vector<bool> inside(got.size() / dtype_size(t.ct), false);
            for (int64_t j = 0; j < s.n; ++j)
                for (int64_t i = 0; i < s.m; ++i) {
                    double sum = 0.0, size = 0.0;
                    for (int64_t l = 0; l < s.k; ++l) {
                        const double p = op_a(t, g, item, i, l) * op_b(t, g, item, l, j);
                        sum += p;
                        size += std::fabs(p);
                    }
                    const int64_t e = t.index(i, j, t.ldc[g]);
                    inside[std::size_t(e)] = true;
                    const double c0 = s.beta == 0 ? 0.0 : load(before.data(), e, t.ct);
                    const double want = double(s.alpha) * sum + double(s.beta) * c0;
                    amax = std::max(amax, std::fabs(want));
                    const double v = load(got.data(), e, t.ct);
                    // f32 sums of scaled values (each scaled value one f32 rounding), what the
                    // tensor cores may lose, then d_scale and one rounding into C's type.
                    const double sums =
                        (std::fabs(s.alpha) * size + std::fabs(s.beta * c0)) * double(s.k + 4) * 0x1p-22 +
                        std::fabs(s.alpha) * size * tensor_share;
                    amax_bound = std::max(amax_bound, sums);
                    const double bound = d * sums + std::fabs(d * want) * c_rounding(t.ct) + 1e-30;
                    if (std::fabs(v - d * want) <= bound) continue;  // false for NaN
                    o << t.describe() << ": group " << g << " C[" << item << "](" << i << ", " << j << ") = " << v
                      << ", want " << d * want << " (tolerance " << bound << ")";
                    return o.str();
                }
            for (std::size_t e = 0; e < inside.size(); ++e)
                if (!inside[e] && std::memcmp(got.data() + e * dtype_size(t.ct), before.data() + e * dtype_size(t.ct),
                                              dtype_size(t.ct)) != 0) {
                    o << t.describe() << ": C[" << item << "] element " << e << " outside the window written";
                    return o.str();
                }
        }
        const bool written = s.amax && s.m > 0 && s.n > 0 && s.size > 0;
        if (!written) {
            if (t.amaxes[g] == amax_sentinel) continue;
            o << t.describe() << ": group " << g << " amax_d written";
            return o.str();
        }
        // amax is of the f32 sums: within their rounding of the f64 maximum.
        if (std::fabs(double(t.amaxes[g]) - amax) <= amax_bound + amax * 0x1p-23 + 1e-30) continue;
        o << t.describe() << ": group " << g << " amax_d = " << t.amaxes[g] << ", want " << amax;
        return o.str();
    }
    return "";
}

// A masked batch (gemm_ex_masked_scaled) and the grouped call of its matrices: group i is matrix
// i with its rows[i] rows, stored as the batch stores it (m rows, the batch's leading
// dimensions), so that grouped_mismatch checks those rows against the float64 loop and that
// the rows past them are untouched. The batch's operands are t's matrices packed at strides,
// with bytes between them that must stay as they were.
struct masked_call {
    grouped_call t;
    int64_t m = 0;                // rows of every C: the most a matrix computes
    std::vector<int32_t> rows;    // what each computes
    bool share_b = false;         // stride_b 0: every matrix multiplies B[0]
    int64_t stride_multiple = 1;  // strides a multiple of this many elements (the GPU's kernels: 16)
    int64_t stride_a = 0, stride_b = 0, stride_c = 0;
    bytes a, b, c, c0;

    // specs[i]: matrix i's ops, n, k, scaling mode, d_scale and amax_d (its m and size are set
    // here); alpha, beta, ops, n and k are the first's for all.
    void build(std::vector<group_spec> specs, uint64_t seed) {
        for (std::size_t i = 0; i < specs.size(); ++i) {
            specs[i].m = rows[i];
            specs[i].stored_m = m;
            specs[i].size = 1;
        }
        t.groups = specs;
        t.build(seed);
        const std::size_t count = rows.size(), cs = dtype_size(t.ct);
        if (share_b)
            for (std::size_t i = 1; i < count; ++i) t.b[i] = t.b[0];
        // Matrices apart by more than they span: the gaps must stay as they were.
        auto round_up = [&](int64_t x) { return (x + stride_multiple - 1) / stride_multiple * stride_multiple; };
        stride_a = round_up(int64_t(t.a[0].size()) + 5);
        stride_b = share_b ? 0 : round_up(int64_t(t.b[0].size()) + 3);
        stride_c = round_up(int64_t(t.c[0].size() / cs) + 2);
        a.assign(std::size_t(stride_a) * count, 0x7e);
        b.assign(share_b ? t.b[0].size() : std::size_t(stride_b) * count, 0x7e);
        c.assign(std::size_t(stride_c) * count * cs, 0x5a);
        for (std::size_t i = 0; i < count; ++i) {
            std::memcpy(a.data() + i * std::size_t(stride_a), t.a[i].data(), t.a[i].size());
            if (!share_b || i == 0) std::memcpy(b.data() + i * std::size_t(stride_b), t.b[i].data(), t.b[i].size());
            std::memcpy(c.data() + i * std::size_t(stride_c) * cs, t.c[i].data(), t.c[i].size());
        }
        c0 = c;
    }

    gemm_status_t run(const void *pa, const void *pb, void *pc, const int32_t *counts, const gemm_scaling_t *scalings) {
        const group_spec &s = t.groups[0];
        return gemm_ex_masked_scaled(t.layout, s.ta, s.tb, m, s.n, s.k, &s.alpha, pa, t.ab, t.lda[0], stride_a, pb,
                                     t.ab, t.ldb[0], stride_b, &s.beta, pc, t.ct, t.ldc[0], stride_c,
                                     int64_t(rows.size()), counts, GEMM_F32, scalings);
    }
    gemm_status_t run() { return run(a.data(), b.data(), c.data(), rows.data(), t.scalings.data()); }

    // c as the call left it (read back from a device), unpacked into t's matrices.
    void take(const bytes &after) {
        c = after;
        const std::size_t cs = dtype_size(t.ct);
        for (std::size_t i = 0; i < rows.size(); ++i)
            std::memcpy(t.c[i].data(), c.data() + i * std::size_t(stride_c) * cs, t.c[i].size());
    }

    bool untouched() const { return c == c0 && t.untouched(); }

    // "" when every matrix's rows are right, everything else in C untouched, and amax_d as
    // grouped_mismatch wants it, 0 for a matrix of no rows.
    std::string mismatch(double tensor_share = 0.0) {
        const std::size_t cs = dtype_size(t.ct);
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t e = i * std::size_t(stride_c) * cs + t.c[i].size();
                 e < (i + 1) * std::size_t(stride_c) * cs; ++e)
                if (c[e] != c0[e]) return t.describe() + ": a byte between C matrices written";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (rows[i] != 0 || !t.groups[i].amax) continue;
            if (t.amaxes[i] != 0.0f) return t.describe() + ": amax_d of a matrix of no rows is not 0";
            t.amaxes[i] = amax_sentinel;  // grouped_mismatch wants a group of no rows unwritten
        }
        return grouped_mismatch(t, tensor_share);
    }
};

}  // namespace gemm_test
