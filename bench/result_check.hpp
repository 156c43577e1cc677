// result_check.hpp: verifying a backend's C before it is timed: against the cpu_ref backend
// on small problems, else with the O(n^2) check C·t vs α·A·(B·t) + β·C0·t (BLIS's method).
#pragma once

#include <string>

#include "gemm_case.hpp"
#include "operands.hpp"

namespace gemm_cli {

enum class check_verdict { ok, wrong, skipped };

struct check_result {
    check_verdict verdict = check_verdict::skipped;
    std::string method;       // "reference" or "vector"
    double worst_ratio = 0;   // largest |error| / tolerance seen (ok while <= 1)
    std::string detail;       // where the worst error is, or why the check was skipped
};

const char *check_verdict_name(check_verdict v);  // "ok", "WRONG", "skipped"

// cpu_ref's answer on set 0 of the pool, computed once per case and shared by all backends.
struct reference_result {
    bool valid = false;
    aligned_buffer c;
    std::string error;  // why there is no reference
};

// True when the cpu_ref reference is cheap enough for this case (m*n*k*batch <= 2^27).
bool reference_affordable(const gemm_case &c);
// Forces cpu_ref for one call and restores the selection in force.
reference_result reference_compute(const gemm_case &c, operand_pool &pool);

// result is C computed from set 0's A and B, starting from c_before (NaN when beta = 0).
check_result check_against_reference(const gemm_case &c, const aligned_buffer &result,
                                      const reference_result &reference, const aligned_buffer &c_before);
check_result check_with_vector(const gemm_case &c, operand_pool &pool, const aligned_buffer &result,
                               const aligned_buffer &c_before);

// C as the check wants it before the call: NaN when beta = 0 (a backend that reads C anyway
// then shows up as WRONG), else set 0's initial C.
void check_prepare_c(const gemm_case &c, const operand_pool &pool, aligned_buffer &c_before);

}  // namespace gemm_cli
