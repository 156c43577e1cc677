// operand.cpp: Python arrays imported as gemm operands (see operand.hpp).
#include "operand.hpp"

#include "python_error.hpp"

#include <nanobind/stl/string.h>

#include <optional>

namespace nb = nanobind;

namespace gemm_python {
namespace {

// DLPack's codes of the FP8 types (dlpack.h 1.1: kDLFloat8_e4m3fn, kDLFloat8_e5m2).
constexpr uint8_t dlpack_float8_e4m3fn = 10, dlpack_float8_e5m2 = 12;

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
    } else if (t.code == dlpack_float8_e4m3fn && t.bits == 8) {
        return GEMM_F8_E4M3;
    } else if (t.code == dlpack_float8_e5m2 && t.bits == 8) {
        return GEMM_F8_E5M2;
    }
    return std::nullopt;
}

// The name a dtype object states: a PyTorch dtype's after "torch.", else its `name` ("" when
// it has none).
std::string stated_dtype_name(nb::handle dtype) {
    const std::string text = nb::cast<std::string>(nb::str(dtype));
    if (text.rfind("torch.", 0) == 0) return text.substr(6);
    nb::object name = nb::getattr(dtype, "name", nb::none());
    return nb::isinstance<nb::str>(name) ? nb::cast<std::string>(name) : std::string();
}

// The types a library may export neither by DLPack nor by buffer (NumPy's bfloat16 and FP8 of
// ml_dtypes; PyTorch's FP8 where its DLPack lacks them), by the name of the array's dtype
// ("bfloat16", "float8_e4m3fn", "torch.float8_e5m2"): their bits are imported as unsigned
// integers of their size and taken as that type.
std::optional<gemm_dtype_t> bits_dtype_of(nb::handle object) {
    if (!nb::hasattr(object, "dtype")) return std::nullopt;
    const std::string name = stated_dtype_name(object.attr("dtype"));
    for (gemm_dtype_t t : {GEMM_BF16, GEMM_F8_E4M3, GEMM_F8_E5M2})
        if (name == dtype_text(t)) return t;
    return std::nullopt;
}

std::string python_type_name(nb::handle object) { return nb::cast<std::string>(nb::type_name(object.type())); }

[[noreturn]] void refuse_dtype(const char *argument, const std::string &name) {
    refuse(GEMM_STATUS_INVALID_DTYPE, argument,
           "dtype " + name +
               " is not one gemm computes (float32, float64, float16, bfloat16, complex64, complex128, "
               "float8_e4m3fn, float8_e5m2)");
}

template <typename Array> void describe(operand &x, const Array &array, const char *argument) {
    std::optional<gemm_dtype_t> dtype = gemm_dtype_of(array.dtype());
    if (!dtype && !x.imported_as_bits) {
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

// try_import, and for an array of a type bits_dtype_of names, its bits taken as that type.
template <typename Array> bool import_as_array(operand &x, nb::handle object, Array &target, const char *argument) {
    if (try_import(x, object, target, argument)) return true;
    const std::optional<gemm_dtype_t> dtype = bits_dtype_of(object);
    if (!dtype) return false;
    x.dtype = *dtype;
    x.imported_as_bits = true;
    return try_import(x, helpers().as_bits(object), target, argument);
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
    for (gemm_dtype_t t : {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16, GEMM_C32, GEMM_C64, GEMM_F8_E4M3, GEMM_F8_E5M2})
        if (name == dtype_text(t) || name == gemm_dtype_name(t)) return t;
    refuse_dtype(argument, name);
}

std::string dtype_name_of(nb::handle dtype) {
    if (nb::isinstance<nb::str>(dtype)) return nb::cast<std::string>(dtype);
    if (std::string name = stated_dtype_name(dtype); !name.empty()) return name;
    return nb::cast<std::string>(nb::module_::import_("numpy").attr("dtype")(dtype).attr("name"));
}

std::string device_text(int device) { return device < 0 ? "host" : "CUDA device " + std::to_string(device); }

const array_helpers &helpers() {
    if (!array_helpers_storage)
        refuse(GEMM_STATUS_INTERNAL_ERROR, "gemm", "gemm._gemm was imported without the gemm package");
    return *array_helpers_storage;
}

void set_helpers(nb::handle contiguous, nb::handle empty, nb::handle assign, nb::handle as_bits) {
    array_helpers_storage =
        new array_helpers{nb::borrow(contiguous), nb::borrow(empty), nb::borrow(assign), nb::borrow(as_bits)};
}

}  // namespace gemm_python
