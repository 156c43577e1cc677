// gemm_batched_api.cpp: pointer-array batches (gemm_*_batched) and grouped calls
// (gemm_ex_grouped, gemm_ex_grouped_scaled). Everything is checked before anything runs:
// every group's arguments and scaling, every matrix's pointers and spans, one memory space for
// all operands, no two C matrices overlapping, and no group's amax_d or scales overlapping
// what another writes; then dispatch decides each group once and runs its matrices.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "call.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"
#include "entry_points.h"
#include "guard.hpp"
#include "struct_size.hpp"

namespace gemm {
namespace {

// The bytes one C matrix covers, and which matrix it is.
struct c_extent {
    uintptr_t begin = 0, end = 0;
    int64_t item = 0;
};

// Whether any matrix of the group reads A and B, or writes C.
bool reads_ab(const user_call &g) {
    return g.batch > 0 && g.m > 0 && g.n > 0 && g.k > 0 && !scalar_value(g.alpha, g.compute).zero();
}
bool writes_c(const user_call &g) { return g.batch > 0 && g.m > 0 && g.n > 0; }

// One matrix as a plain call of the group's arguments.
user_call matrix_call(const user_call &group, const api_pointer_call &pc, int64_t item) {
    user_call c = group;
    c.batch = 1;
    c.a = pc.a ? pc.a[item] : nullptr;
    c.b = pc.b ? pc.b[item] : nullptr;
    c.c = pc.c ? pc.c[item] : nullptr;
    c.has_item = 1;
    c.item = item;
    return c;
}

int64_t c_elements(const user_call &c) {
    bool col = c.layout == GEMM_COL_MAJOR;
    return ((col ? c.n : c.m) - 1) * c.ldc + (col ? c.m : c.n);  // within int64: check_operands ran
}

// The arrays of pointers the groups need: A and B when a group computes a product, C when one
// writes.
gemm_status_t check_arrays(const api_pointer_call &pc) {
    bool need_ab = false, need_c = false;
    for (int64_t g = 0; g < pc.group_count; ++g) {
        need_ab = need_ab || reads_ab(pc.groups[g]);
        need_c = need_c || writes_c(pc.groups[g]);
    }
    user_call first = pc.groups[0];
    first.has_group = 0;
    const param_positions &at = positions_of(first);
    const char *array = "the array of the matrices' pointers";
    if (need_ab && !pc.a)
        return call_error(first, GEMM_STATUS_INVALID_POINTER, at.a, fmt::format("A is NULL ({})", array));
    if (need_ab && !pc.b)
        return call_error(first, GEMM_STATUS_INVALID_POINTER, at.b, fmt::format("B is NULL ({})", array));
    if (need_c && !pc.c)
        return call_error(first, GEMM_STATUS_INVALID_POINTER, at.c, fmt::format("C is NULL ({})", array));
    return GEMM_STATUS_SUCCESS;
}

// The arrays of pointers as the host can read them: those in device or managed memory (as
// cuBLAS takes them) copied to the host on the call's stream; pc's arrays replaced by them.
// copies (A, B, C) holds what the host read.
gemm_status_t read_arrays(api_pointer_call &pc, int64_t total, pointer_array (&copies)[3]) {
    user_call first = pc.groups[0];
    first.has_group = 0;
    const param_positions &at = positions_of(first);
    copies[0].array = pc.a;
    copies[1].array = pc.b;
    copies[2].array = const_cast<const void *const *>(pc.c);
    int failed = 0;
    std::string why;
    if (gemm_status_t s = host_readable_arrays(copies, 3, std::size_t(total), failed, why); s != GEMM_STATUS_SUCCESS) {
        const int position[3] = {at.a, at.b, at.c};
        return call_error(first, s, position[failed],
                          fmt::format("{} (the array of the matrices' pointers) {}", "ABC"[failed], why));
    }
    pc.a = copies[0].readable;
    pc.b = copies[1].readable;
    pc.c = const_cast<void *const *>(copies[2].readable);
    return GEMM_STATUS_SUCCESS;
}

std::string space_text(const problem &p) {
    return p.space == memory_space::host ? std::string("host memory")
                                         : fmt::format("{} memory of device {}", memory_space_name(p.space), p.device);
}

// The canonical problems of a checked pointer call: each group's shape canonicalized once, a
// matrix's its shape with the matrix's pointers (swapped for row-major, as canonicalize
// swaps them).
struct canonical_groups {
    std::vector<problem> shapes;
    std::vector<int64_t> first_item;
    problem space;  // the memory every operand was found in

