// queries.cpp: gemm.backends, gemm.info, gemm.set_backend, gemm.tune: the library's queries
// and settings as Python values.
#include "bindings.hpp"

#include "blas_call.hpp"
#include "fp8_scales.hpp"
#include "operand.hpp"
#include "python_error.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <utility>

namespace nb = nanobind;

namespace gemm_python {
namespace {

const char *kind_text(gemm_backend_kind_t kind) {
    switch (kind) {
    case GEMM_BACKEND_HOST: return "host";
    case GEMM_BACKEND_DEVICE: return "device";
    case GEMM_BACKEND_MULTI_DEVICE: return "multi_device";
    }
    return "?";
}

nb::object text_or_none(const char *text) { return text ? nb::cast(std::string(text)) : nb::none(); }

// (name, kind, available, reason, detail) per backend of this build.
nb::list backends() {
    nb::list list;
    const int64_t count = gemm_backend_count();
    for (int64_t i = 0; i < count; ++i) {
        gemm_backend_info_t info{};
        check(gemm_backend_get_info(i, &info));
        gemm_backend_traits_t traits{};
        traits.struct_size = sizeof traits;
        check(gemm_backend_get_traits(info.name, &traits));
        list.append(nb::make_tuple(info.name, kind_text(traits.kind), info.available != 0, info.reason, info.detail));
    }
    return list;
}

nb::list options() {
    nb::list list;
    const int64_t count = gemm_option_count();
    for (int64_t i = 0; i < count; ++i) {
        gemm_option_info_t info{};
        check(gemm_option_get_info(i, &info));
        nb::dict option;
        option["name"] = info.name;
        option["owner"] = info.owner;
        option["value"] = text_or_none(info.value);
        option["values"] = info.values;
        option["fallback"] = info.fallback;
        option["meaning"] = info.meaning;
        list.append(option);
    }
    return list;
}

nb::dict info() {
    nb::dict d;
    d["version"] = gemm_version();
    d["backend"] = gemm_get_backend();
    d["backend_source"] = gemm_get_backend_source();
    d["tune_cache"] = text_or_none(gemm_tune_cache_path());
    d["options"] = options();
    return d;
}

void set_backend(nb::handle name) {
    if (name.is_none()) {
        check(gemm_set_backend(nullptr));
        return;
    }
    const std::string text = nb::cast<std::string>(name);
    const gemm_status_t status = gemm_set_backend(text.c_str());
    if (status != GEMM_STATUS_SUCCESS) {
        call_failure failure = failure_of_last_call(status);
        failure.argument = "name";
        raise_failure(failure);
    }
}

nb::dict report_of(const gemm_tune_report_t &report) {
    nb::dict d;
    d["backend"] = report.backend;
    d["variant"] = report.variant;
    d["median_us"] = report.median_us;
    d["default_backend"] = report.default_backend;
    d["default_median_us"] = report.default_median_us;
    d["stored"] = report.stored != 0;
    d["disturbed"] = report.disturbed != 0;
    nb::list candidates;
    for (int64_t i = 0; i < report.candidate_count; ++i) {
        const gemm_tune_candidate_t &c = report.candidates[i];
        nb::dict candidate;
        candidate["backend"] = c.backend;
        candidate["variant"] = c.variant;
        candidate["median_us"] = c.median_us;
        candidate["correct"] = c.correct != 0;
        candidate["note"] = c.note;
        candidate["spread"] = c.spread;
        candidates.append(candidate);
    }
    d["candidates"] = candidates;
    return d;
}

gemm_op_t op_of(const std::string &op, const char *argument) {
    if (op == "N" || op == "n") return GEMM_OP_N;
    if (op == "T" || op == "t") return GEMM_OP_T;
    if (op == "C" || op == "c") return GEMM_OP_C;
    refuse(GEMM_STATUS_INVALID_OP, argument, "must be 'N', 'T' or 'C', not '" + op + "'");
}

gemm_layout_t layout_of(const std::string &layout) {
    if (layout == "row") return GEMM_ROW_MAJOR;
    if (layout == "column") return GEMM_COL_MAJOR;
    refuse(GEMM_STATUS_INVALID_LAYOUT, "layout", "must be 'row' or 'column', not '" + layout + "'");
}

// The result types a class of `ab` operands has: ab itself (not FP8), float32 too for float16
// and bfloat16, and bfloat16, float16 or float32 for FP8; "" where c is one, else which are.
std::string result_types_refusal(gemm_dtype_t ab, gemm_dtype_t c) {
    if (is_fp8(ab)) return is_fp8_result_type(c) ? "" : "bfloat16, float16 or float32";
    if (c == ab) return "";
    const bool half = ab == GEMM_F16 || ab == GEMM_BF16;
    if (half && c == GEMM_F32) return "";
    return std::string(dtype_text(ab)) + (half ? " or float32" : "") + " (the operands' type" +
           (half ? ", or float32 for half-precision ones)" : ")");
}

struct tune_args {
    int64_t m, n, k;
    std::string dtype;
    std::optional<std::string> c_dtype;  // None: dtype's
    std::string transa, transb, layout;
    int64_t batch;
    bool beta_zero;
    int device;
    double budget_ms;
    std::string backends;
    bool store;
};

nb::dict tune(const tune_args &args) {
    gemm_tune_request_t request{};
    request.ab_type = dtype_of_name(args.dtype, "dtype");
    if (!args.c_dtype && is_fp8(request.ab_type))
        refuse(GEMM_STATUS_INVALID_DTYPE, "c_dtype",
               "is needed with FP8 operands (" + args.dtype + "): the result's type, bfloat16, float16 or float32");
    request.c_type = args.c_dtype ? dtype_of_name(*args.c_dtype, "c_dtype") : request.ab_type;
    if (const std::string types = result_types_refusal(request.ab_type, request.c_type); !types.empty())
        refuse(GEMM_STATUS_INVALID_DTYPE, "c_dtype",
               std::string("is ") + dtype_text(request.c_type) + ", no result type of " + args.dtype +
                   " operands: " + types);
    request.layout = layout_of(args.layout);
    request.transa = op_of(args.transa, "transa");
    request.transb = op_of(args.transb, "transb");
    request.m = args.m;
    request.n = args.n;
    request.k = args.k;
    request.batch_count = args.batch;
    request.beta_zero = args.beta_zero ? 1 : 0;
    request.device = args.device;
    request.budget_ms = args.budget_ms;
    request.backends = args.backends.c_str();
    gemm_tune_report_t report{};
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    {
        nb::gil_scoped_release release;
        status = gemm_tune(&request, args.store ? 1 : 0, &report);
    }
    check(status);
    return report_of(report);
}

nb::dict tune_key(const std::string &key, int device, double budget_ms, const std::string &backends, bool store) {
    gemm_tune_report_t report{};
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    {
        nb::gil_scoped_release release;
        status = gemm_tune_key(key.c_str(), device, budget_ms, backends.c_str(), store ? 1 : 0, &report);
    }
    check(status);
    return report_of(report);
}

}  // namespace

void bind_queries(nb::module_ &module) {
    module.def("backends", &backends, "(name, kind, available, reason, detail) for each backend of this build.");
    module.def("info", &info, "The library's version, selection, tune cache path and GEMM_* options.");
    module.def("set_backend", &set_backend, nb::arg("name").none(),
               "Forces a backend ('name' or 'name:variant') for every later call; None returns to GEMM_BACKEND.");
    module.def(
        "tune",
        [](int64_t m, int64_t n, int64_t k, const std::string &dtype, std::optional<std::string> c_dtype,
           const std::string &transa, const std::string &transb, const std::string &layout, int64_t batch,
           bool beta_zero, int device, double budget_ms, const std::string &backends, bool store) {
            return tune({m, n, k, dtype, std::move(c_dtype), transa, transb, layout, batch, beta_zero, device,
                         budget_ms, backends, store});
        },
        nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::kw_only(), nb::arg("dtype") = "float32",
        nb::arg("c_dtype") = nb::none(), nb::arg("transa") = "N", nb::arg("transb") = "N", nb::arg("layout") = "row",
        nb::arg("batch") = 1, nb::arg("beta_zero") = true, nb::arg("device") = -1, nb::arg("budget_ms") = 0.0,
        nb::arg("backends") = "", nb::arg("store") = true);
    module.def("tune_key", &tune_key, nb::arg("key"), nb::kw_only(), nb::arg("device") = 0, nb::arg("budget_ms") = 0.0,
               nb::arg("backends") = "", nb::arg("store") = true);
}

}  // namespace gemm_python
