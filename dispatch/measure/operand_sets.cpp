// operand_sets.cpp: planning, allocating, filling and rotating the measured operands.
#include "operand_sets.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <spdlog/fmt/fmt.h>

#include "dispatch/element.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"

namespace gemm {
namespace {

// Room for the misaligning offset and the allocator's rounding.
constexpr std::size_t slack = 64;

std::size_t last_level_cache_bytes() {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? std::size_t(l3) : std::size_t(32) << 20;
}

void *allocate_host(std::size_t bytes) {
    std::size_t rounded = (bytes + slack + 63) / 64 * 64;
    return std::aligned_alloc(64, rounded);
}

// Bytes of memory a new allocation can take without swapping or the OOM killer: the kernel's
// MemAvailable estimate (free memory and reclaimable caches), else all of the machine's; 0
// when neither is known.
double available_host_bytes() {
    if (std::FILE *f = std::fopen("/proc/meminfo", "re")) {
        char line[256];
        unsigned long long kib = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f))
            found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
        std::fclose(f);
        if (found) return double(kib) * 1024.0;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

gemm_status_t check_host_memory(double bytes) {
    const double have = available_host_bytes();
    if (have <= 0 || bytes <= have) return GEMM_STATUS_SUCCESS;
    return set_error(GEMM_STATUS_ALLOC_FAILED,
                     fmt::format("the operands need {:.3g} GiB of host memory, this machine has {:.3g} GiB available",
                                 bytes / double(1 << 30), have / double(1 << 30)));
}

// Values uniform in [-1, 1), reproducible from a seed: splitmix64's sequence, whose 53 high
// bits make each double. A call's speed does not depend on the values, so they need no more;
// it fills the rates probe's 1024^3 operands in a small part of the probe's time, where
// std::mt19937_64 through std::uniform_real_distribution took ten times as long
// (docs/PERFORMANCE.md, "Untuned auto against every backend forced").
class uniform_values {
public:
    explicit uniform_values(uint64_t seed) : state_(seed) {}
    double next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return double(z >> 11) * 0x1.0p-52 - 1.0;
    }

private:
    uint64_t state_;
};

// count elements of t (both parts of a complex one) uniform in [-1, 1).
void fill(void *base, std::size_t count, dtype t, uniform_values &values) {
    const int64_t parts = int64_t(count) * parts_per_element(t);
    switch (part_type(t)) {
    case dtype::f32:
        for (int64_t i = 0; i < parts; ++i) static_cast<float *>(base)[i] = float(values.next());
        break;
    case dtype::f64:
        for (int64_t i = 0; i < parts; ++i) static_cast<double *>(base)[i] = values.next();
        break;
    default:
        for (int64_t i = 0; i < parts; ++i) store_element(base, i, part_type(t), values.next());
    }
}

// How many values a scale of `kind` holds for an operand of `outer` rows (op(A)) or columns
// (op(B)) and k, and its leading dimension: the least problem.hpp's layouts allow.
std::size_t scale_values(scale_kind kind, int64_t outer, int64_t k, int64_t &ld) {
    const int64_t k_blocks = std::max<int64_t>(1, (k + scale_block - 1) / scale_block);
    const int64_t outer_blocks = std::max<int64_t>(1, (outer + scale_block - 1) / scale_block);
    if (kind == scale_kind::vec128) {
        ld = std::max<int64_t>(1, outer);
        return std::size_t(ld * k_blocks);
    }
    ld = kind == scale_kind::blk128 ? k_blocks : 0;
    return kind == scale_kind::blk128 ? std::size_t(k_blocks * outer_blocks) : kind == scale_kind::tensor ? 1 : 0;
}

}  // namespace

operand_sets::operand_sets(const problem_class &c, const operand_layout &layout) : class_(c), layout_(layout) {}

operand_sets::~operand_sets() {
    const device_services *dev = installed_device_services();
    if (!dev) return;
    for (void *p : pinned_) dev->unpin(p);
    for (scale_array &a : scales_)
        if (a.device_allocation) dev->release(layout_.device, a.device_allocation);
    for (set &s : sets_)
        for (void *p : s.device_allocation)
            if (p) dev->release(layout_.device, p);
    if (stream_) dev->destroy_stream(layout_.device, stream_);
}