    canonical_groups(const api_pointer_call &pc) {
        for (int64_t g = 0, item = 0; g < pc.group_count; item += pc.groups[g].batch, ++g) {
            user_call c = pc.groups[g];
            c.batch = 1;
            shapes.push_back(canonicalize(c));
            first_item.push_back(item);
        }
    }
    problem at(const api_pointer_call &pc, std::size_t g, int64_t item) const {
        problem p = shapes[g];
        const bool row = pc.groups[g].layout == GEMM_ROW_MAJOR;
        const void *a = pc.a ? pc.a[item] : nullptr, *b = pc.b ? pc.b[item] : nullptr;
        p.a = row ? b : a;
        p.b = row ? a : b;
        p.c = pc.c ? pc.c[item] : nullptr;
        p.space = space.space;
        p.device = space.device;
        p.page_locked = space.page_locked;
        p.stream = space.stream;
        return p;
    }
};

// Pointers, spans and memory of every matrix; the extents of the C matrices it writes.
gemm_status_t check_matrices(const api_pointer_call &pc, canonical_groups &canonical, std::vector<c_extent> &extents) {
    bool first = true;
    int64_t item = 0;
    problem &space = canonical.space;
    allocation_memo memo;  // the driver is asked once per allocation, not per pointer
    for (int64_t g = 0; g < pc.group_count; ++g) {
        const user_call &group = pc.groups[g];
        for (int64_t i = 0; i < group.batch; ++i, ++item) {
            user_call c = matrix_call(group, pc, item);
            if (gemm_status_t s = check_operands(c); s != GEMM_STATUS_SUCCESS) return s;
            if (!writes_c(c)) continue;
            problem p = canonical.at(pc, std::size_t(g), item);
            if (gemm_status_t s = classify_memory(p, &memo); s != GEMM_STATUS_SUCCESS)
                return set_error(s, fmt::format("matrix {}: {}", item, last_error_message()));
            if (first) space = p;
            first = false;
            space.page_locked &= p.page_locked;
            if (p.space != space.space || p.device != space.device)
                return set_error(GEMM_STATUS_MIXED_MEMORY_SPACES,
                                 fmt::format("matrix {} is in {}, matrix 0 in {}: every matrix of a batch must be in "
                                             "one memory space",
                                             item, space_text(p), space_text(space)));
            uintptr_t begin = reinterpret_cast<uintptr_t>(c.c);
            extents.push_back({begin, begin + uintptr_t(c_elements(c)) * dtype_size(dtype(c.c_type)), item});
        }
    }
    return GEMM_STATUS_SUCCESS;
}

// No two C matrices share a byte: the results of the matrices would depend on their order.
// Sorted by address, neighbours suffice: if C[j] overlaps a later C[i], the extent right after
// C[j] begins inside C[j] too.
gemm_status_t check_disjoint(const api_pointer_call &pc, std::vector<c_extent> &extents) {
    std::sort(extents.begin(), extents.end(), [](const c_extent &x, const c_extent &y) { return x.begin < y.begin; });
    for (std::size_t i = 1; i < extents.size(); ++i) {
        if (extents[i].begin >= extents[i - 1].end) continue;
        user_call first = pc.groups[0];
        first.has_group = 0;
        int64_t x = std::min(extents[i - 1].item, extents[i].item), y = std::max(extents[i - 1].item, extents[i].item);
        return call_error(first, GEMM_STATUS_INVALID_VALUE, positions_of(first).c,
                          fmt::format("C[{}] and C[{}] overlap: the C matrices of a batch must be disjoint", x, y));
    }
    return GEMM_STATUS_SUCCESS;
}

// The groups' scalings against every matrix written and one another: a group's amax_d is
// written while every C is written and every group's scales are read, so it may share a byte
// with none of them nor with another group's amax_d (one would overwrite the other); no C may
// share a byte with any group's scales. Within one matrix check_operands judged them already.
// extents: the C matrices written, sorted by address and disjoint (check_disjoint).
gemm_status_t check_scalings_across(const api_pointer_call &pc, const std::vector<c_extent> &extents) {
    struct written {
        byte_range range;
        int64_t group;  // -1 for a C matrix
    };
    std::vector<written> writes;
    std::vector<std::pair<byte_range, int64_t>> reads;
    for (int64_t g = 0; g < pc.group_count; ++g) {
        const user_call &group = pc.groups[g];
        if (!group.scaling || !writes_c(group)) continue;
        const scaling_ranges r = scaling_bytes(group);
        if (r.amax.bytes) writes.push_back({r.amax, g});
        for (const byte_range &x : r.read)
            if (x.bytes) reads.emplace_back(x, g);
    }
    if (writes.empty() && reads.empty()) return GEMM_STATUS_SUCCESS;
    for (const c_extent &e : extents)
        writes.push_back({{fmt::format("C[{}]", e.item), e.begin, int64_t(e.end - e.begin)}, -1});
    std::sort(writes.begin(), writes.end(),
              [](const written &x, const written &y) { return x.range.begin < y.range.begin; });
    auto blame = [&](int64_t g, const std::string &what) {
        return call_error(pc.groups[g], GEMM_STATUS_INVALID_VALUE, grouped_scalings_position, what);
    };
    for (std::size_t i = 1; i < writes.size(); ++i) {
        const written &x = writes[i - 1], &y = writes[i];
        if (!overlap(x.range, y.range)) continue;
        const written &amax = x.group >= 0 ? x : y, &other = x.group >= 0 ? y : x;
        return blame(amax.group, fmt::format("{} and {} overlap: both are written", amax.range.name, other.range.name));
    }
    // Sorted and disjoint, the writes end in order too: the first that ends past a read's start
    // is the only one that may overlap it.
    for (const auto &[range, g] : reads) {
        auto it = std::upper_bound(writes.begin(), writes.end(), range.begin, [](std::uintptr_t at, const written &w) {
            return at < w.range.begin + std::uintptr_t(w.range.bytes);
        });
        if (it != writes.end() && overlap(it->range, range))
            return blame(g, fmt::format("{} and {} overlap: one is written while the other is read", range.name,
                                        it->range.name));
    }
    return GEMM_STATUS_SUCCESS;
}

std::string place_text(const pointer_place &place) {
    return place.space == memory_space::host
               ? std::string("host memory")
               : fmt::format("{} memory of device {}", memory_space_name(place.space), place.device);
}

// A masked batch's row counts (pc.rows) against its operands: in their memory, and sharing no
// byte with a C matrix or an amax_d, which are written while the counts are read. On host
// memory they are read here, each in [0, m], into counts; on device memory the kernels read
// them (problem::row_count).
gemm_status_t check_rows(const api_pointer_call &pc, const problem &space, const std::vector<c_extent> &extents,
                         std::vector<int32_t> &counts) {
    user_call whole = pc.groups[0];
    whole.has_group = 0;
    auto blame = [&](gemm_status_t s, const std::string &what) {
        return call_error(whole, s, masked_rows_position, what);
    };
    if (const device_services *runtime = installed_device_services()) {
        const pointer_place place = runtime->classify(pc.rows);
        const bool host = place.space == memory_space::host;
        if (host != (space.space == memory_space::host) || (!host && place.device != space.device))
            return blame(GEMM_STATUS_MIXED_MEMORY_SPACES,
                         fmt::format("rows is in {}, the matrices in {}: the row counts lie in the operands' memory",
                                     place_text(place), space_text(space)));
    }
    const byte_range rows{"rows", reinterpret_cast<std::uintptr_t>(pc.rows), pc.group_count * int64_t(sizeof(int32_t))};
    for (const c_extent &e : extents)
        if (overlap(rows, {"", e.begin, int64_t(e.end - e.begin)}))
            return blame(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("rows and C[{}] overlap: the row counts are read while C is written", e.item));
    for (int64_t g = 0; g < pc.group_count; ++g) {
        const api_scaling *x = pc.groups[g].scaling;
        if (x && x->amax_d && overlap(rows, {"", reinterpret_cast<std::uintptr_t>(x->amax_d), 4}))
            return blame(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("rows and scalings[{}].amax_d overlap: the row counts are read while amax_d is "
                                     "written",
                                     g));
    }
    if (space.space != memory_space::host) return GEMM_STATUS_SUCCESS;
    counts.assign(pc.rows, pc.rows + pc.group_count);
    for (int64_t g = 0; g < pc.group_count; ++g)
        if (counts[std::size_t(g)] < 0 || counts[std::size_t(g)] > whole.m)
            return blame(GEMM_STATUS_INVALID_VALUE,
                         fmt::format("rows[{}] = {} must be in [0, m = {}]", g, counts[std::size_t(g)], whole.m));
    return GEMM_STATUS_SUCCESS;
}

// Matrix g of a masked batch as computed: on host memory with its first counts[g] rows of C
// (the canonical columns for a row-major call), on device memory reading its count there.
void mask_rows(problem &p, const api_pointer_call &pc, std::size_t g, const std::vector<int32_t> &counts) {
    const bool row_major = pc.groups[g].layout == GEMM_ROW_MAJOR;
    if (!counts.empty()) {
        (row_major ? p.n : p.m) = counts[g];
        return;
    }
    p.row_count = pc.rows + g;
    p.row_count_on_n = row_major;
}

gemm_status_t run_pointers(api_pointer_call pc) {
    int64_t total = 0;
    for (int64_t g = 0; g < pc.group_count; ++g) {
        if (gemm_status_t s = check_arguments(pc.groups[g]); s != GEMM_STATUS_SUCCESS) return s;
        std::optional<int64_t> sum = checked_add(total, pc.groups[g].batch);
        if (!sum)
            return call_error(pc.groups[g], GEMM_STATUS_INVALID_SIZE, positions_of(pc.groups[g]).batch,
                              "the groups hold more than 2^63 - 1 matrices");
        total = *sum;
    }
    if (total == 0) return GEMM_STATUS_SUCCESS;
    if (gemm_status_t s = check_arrays(pc); s != GEMM_STATUS_SUCCESS) return s;
    pointer_array copies[3];
    if (gemm_status_t s = read_arrays(pc, total, copies); s != GEMM_STATUS_SUCCESS) return s;
    canonical_groups canonical(pc);
    std::vector<c_extent> extents;
    if (gemm_status_t s = check_matrices(pc, canonical, extents); s != GEMM_STATUS_SUCCESS) return s;
    if (gemm_status_t s = check_disjoint(pc, extents); s != GEMM_STATUS_SUCCESS) return s;
    if (gemm_status_t s = check_scalings_across(pc, extents); s != GEMM_STATUS_SUCCESS) return s;
    std::vector<int32_t> counts;  // a masked batch's row counts, where the host reads them
    if (pc.rows)
        if (gemm_status_t s = check_rows(pc, canonical.space, extents, counts); s != GEMM_STATUS_SUCCESS) return s;

    problem_groups groups;
    for (int64_t g = 0; g < pc.group_count; ++g) {
        groups.sizes.push_back(pc.groups[g].batch);
        groups.calls.push_back(shape_of(pc.groups[g]));
        if (!counts.empty()) groups.calls.back().m = counts[std::size_t(g)];
    }
    // Every matrix was classified above (one space for all), so a matrix's problem is its
    // group's shape with its pointers.
    groups.problem_at = [&](std::size_t g, int64_t i) {
        problem p = canonical.at(pc, g, canonical.first_item[g] + i);
        if (pc.rows) mask_rows(p, pc, g, counts);
        return p;
    };
    gemm_status_t s = dispatch_groups(groups);
    // A masked matrix of no rows computes nothing, and its amax_d is 0 (as a device kernel
    // that skips every tile leaves it).
    for (std::size_t g = 0; g < counts.size() && s == GEMM_STATUS_SUCCESS; ++g)
        if (counts[g] == 0 && pc.groups[g].scaling && pc.groups[g].scaling->amax_d) *pc.groups[g].scaling->amax_d = 0;
    return s;
}

}  // namespace
}  // namespace gemm

