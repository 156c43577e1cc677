// operand.hpp: arrays from Python (NumPy through the buffer protocol or DLPack; CuPy,
// PyTorch, JAX through DLPack) as gemm operands: data pointer, dtype, shape, memory.
#pragma once

#include "blas_geometry.hpp"

#include <gemm/gemm.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

namespace gemm_python {

struct operand {
    nanobind::object object;             // what the caller passed (or the copy made of it)
    nanobind::ndarray<nanobind::ro> in;  // the import, held while the data is used
    nanobind::ndarray<> out;             // the import of a writable operand
    gemm_dtype_t dtype = GEMM_F32;
    strided_shape geometry;
    int device = -1;  // -1: host memory; else the CUDA device
    uintptr_t data = 0;
    bool imported_as_bits = false;  // read as unsigned integers, taken as dtype

    int64_t itemsize() const;
};

// An input: any array, read-only ones included; not an array at all goes through
// numpy.asarray, as numpy.matmul takes lists.
operand import_input(nanobind::handle object, const char *argument);

// An output: a writable array (a read-only one is refused, naming argument).
operand import_output(nanobind::handle object, const char *argument);

// "float32", "bfloat16", ...: numpy's names for gemm's types.
const char *dtype_text(gemm_dtype_t dtype);

// The gemm dtype a numpy-style dtype name stands for (FP8 included; refused naming argument).
gemm_dtype_t dtype_of_name(const std::string &name, const char *argument);

// The numpy-style name of a dtype argument: a string, a NumPy dtype or scalar type (ml_dtypes'
// included), a PyTorch dtype ("bfloat16" for torch.bfloat16).
std::string dtype_name_of(nanobind::handle dtype);

// "host" or "CUDA device 0".
std::string device_text(int device);

// The Python helpers of gemm/_arrays.py: copies and allocations through the array's own
// library (NumPy, CuPy, PyTorch), which C++ cannot make for a device array.
struct array_helpers {
    nanobind::object contiguous, empty, assign, as_bits;
};
const array_helpers &helpers();
void set_helpers(nanobind::handle contiguous, nanobind::handle empty, nanobind::handle assign, nanobind::handle as_bits);

}  // namespace gemm_python
