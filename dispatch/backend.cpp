// backend.cpp: defaults of the optional backend members.
#include "backend.hpp"

namespace gemm {

std::vector<std::string> backend::variants(const problem &) const { return {""}; }

bool backend::reference() const { return false; }

bool backend::knows_variant(std::string_view v) const { return v.empty(); }

std::vector<std::string> backend::variant_ids() const { return {}; }

std::string backend::identity() const {
    const verdict &v = available();
    return v.ok ? (v.detail.empty() ? "available" : v.detail) : "unavailable";
}

std::vector<backend_option> backend::options() const { return {}; }

bool backend::fuses_epilogue(const problem &) const { return false; }
bool backend::leads_batches(const problem &) const { return false; }

const device_services *backend::runtime_services() const { return nullptr; }

const verdict &backend::available() const {
    std::call_once(probed_, [this] { availability_ = probe(); });
    return availability_;
}

gemm_status_t backend::run_batch(const problem_batch &, std::string_view, run_report &) {
    return GEMM_STATUS_NOT_SUPPORTED;
}

verdict backend::supports_omatcopy(const transpose_problem &) const { return verdict::no("no transpose kernel"); }

gemm_status_t backend::run_omatcopy(const transpose_problem &, run_report &) { return GEMM_STATUS_NOT_SUPPORTED; }

bool backend::leads_omatcopy(const transpose_problem &) const { return false; }

verdict backend::supports_spmm(const sparse_problem &) const { return verdict::no("no sparse kernel"); }

gemm_status_t backend::run_spmm(const sparse_problem &, run_report &) { return GEMM_STATUS_NOT_SUPPORTED; }

bool backend::leads_spmm(const sparse_problem &) const { return false; }

bool backend::spmm_assumes_sorted() const { return false; }

}  // namespace gemm