extern "C" gemm_status_t api_run_pointers(const api_pointer_call *call) {
    gemm::clear_error();
    return gemm::guarded([call] { return gemm::run_pointers(*call); });
}

namespace gemm {
namespace {

// One matrix or group of a call of several (group g of a grouped call, matrix g of a masked
// batch): messages begin "group 2: " or "matrix 2: ".
user_call part_of(const user_call &base, int64_t g) {
    user_call c = base;
    c.has_group = 1;
    c.group = g;
    return c;
}

// scalings[g] as api_scaling, once its struct_size passed the rule in gemm.h (messages
// "group 2: parameter 21: scalings[2].struct_size = ..."). The mode is read as the int it is
// (entry_points.h): a caller may pass any value, and the checks name it.
gemm_status_t read_scaling(const gemm_scaling_t &x, const user_call &part, int position, api_scaling &out) {
    if (x.struct_size != int64_t(sizeof x)) {
        const std::string field =
            fmt::format("{} {}: parameter {}: scalings[{}].struct_size",
                        part.entry == api_entry_masked ? "matrix" : "group", part.group, position, part.group);
        if (gemm_status_t s = check_struct_size(&x, x.struct_size, sizeof x, field, "gemm_scaling_t",
                                                "initialize it with gemm_scaling_init", position);
            s != GEMM_STATUS_SUCCESS)
            return s;
    }
    static_assert(sizeof x.mode == sizeof out.mode, "an enum of gemm.h has an int's size");
    std::memcpy(&out.mode, &x.mode, sizeof out.mode);
    out.a_scale = x.a_scale;
    out.b_scale = x.b_scale;
    out.ld_a_scale = x.ld_a_scale;
    out.ld_b_scale = x.ld_b_scale;
    out.d_scale = x.d_scale;
    out.amax_d = x.amax_d;
    return GEMM_STATUS_SUCCESS;
}

// An array of count gemm_scaling_t (parameter `position` of base's entry point) read into out.
// The elements lie struct_size apart: a caller built with a newer gemm.h, whose struct is
// larger, steps by its own size (the struct_size rule: the bytes past ours 0).
gemm_status_t read_scalings(const user_call &base, const gemm_scaling_t *scalings, int64_t count, int position,
                            std::vector<api_scaling> &out) {
    out.resize(std::size_t(count));
    const int64_t stride = scalings->struct_size;
    const char *bytes = reinterpret_cast<const char *>(scalings);
    for (int64_t g = 0; g < count; ++g) {
        const gemm_scaling_t &x = *reinterpret_cast<const gemm_scaling_t *>(bytes + g * stride);
        // The other elements' sizes are the first's before any byte past ours is read.
        if (g > 0 && x.struct_size != stride)
            return call_error(part_of(base, g), GEMM_STATUS_INVALID_VALUE, position,
                              fmt::format("scalings[{}].struct_size = {} must equal scalings[0].struct_size = {} "
                                          "(one array of one struct)",
                                          g, x.struct_size, stride));
        if (gemm_status_t s = read_scaling(x, part_of(base, g), position, out[std::size_t(g)]); s != GEMM_STATUS_SUCCESS)
            return s;
        if (g == 0 && stride % int64_t(alignof(gemm_scaling_t)) != 0)
            return call_error(part_of(base, 0), GEMM_STATUS_INVALID_VALUE, position,
                              fmt::format("scalings[0].struct_size = {} is no struct's size (a multiple of {}): "
                                          "initialize it with gemm_scaling_init",
                                          stride, alignof(gemm_scaling_t)));
    }
    return GEMM_STATUS_SUCCESS;
}

// gemm_ex_grouped's arrays, one group's arguments each, as calls of entry api_entry_grouped;
// gemm_ex_grouped_scaled's scalings (NULL: scales of 1), scalings[g] group g's.
gemm_status_t run_grouped(int layout, const int *transa, const int *transb, const int64_t *m, const int64_t *n,
                          const int64_t *k, const void *alpha, const void *const *A, int a_type, const int64_t *lda,
                          const void *const *B, int b_type, const int64_t *ldb, const void *beta, void *const *C,
                          int c_type, const int64_t *ldc, int64_t group_count, const int64_t *group_size, int compute,
                          const gemm_scaling_t *scalings) {
    user_call base{};
    base.layout = layout;
    base.a_type = a_type;
    base.b_type = b_type;
    base.c_type = c_type;
    base.compute = compute;
    base.entry = api_entry_grouped;
    if (gemm_status_t s = check_shared_arguments(base); s != GEMM_STATUS_SUCCESS) return s;
    if (group_count < 0)
        return call_error(base, GEMM_STATUS_INVALID_SIZE, 18, fmt::format("group_count = {} must be >= 0", group_count));
    // Scales take FP8 types whatever the groups hold, as gemm_ex_scaled's do whatever m, n, k.
    if (scalings && !is_fp8(dtype(a_type)))
        return call_error(base, GEMM_STATUS_NOT_SUPPORTED, positions_of(base).a_type,
                          fmt::format("a_type = {}: scales take FP8 types (GEMM_F8_E4M3, GEMM_F8_E5M2); pass "
                                      "scalings = NULL",
                                      dtype_name(dtype(a_type))));
    if (group_count == 0) return GEMM_STATUS_SUCCESS;
    struct array {
        const void *ptr;
        int position;
        const char *name;
    } arrays[] = {
        {transa, 2, "transa"},         {transb, 3, "transb"}, {m, 4, "m"},      {n, 5, "n"},        {k, 6, "k"},
        {alpha, 7, "alpha"},           {lda, 10, "lda"},      {ldb, 13, "ldb"}, {beta, 14, "beta"}, {ldc, 17, "ldc"},
        {group_size, 19, "group_size"}};
    for (const array &x : arrays)
        if (!x.ptr)
            return call_error(base, GEMM_STATUS_INVALID_POINTER, x.position,
                              fmt::format("{} is NULL (an array of group_count = {} values)", x.name, group_count));
    // An invalid compute type fails each group's type check before its scalars are read.
    const std::size_t scalar = valid_dtype(compute) ? scalar_bytes(compute) : 0;
    std::vector<api_scaling> read;
    if (scalings)
        if (gemm_status_t s = read_scalings(base, scalings, group_count, grouped_scalings_position, read);
            s != GEMM_STATUS_SUCCESS)
            return s;
    std::vector<user_call> groups(std::size_t(group_count), base);
    for (int64_t g = 0; g < group_count; ++g) {
        user_call &c = groups[std::size_t(g)];
        c.scaling = scalings ? &read[std::size_t(g)] : nullptr;
        c.transa = transa[g];
        c.transb = transb[g];
        c.m = m[g];
        c.n = n[g];
        c.k = k[g];
        c.alpha = static_cast<const char *>(alpha) + std::size_t(g) * scalar;
        c.beta = static_cast<const char *>(beta) + std::size_t(g) * scalar;
        c.lda = lda[g];
        c.ldb = ldb[g];
        c.ldc = ldc[g];
        c.batch = group_size[g];
        c.has_group = 1;
        c.group = g;
    }
    api_pointer_call pc{groups.data(), group_count, A, B, C, nullptr};
    return run_pointers(pc);
}

// gemm_ex_masked_scaled: the batch checked as a strided one (shape, strides, types, scalars,
// the spans of every matrix), then a group per matrix of m rows, rows its counts.
gemm_status_t run_masked(const user_call &whole, const int32_t *rows, const gemm_scaling_t *scalings) {
    if (gemm_status_t s = check_call(whole); s != GEMM_STATUS_SUCCESS) return s;
    if (!is_fp8(dtype(whole.a_type)))
        return call_error(whole, GEMM_STATUS_NOT_SUPPORTED, positions_of(whole).a_type,
                          fmt::format("a_type = {}: masked batches take FP8 types (GEMM_F8_E4M3, GEMM_F8_E5M2)",
                                      dtype_name(dtype(whole.a_type))));
    if (whole.batch == 0 || whole.m == 0 || whole.n == 0) return GEMM_STATUS_SUCCESS;
    if (!rows)
        return call_error(whole, GEMM_STATUS_INVALID_POINTER, masked_rows_position,
                          fmt::format("rows is NULL (an array of batch_count = {} row counts)", whole.batch));
    std::vector<api_scaling> read;
    if (scalings)
        if (gemm_status_t s = read_scalings(whole, scalings, whole.batch, masked_scalings_position, read);
            s != GEMM_STATUS_SUCCESS)
            return s;
    const std::size_t count = std::size_t(whole.batch);
    std::vector<user_call> groups(count);
    std::vector<const void *> a(count), b(count);
    std::vector<void *> c(count);
    const std::size_t ab = dtype_size(dtype(whole.a_type)), cb = dtype_size(dtype(whole.c_type));
    // check_call checked every matrix's span within the address space: no offset wraps.
    auto at = [](const void *base, std::size_t i, int64_t stride, std::size_t size) -> const void * {
        return base ? static_cast<const char *>(base) + i * std::size_t(stride) * size : nullptr;
    };
    for (std::size_t i = 0; i < count; ++i) {
        user_call &x = groups[i];
        x = part_of(whole, int64_t(i));
        x.batch = 1;
        x.stride_a = x.stride_b = x.stride_c = 0;
        x.scaling = scalings ? &read[i] : nullptr;
        a[i] = at(whole.a, i, whole.stride_a, ab);
        b[i] = at(whole.b, i, whole.stride_b, ab);
        c[i] = const_cast<void *>(at(whole.c, i, whole.stride_c, cb));
    }
    api_pointer_call pc{groups.data(), whole.batch, a.data(), b.data(), c.data(), rows};
    return run_pointers(pc);
}

}  // namespace
}  // namespace gemm