// rows plus the layout's padding; padding -1 is the least padding that keeps the leading
// dimension a multiple of 16 bytes when the layout is aligned, so that a tuned `ld=padded
// align=16` class gets an entry of that same class. Empty on overflow.
std::optional<int64_t> operand_sets::leading_dim(int64_t rows, std::size_t element) const {
    int64_t tight = std::max<int64_t>(1, rows);
    if (layout_.ld_padding >= 0) return checked_add(tight, layout_.ld_padding);
    int64_t unit = layout_.aligned ? int64_t(16 / element) : 1;
    std::optional<int64_t> padded = checked_add(tight, unit);
    return padded ? std::optional<int64_t>(*padded / unit * unit) : std::nullopt;
}

// ld, the stride of one matrix (ld x cols) and the bytes of the batch, without wrapping.
bool operand_sets::operand(std::optional<int64_t> ld, int64_t cols, std::size_t element, int64_t &ld_out,
                           int64_t &stride_out, std::size_t &bytes_out) const {
    if (!ld) return false;
    std::optional<int64_t> stride = checked_mul(*ld, std::max<int64_t>(1, cols));
    std::optional<int64_t> elements = stride ? checked_mul(*stride, class_.batch) : std::nullopt;
    std::optional<int64_t> bytes = elements ? checked_mul(*elements, int64_t(element)) : std::nullopt;
    if (!bytes || !checked_add(*bytes, 4 * int64_t(slack))) return false;
    ld_out = *ld;
    stride_out = *stride;
    bytes_out = std::size_t(*bytes);
    return true;
}

gemm_status_t operand_sets::plan() {
    const problem_class &c = class_;
    const operand_layout &l = layout_;
    base_.op_a = c.op_a;
    base_.op_b = c.op_b;
    base_.m = c.m;
    base_.n = c.n;
    base_.k = c.k;
    base_.batch = c.batch;
    base_.ab_type = c.ab_type;
    base_.c_type = c.c_type;
    base_.compute_type = compute_type_for(c.ab_type);
    base_.alpha = l.alpha;
    base_.beta = l.beta;
    base_.space = c.space;
    base_.device = c.space == memory_space::host ? -1 : l.device;
    // As a call's classification would find them once pinned: auto weighs the page-locked link.
    base_.page_locked = l.pinned && c.space == memory_space::host;
    std::size_t ab = dtype_size(c.ab_type), cs = dtype_size(c.c_type);
    const int64_t given[3] = {l.lda, l.ldb, l.ldc}, rows[3] = {base_.a_rows(), base_.b_rows(), c.m};
    for (int i = 0; i < 3; ++i)
        if (given[i] > 0 && given[i] < std::max<int64_t>(1, rows[i]))
            return set_error(GEMM_STATUS_INVALID_SIZE, fmt::format("ld{} = {} is less than the {} rows of {}", "abc"[i],
                                                                   given[i], rows[i], "ABC"[i]));
    auto ld = [this](int64_t given_ld, int64_t rows_of, std::size_t element) {
        return given_ld > 0 ? std::optional<int64_t>(given_ld) : leading_dim(rows_of, element);
    };
    bool ok = operand(ld(l.lda, base_.a_rows(), ab), base_.a_cols(), ab, base_.lda, base_.stride_a, bytes_[0]) &&
              operand(ld(l.ldb, base_.b_rows(), ab), base_.b_cols(), ab, base_.ldb, base_.stride_b, bytes_[1]) &&
              operand(ld(l.ldc, c.m, cs), c.n, cs, base_.ldc, base_.stride_c, bytes_[2]);
    if (!ok)
        return set_error(GEMM_STATUS_INVALID_SIZE,
                         fmt::format("m = {}, n = {}, k = {}, batch_count = {}, ld_padding = {} make operands larger "
                                     "than 2^63 - 1 bytes",
                                     c.m, c.n, c.k, c.batch, l.ld_padding));
    return plan_epilogue();
}

