// plan.cpp: gemm.Plan, a gemm_plan_t for operands of fixed shapes, strides, dtype and memory.
#include "bindings.hpp"

#include "blas_call.hpp"
#include "operand.hpp"
#include "python_error.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

namespace nb = nanobind;

namespace gemm_python {
namespace {

// Strides of dimensions of one element or none are never used: two arrays that differ
// only there are the same operands to a plan.
strided_shape normalized(strided_shape s) {
    for (size_t d = 0; d < s.shape.size(); ++d)
        if (s.shape[d] <= 1) s.strides[d] = 0;
    return s;
}

strided_shape contiguous_shape(const std::vector<int64_t> &shape) {
    strided_shape s{shape, std::vector<int64_t>(shape.size(), 1)};
    for (size_t d = shape.size(); d-- > 1;) s.strides[d - 1] = s.strides[d] * std::max<int64_t>(1, shape[d]);
    return s;
}

bool is_shape(nb::handle x) { return nb::isinstance<nb::tuple>(x) || nb::isinstance<nb::list>(x); }

int alignment_of(uintptr_t data) {
    int alignment = 1;
    while (alignment < 16 && data % static_cast<uintptr_t>(alignment * 2) == 0) alignment *= 2;
    return alignment;
}

class plan {
public:
    plan(nb::handle a, nb::handle b, nb::handle out, nb::handle dtype, int device, bool beta_zero);
    ~plan() { gemm_plan_destroy(handle_); }
    plan(const plan &) = delete;
    plan &operator=(const plan &) = delete;

    nb::object run(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta,
                   nb::handle stream) const;
    nb::tuple backend() const;
    std::string dtype() const { return dtype_text(dtype_); }
    int device() const { return device_; }

private:
    // The operand's shape and strides: an array's own, or a shape's C-contiguous ones.
    strided_shape geometry_of(nb::handle x, const char *argument);
    void check_operand(const operand &x, const strided_shape &expected, const char *argument) const;