extern "C" gemm_status_t api_run_masked(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *A, int a_type, int64_t lda, int64_t stride_a,
                                        const void *B, int b_type, int64_t ldb, int64_t stride_b, const void *beta,
                                        void *C, int c_type, int64_t ldc, int64_t stride_c, int64_t batch_count,
                                        const int32_t *rows, int compute, const gemm_scaling_t *scalings) {
    gemm::clear_error();
    gemm::user_call whole{};
    whole.layout = layout;
    whole.transa = transa;
    whole.transb = transb;
    whole.m = m;
    whole.n = n;
    whole.k = k;
    whole.alpha = alpha;
    whole.a = A;
    whole.a_type = a_type;
    whole.lda = lda;
    whole.stride_a = stride_a;
    whole.b = B;
    whole.b_type = b_type;
    whole.ldb = ldb;
    whole.stride_b = stride_b;
    whole.beta = beta;
    whole.c = C;
    whole.c_type = c_type;
    whole.ldc = ldc;
    whole.stride_c = stride_c;
    whole.batch = batch_count;
    whole.compute = compute;
    whole.entry = api_entry_masked;
    return gemm::guarded([&] { return gemm::run_masked(whole, rows, scalings); });
}

extern "C" gemm_status_t api_run_grouped(int layout, const int *transa, const int *transb, const int64_t *m,
                                         const int64_t *n, const int64_t *k, const void *alpha, const void *const *A,
                                         int a_type, const int64_t *lda, const void *const *B, int b_type,
                                         const int64_t *ldb, const void *beta, void *const *C, int c_type,
                                         const int64_t *ldc, int64_t group_count, const int64_t *group_size,
                                         int compute, const gemm_scaling_t *scalings) {
    gemm::clear_error();
    return gemm::guarded([&] {
        return gemm::run_grouped(layout, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C,
                                 c_type, ldc, group_count, group_size, compute, scalings);
    });
}
