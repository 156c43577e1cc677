// fp8_scales.cpp: an FP8 call's scales and amax from Python numbers and arrays.
#include "fp8_scales.hpp"

#include "python_error.hpp"

#include <string>
#include <utility>

namespace nb = nanobind;

namespace gemm_python {

bool is_fp8_result_type(gemm_dtype_t t) { return t == GEMM_BF16 || t == GEMM_F16 || t == GEMM_F32; }

namespace {

bool is_number(nb::handle value) { return PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr()); }

// A scale's array: float32, one element, in the operands' memory.
void check_scale_array(const operand &x, int device, const char *name) {
    int64_t count = 1;
    for (int64_t size : x.geometry.shape) count *= size;
    if (x.dtype != GEMM_F32 || count != 1)
        refuse(GEMM_STATUS_INVALID_VALUE, name,
               std::string("must be a number or a float32 array of one element, not ") + dtype_text(x.dtype) +
                   " of shape " + shape_text(x.geometry.shape));
    if (x.device != device)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, name,
               "is in " + device_text(x.device) + " memory, a and b in " + device_text(device) + " memory");
}

const float *scale_pointer(scale_arguments &s, int slot, nb::handle value, int device, const char *name) {
    if (value.is_none()) return nullptr;
    if (is_number(value)) {
        if (device >= 0)
            refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, name,
                   "a number is host memory, a and b are in " + device_text(device) +
                       " memory: pass a float32 array of one element there");
        s.numbers[slot] = static_cast<float>(nb::cast<double>(value));
        return &s.numbers[slot];
    }
    operand x = import_input(value, name);
    check_scale_array(x, device, name);
    s.arrays.push_back(x);
    return reinterpret_cast<const float *>(x.data);
}

}  // namespace

void fill_scales(scale_arguments &s, gemm_dtype_t ab, int device, nb::handle a_scale, nb::handle b_scale,
                 nb::handle d_scale, nb::handle amax) {
    const std::pair<nb::handle, const char *> given[] = {
        {a_scale, "a_scale"}, {b_scale, "b_scale"}, {d_scale, "d_scale"}, {amax, "amax"}};
    if (!is_fp8(ab)) {
        for (const auto &[value, name] : given)
            if (!value.is_none())
                refuse(GEMM_STATUS_INVALID_VALUE, name,
                       std::string("scales apply to FP8 operands (float8_e4m3fn, float8_e5m2); a and b are ") +
                           dtype_text(ab));
        return;
    }
    if (a_scale.is_none() != b_scale.is_none())
        refuse(GEMM_STATUS_INVALID_VALUE, a_scale.is_none() ? "a_scale" : "b_scale",
               "is needed with the other: a_scale and b_scale come together (per-tensor scales)");
    s.scales.a = scale_pointer(s, 0, a_scale, device, "a_scale");
    s.scales.b = scale_pointer(s, 1, b_scale, device, "b_scale");
    s.scales.d = scale_pointer(s, 2, d_scale, device, "d_scale");
    s.scales.mode = s.scales.a ? GEMM_SCALE_TENSOR : GEMM_SCALE_NONE;
    if (!amax.is_none()) {
        operand x = import_output(amax, "amax");
        check_scale_array(x, device, "amax");
        s.arrays.push_back(x);
        s.scales.amax = reinterpret_cast<float *>(x.data);
    }
}

}  // namespace gemm_python
