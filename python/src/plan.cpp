// plan.cpp: gemm.Plan, a gemm_plan_t for operands of fixed shapes, strides, dtype and memory.
#include "bindings.hpp"

#include "blas_call.hpp"
#include "fp8_scales.hpp"
#include "operand.hpp"
#include "python_error.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>

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
    plan(nb::handle a, nb::handle b, nb::handle out, nb::handle dtype, int device, bool beta_zero,
         nb::handle scale_mode);
    ~plan() { gemm_plan_destroy(handle_); }
    plan(const plan &) = delete;
    plan &operator=(const plan &) = delete;

    nb::object run(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta, nb::handle stream,
                   nb::handle a_scale, nb::handle b_scale, nb::handle d_scale, nb::handle amax) const;
    nb::tuple backend() const;
    std::string dtype() const { return dtype_text(c_dtype_); }
    int device() const { return device_; }

private:
    // The operand's shape and strides: an array's own (its dtype into *dtype, which an array
    // before it must share), or a shape's C-contiguous ones.
    strided_shape geometry_of(nb::handle x, const char *argument, std::optional<gemm_dtype_t> *dtype);
    // The types from dtype= and the arrays': a's and b's, and the result's (a's and b's but for
    // FP8 operands, whose result type dtype= or out names).
    void settle_types(std::optional<gemm_dtype_t> named, std::optional<gemm_dtype_t> ab, std::optional<gemm_dtype_t> c);
    void check_operand(const operand &x, gemm_dtype_t dtype, const strided_shape &expected, const char *argument) const;

    gemm_plan_t handle_ = nullptr;
    gemm_dtype_t ab_dtype_ = GEMM_F32, c_dtype_ = GEMM_F32;
    gemm_scale_mode_t scale_mode_ = GEMM_SCALE_NONE;
    product_sizes sizes_;  // one matrix's m, n, k: the shapes of block scales
    int device_ = -1;
    int alignment_ = 16;
    strided_shape a_, b_, c_;
};

// scale_mode=: None (or "none"), "tensor" or "block".
gemm_scale_mode_t scale_mode_of(nb::handle value) {
    if (value.is_none()) return GEMM_SCALE_NONE;
    const std::string text = nb::isinstance<nb::str>(value) ? nb::cast<std::string>(value) : std::string();
    if (text == "none") return GEMM_SCALE_NONE;
    if (text == "tensor") return GEMM_SCALE_TENSOR;
    if (text == "block") return GEMM_SCALE_BLOCK;
    refuse(GEMM_STATUS_INVALID_VALUE, "scale_mode",
           "must be None, \"none\", \"tensor\" (per-tensor scales) or \"block\" (block scales), not " +
               nb::cast<std::string>(nb::repr(value)));
}

const char *scale_mode_text(gemm_scale_mode_t mode) {
    return mode == GEMM_SCALE_TENSOR ? "\"tensor\"" : mode == GEMM_SCALE_BLOCK ? "\"block\"" : "None";
}

strided_shape plan::geometry_of(nb::handle x, const char *argument, std::optional<gemm_dtype_t> *dtype) {
    if (is_shape(x)) return contiguous_shape(nb::cast<std::vector<int64_t>>(x));
    const operand array = import_input(x, argument);
    if (*dtype && array.dtype != **dtype)
        refuse(GEMM_STATUS_INVALID_DTYPE, argument,
               std::string("dtype ") + dtype_text(array.dtype) + " differs from a's, " + dtype_text(**dtype));
    *dtype = array.dtype;
    device_ = array.device;
    alignment_ = std::min(alignment_, alignment_of(array.data));
    return array.geometry;
}

void plan::settle_types(std::optional<gemm_dtype_t> named, std::optional<gemm_dtype_t> ab,
                        std::optional<gemm_dtype_t> c) {
    if (!ab) {  // a and b are shapes: one type, dtype='s or out's
        if (named && is_fp8(*named))
            refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
                   "names the result's type; a plan of FP8 operands takes a or b as an array of their type");
        ab = named ? named : c;
        if (!ab) refuse(GEMM_STATUS_INVALID_DTYPE, "dtype", "is needed when a, b and out are all shapes");
    }
    ab_dtype_ = *ab;
    if (!is_fp8(ab_dtype_)) {
        if (named && *named != ab_dtype_)
            refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
                   std::string(dtype_text(*named)) + " differs from a's and b's, " + dtype_text(ab_dtype_) +
                       " (gemm computes one type; dtype= names the result's type of FP8 operands)");
        if (c && *c != ab_dtype_)
            refuse(GEMM_STATUS_INVALID_DTYPE, "out",
                   std::string("dtype ") + dtype_text(*c) + " differs from a's and b's, " + dtype_text(ab_dtype_));
        if (scale_mode_ != GEMM_SCALE_NONE)
            refuse(GEMM_STATUS_INVALID_VALUE, "scale_mode",
                   std::string("scales apply to FP8 operands (float8_e4m3fn, float8_e5m2); a and b are ") +
                       dtype_text(ab_dtype_));
        c_dtype_ = ab_dtype_;
        return;
    }
    if (named && c && *named != *c)
        refuse(GEMM_STATUS_INVALID_DTYPE, "out",
               std::string("dtype ") + dtype_text(*c) + " differs from the result's, " + dtype_text(*named));
    if (!named && !c)
        refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
               std::string("FP8 a and b (") + dtype_text(ab_dtype_) +
                   ") need dtype= or out to name the result's type (bfloat16, float16, float32)");
    c_dtype_ = named ? *named : *c;
    if (!is_fp8_result_type(c_dtype_))
        refuse(GEMM_STATUS_INVALID_DTYPE, named ? "dtype" : "out",
               std::string(dtype_text(c_dtype_)) + " is no result type of FP8 operands (bfloat16, float16, float32)");
}

