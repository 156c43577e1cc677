// result_check.hpp: whether a measured run computed the right C, by the one tolerance rule
// (tolerance.hpp): the whole C against a double-precision loop when that is cheap
// (m·n·k·batch ≤ 2^27), else the O(n²) check of BLIS, C·t against α·A·(B·t) + β·C₀·t for a
// random vector t. An epilogue is not linear, so a large problem with one is checked on 512
// random elements instead (C, and a forward aux), and a bias gradient against the sums of the
// C the run wrote. FP8 products are judged with the tensor cores' allowance (tolerance.hpp's
// tensor_cores): each element's sum of |scaled products|, or for C·t row i's sum over j of
// |t_j| times it, |A|·(|B|·|t|) with the scales applied. FP8 never reaches the sampled
// check: no call or tune key has an FP8 epilogue.
#pragma once

#include <complex>
#include <string>
#include <vector>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"
#include "operand_sets.hpp"
#include "tolerance.hpp"

namespace gemm {

struct check_outcome {
    enum class verdict { ok, wrong, not_checked };
    verdict result = verdict::not_checked;
    const char *method = "";  // "reference" (every element), "vector" (C·t) or "sampled"
    double worst_ratio = 0;   // largest |error| / tolerance (ok while <= 1; NaN counts as infinite)
    std::string detail;       // where the worst error is, when wrong
};

const char *verdict_name(check_outcome::verdict v);  // "ok", "WRONG", "not checked"

class result_check {
public:
    // m·n·k·batch up to which every element is compared.
    static constexpr double full_check_limit = double(int64_t(1) << 27);

    // The expected values for set 0 of sets. tf32: f32 products may be formed from inputs
    // rounded to TF32 (GEMM_ALLOW_TF32=1), which widens the tolerance.
    void prepare(const operand_sets &sets, bool tf32) {
        bias_ = sets.host_bias();
        saved_aux_ = sets.host_saved_aux();
        saves_aux_ = !sets.base().epilogue.backward() && sets.first().epilogue.aux;
        problem host = sets.base();
        host.a = sets.host_a();
        host.b = sets.host_b();
        prepare(host, sets.initial_c(), tf32);
    }

    // The expected values of `host`, a problem without an epilogue whose A, B and FP8 scales
    // (scaling.a, scaling.b, d_scale) lie in host memory, with C's initial values at initial_c
    // (laid out as host's C): what prepare(sets) does with set 0, for operands made elsewhere.
    void prepare(const problem &host, const void *initial_c, bool tf32);

    // result: set 0's problem with C as computed (operand_sets::checked_result).
    check_outcome judge(const problem &result) const;

private:
    using value = std::complex<double>;  // real types use its real part

    bool fp8() const { return p_.ab_type == dtype::e4m3 || p_.ab_type == dtype::e5m2; }

    tolerance_rule rule() const;  // tolerance.hpp's rule for this problem
    // Elements of op(A), op(B) and C0 as V: double for real types, value for complex ones;
    // FP8 ones times their scales.
    template <class V> V a_at(int64_t batch, int64_t i, int64_t l) const;
    template <class V> V b_at(int64_t batch, int64_t l, int64_t j) const;
    template <class V> V c0_at(int64_t batch, int64_t i, int64_t j) const;
    template <class V> void full_reference(int64_t batch);
    template <class V> void projected_reference(int64_t batch);
    template <class V> check_outcome judge_as(const problem &result) const;
    // With an epilogue (real types): Z at the checked elements, then the epilogue's definition.
    void epilogue_reference();
    check_outcome judge_epilogue(const problem &result) const;

    problem p_;
    bool full_ = true, tf32_ = false;
    const void *a_ = nullptr, *b_ = nullptr, *c0_ = nullptr;
    std::vector<double> t_;        // the random vector of the projected check
    std::vector<value> expected_;  // per element (full) or per row of C·t (projected)
    // FP8: per element its sum of |scaled products| (full), or per row i the sum over j of |t_j|
    // times them (projected), alpha and d_scale not applied; empty for other types.
    std::vector<double> abs_products_;
    double d_scale_ = 1;       // FP8: the output scale, which multiplies every expected value
    double product_size_ = 1;  // tolerance_rule::product_size: FP8's largest |scaled products|
    // An epilogue's check: the elements (i, j) checked (every one, or a sample), Z at each,
    // and set 0's bias and the aux a backward activation reads.
    std::vector<std::pair<int64_t, int64_t>> checked_at_;
    std::vector<double> z_;
    const void *bias_ = nullptr, *saved_aux_ = nullptr;
    bool saves_aux_ = false;
};

}  // namespace gemm
