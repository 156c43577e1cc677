// cpu_omp.cpp: PLACEHOLDER until the packed kernel lands (being written now).
#include "cpu_omp.hpp"

namespace gemm {
namespace {
class cpu_omp final : public backend {
public:
    std::string_view name() const override { return "cpu_omp"; }
    verdict probe() const override { return verdict::no("not yet implemented"); }
    verdict supports(const problem &) const override { return verdict::no("not yet implemented"); }
    gemm_status_t run(const problem &, std::string_view, run_context &) override {
        return GEMM_STATUS_NOT_SUPPORTED;
    }
};
}  // namespace
backend_ptr make_cpu_omp_backend() { return std::make_unique<cpu_omp>(); }
}  // namespace gemm