plan::plan(nb::handle a, nb::handle b, nb::handle out, nb::handle dtype, int device, bool beta_zero,
           nb::handle scale_mode) {
    device_ = device;
    scale_mode_ = scale_mode_of(scale_mode);
    std::optional<gemm_dtype_t> named, ab, c;
    if (!dtype.is_none()) named = dtype_of_name(dtype_name_of(dtype), "dtype");
    a_ = geometry_of(a, "a", &ab);
    b_ = geometry_of(b, "b", &ab);
    const matmul_shape_result shape = matmul_shape_of(a_, b_);
    if (!shape.shape) refuse(GEMM_STATUS_INVALID_SIZE, shape.argument, shape.error);
    c_ = out.is_none() ? contiguous_shape(shape.shape->result_shape) : geometry_of(out, "out", &c);
    settle_types(named, ab, c);
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
    sizes_ = {shape.shape->m, shape.shape->n, shape.shape->k};
    gemm_desc_t desc;
    gemm_desc_init(&desc, ab_dtype_, *layout, a_view->op, b_view->op, shape.shape->m, shape.shape->n, shape.shape->k);
    desc.c_type = c_dtype_;
    desc.compute_type = compute_type_of(ab_dtype_);
    desc.scale_mode = scale_mode_;
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

void plan::check_operand(const operand &x, gemm_dtype_t dtype, const strided_shape &expected,
                         const char *argument) const {
    if (x.dtype != dtype)
        refuse(GEMM_STATUS_INVALID_DTYPE, argument,
               std::string("dtype ") + dtype_text(x.dtype) + " differs from the plan's, " + dtype_text(dtype));
    if (x.device != device_)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, argument,
               "is in " + device_text(x.device) + " memory, the plan's operands in " + device_text(device_));
    const strided_shape got = normalized(x.geometry);
    if (got.shape != expected.shape || got.strides != expected.strides)
        refuse(GEMM_STATUS_INVALID_VALUE, argument, "shape or strides differ from those the plan was made for");
}

nb::object plan::run(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta, nb::handle stream,
                     nb::handle a_scale, nb::handle b_scale, nb::handle d_scale, nb::handle amax) const {
    const operand x = import_input(a, "a"), y = import_input(b, "b");
    const operand c = import_output(out, "out");
    check_operand(x, ab_dtype_, a_, "a");
    check_operand(y, ab_dtype_, b_, "b");
    check_operand(c, c_dtype_, c_, "out");
    const scalars values = scalars_of(ab_dtype_, alpha, beta);
    scale_arguments scales;
    fill_scales(scales, ab_dtype_, device_, sizes_, a_scale, b_scale, d_scale, amax);
    if (is_fp8(ab_dtype_) && scales.scales.mode != scale_mode_)
        refuse(GEMM_STATUS_INVALID_VALUE, "a_scale",
               scale_mode_ == GEMM_SCALE_NONE
                   ? std::string("and b_scale are for plans made with scale_mode=\"tensor\" or \"block\"; this one "
                                 "takes none")
                   : std::string("and b_scale of the plan's scale_mode=") + scale_mode_text(scale_mode_) +
                         " are needed, not " +
                         (scales.scales.mode == GEMM_SCALE_NONE ? "none" : scale_mode_text(scales.scales.mode)));
    const gemm_scaling_t scaling = scaling_of(scales.scales);
    void *s = stream_of(stream);
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    call_failure failure;
    {
        nb::gil_scoped_release release;
        void *previous = device_ >= 0 ? gemm_get_stream() : nullptr;
        if (device_ >= 0) gemm_set_stream(s);
        const void *pa = reinterpret_cast<const void *>(x.data), *pb = reinterpret_cast<const void *>(y.data);
        void *pc = reinterpret_cast<void *>(c.data);
        status = is_fp8(ab_dtype_) ? gemm_plan_run_scaled(handle_, values.alpha, pa, pb, values.beta, pc, &scaling)
                                   : gemm_plan_run(handle_, values.alpha, pa, pb, values.beta, pc);
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
        .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle, int, bool, nb::handle>(), nb::arg("a"),
             nb::arg("b"), nb::arg("out") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
             nb::arg("device") = -1, nb::arg("beta_zero") = false, nb::arg("scale_mode") = nb::none())
        .def("run", &plan::run, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::kw_only(), nb::arg("alpha") = 1.0,
             nb::arg("beta") = 0.0, nb::arg("stream") = nb::none(), nb::arg("a_scale") = nb::none(),
             nb::arg("b_scale") = nb::none(), nb::arg("d_scale") = nb::none(), nb::arg("amax") = nb::none())
        .def_prop_ro("backend", &plan::backend)
        .def_prop_ro("dtype", &plan::dtype)
        .def_prop_ro("device", &plan::device);
}

}  // namespace gemm_python
