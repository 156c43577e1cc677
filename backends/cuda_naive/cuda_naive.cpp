// cuda_naive.cpp: the one-thread-per-element CUDA backend (f32, f64), the GPU's reference.
#include "cuda_naive.hpp"

#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "naive_kernel.hpp"

namespace gemm {
namespace {

constexpr std::string_view naive_variant = "naive_16x16";

class cuda_naive final : public backend {
public:
    std::string_view name() const override { return "cuda_naive"; }
    backend_kind kind() const override { return backend_kind::device; }
    verdict probe() const override { return cuda::device_verdict(); }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }

    // Device and managed pointers run in place; host pointers are offloaded (run_on_device).
    verdict supports(const problem &p) const override {
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64)
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64 only)");
        if (p.c_type != p.ab_type)
            return verdict::no(std::string("C of type ") + dtype_name(p.c_type) + " not supported with " +
                               dtype_name(p.ab_type) + " inputs");
        return verdict::yes();
    }

    std::vector<std::string> variants(const problem &) const override { return {std::string(naive_variant)}; }

    bool knows_variant(std::string_view v) const override { return v.empty() || v == naive_variant; }

    std::vector<std::string> variant_ids() const override { return {std::string(naive_variant)}; }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        ctx.variant_used = naive_variant;
        return cuda::run_on_device(
            p, ctx, [](const problem &dp, cudaStream_t stream) { return cuda::launch_naive_gemm(dp, stream); });
    }
};

}  // namespace

backend_ptr make_cuda_naive_backend() { return std::make_unique<cuda_naive>(); }

}  // namespace gemm
