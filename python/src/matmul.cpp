// matmul.cpp: gemm.matmul, numpy.matmul's semantics computed by one gemm call.
#include "bindings.hpp"

#include "blas_call.hpp"
#include "fp8_scales.hpp"
#include "operand.hpp"
#include "python_error.hpp"

#include <nanobind/stl/string.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace nb = nanobind;

namespace gemm_python {
namespace {

nb::tuple shape_tuple(const std::vector<int64_t> &shape) {
    nb::list list;
    for (int64_t size : shape) list.append(size);
    return nb::tuple(list);
}

// GEMM_VERBOSE=1 (or more) says on stderr when an operand had to be copied, read on each
// copy (copies are the rare path).
void say_copied(const char *argument, const operand &x, const char *why) {
    const char *verbose = std::getenv("GEMM_VERBOSE");
    if (!verbose || std::atoi(verbose) < 1) return;
    std::fprintf(stderr, "gemm.matmul: %s (shape %s, strides %s elements) %s: copied\n", argument,
                 shape_text(x.geometry.shape).c_str(), shape_text(x.geometry.strides).c_str(), why);
}

struct matmul_args {
    operand a, b;
    matmul_shape shape;
    gemm_dtype_t result_dtype = GEMM_F32;  // a's, but for FP8 a and b
};

// The result's type: a's and b's, or for FP8 operands the one dtype= names (else out's, checked
// by result_operand).
gemm_dtype_t result_dtype_of(const matmul_args &args, nb::handle dtype, nb::handle out) {
    const gemm_dtype_t ab = args.a.dtype;
    const std::optional<gemm_dtype_t> named =
        dtype.is_none() ? std::nullopt : std::optional(dtype_of_name(dtype_name_of(dtype), "dtype"));
    if (!is_fp8(ab)) {
        if (named && *named != ab)
            refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
                   std::string(dtype_text(*named)) + " differs from a's and b's, " + dtype_text(ab) +
                       " (gemm computes one type; dtype= names the result's type of FP8 operands)");
        return ab;
    }
    if (named && !is_fp8_result_type(*named))
        refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
               std::string(dtype_text(*named)) + " is no result type of FP8 operands (bfloat16, float16, float32)");
    if (!named && out.is_none())
        refuse(GEMM_STATUS_INVALID_DTYPE, "dtype",
               std::string("FP8 a and b (") + dtype_text(ab) +
                   ") need dtype= (bfloat16, float16 or float32: the result's type) or out=");
    return named ? *named : GEMM_F32;  // out's, once result_operand has read it
}

// The result's array, allocated by the library a made its operand with (NumPy, CuPy,
// PyTorch), or out, checked against the result's shape, dtype and memory.
operand result_operand(matmul_args &args, nb::handle out, bool dtype_named) {
    if (out.is_none()) {
        nb::object empty =
            args.result_dtype == args.a.dtype
                ? helpers().empty(args.a.object, shape_tuple(args.shape.result_shape))
                : helpers().empty(args.a.object, shape_tuple(args.shape.result_shape), dtype_text(args.result_dtype));
        return import_output(empty, "out");
    }
    operand c = import_output(out, "out");
    if (is_fp8(args.a.dtype) && !dtype_named) {
        if (!is_fp8_result_type(c.dtype))
            refuse(GEMM_STATUS_INVALID_DTYPE, "out",
                   std::string("dtype ") + dtype_text(c.dtype) +
                       " is no result type of FP8 operands (bfloat16, float16, float32)");
        args.result_dtype = c.dtype;
    }
    if (c.dtype != args.result_dtype)
        refuse(GEMM_STATUS_INVALID_DTYPE, "out",
               std::string("dtype ") + dtype_text(c.dtype) + " differs from the result's, " +
                   dtype_text(args.result_dtype));
    if (c.geometry.shape != args.shape.result_shape)
        refuse(GEMM_STATUS_INVALID_SIZE, "out",
               "shape " + shape_text(c.geometry.shape) + " differs from the result's, " +
                   shape_text(args.shape.result_shape));
    if (c.device != args.a.device)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, "out",
               "is in " + device_text(c.device) + " memory, a and b in " + device_text(args.a.device) + " memory");
    return c;
}

matmul_args operands_of(nb::handle a_object, nb::handle b_object) {
    matmul_args args{import_input(a_object, "a"), import_input(b_object, "b"), {}};
    if (args.a.dtype != args.b.dtype)
        refuse(GEMM_STATUS_INVALID_DTYPE, "b",
               std::string("dtype ") + dtype_text(args.b.dtype) + " differs from a's, " + dtype_text(args.a.dtype) +
                   " (gemm computes one type; convert one of them, e.g. b.astype(a.dtype))");
    if (args.a.device != args.b.device)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, "b",
               "is in " + device_text(args.b.device) + " memory, a in " + device_text(args.a.device) + " memory");
    return args;
}

void reshape(matmul_args &args) {
    matmul_shape_result shape = matmul_shape_of(args.a.geometry, args.b.geometry);
    if (!shape.shape) refuse(GEMM_STATUS_INVALID_SIZE, shape.argument, shape.error);
    args.shape = *shape.shape;
}

// An operand BLAS cannot read in place becomes a contiguous copy.
blas_operand readable(operand &x, matmul_args &args, bool is_a, gemm_layout_t layout) {
    std::optional<blas_operand> view = blas_operand_of(is_a ? args.shape.a : args.shape.b, layout);
    if (view) return *view;
    const char *name = is_a ? "a" : "b";
    say_copied(name, x, "is no matrix BLAS reads in place (one stride 1 element, the other at least its dimension)");
    x = import_input(helpers().contiguous(x.object), name);
    reshape(args);
    view = blas_operand_of(is_a ? args.shape.a : args.shape.b, layout);
    if (!view) refuse(GEMM_STATUS_INTERNAL_ERROR, name, "its contiguous copy is still no BLAS matrix");
    return *view;
}

