// operand_sets.cpp: planning, allocating, filling and rotating the measured operands.
#include "operand_sets.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include <spdlog/fmt/fmt.h>

#include "dispatch/element.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"

namespace gemm {
namespace {

constexpr std::size_t max_sets = 256;
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
        while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
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

// count elements of t (both parts of a complex one) uniform in [-1, 1].
void fill(void *base, std::size_t count, dtype t, std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const int64_t parts = int64_t(count) * parts_per_element(t);
    for (int64_t i = 0; i < parts; ++i) store_element(base, i, part_type(t), uniform(rng));
}

}  // namespace

operand_sets::operand_sets(const problem_class &c) : class_(c) {}

operand_sets::~operand_sets() {
    const device_services *dev = installed_device_services();
    if (!dev) return;
    for (void *p : pinned_) dev->unpin(p);
    for (set &s : sets_)
        for (void *p : s.device_allocation)
            if (p) dev->release(class_.device, p);
    if (stream_) dev->destroy_stream(class_.device, stream_);
}

// rows plus the class's padding; padding -1 is the least padding that keeps the leading
// dimension a multiple of 16 bytes when the class is aligned, so that a tuned `ld=padded
// align=16` class gets an entry of that same class. Empty on overflow.
std::optional<int64_t> operand_sets::leading_dim(int64_t rows, std::size_t element) const {
    int64_t tight = std::max<int64_t>(1, rows);
    if (class_.ld_padding >= 0) return checked_add(tight, class_.ld_padding);
    int64_t unit = class_.aligned ? int64_t(16 / element) : 1;
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
    base_.op_a = c.op_a;
    base_.op_b = c.op_b;
    base_.m = c.m;
    base_.n = c.n;
    base_.k = c.k;
    base_.batch = c.batch;
    base_.ab_type = c.ab_type;
    base_.c_type = c.c_type;
    base_.compute_type = compute_type_for(c.ab_type);
    base_.alpha = c.alpha;
    base_.beta = c.beta;
    base_.space = c.space;
    base_.device = c.space == memory_space::host ? -1 : c.device;
    std::size_t ab = dtype_size(c.ab_type), cs = dtype_size(c.c_type);
    const int64_t given[3] = {c.lda, c.ldb, c.ldc}, rows[3] = {base_.a_rows(), base_.b_rows(), c.m};
    for (int i = 0; i < 3; ++i)
        if (given[i] > 0 && given[i] < std::max<int64_t>(1, rows[i]))
            return set_error(GEMM_STATUS_INVALID_SIZE, fmt::format("ld{} = {} is less than the {} rows of {}",
                                                                   "abc"[i], given[i], rows[i], "ABC"[i]));
    auto ld = [this](int64_t given_ld, int64_t rows_of, std::size_t element) {
        return given_ld > 0 ? std::optional<int64_t>(given_ld) : leading_dim(rows_of, element);
    };
    bool ok = operand(ld(c.lda, base_.a_rows(), ab), base_.a_cols(), ab, base_.lda, base_.stride_a, bytes_[0]) &&
              operand(ld(c.ldb, base_.b_rows(), ab), base_.b_cols(), ab, base_.ldb, base_.stride_b, bytes_[1]) &&
              operand(ld(c.ldc, c.m, cs), c.n, cs, base_.ldc, base_.stride_c, bytes_[2]);
    if (!ok)
        return set_error(GEMM_STATUS_INVALID_SIZE,
                         fmt::format("m = {}, n = {}, k = {}, batch_count = {}, ld_padding = {} make operands larger "
                                     "than 2^63 - 1 bytes", c.m, c.n, c.k, c.batch, c.ld_padding));
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
    if ((on_device() || class_.pinned) && !dev)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, on_device() ? "device problems need a build with CUDA"
                                                                : "page-locked host memory needs a build with CUDA");
    // One set and the initial C at least, and for a device problem the C copied back (in
    // double: the sum may not fit).
    double least = double(bytes_[0]) + double(bytes_[1]) + (on_device() ? 3.0 : 2.0) * double(bytes_[2]);
    if (gemm_status_t s = check_host_memory(least); s != GEMM_STATUS_SUCCESS) return s;
    if (on_device())
        if (gemm_status_t s = dev->create_stream(class_.device, &stream_); s != GEMM_STATUS_SUCCESS) return s;
    std::size_t per_set = bytes_[0] + bytes_[1] + bytes_[2];
    std::size_t cache = on_device() ? dev->cache_bytes(class_.device) : last_level_cache_bytes();
    std::size_t count = std::clamp<std::size_t>(2 * cache / std::max<std::size_t>(per_set, 1) + 1, 1, max_sets);
    initial_c_.reset(static_cast<char *>(allocate_host(bytes_[2])));
    if (on_device()) check_c_.reset(static_cast<char *>(allocate_host(bytes_[2])));
    if (!initial_c_ || (on_device() && !check_c_)) return set_error(GEMM_STATUS_ALLOC_FAILED, "cannot allocate the measured operands");
    std::mt19937_64 rng(20261129);
    fill(initial_c_.get(), bytes_[2] / dtype_size(class_.c_type), class_.c_type, rng);
    sets_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (gemm_status_t s = make_set(sets_[i], i == 0); s != GEMM_STATUS_SUCCESS) return s;
        problems_.push_back(problem_on(sets_[i]));
    }
    return GEMM_STATUS_SUCCESS;
}

