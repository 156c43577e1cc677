// memory.cpp: pointer classification through the device runtime's classifier, and the runtime's
// table as the registered backends hand it over.
#include "memory.hpp"

#include <algorithm>
#include <iterator>

#include "error.hpp"
#include "registry.hpp"

namespace gemm {
namespace {

thread_local void *tls_stream = nullptr;

// The table of the first registered backend that hands one over.
const device_services *registered_services() {
    for (const backend *b : registered_backends())
        if (const device_services *services = b->runtime_services()) return services;
    return nullptr;
}

// The classifier of the device runtime, or nullptr: every pointer is host memory.
pointer_classifier installed_classifier() {
    const device_services *services = installed_device_services();
    return services ? services->classify : nullptr;
}

}  // namespace

const device_services *installed_device_services() {
    static const device_services *const services = registered_services();
    return services;
}

void set_thread_stream(void *stream) { tls_stream = stream; }
void *thread_stream() { return tls_stream; }

bool allocation_memo::find(const void *ptr, pointer_place &place) const {
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(ptr);
    for (int i = 0; i < count_; ++i)
        if (at - seen_[i].range_begin < seen_[i].range_bytes) {  // unsigned: also false below begin
            place = seen_[i];
            return true;
        }
    return false;
}

void allocation_memo::add(const pointer_place &place) {
    if (place.range_bytes == 0) return;
    for (int i = std::min(count_, capacity - 1); i > 0; --i) seen_[i] = seen_[i - 1];
    seen_[0] = place;
    count_ = std::min(count_ + 1, capacity);
}

gemm_status_t host_readable_arrays(pointer_array *arrays, int count, std::size_t matrices, int &failed,
                                   std::string &why) {
    for (int i = 0; i < count; ++i) arrays[i].readable = arrays[i].array;
    const pointer_classifier classify = installed_classifier();
    if (!classify || matrices == 0) return GEMM_STATUS_SUCCESS;
    std::vector<stream_read> reads;
    std::vector<int> read_of;  // the array each read copies
    std::string first_where;   // of the first array read
    for (int i = 0; i < count; ++i) {
        pointer_array &x = arrays[i];
        if (!x.array) continue;
        const pointer_place place = classify(x.array);
        const memory_space space = place.space;
        const int device = place.device;
        const std::uintptr_t begin = place.range_begin;
        const std::size_t bytes = place.range_bytes;
        if (space == memory_space::host) continue;
        const std::string where =
            std::string("lies in ") + memory_space_name(space) + " memory of device " + std::to_string(device);
        failed = i;
        // The driver knows the allocation: an array that ends past it is refused before the
        // copy would read beyond it.
        const std::size_t room =
            bytes ? (bytes - (reinterpret_cast<std::uintptr_t>(x.array) - begin)) / sizeof(void *) : matrices;
        if (room < matrices) {
            why = where + ", whose allocation holds " + std::to_string(room) + " pointers from it; the batch has " +
                  std::to_string(matrices) + " matrices";
            return GEMM_STATUS_INVALID_POINTER;
        }
        if (!installed_device_services()->read_in_stream_order) {
            why = where + ", which this build cannot read";
            return GEMM_STATUS_NOT_SUPPORTED;
        }
        x.copy.resize(matrices);
        reads.push_back({x.copy.data(), x.array, matrices * sizeof(void *), device});
        read_of.push_back(i);
        if (first_where.empty()) first_where = where;
    }
    if (reads.empty()) return GEMM_STATUS_SUCCESS;
    const device_services *services = installed_device_services();
    if (gemm_status_t st = services->read_in_stream_order(tls_stream, reads.data(), int(reads.size()));
        st != GEMM_STATUS_SUCCESS) {
        failed = read_of.front();
        why = first_where + ": " + last_error_message();
        return st;
    }
    for (int i : read_of) arrays[i].readable = arrays[i].copy.data();
    return GEMM_STATUS_SUCCESS;
}

namespace {

// An operand a call reads or writes (nullptr: one it does not touch), named for messages.
struct operand {
    const void *ptr;
    const char *name;
};

// Where the touched operands lie, all in one space (else MIXED_MEMORY_SPACES naming the first
// two that differ); host memory when none is touched.
gemm_status_t classify_operands(const operand *ops, std::size_t count, pointer_classifier classify,
                                allocation_memo &memo, pointer_place &out) {
    out = pointer_place{};
    const operand *first = nullptr;
    for (std::size_t i = 0; i < count; ++i) {
        const operand &o = ops[i];
        if (!o.ptr) continue;
        pointer_place place;
        if (!memo.find(o.ptr, place)) {
            place = classify(o.ptr);
            memo.add(place);
        }
        const memory_space s = place.space;
        const int device = place.device;
        if (!first) {
            first = &o;
            out.space = s;
            out.device = device;
            out.page_locked = place.page_locked;
            continue;
        }
        out.page_locked &= place.page_locked;
        bool same = (s == memory_space::host) == (out.space == memory_space::host) &&
                    (s == memory_space::host || device == out.device);
        if (!same)
            return set_error(GEMM_STATUS_MIXED_MEMORY_SPACES,
                             std::string(first->name) + " is " + memory_space_name(out.space) + " memory but " +
                                 o.name + " is " + memory_space_name(s) + " memory (device " + std::to_string(device) +
                                 "): pass every operand in one space");
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

gemm_status_t classify_memory(problem &p, allocation_memo *memo) {
    const pointer_classifier classify = installed_classifier();
    p.space = memory_space::host;
    p.device = -1;
    p.page_locked = false;
    p.stream = tls_stream;
    if (!classify) return GEMM_STATUS_SUCCESS;
    allocation_memo own;
    if (!memo) memo = &own;

    // Only what the call touches decides its space, as only that must be valid: A and B are
    // not read where C is only scaled (k = 0 or alpha = 0), nothing is where C is empty. Such
    // pointers may lie anywhere, one past the end of an allocation (an empty slice) included.
    const bool writes_c = p.m > 0 && p.n > 0 && p.batch > 0, reads_ab = writes_c && !p.scales_only();
    auto touched = [](bool used, const void *ptr) { return used ? ptr : nullptr; };
    const operand ops[] = {{touched(reads_ab, p.a), "A"},
                           {touched(reads_ab, p.b), "B"},
                           {touched(writes_c, p.c), "C"},
                           {touched(writes_c, p.epilogue.bias), "epilogue->bias"},
                           {touched(writes_c, p.epilogue.bias_grad), "epilogue->bias_grad"},
                           {touched(writes_c, p.epilogue.aux), "epilogue->aux"}};
    pointer_place place;
    gemm_status_t s = classify_operands(ops, std::size(ops), classify, *memo, place);
    p.space = place.space;
    p.device = place.device;
    p.page_locked = place.page_locked;
    return s;
}

gemm_status_t classify_memory(sparse_problem &s) {
    const pointer_classifier classify = installed_classifier();
    s.space = memory_space::host;
    s.device = -1;
    s.stream = tls_stream;
    if (!classify) return GEMM_STATUS_SUCCESS;
    // A's arrays and B count only where the product is read, as for a GEMM; nothing where C is
    // empty. CSR's row offsets are read for any rows; the other arrays only for entries.
    const bool writes_c = s.m > 0 && s.n > 0, reads = writes_c && !s.scales_only();
    auto touched = [](bool used, const void *ptr) { return used ? ptr : nullptr; };
    const operand ops[] = {{touched(reads, s.values), "A->values"},
                           {touched(reads, s.row_offsets), "A->row_offsets"},
                           {touched(reads, s.row_indices), "A->row_indices"},
                           {touched(reads, s.col_indices), "A->col_indices"},
                           {touched(reads, s.b), "B"},
                           {touched(writes_c, s.c), "C"}};
    allocation_memo memo;
    pointer_place place;
    gemm_status_t st = classify_operands(ops, std::size(ops), classify, memo, place);
    s.space = place.space;
    s.device = place.device;
    return st;
}

gemm_status_t classify_memory(transpose_problem &t) {
    const pointer_classifier classify = installed_classifier();
    t.space = memory_space::host;
    t.device = -1;
    t.stream = tls_stream;
    if (!classify) return GEMM_STATUS_SUCCESS;
    // A counts only where it is read (alpha != 0), as for a GEMM; nothing where B is empty.
    const bool writes_b = t.rows > 0 && t.cols > 0;
    const operand ops[] = {{writes_b && !t.alpha_zero() ? t.a : nullptr, "A"}, {writes_b ? t.b : nullptr, "B"}};
    allocation_memo memo;
    pointer_place place;
    gemm_status_t s = classify_operands(ops, std::size(ops), classify, memo, place);
    t.space = place.space;
    t.device = place.device;
    return s;
}

}  // namespace gemm
