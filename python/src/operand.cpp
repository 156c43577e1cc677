// operand.cpp: Python arrays imported as gemm operands (see operand.hpp).
#include "operand.hpp"

#include "python_error.hpp"

#include <nanobind/stl/string.h>

#include <optional>

namespace nb = nanobind;

namespace gemm_python {
namespace {

// Held for the life of the process, never destroyed: module functions use them until it ends.
array_helpers *array_helpers_storage = nullptr;

std::optional<gemm_dtype_t> gemm_dtype_of(nb::dlpack::dtype t) {
    using code = nb::dlpack::dtype_code;
    if (t.lanes != 1) return std::nullopt;
    if (t.code == static_cast<uint8_t>(code::Float)) {
        if (t.bits == 32) return GEMM_F32;
        if (t.bits == 64) return GEMM_F64;
        if (t.bits == 16) return GEMM_F16;
    } else if (t.code == static_cast<uint8_t>(code::Bfloat) && t.bits == 16) {
        return GEMM_BF16;
    } else if (t.code == static_cast<uint8_t>(code::Complex)) {
        if (t.bits == 64) return GEMM_C32;
        if (t.bits == 128) return GEMM_C64;
    }
    return std::nullopt;
}

// NumPy exports bfloat16 (ml_dtypes) neither by DLPack nor by buffer: its bits are
// imported as uint16 and taken as bfloat16.
bool is_bfloat16_array(nb::handle object) {
    if (!nb::hasattr(object, "dtype")) return false;
    nb::object name = nb::getattr(object.attr("dtype"), "name", nb::none());
    return nb::isinstance<nb::str>(name) && nb::cast<std::string>(name) == "bfloat16";
}

std::string python_type_name(nb::handle object) { return nb::cast<std::string>(nb::type_name(object.type())); }

[[noreturn]] void refuse_dtype(const char *argument, const std::string &name) {
    refuse(GEMM_STATUS_INVALID_DTYPE, argument,
           "dtype " + name + " is not one gemm computes (float32, float64, float16, bfloat16, complex64, complex128)");
}

template <typename Array> void describe(operand &x, const Array &array, const char *argument) {
    std::optional<gemm_dtype_t> dtype = gemm_dtype_of(array.dtype());
    if (!dtype && x.dtype != GEMM_BF16) {
        std::string name = "?";
        if (nb::hasattr(x.object, "dtype")) {
            nb::object dtype_object = x.object.attr("dtype");
            name = nb::str(dtype_object).c_str();
        }
        refuse_dtype(argument, name);
    }
    if (dtype) x.dtype = *dtype;
    const int type = array.device_type();
    if (type == nb::device::cpu::value || type == nb::device::cuda_host::value) {
        x.device = -1;
    } else if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value) {
        x.device = array.device_id();
    } else {
        refuse(GEMM_STATUS_INVALID_POINTER, argument,
               "the array lives on DLPack device type " + std::to_string(type) + "; gemm takes host and CUDA memory");
    }
    const size_t nd = array.ndim();
    x.geometry.shape.resize(nd);
    x.geometry.strides.resize(nd);
    for (size_t d = 0; d < nd; ++d) {
        x.geometry.shape[d] = static_cast<int64_t>(array.shape(d));
        x.geometry.strides[d] = array.stride(d);
    }
    x.data = reinterpret_cast<uintptr_t>(array.data());
}

// Imports object into x's in or out; false when it is no array nanobind can read.
template <typename Array> bool try_import(operand &x, nb::handle object, Array &target, const char *argument) {
    if (!nb::try_cast(object, target, false)) return false;
    describe(x, target, argument);
    return true;
}

// try_import, and for a NumPy bfloat16 array (ml_dtypes) its bits as uint16 taken as bfloat16.
template <typename Array> bool import_as_array(operand &x, nb::handle object, Array &target, const char *argument) {
    if (try_import(x, object, target, argument)) return true;
    if (!is_bfloat16_array(object)) return false;
    x.dtype = GEMM_BF16;
    return try_import(x, helpers().as_uint16(object), target, argument);
}

}  // namespace

int64_t operand::itemsize() const {
    switch (dtype) {
    case GEMM_F16:
    case GEMM_BF16: return 2;
    case GEMM_F32: return 4;
    case GEMM_F64:
    case GEMM_C32: return 8;
    case GEMM_C64: return 16;
    case GEMM_F8_E4M3:
    case GEMM_F8_E5M2: return 1;
    }
    return 1;
}

operand import_input(nb::handle object, const char *argument) {
    operand x;
    x.object = nb::borrow(object);
    if (import_as_array(x, object, x.in, argument)) return x;
    if (!nb::hasattr(object, "__dlpack__") && !nb::hasattr(object, "__array_interface__")) {
        nb::object array = nb::module_::import_("numpy").attr("asarray")(object);
        if (!array.is(object)) return import_input(array, argument);
    }
    if (nb::hasattr(object, "dtype")) {
        nb::object dtype_object = object.attr("dtype");
        refuse_dtype(argument, nb::str(dtype_object).c_str());
    }
    refuse(GEMM_STATUS_INVALID_VALUE, argument,
           "cannot read a " + python_type_name(object) +
               " as an array (gemm takes NumPy arrays and DLPack arrays: CuPy, PyTorch, JAX)");
}

operand import_output(nb::handle object, const char *argument) {
    operand x;
    x.object = nb::borrow(object);
    if (import_as_array(x, object, x.out, argument)) return x;
    nb::ndarray<nb::ro> readable;
    if (nb::try_cast(object, readable, false))
        refuse(GEMM_STATUS_INVALID_VALUE, argument, "the array is read-only; gemm writes the result into it");
    refuse(GEMM_STATUS_INVALID_VALUE, argument,
           "cannot write into a " + python_type_name(object) + " (gemm takes NumPy arrays and DLPack arrays)");
}

const char *dtype_text(gemm_dtype_t dtype) {
    switch (dtype) {
    case GEMM_F32: return "float32";
    case GEMM_F64: return "float64";
    case GEMM_F16: return "float16";
    case GEMM_BF16: return "bfloat16";
    case GEMM_C32: return "complex64";
    case GEMM_C64: return "complex128";
    case GEMM_F8_E4M3: return "float8_e4m3fn";
    case GEMM_F8_E5M2: return "float8_e5m2";
    }
    return "?";
}

gemm_dtype_t dtype_of_name(const std::string &name, const char *argument) {
    for (gemm_dtype_t t : {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16, GEMM_C32, GEMM_C64})
        if (name == dtype_text(t) || name == gemm_dtype_name(t)) return t;
    refuse_dtype(argument, name);
}

std::string device_text(int device) { return device < 0 ? "host" : "CUDA device " + std::to_string(device); }

const array_helpers &helpers() {
    if (!array_helpers_storage)
        refuse(GEMM_STATUS_INTERNAL_ERROR, "gemm", "gemm._gemm was imported without the gemm package");
    return *array_helpers_storage;
}

void set_helpers(nb::handle contiguous, nb::handle empty, nb::handle assign, nb::handle as_uint16) {
    array_helpers_storage =
        new array_helpers{nb::borrow(contiguous), nb::borrow(empty), nb::borrow(assign), nb::borrow(as_uint16)};
}

}  // namespace gemm_python