// The epilogue's vector (m or n values) and aux (C's shape, ld_aux or C's leading dimension).
gemm_status_t operand_sets::plan_epilogue() {
    const problem_class &c = class_;
    const operand_layout &l = layout_;
    if (!c.has_epilogue()) return GEMM_STATUS_SUCCESS;
    if (c.batch > 1) return set_error(GEMM_STATUS_NOT_SUPPORTED, "epilogues are measured on one matrix, not a batch");
    const std::size_t cs = dtype_size(c.c_type);
    base_.epilogue.act = c.act;
    base_.epilogue.axis = c.axis;
    if (c.axis != epilogue_axis::none)
        bytes_[vector_index] = std::size_t(c.axis == epilogue_axis::rows ? c.m : c.n) * cs;
    if (c.saves_aux || c.backward()) {
        if (l.ld_aux > 0 && l.ld_aux < std::max<int64_t>(1, c.m))
            return set_error(GEMM_STATUS_INVALID_SIZE,
                             fmt::format("ld_aux = {} is less than the {} rows of C", l.ld_aux, c.m));
        base_.epilogue.ld_aux = l.ld_aux > 0 ? l.ld_aux : base_.ldc;
        int64_t stride = 0;
        if (!operand(base_.epilogue.ld_aux, c.n, cs, base_.epilogue.ld_aux, stride, bytes_[aux_index]))
            return set_error(GEMM_STATUS_INVALID_SIZE, "the epilogue's aux would span more than 2^63 - 1 bytes");
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t operand_sets::allocate() {
    // Operands in cudaMalloc memory would be timed as managed ones without migrating: refused
    // rather than reported as what they are not.
    if (class_.space == memory_space::managed)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "managed memory is not measured; measure the shape on device "
                                                    "memory instead");
    if (gemm_status_t s = plan(); s != GEMM_STATUS_SUCCESS) return s;
    const device_services *dev = installed_device_services();
    if ((on_device() || layout_.pinned) && !dev)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, on_device() ? "device problems need a build with CUDA"
                                                                : "page-locked host memory needs a build with CUDA");
    // One set and the initial C at least, and for a device problem the C (and the epilogue's
    // written operands) copied back (in double: the sum may not fit).
    double per_set_bytes = 0;
    for (std::size_t b : bytes_) per_set_bytes += double(b);
    const double copied_back = double(bytes_[c_index]) + double(bytes_[vector_index]) + double(bytes_[aux_index]);
    double least = per_set_bytes + double(bytes_[c_index]) + (on_device() ? copied_back : 0.0);
    if (gemm_status_t s = check_host_memory(least); s != GEMM_STATUS_SUCCESS) return s;
    if (on_device())
        if (gemm_status_t s = dev->create_stream(layout_.device, &stream_); s != GEMM_STATUS_SUCCESS) return s;
    std::size_t per_set = 0;
    for (std::size_t b : bytes_) per_set += b;
    std::size_t cache = on_device() ? dev->cache_bytes(layout_.device) : last_level_cache_bytes();
    std::size_t count = std::clamp<std::size_t>(2 * cache / std::max<std::size_t>(per_set, 1) + 1, 1,
                                                std::max<std::size_t>(most_sets_, 1));
    if (gemm_status_t s = make_scales(); s != GEMM_STATUS_SUCCESS) return s;
    initial_c_.reset(static_cast<char *>(allocate_host(bytes_[c_index])));
    if (on_device()) {
        check_c_.reset(static_cast<char *>(allocate_host(bytes_[c_index])));
        check_vector_.reset(static_cast<char *>(allocate_host(bytes_[vector_index])));
        check_aux_.reset(static_cast<char *>(allocate_host(bytes_[aux_index])));
    }
    if (!initial_c_ || (on_device() && (!check_c_ || !check_vector_ || !check_aux_)))
        return set_error(GEMM_STATUS_ALLOC_FAILED, "cannot allocate the measured operands");
    uniform_values values(20261129);
    fill(initial_c_.get(), bytes_[2] / dtype_size(class_.c_type), class_.c_type, values);
    sets_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (gemm_status_t s = make_set(sets_[i], i == 0); s != GEMM_STATUS_SUCCESS) return s;
        problems_.push_back(problem_on(sets_[i]));
    }
    return GEMM_STATUS_SUCCESS;
}

