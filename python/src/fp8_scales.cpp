// fp8_scales.cpp: an FP8 call's scales and amax from Python numbers and arrays.
#include "fp8_scales.hpp"

#include "python_error.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace gemm_python {

bool is_fp8_result_type(gemm_dtype_t t) { return t == GEMM_BF16 || t == GEMM_F16 || t == GEMM_F32; }

namespace {

bool is_number(nb::handle value) { return PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr()); }

int64_t element_count(const operand &x) {
    int64_t count = 1;
    for (int64_t size : x.geometry.shape) count *= size;
    return count;
}

// A scale's array: float32, in the operands' memory.
void check_type_and_memory(const operand &x, int device, const char *name) {
    if (x.dtype != GEMM_F32)
        refuse(GEMM_STATUS_INVALID_VALUE, name,
               std::string("must be a number or a float32 array, not ") + dtype_text(x.dtype) + " of shape " +
                   shape_text(x.geometry.shape));
    if (x.device != device)
        refuse(GEMM_STATUS_MIXED_MEMORY_SPACES, name,
               "is in " + device_text(x.device) + " memory, a and b in " + device_text(device) + " memory");
}

// A per-tensor scale's array: one float32 element in the operands' memory.
void check_scale_array(const operand &x, int device, const char *name) {
    if (x.dtype != GEMM_F32 || element_count(x) != 1)
        refuse(GEMM_STATUS_INVALID_VALUE, name,
               std::string("must be a number or a float32 array of one element, not ") + dtype_text(x.dtype) +
                   " of shape " + shape_text(x.geometry.shape));
    check_type_and_memory(x, device, name);
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

// Whether value is an array of other than one element: block scales.
bool holds_blocks(nb::handle value, const char *name) {
    return !value.is_none() && !is_number(value) && element_count(import_input(value, name)) != 1;
}

// A block scale array of shape (rows, cols) as gemm_scaling_t reads it: element (r, c) at
// r + c * ld, ld >= max(1, rows) (a_scale: rows of a by blocks of k; b_scale: blocks of k by
// blocks of 128 columns of b). Stored otherwise (rows not adjacent, a negative or broadcast
// stride), it is copied, its transpose made contiguous, in its own memory.
const float *block_scale_pointer(scale_arguments &s, nb::handle value, int device, int64_t rows, int64_t cols,
                                 const char *name, const char *shape_words, int64_t &ld) {
    if (is_number(value))
        refuse(GEMM_STATUS_INVALID_VALUE, name,
               std::string("is a number, the other scale block scales: block scales come together, ") + name +
                   " an array of shape " + shape_words);
    operand x = import_input(value, name);
    check_type_and_memory(x, device, name);
    const std::vector<int64_t> want = {rows, cols};
    if (x.geometry.shape != want)
        refuse(GEMM_STATUS_INVALID_SIZE, name,
               std::string("has shape ") + shape_text(x.geometry.shape) + "; block scales of this product have shape " +
                   shape_words + " = " + shape_text(want));
    const int64_t least = std::max<int64_t>(1, rows), row_step = x.geometry.strides[0], col_step = x.geometry.strides[1];
    const bool in_place = (rows <= 1 || row_step == 1) && (cols <= 1 || col_step >= least);
    if (!in_place && !nb::hasattr(x.object, "T"))
        refuse(GEMM_STATUS_INVALID_STRIDE, name,
               "(strides " + shape_text(x.geometry.strides) + " elements) is not stored as block scales are read " +
                   "(rows adjacent, one column after another) and has no .T to copy it by: pass it so stored");
    if (!in_place) {
        if (const char *verbose = std::getenv("GEMM_VERBOSE"); verbose && std::atoi(verbose) >= 1)
            std::fprintf(stderr,
                         "gemm: %s (shape %s, strides %s elements) is not stored as block scales are read (rows "
                         "adjacent, one column after another): copied\n",
                         name, shape_text(x.geometry.shape).c_str(), shape_text(x.geometry.strides).c_str());
        x = import_input(helpers().contiguous(x.object.attr("T")), name);
    }
    ld = in_place && cols > 1 ? col_step : least;
    s.arrays.push_back(x);
    return reinterpret_cast<const float *>(x.data);
}

void fill_block_scales(scale_arguments &s, int device, const product_sizes &sizes, nb::handle a_scale,
                       nb::handle b_scale) {
    const int64_t k_blocks = (sizes.k + 127) / 128, n_blocks = (sizes.n + 127) / 128;
    s.scales.a =
        block_scale_pointer(s, a_scale, device, sizes.m, k_blocks, "a_scale", "(m, ceil(k / 128))", s.scales.ld_a);
    s.scales.b = block_scale_pointer(s, b_scale, device, k_blocks, n_blocks, "b_scale",
                                     "(ceil(k / 128), ceil(n / 128))", s.scales.ld_b);
    s.scales.mode = GEMM_SCALE_BLOCK;
    // An empty array's data may be NULL, which gemm_scaling_t refuses; no scale of it is read.
    if (!s.scales.a) s.scales.a = &s.numbers[0];
    if (!s.scales.b) s.scales.b = &s.numbers[1];
}

}  // namespace

void fill_scales(scale_arguments &s, gemm_dtype_t ab, int device, const product_sizes &sizes, nb::handle a_scale,
                 nb::handle b_scale, nb::handle d_scale, nb::handle amax) {
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
               "is needed with the other: a_scale and b_scale come together");
    if (holds_blocks(a_scale, "a_scale") || holds_blocks(b_scale, "b_scale")) {
        fill_block_scales(s, device, sizes, a_scale, b_scale);
    } else {
        s.scales.a = scale_pointer(s, 0, a_scale, device, "a_scale");
        s.scales.b = scale_pointer(s, 1, b_scale, device, "b_scale");
        s.scales.mode = s.scales.a ? GEMM_SCALE_TENSOR : GEMM_SCALE_NONE;
    }
    s.scales.d = scale_pointer(s, 2, d_scale, device, "d_scale");
    if (!amax.is_none()) {
        operand x = import_output(amax, "amax");
        check_scale_array(x, device, "amax");
        s.arrays.push_back(x);
        s.scales.amax = reinterpret_cast<float *>(x.data);
    }
}

}  // namespace gemm_python
