// described_problem.hpp: a gemm_desc_t as the canonical problem it describes, and a backend
// named as "name[:variant]": what the capability queries and gemm_measure start from.
#pragma once

#include <string>

#include "call.hpp"
#include "dispatch/backend.hpp"
#include "entry_points.h"

namespace gemm {

// The canonical problem a desc describes (its pointers stand for the desc's alignment and
// are never read), or the status a call of it would fail with, its message naming the field
// and gemm_last_error_parameter() the desc's position among its function's parameters.
// call, when given: the call as the caller would make it, its leading dimensions filled in;
// described: that call's arguments (scalars and epilogue NULL, pointers placeholders).
gemm_status_t problem_of(const api_desc &d, int position, problem &p, call_shape *call = nullptr,
                         user_call *described = nullptr);

// The backend "name[:variant]" names, if it knows the variant and (unless any_machine) can
// run here; otherwise the status and a message as gemm_backend_supports gives them.
gemm_status_t backend_named(const char *spec, backend *&b, std::string &variant, bool any_machine = false);

}  // namespace gemm
