// blas_call.cpp: runs a gemm.matmul's C call without the GIL (see blas_call.hpp).
#include "blas_call.hpp"

#include "operand.hpp"

#include <nanobind/stl/string.h>

#include <cstring>
#include <vector>

namespace nb = nanobind;

namespace gemm_python {
namespace {

std::complex<double> number_of(nb::handle value, const char *argument) {
    Py_complex c = PyComplex_AsCComplex(value.ptr());
    if (c.real == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        refuse(GEMM_STATUS_INVALID_VALUE, argument,
               "must be a number, not " + nb::cast<std::string>(nb::type_name(value.type())));
    }
    return {c.real, c.imag};
}

void store(unsigned char *target, gemm_dtype_t compute, std::complex<double> value) {
    if (compute == GEMM_F32) {
        const auto v = static_cast<float>(value.real());
        std::memcpy(target, &v, sizeof v);
    } else if (compute == GEMM_F64) {
        const double v = value.real();
        std::memcpy(target, &v, sizeof v);
    } else if (compute == GEMM_C32) {
        const std::complex<float> v(static_cast<float>(value.real()), static_cast<float>(value.imag()));
        std::memcpy(target, &v, sizeof v);
    } else {
        std::memcpy(target, &value, sizeof value);
    }
}

bool is_complex(gemm_dtype_t dtype) { return dtype == GEMM_C32 || dtype == GEMM_C64; }

gemm_status_t run_single(const blas_call &c) {
    const gemm_dtype_t t = c.dtype;
    const void *a = reinterpret_cast<const void *>(c.a_data), *b = reinterpret_cast<const void *>(c.b_data);
    void *out = reinterpret_cast<void *>(c.c_data);
    if (!is_fp8(t))
        return gemm_ex(c.layout, c.a.op, c.b.op, c.m, c.n, c.k, c.values.alpha, a, t, c.a.ld, b, t, c.b.ld,
                       c.values.beta, out, t, c.ldc, compute_type_of(t));
    const gemm_scaling_t scaling = scaling_of(c.scales);
    return gemm_ex_scaled(c.layout, c.a.op, c.b.op, c.m, c.n, c.k, c.values.alpha, a, t, c.a.ld, b, t, c.b.ld,
                          c.values.beta, out, c.c_dtype, c.ldc, compute_type_of(t), &scaling);
}

gemm_status_t run_strided(const blas_call &c) {
    const gemm_dtype_t t = c.dtype;
    return gemm_ex_strided_batched(
        c.layout, c.a.op, c.b.op, c.m, c.n, c.k, c.values.alpha, reinterpret_cast<const void *>(c.a_data), t, c.a.ld,
        c.batch.stride_a, reinterpret_cast<const void *>(c.b_data), t, c.b.ld, c.batch.stride_b, c.values.beta,
        reinterpret_cast<void *>(c.c_data), c.c_dtype, c.ldc, c.batch.stride_c, c.batch.count, compute_type_of(t));
}

gemm_status_t run_pointers(const blas_call &c) {
    const size_t count = c.batch.offsets.a.size();
    std::vector<const void *> a(count), b(count);
    std::vector<void *> out(count);
    for (size_t i = 0; i < count; ++i) {
        a[i] = reinterpret_cast<const void *>(c.a_data + static_cast<uintptr_t>(c.batch.offsets.a[i] * c.itemsize));
        b[i] = reinterpret_cast<const void *>(c.b_data + static_cast<uintptr_t>(c.batch.offsets.b[i] * c.itemsize));
        out[i] = reinterpret_cast<void *>(c.c_data + static_cast<uintptr_t>(c.batch.offsets.c[i] * c.c_itemsize));
    }
    const gemm_dtype_t t = c.dtype;
    return gemm_ex_batched(c.layout, c.a.op, c.b.op, c.m, c.n, c.k, c.values.alpha, a.data(), t, c.a.ld, b.data(), t,
                           c.b.ld, c.values.beta, out.data(), c.c_dtype, c.ldc, c.batch.count, compute_type_of(t));
}

call_failure failure_of(gemm_status_t status) {
    return status == GEMM_STATUS_SUCCESS ? call_failure{} : failure_of_last_call(status);
}

gemm_status_t run_call(const blas_call &call) {
    if (!call.batch.uniform) return run_pointers(call);
    if (call.batch.count == 1) return run_single(call);
    return run_strided(call);
}

// A call that forces its own backend sets it for this thread alone (gemm_set_thread_backend),
// runs, and gives the thread back the choice it had: other threads never see it.
call_failure run_forced(const blas_call &call, const call_context &context) {
    const std::string previous = gemm_get_backend();
    const bool was_set = std::strcmp(gemm_get_backend_source(), "gemm_set_thread_backend") == 0;
    gemm_status_t status = gemm_set_thread_backend(context.backend.c_str());
    if (status != GEMM_STATUS_SUCCESS) {
        call_failure failure = failure_of_last_call(status);
        failure.argument = "backend";
        return failure;
    }
    call_failure failure = failure_of(run_call(call));
    gemm_set_thread_backend(was_set ? previous.c_str() : nullptr);
    return failure;
}

}  // namespace

bool is_fp8(gemm_dtype_t dtype) { return dtype == GEMM_F8_E4M3 || dtype == GEMM_F8_E5M2; }

gemm_scaling_t scaling_of(const fp8_scales &scales) {
    gemm_scaling_t scaling;
    gemm_scaling_init(&scaling);
    scaling.mode = scales.mode;
    scaling.a_scale = scales.a;
    scaling.b_scale = scales.b;
    scaling.d_scale = scales.d;
    scaling.amax_d = scales.amax;
    scaling.ld_a_scale = scales.ld_a;
    scaling.ld_b_scale = scales.ld_b;
    return scaling;
}

gemm_dtype_t compute_type_of(gemm_dtype_t dtype) {
    return dtype == GEMM_F16 || dtype == GEMM_BF16 || is_fp8(dtype) ? GEMM_F32 : dtype;
}

scalars scalars_of(gemm_dtype_t dtype, nb::handle alpha, nb::handle beta) {
    scalars s;
    const std::complex<double> a = number_of(alpha, "alpha"), b = number_of(beta, "beta");
    for (const auto &[value, name] : {std::pair{a, "alpha"}, std::pair{b, "beta"}})
        if (value.imag() != 0 && !is_complex(dtype))
            refuse(GEMM_STATUS_INVALID_VALUE, name,
                   "a complex value for " + std::string(dtype_text(dtype)) + " operands");
    store(s.alpha, compute_type_of(dtype), a);
    store(s.beta, compute_type_of(dtype), b);
    s.beta_zero = b == std::complex<double>(0, 0);
    return s;
}

call_failure run_without_gil(const blas_call &call, const call_context &context) {
    nb::gil_scoped_release release;
    void *previous_stream = nullptr;
    if (context.device) {
        previous_stream = gemm_get_stream();
        gemm_set_stream(context.stream);
    }
    call_failure failure;
    if (context.backend.empty()) failure = failure_of(run_call(call));
    else failure = run_forced(call, context);
    if (context.device) gemm_set_stream(previous_stream);
    return failure;
}

void *stream_of(nb::handle stream) {
    if (stream.is_none()) return nullptr;
    nb::handle value = stream;
    nb::object attribute;
    if (!PyLong_Check(stream.ptr())) {
        for (const char *name : {"cuda_stream", "ptr"})
            if (nb::hasattr(stream, name)) {
                attribute = stream.attr(name);
                value = attribute;
                break;
            }
    }
    if (!PyLong_Check(value.ptr()))
        refuse(GEMM_STATUS_INVALID_VALUE, "stream",
               "must be None, an int (a cudaStream_t) or a stream with cuda_stream or ptr");
    return reinterpret_cast<void *>(PyLong_AsUnsignedLongLong(value.ptr()));
}

}  // namespace gemm_python
