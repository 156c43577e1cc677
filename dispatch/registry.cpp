// registry.cpp: the registry of backends. Their list is backends/CMakeLists.txt's
// gemm_backend() lines, one per backend, in order; CMake writes it into backend_factories.hpp.
#include "registry.hpp"

#include "backend_factories.hpp"

namespace gemm {
namespace {

// Within each kind the order is the built-in rule's preference where no measured rates decide
// (policy.cpp; why this order: backends/CMakeLists.txt).
std::vector<backend_ptr> build_registry() {
    std::vector<backend_ptr> all;
    for (backend_factory make : backend_factories) all.push_back(make());
    return all;
}

}  // namespace

const std::vector<backend *> &registered_backends() {
    // Owned here for the life of the process and never destroyed, so backends stay valid for
    // threads still running at exit (and leak checkers still see them referenced).
    static const std::vector<backend_ptr> *owned = new std::vector<backend_ptr>(build_registry());
    static const std::vector<backend *> *view = [] {
        auto *ptrs = new std::vector<backend *>;
        for (const backend_ptr &b : *owned) ptrs->push_back(b.get());
        return ptrs;
    }();
    return *view;
}

backend *find_backend(std::string_view name) {
    for (backend *b : registered_backends())
        if (b->name() == name) return b;
    return nullptr;
}

}  // namespace gemm