// Where C is computed: out itself, or a contiguous temporary copied into out afterwards
// when BLAS cannot write out as it is, or when out shares memory with a or b
// (numpy.matmul's result is as if computed apart).
struct computation_target {
    operand c;
    result_strides strides;
    gemm_layout_t layout = GEMM_ROW_MAJOR;
};

computation_target target_of(const operand &c, const matmul_args &args, const scalars &values, bool out_given) {
    computation_target target{c, result_strides_of(args.shape, c.geometry)};
    std::optional<gemm_layout_t> layout = layout_of_result(target.strides.c);
    const int64_t size = c.itemsize();
    const bool overlaps = out_given && (extents_overlap(c.geometry, c.data, args.a.geometry, args.a.data, size) ||
                                        extents_overlap(c.geometry, c.data, args.b.geometry, args.b.data, size));
    if (layout && !overlaps) {
        target.layout = *layout;
        return target;
    }
    say_copied("out", c, overlaps ? "shares memory with a or b" : "is no matrix BLAS writes in place");
    nb::object temporary = values.beta_zero ? helpers().empty(c.object, shape_tuple(args.shape.result_shape))
                                            : helpers().contiguous(c.object);
    target.c = import_output(temporary, "out");
    target.strides = result_strides_of(args.shape, target.c.geometry);
    layout = layout_of_result(target.strides.c);
    if (!layout) refuse(GEMM_STATUS_INTERNAL_ERROR, "out", "the contiguous result is still no BLAS matrix");
    target.layout = *layout;
    return target;
}

// The one C call for the operands (copying those BLAS cannot read in place).
blas_call call_of(matmul_args &args, const computation_target &target, const scalars &values) {
    blas_call call;
    call.layout = target.layout;
    call.a = readable(args.a, args, true, call.layout);
    call.b = readable(args.b, args, false, call.layout);
    call.m = args.shape.m;
    call.n = args.shape.n;
    call.k = args.shape.k;
    call.ldc = blas_operand_of(target.strides.c, call.layout)->ld;
    call.dtype = args.a.dtype;
    call.itemsize = args.a.itemsize();
    call.c_dtype = target.c.dtype;
    call.c_itemsize = target.c.itemsize();
    call.a_data = args.a.data;
    call.b_data = args.b.data;
    call.c_data = target.c.data;
    call.values = values;
    call.batch = batch_form_of(args.shape.batch_shape, args.shape.a_batch_strides, args.shape.b_batch_strides,
                               target.strides.batch_strides);
    return call;
}

call_context context_of(const operand &a, nb::handle backend, nb::handle stream) {
    call_context context;
    if (!backend.is_none()) context.backend = nb::cast<std::string>(nb::str(backend));
    context.device = a.device >= 0;
    context.stream = stream_of(stream);
    return context;
}

nb::object matmul(nb::handle a_object, nb::handle b_object, nb::handle out, nb::handle alpha, nb::handle beta,
                  nb::handle backend, nb::handle stream, nb::handle dtype, nb::handle a_scale, nb::handle b_scale,
                  nb::handle d_scale, nb::handle amax) {
    matmul_args args = operands_of(a_object, b_object);
    reshape(args);
    args.result_dtype = result_dtype_of(args, dtype, out);
    const scalars values = scalars_of(args.a.dtype, alpha, beta);
    if (out.is_none() && !values.beta_zero)
        refuse(GEMM_STATUS_INVALID_VALUE, "beta", "beta != 0 needs out= (the C that beta scales)");
    const call_context context = context_of(args.a, backend, stream);
    scale_arguments scales;
    fill_scales(scales, args.a.dtype, args.a.device, {args.shape.m, args.shape.n, args.shape.k}, a_scale, b_scale,
                d_scale, amax);
    const operand c = result_operand(args, out, !dtype.is_none());
    // An empty result has nothing to compute (and empty operands' strides mean nothing).
    for (int64_t size : args.shape.result_shape)
        if (size == 0) return c.object;
    int64_t matrices = 1;
    for (int64_t size : args.shape.batch_shape) matrices *= size;
    if (is_fp8(args.a.dtype) && matrices != 1)
        refuse(GEMM_STATUS_NOT_SUPPORTED, "a",
               "FP8 operands take one matrix a call (their scales are the call's); a @ b here is a batch of shape " +
                   shape_text(args.shape.batch_shape));
    const computation_target target = target_of(c, args, values, !out.is_none());
    blas_call call = call_of(args, target, values);
    call.scales = scales.scales;
    if (call.batch.count > 0) {
        const call_failure failure = run_without_gil(call, context);
        if (failure.status != GEMM_STATUS_SUCCESS) raise_failure(failure);
    }
    if (!target.c.object.is(c.object)) helpers().assign(c.object, target.c.object);
    // Two vectors make a scalar, as numpy.matmul returns it.
    if (out.is_none() && args.shape.result_shape.empty()) return c.object[nb::tuple()];
    return c.object;
}

}  // namespace

void bind_matmul(nb::module_ &m) {
    m.def("matmul", &matmul, nb::arg("a"), nb::arg("b"), nb::arg("out") = nb::none(), nb::kw_only(),
          nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0, nb::arg("backend") = nb::none(),
          nb::arg("stream") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("a_scale") = nb::none(),
          nb::arg("b_scale") = nb::none(), nb::arg("d_scale") = nb::none(), nb::arg("amax") = nb::none(),
          "C = alpha * a @ b + beta * out, as numpy.matmul computes a @ b; FP8 a and b with scales (see "
          "docs/PYTHON.md).");
}

}  // namespace gemm_python
