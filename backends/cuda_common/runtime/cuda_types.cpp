// cuda_types.cpp: the type rules of the CUDA libraries.
#include "cuda_types.hpp"

#include <string>

#include "dispatch/settings.hpp"

namespace gemm::cuda {

bool use_tf32(const problem &p) { return p.ab_type == dtype::f32 && settings().allow_tf32; }

verdict library_supports_types(const problem &p) {
    if (!c_type_allowed(p.ab_type, p.c_type))
        return verdict::no(std::string("C of type ") + dtype_name(p.c_type) + " not supported with " +
                           dtype_name(p.ab_type) + " inputs");
    if (p.compute_type != compute_type_for(p.ab_type))
        return verdict::no(std::string("compute type ") + dtype_name(p.compute_type) + " not supported with " +
                           dtype_name(p.ab_type) + " inputs");
    return verdict::yes();
}

}  // namespace gemm::cuda