    gemm_plan_t handle_ = nullptr;
    gemm_dtype_t dtype_ = GEMM_F32;
    int device_ = -1;
    int alignment_ = 16;
    bool dtype_known_ = false;
    strided_shape a_, b_, c_;
};

[[noreturn]] void refuse_fp8(const char *argument) {
    refuse(GEMM_STATUS_NOT_SUPPORTED, argument,
           "FP8 operands are computed by gemm.matmul (with dtype= and the scales); gemm.Plan does not take them");
}

strided_shape plan::geometry_of(nb::handle x, const char *argument) {
    if (is_shape(x)) return contiguous_shape(nb::cast<std::vector<int64_t>>(x));
    const operand array = import_input(x, argument);
    if (is_fp8(array.dtype)) refuse_fp8(argument);
    if (dtype_known_ && array.dtype != dtype_)
        refuse(GEMM_STATUS_INVALID_DTYPE, argument,
               std::string("dtype ") + dtype_text(array.dtype) + " differs from the plan's, " + dtype_text(dtype_));
    dtype_ = array.dtype;
    dtype_known_ = true;
    device_ = array.device;
    alignment_ = std::min(alignment_, alignment_of(array.data));
    return array.geometry;
}

plan::plan(nb::handle a, nb::handle b, nb::handle out, nb::handle dtype, int device, bool beta_zero) {
    device_ = device;
    if (!dtype.is_none()) {
        dtype_ = dtype_of_name(dtype_name_of(dtype), "dtype");
        dtype_known_ = true;
    }
    a_ = geometry_of(a, "a");
    b_ = geometry_of(b, "b");
    const matmul_shape_result shape = matmul_shape_of(a_, b_);
    if (!shape.shape) refuse(GEMM_STATUS_INVALID_SIZE, shape.argument, shape.error);
    c_ = out.is_none() ? contiguous_shape(shape.shape->result_shape) : geometry_of(out, "out");
    if (!dtype_known_) refuse(GEMM_STATUS_INVALID_DTYPE, "dtype", "is needed when a, b and out are all shapes");
    if (c_.shape != shape.shape->result_shape) refuse(GEMM_STATUS_INVALID_SIZE, "out", "has not the result's shape");
    const result_strides strides = result_strides_of(*shape.shape, c_);
    const std::optional<gemm_layout_t> layout = layout_of_result(strides.c);
    const std::optional<blas_operand> a_view = layout ? blas_operand_of(shape.shape->a, *layout) : std::nullopt;
    const std::optional<blas_operand> b_view = layout ? blas_operand_of(shape.shape->b, *layout) : std::nullopt;
    if (!layout || !a_view || !b_view)
        refuse(GEMM_STATUS_INVALID_STRIDE, !layout ? "out" : (!a_view ? "a" : "b"),
               "is no matrix BLAS reads or writes in place, and a plan makes no copies");
    const batch_form batch = batch_form_of(shape.shape->batch_shape, shape.shape->a_batch_strides,
                                           shape.shape->b_batch_strides, strides.batch_strides);
    if (!batch.uniform)
        refuse(GEMM_STATUS_INVALID_STRIDE, "a",
               "a plan takes batches of one stride per operand (a strided batch); gemm.matmul takes others");
    gemm_desc_t desc;
    gemm_desc_init(&desc, dtype_, *layout, a_view->op, b_view->op, shape.shape->m, shape.shape->n, shape.shape->k);
    desc.compute_type = compute_type_of(dtype_);
    desc.lda = a_view->ld;
    desc.ldb = b_view->ld;
    desc.ldc = blas_operand_of(strides.c, *layout)->ld;
    desc.batch_count = batch.count;
    desc.stride_a = batch.stride_a;
    desc.stride_b = batch.stride_b;
    desc.stride_c = batch.stride_c;
    desc.device = device_;
    desc.alignment = alignment_;
    desc.beta_zero = beta_zero ? 1 : 0;
    check(gemm_plan_create(&desc, &handle_));
    a_ = normalized(a_);
    b_ = normalized(b_);
    c_ = normalized(c_);
}

void plan::check_operand(const operand &x, const strided_shape &expected, const char *argument) const {
    if (x.dtype != dtype_)
        refuse(GEMM_STATUS_INVALID_DTYPE, argument,
               std::string("dtype ") + dtype_text(x.dtype) + " differs from the plan's, " + dtype_text(dtype_));
    if (x.device != device_)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, argument,
               "is in " + device_text(x.device) + " memory, the plan's operands in " + device_text(device_));
    const strided_shape got = normalized(x.geometry);
    if (got.shape != expected.shape || got.strides != expected.strides)
        refuse(GEMM_STATUS_INVALID_VALUE, argument, "shape or strides differ from those the plan was made for");
}

nb::object plan::run(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta,
                     nb::handle stream) const {
    const operand x = import_input(a, "a"), y = import_input(b, "b");
    const operand c = import_output(out, "out");
    check_operand(x, a_, "a");
    check_operand(y, b_, "b");
    check_operand(c, c_, "out");
    const scalars values = scalars_of(dtype_, alpha, beta);
    void *s = stream_of(stream);
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    call_failure failure;
    {
        nb::gil_scoped_release release;
        void *previous = device_ >= 0 ? gemm_get_stream() : nullptr;
        if (device_ >= 0) gemm_set_stream(s);
        status = gemm_plan_run(handle_, values.alpha, reinterpret_cast<const void *>(x.data),
                               reinterpret_cast<const void *>(y.data), values.beta, reinterpret_cast<void *>(c.data));
        if (status != GEMM_STATUS_SUCCESS) failure = failure_of_last_call(status);
        if (device_ >= 0) gemm_set_stream(previous);
    }
    if (status != GEMM_STATUS_SUCCESS) raise_failure(failure);
    return c.object;
}

nb::tuple plan::backend() const {
    const char *name = nullptr, *variant = nullptr, *why = nullptr;
    check(gemm_plan_get_backend(handle_, &name, &variant, &why));
    return nb::make_tuple(name, variant, why);
}

}  // namespace

void bind_plan(nb::module_ &m) {
    nb::class_<plan>(m, "Plan", "A gemm_plan_t: the backend decided once for operands of one geometry.")
        .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle, int, bool>(), nb::arg("a"), nb::arg("b"),
             nb::arg("out") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = -1,
             nb::arg("beta_zero") = false)
        .def("run", &plan::run, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::kw_only(), nb::arg("alpha") = 1.0,
             nb::arg("beta") = 0.0, nb::arg("stream") = nb::none())
        .def_prop_ro("backend", &plan::backend)
        .def_prop_ro("dtype", &plan::dtype)
        .def_prop_ro("device", &plan::device);
}

}  // namespace gemm_python
