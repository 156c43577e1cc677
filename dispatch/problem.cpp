// problem.cpp: names and sizes of the canonical problem's enums.
#include "problem.hpp"

#include <string>

namespace gemm {

const char *dtype_name(dtype t) {
    switch (t) {
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::c32: return "c32";
    case dtype::c64: return "c64";
    case dtype::e4m3: return "e4m3";
    case dtype::e5m2: return "e5m2";
    }
    return "?";
}

std::size_t dtype_size(dtype t) {
    switch (t) {
    case dtype::f32: return 4;
    case dtype::f64: return 8;
    case dtype::f16:
    case dtype::bf16: return 2;
    case dtype::c32: return 8;
    case dtype::c64: return 16;
    case dtype::e4m3:
    case dtype::e5m2: return 1;
    }
    return 0;
}

bool is_complex(dtype t) { return t == dtype::c32 || t == dtype::c64; }

bool is_fp8(dtype t) { return t == dtype::e4m3 || t == dtype::e5m2; }

double problem::flops() const {
    return (is_complex(ab_type) ? 8.0 : 2.0) * double(m) * double(n) * double(k) * double(batch);
}

dtype compute_type_for(dtype ab) { return ab == dtype::f64 || is_complex(ab) ? ab : dtype::f32; }

bool c_type_allowed(dtype ab, dtype c) {
    if (is_fp8(ab)) return c == dtype::f32 || c == dtype::f16 || c == dtype::bf16;
    return c == ab || ((ab == dtype::f16 || ab == dtype::bf16) && c == dtype::f32);
}

const char *op_name(transpose o) { return o == transpose::n ? "N" : o == transpose::t ? "T" : "C"; }

const char *memory_space_name(memory_space s) {
    switch (s) {
    case memory_space::host: return "host";
    case memory_space::device: return "device";
    case memory_space::managed: return "managed";
    }
    return "?";
}

std::string epilogue_name(const epilogue_spec &e) {
    static const char *const activations[] = {"none", "relu", "gelu", "relu_backward", "gelu_backward"};
    static const char *const axes[] = {"", "rows", "columns"};
    std::string name = activations[int(e.act)];
    if (e.axis != epilogue_axis::none)
        name += std::string(e.backward() ? "+bias_grad(" : "+bias(") + axes[int(e.axis)] + ")";
    if (e.aux && !e.backward()) name += "+aux";
    return name;
}

}  // namespace gemm