// The epilogue's operands hold values the call reads (a bias, the aux of a backward
// activation: uniform in [-1, 1]) or zeros where the call writes (a bias gradient, a forward
// aux). Each set but the first copies the first's values: filling up to 256 sets from the
// generator would take longer than timing them.
gemm_status_t operand_sets::make_set(set &s, bool first) {
    const std::size_t ab = dtype_size(class_.ab_type), cs = dtype_size(class_.c_type);
    const std::size_t element[operand_count] = {ab, ab, cs, cs, cs};
    for (int i = 0; i < operand_count; ++i) {
        if (bytes_[i] == 0 && i >= vector_index) continue;  // not an operand of this class
        s.buffers[i].reset(static_cast<char *>(allocate_host(bytes_[i])));
        if (!s.buffers[i]) return set_error(GEMM_STATUS_ALLOC_FAILED, "cannot allocate the measured operands");
        s.host[i] = s.buffers[i].get() + (layout_.aligned ? 0 : element[i]);
    }
    const bool reads_vector = !class_.backward(), reads_aux = class_.backward();
    uniform_values values(7);
    for (int i : {int(a_index), int(b_index), int(vector_index), int(aux_index)}) {
        if (!s.host[i]) continue;
        const bool read = i < c_index || (i == vector_index ? reads_vector : reads_aux);
        if (!first) std::memcpy(s.host[i], sets_.front().host[i], bytes_[i]);
        else if (read) fill(s.host[i], bytes_[i] / element[i], i < c_index ? class_.ab_type : class_.c_type, values);
        else std::memset(s.host[i], 0, bytes_[i]);
    }
    std::memcpy(s.host[c_index], initial_c_.get(), bytes_[c_index]);
    const device_services *dev = installed_device_services();
    if (layout_.pinned && !on_device())
        for (int i = 0; i < operand_count; ++i) {
            if (!s.host[i]) continue;
            const std::size_t offset = std::size_t(static_cast<char *>(s.host[i]) - s.buffers[i].get());
            if (gemm_status_t st = dev->pin(s.buffers[i].get(), bytes_[i] + offset); st != GEMM_STATUS_SUCCESS)
                return st;
            pinned_.push_back(s.buffers[i].get());
        }
    return on_device() ? copy_to_device(s) : GEMM_STATUS_SUCCESS;
}

// Device copies keep the host copies' offset from an aligned allocation.
gemm_status_t operand_sets::copy_to_device(set &s) {
    const device_services *dev = installed_device_services();
    for (int i = 0; i < operand_count; ++i) {
        if (!s.host[i]) continue;
        if (gemm_status_t st = dev->allocate(layout_.device, bytes_[i] + slack, &s.device_allocation[i]);
            st != GEMM_STATUS_SUCCESS)
            return st;
        const std::size_t offset = std::size_t(static_cast<char *>(s.host[i]) - s.buffers[i].get());
        s.device[i] = static_cast<char *>(s.device_allocation[i]) + offset;
        if (gemm_status_t st = dev->copy(layout_.device, s.device[i], s.host[i], bytes_[i]); st != GEMM_STATUS_SUCCESS)
            return st;
    }
    return GEMM_STATUS_SUCCESS;
}

// Scales 2^u for u uniform in [-1, 1): each block's its own, so a kernel that takes one block's
// scale for another's, or none, is off by up to a factor of 4.
gemm_status_t operand_sets::make_scales() {
    const scale_kind kinds[2] = {layout_.a_scale, layout_.b_scale};
    const int64_t outer[2] = {class_.m, class_.n};
    uniform_values values(11);
    for (int i = 0; i < 2; ++i) {
        scale_array &a = scales_[i];
        int64_t ld = 0;
        const std::size_t count = scale_values(kinds[i], outer[i], class_.k, ld);
        if (count == 0) continue;
        const std::size_t bytes = count * sizeof(float);
        a.buffer.reset(static_cast<char *>(allocate_host(bytes)));
        if (!a.buffer) return set_error(GEMM_STATUS_ALLOC_FAILED, "cannot allocate the measured operands' scales");
        float *host = reinterpret_cast<float *>(a.buffer.get());
        for (std::size_t v = 0; v < count; ++v) host[v] = float(std::exp2(values.next()));
        a.host = a.device = {kinds[i], host, ld};
        if (!on_device()) continue;
        const device_services *dev = installed_device_services();
        if (gemm_status_t st = dev->allocate(layout_.device, bytes, &a.device_allocation); st != GEMM_STATUS_SUCCESS)
            return st;
        a.device.values = static_cast<const float *>(a.device_allocation);
        if (gemm_status_t st = dev->copy(layout_.device, a.device_allocation, host, bytes); st != GEMM_STATUS_SUCCESS)
            return st;
    }
    base_.scaling = scaling_in(false);
    return GEMM_STATUS_SUCCESS;
}