// Only set 0 is checked, so the others copy its values: filling up to 256 sets from the
// generator would take longer than timing them.
gemm_status_t operand_sets::make_set(set &s, bool first) {
    std::size_t ab = dtype_size(class_.ab_type), cs = dtype_size(class_.c_type);
    std::size_t offsets[3] = {class_.aligned ? 0 : ab, class_.aligned ? 0 : ab, class_.aligned ? 0 : cs};
    host_buffer *buffers[3] = {&s.a, &s.b, &s.c};
    for (int i = 0; i < 3; ++i) {
        buffers[i]->reset(static_cast<char *>(allocate_host(bytes_[i])));
        if (!*buffers[i]) return set_error(GEMM_STATUS_ALLOC_FAILED, "cannot allocate the measured operands");
        s.host[i] = buffers[i]->get() + offsets[i];
    }
    std::mt19937_64 rng(7 + 0x9e3779b97f4a7c15ull);
    if (first) {
        fill(s.host[0], bytes_[0] / ab, class_.ab_type, rng);
        fill(s.host[1], bytes_[1] / ab, class_.ab_type, rng);
    } else {
        std::memcpy(s.host[0], sets_.front().host[0], bytes_[0]);
        std::memcpy(s.host[1], sets_.front().host[1], bytes_[1]);
    }
    std::memcpy(s.host[2], initial_c_.get(), bytes_[2]);
    const device_services *dev = installed_device_services();
    if (class_.pinned && !on_device())
        for (int i = 0; i < 3; ++i) {
            if (gemm_status_t st = dev->pin(buffers[i]->get(), bytes_[i] + offsets[i]); st != GEMM_STATUS_SUCCESS) return st;
            pinned_.push_back(buffers[i]->get());
        }
    return on_device() ? copy_to_device(s) : GEMM_STATUS_SUCCESS;
}

// Device copies keep the host copies' offset from an aligned allocation.
gemm_status_t operand_sets::copy_to_device(set &s) {
    const device_services *dev = installed_device_services();
    for (int i = 0; i < 3; ++i) {
        if (gemm_status_t st = dev->allocate(class_.device, bytes_[i] + slack, &s.device_allocation[i]);
            st != GEMM_STATUS_SUCCESS)
            return st;
        std::size_t offset = std::size_t(static_cast<char *>(s.host[i]) - (i == 0 ? s.a : i == 1 ? s.b : s.c).get());
        s.device[i] = static_cast<char *>(s.device_allocation[i]) + offset;
        if (gemm_status_t st = dev->copy(class_.device, s.device[i], s.host[i], bytes_[i]); st != GEMM_STATUS_SUCCESS)
            return st;
    }
    return GEMM_STATUS_SUCCESS;
}

problem operand_sets::problem_on(const set &s) const {
    problem p = base_;
    void *const *where = on_device() ? s.device : s.host;
    p.a = where[0];
    p.b = where[1];
    p.c = where[2];
    if (on_device()) p.stream = stream_;
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
    if (class_.beta == 0.0) {
        const dtype part = part_type(class_.c_type);
        std::size_t count = bytes_[2] / dtype_size(part);
        for (std::size_t i = 0; i < count; ++i)
            store_element(s.host[2], int64_t(i), part, std::numeric_limits<double>::quiet_NaN());
    } else {
        std::memcpy(s.host[2], initial_c_.get(), bytes_[2]);
    }
    if (!on_device()) return GEMM_STATUS_SUCCESS;
    return installed_device_services()->copy(class_.device, s.device[2], s.host[2], bytes_[2]);
}

gemm_status_t operand_sets::checked_result(problem &view) {
    set &s = sets_.front();
    view = base_;
    view.space = memory_space::host;
    view.a = s.host[0];
    view.b = s.host[1];
    view.c = s.host[2];
    if (!on_device()) return GEMM_STATUS_SUCCESS;
    std::size_t offset = std::size_t(static_cast<char *>(s.host[2]) - s.c.get());
    view.c = check_c_.get() + offset;
    return installed_device_services()->copy(class_.device, view.c, s.device[2], bytes_[2]);
}

const void *operand_sets::host_a() const { return sets_.front().host[0]; }
const void *operand_sets::host_b() const { return sets_.front().host[1]; }

}  // namespace gemm