scaling_spec operand_sets::scaling_in(bool device) const {
    scaling_spec s;
    s.a = device ? scales_[0].device : scales_[0].host;
    s.b = device ? scales_[1].device : scales_[1].host;
    return s;
}

problem operand_sets::problem_on(const set &s) const {
    problem p = base_;
    p.scaling = scaling_in(on_device());
    void *const *where = on_device() ? s.device : s.host;
    p.a = where[a_index];
    p.b = where[b_index];
    p.c = where[c_index];
    if (class_.has_epilogue()) {
        if (class_.backward()) p.epilogue.bias_grad = where[vector_index];
        else p.epilogue.bias = where[vector_index];
        p.epilogue.aux = where[aux_index];
    }
    if (on_device()) p.stream = stream_;
    p.pointer_batch = class_.pointers;
    return p;
}

const problem &operand_sets::next() {
    const problem &p = problems_[next_];
    next_ = next_ + 1 == problems_.size() ? 0 : next_ + 1;
    return p;
}

gemm_status_t operand_sets::prepare_check() {
    next_ = 0;
    set &s = sets_.front();
    if (layout_.beta == 0.0) {
        const dtype part = part_type(class_.c_type);
        std::size_t count = bytes_[c_index] / dtype_size(part);
        for (std::size_t i = 0; i < count; ++i)
            store_element(s.host[c_index], int64_t(i), part, std::numeric_limits<double>::quiet_NaN());
    } else {
        std::memcpy(s.host[c_index], initial_c_.get(), bytes_[c_index]);
    }
    if (!on_device()) return GEMM_STATUS_SUCCESS;
    return installed_device_services()->copy(layout_.device, s.device[c_index], s.host[c_index], bytes_[c_index]);
}

gemm_status_t operand_sets::checked_result(problem &view) {
    set &s = sets_.front();
    view = problem_on(s);
    view.space = memory_space::host;
    view.scaling = scaling_in(false);
    view.stream = nullptr;
    for (int i = 0; i < operand_count; ++i) {
        if (!s.host[i]) continue;
        void *host = s.host[i];
        // What the call wrote lives on the device: C, and the epilogue's vector or aux when
        // the call writes them; a backward activation's aux and a bias are only read.
        const bool written =
            i == c_index || (i == vector_index && class_.backward()) || (i == aux_index && !class_.backward());
        if (on_device() && written) {
            host_buffer &back = i == c_index ? check_c_ : i == vector_index ? check_vector_ : check_aux_;
            host = back.get() + (static_cast<char *>(s.host[i]) - s.buffers[i].get());
            if (gemm_status_t st = installed_device_services()->copy(layout_.device, host, s.device[i], bytes_[i]);
                st != GEMM_STATUS_SUCCESS)
                return st;
        }
        if (i == a_index) view.a = host;
        else if (i == b_index) view.b = host;
        else if (i == c_index) view.c = host;
        else if (i == aux_index) view.epilogue.aux = host;
        else if (class_.backward()) view.epilogue.bias_grad = host;
        else view.epilogue.bias = host;
    }
    return GEMM_STATUS_SUCCESS;
}

const void *operand_sets::host_a() const { return sets_.front().host[a_index]; }
const void *operand_sets::host_b() const { return sets_.front().host[b_index]; }
const void *operand_sets::host_bias() const { return class_.backward() ? nullptr : sets_.front().host[vector_index]; }
const void *operand_sets::host_saved_aux() const { return class_.backward() ? sets_.front().host[aux_index] : nullptr; }

}  // namespace gemm
