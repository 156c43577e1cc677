// tuner.cpp: candidates, checked runs, timing with rotated operands, and the choice.
#include "tuner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "element.hpp"
#include "log.hpp"
#include "memory.hpp"
#include "policy.hpp"
#include "registry.hpp"
#include "size_math.hpp"

namespace gemm {
namespace {

using clock_type = std::chrono::steady_clock;

struct aligned_free {
    void operator()(void *p) const { std::free(p); }
};
using host_buffer = std::unique_ptr<char, aligned_free>;

host_buffer allocate(std::size_t bytes) {
    std::size_t rounded = (bytes + 127) / 64 * 64;  // room for the misaligning offset
    return host_buffer(static_cast<char *>(std::aligned_alloc(64, rounded)));
}

double unit_roundoff(dtype t) {
    switch (t) {
    case dtype::f64: return std::ldexp(1.0, -53);
    case dtype::f32: return std::ldexp(1.0, -24);
    case dtype::f16: return std::ldexp(1.0, -11);
    case dtype::bf16: return std::ldexp(1.0, -8);
    }
    return 1;
}

std::size_t last_level_cache_bytes() {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? std::size_t(l3) : std::size_t(32) << 20;
}

// One set of operands; several rotate so that timed runs do not find them in cache. Host
// copies always exist (filled here, read by the reference check); device problems also
// get device copies of A and B and a device C.
struct operand_set {
    host_buffer a, b, c;
    void *a_ptr = nullptr, *b_ptr = nullptr, *c_ptr = nullptr;  // host, maybe misaligned
    void *device_allocations[3] = {};                           // freed with the set
    void *device_a = nullptr, *device_b = nullptr, *device_c = nullptr;  // inside them
};

// The operands of a spec, their initial C, and the problem they make.
class tune_data {
public:
    tune_data(const tune_spec &s, int device) : spec_(s), device_(device) {}

    ~tune_data() {
        const device_services *dev = installed_device_services();
        if (!dev) return;
        for (operand_set &set : sets_)
            for (void *p : set.device_allocations)
                if (p) dev->release(device_, p);
        if (stream_) dev->destroy_stream(device_, stream_);
    }
    tune_data(const tune_data &) = delete;
    tune_data &operator=(const tune_data &) = delete;

    bool on_device() const { return spec_.space != memory_space::host; }

    // rows plus the spec's padding; padding -1 is the least padding that keeps the leading
    // dimension a multiple of 16 bytes when the spec is aligned, so that a tuned `ld=padded
    // align=16` class gets an entry of that same class. Empty on overflow.
    std::optional<int64_t> leading_dim(int64_t rows, std::size_t element) const {
        int64_t tight = std::max<int64_t>(1, rows);
        if (spec_.ld_padding >= 0) return checked_add(tight, spec_.ld_padding);
        int64_t unit = spec_.aligned ? int64_t(16 / element) : 1;
        std::optional<int64_t> padded = checked_add(tight, unit);
        return padded ? std::optional<int64_t>(*padded / unit * unit) : std::nullopt;
    }

    // The problem on tight (or padded) operands, and the bytes of each; INVALID_SIZE when a
    // size does not fit in int64_t bytes, ALLOC_FAILED when the sets would not fit in memory.
    gemm_status_t plan() {
        const tune_spec &s = spec_;
        base_.op_a = s.op_a;
        base_.op_b = s.op_b;
        base_.m = s.m;
        base_.n = s.n;
        base_.k = s.k;
        base_.batch = s.batch;
        base_.ab_type = s.ab_type;
        base_.c_type = s.c_type;
        base_.compute_type = compute_type_for(s.ab_type);
        base_.alpha = 1.0;
        base_.beta = s.beta_zero ? 0.0 : 0.5;
        base_.space = s.space;
        base_.device = s.space == memory_space::host ? -1 : device_;
        std::size_t ab = dtype_size(s.ab_type), cs = dtype_size(s.c_type);
        bool ok = operand(leading_dim(base_.a_rows(), ab), base_.a_cols(), ab, base_.lda, base_.stride_a, a_bytes_) &&
                  operand(leading_dim(base_.b_rows(), ab), base_.b_cols(), ab, base_.ldb, base_.stride_b, b_bytes_) &&
                  operand(leading_dim(s.m, cs), s.n, cs, base_.ldc, base_.stride_c, c_bytes_);
        if (!ok)
            return set_error(GEMM_STATUS_INVALID_SIZE,
                             fmt::format("gemm_tune: m = {}, n = {}, k = {}, batch_count = {}, ld_padding = {} make "
                                         "operands larger than 2^63 - 1 bytes",
                                         s.m, s.n, s.k, s.batch, s.ld_padding));
        return GEMM_STATUS_SUCCESS;
    }

    int device() const { return device_; }
    void *stream() const { return stream_; }

    gemm_status_t allocate_sets() {
        if (gemm_status_t s = plan(); s != GEMM_STATUS_SUCCESS) return s;
        const device_services *dev = installed_device_services();
        if (on_device() && !dev)
            return set_error(GEMM_STATUS_NOT_SUPPORTED, "tuner: device problems need a build with CUDA");
        std::size_t cs = dtype_size(spec_.c_type);
        // One set, the initial C and the checked C at least: refused before allocating what
        // would push the machine into swap or the OOM killer (in double: the sum may not fit).
        double least = double(a_bytes_) + double(b_bytes_) + 3.0 * double(c_bytes_);
        if (gemm_status_t s = check_host_memory(least); s != GEMM_STATUS_SUCCESS) return s;
        std::size_t per_set = a_bytes_ + b_bytes_ + c_bytes_;
        if (on_device())
            if (gemm_status_t s = dev->create_stream(device_, &stream_); s != GEMM_STATUS_SUCCESS) return s;
        std::size_t cache = on_device() ? dev->cache_bytes(device_) : last_level_cache_bytes();
        // As many sets as gemm bench uses, so that the tuner times the cache regime the bench
        // (and a caller streaming through different matrices) sees.
        std::size_t sets = std::clamp<std::size_t>(2 * cache / std::max<std::size_t>(per_set, 1) + 1, 1, 256);
        std::mt19937_64 rng(20261129);
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        initial_c_ = allocate(c_bytes_);
        check_c_ = allocate(c_bytes_ + 64);
        if (!initial_c_ || !check_c_) return set_error(GEMM_STATUS_ALLOC_FAILED, "tuner: cannot allocate operands");
        fill(initial_c_.get(), c_bytes_ / cs, spec_.c_type, rng, uniform);
        for (std::size_t i = 0; i < sets; ++i) {
            operand_set &set = sets_.emplace_back();
            if (gemm_status_t s = make_set(set, rng, uniform); s != GEMM_STATUS_SUCCESS) return s;
            set_problems_.push_back(problem_on(set));
        }
        return GEMM_STATUS_SUCCESS;
    }

    // The problem on set 0, the one the reference check reads.
    const problem &problem_of_set_0() const { return set_problems_.front(); }

    // The problem on the next set in turn: each timed run takes one, so that no run finds
    // its operands in cache from the runs just before it.
    const problem &next_problem() {
        const problem &p = set_problems_[next_set_];
        next_set_ = next_set_ + 1 == set_problems_.size() ? 0 : next_set_ + 1;
        return p;
    }

    // Before a checked run: set 0's C back to its initial values, as the reference check
    // expects, and set 0 next in turn, so that the run takes it.
    gemm_status_t start_check() {
        next_set_ = 0;
        operand_set &s = sets_.front();
        if (!on_device()) {
            std::memcpy(s.c_ptr, initial_c_.get(), c_bytes_);
            return GEMM_STATUS_SUCCESS;
        }
        return installed_device_services()->copy(device_, s.device_c, initial_c_.get(), c_bytes_);
    }

    // The last result computed on set 0, as host memory the reference check can read (a
    // device C is copied back first).
    gemm_status_t result_of_set_0(problem &view) {
        operand_set &s = sets_[0];
        view = base_;
        view.space = memory_space::host;
        view.a = s.a_ptr;
        view.b = s.b_ptr;
        view.c = s.c_ptr;
        if (!on_device()) return GEMM_STATUS_SUCCESS;
        view.c = check_c_.get() + (spec_.aligned ? 0 : dtype_size(spec_.c_type));
        return installed_device_services()->copy(device_, view.c, s.device_c, c_bytes_);
    }

    const void *initial_c() const { return initial_c_.get(); }
    std::size_t c_bytes() const { return c_bytes_; }
    const problem &base() const { return base_; }
    const void *host_a() const { return sets_[0].a_ptr; }
    const void *host_b() const { return sets_[0].b_ptr; }

private:
    // ld, the stride of one matrix (ld x cols) and the bytes of the batch, checked.
    bool operand(std::optional<int64_t> ld, int64_t cols, std::size_t element, int64_t &ld_out,
                 int64_t &stride_out, std::size_t &bytes_out) const {
        if (!ld) return false;
        std::optional<int64_t> stride = checked_mul(*ld, std::max<int64_t>(1, cols));
        std::optional<int64_t> elements = stride ? checked_mul(*stride, spec_.batch) : std::nullopt;
        std::optional<int64_t> bytes = elements ? checked_mul(*elements, int64_t(element)) : std::nullopt;
        // Room for the misaligning offset and the allocator's rounding, as allocate() adds.
        if (!bytes || !checked_add(*bytes, 256)) return false;
        ld_out = *ld;
        stride_out = *stride;
        bytes_out = std::size_t(*bytes);
        return true;
    }

    static gemm_status_t check_host_memory(double bytes) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages <= 0 || page <= 0) return GEMM_STATUS_SUCCESS;
        const double have = double(pages) * double(page);
        if (bytes <= have) return GEMM_STATUS_SUCCESS;
        return set_error(GEMM_STATUS_ALLOC_FAILED,
                         fmt::format("gemm_tune: the operands need {:.3g} GiB of host memory, this machine has {:.3g} GiB",
                                     bytes / double(1 << 30), have / double(1 << 30)));
    }

    problem problem_on(const operand_set &s) const {
        problem p = base_;
        p.a = on_device() ? s.device_a : s.a_ptr;
        p.b = on_device() ? s.device_b : s.b_ptr;
        p.c = on_device() ? s.device_c : s.c_ptr;
        if (on_device()) p.stream = stream_;
        return p;
    }

    template <class Rng, class Dist>
    static void fill(void *base, std::size_t count, dtype t, Rng &rng, Dist &uniform) {
        for (std::size_t i = 0; i < count; ++i) store_element(base, int64_t(i), t, uniform(rng));
    }

    template <class Rng, class Dist> gemm_status_t make_set(operand_set &set, Rng &rng, Dist &uniform) {
        std::size_t ab = dtype_size(spec_.ab_type), cs = dtype_size(spec_.c_type);
        set.a = allocate(a_bytes_ + 64);
        set.b = allocate(b_bytes_ + 64);
        set.c = allocate(c_bytes_ + 64);
        if (!set.a || !set.b || !set.c) return set_error(GEMM_STATUS_ALLOC_FAILED, "tuner: cannot allocate operands");
        std::size_t offset_ab = spec_.aligned ? 0 : ab, offset_c = spec_.aligned ? 0 : cs;
        set.a_ptr = set.a.get() + offset_ab;
        set.b_ptr = set.b.get() + offset_ab;
        set.c_ptr = set.c.get() + offset_c;
        // Only set 0 is checked, so the others copy its values: filling up to 256 sets
        // from the generator would take longer than timing them.
        const bool first = &set == &sets_.front();
        if (first) {
            fill(set.a_ptr, a_bytes_ / ab, spec_.ab_type, rng, uniform);
            fill(set.b_ptr, b_bytes_ / ab, spec_.ab_type, rng, uniform);
        } else {
            std::memcpy(set.a_ptr, sets_.front().a_ptr, a_bytes_);
            std::memcpy(set.b_ptr, sets_.front().b_ptr, b_bytes_);
        }
        std::memcpy(set.c_ptr, initial_c_.get(), c_bytes_);
        if (!on_device()) return GEMM_STATUS_SUCCESS;
        // Device copies keep the host copies' offset from an aligned allocation.
        const device_services *dev = installed_device_services();
        std::size_t bytes[3] = {a_bytes_ + 64, b_bytes_ + 64, c_bytes_ + 64};
        for (int i = 0; i < 3; ++i)
            if (gemm_status_t s = dev->allocate(device_, bytes[i], &set.device_allocations[i]); s != GEMM_STATUS_SUCCESS)
                return s;
        set.device_a = static_cast<char *>(set.device_allocations[0]) + offset_ab;
        set.device_b = static_cast<char *>(set.device_allocations[1]) + offset_ab;
        set.device_c = static_cast<char *>(set.device_allocations[2]) + offset_c;
        gemm_status_t s = dev->copy(device_, set.device_a, set.a_ptr, a_bytes_);
        if (s == GEMM_STATUS_SUCCESS) s = dev->copy(device_, set.device_b, set.b_ptr, b_bytes_);
        if (s == GEMM_STATUS_SUCCESS) s = dev->copy(device_, set.device_c, set.c_ptr, c_bytes_);
        return s;
    }

    tune_spec spec_;
    int device_ = -1;
    void *stream_ = nullptr;
    problem base_;
    std::vector<operand_set> sets_;
    std::vector<problem> set_problems_;  // the problem on each set, for the timed loops
    std::size_t next_set_ = 0;
    host_buffer initial_c_, check_c_;
    std::size_t a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0;
};

// The reference answer for set 0 and the error each entry may have: for small problems the
// whole C from cpu_ref with the bound gamma_k * (|alpha| |A||B| + |beta| |C0|); for large
// ones the O(n^2) check of BLIS: C t against alpha A (B t) + beta C0 t for a random t.
class reference_check {
public:
    static constexpr double small_limit = double(1 << 27);  // m n k batch of the full check

    gemm_status_t prepare(tune_data &data) {
        const problem &p = data.base();
        full_ = double(p.m) * double(p.n) * double(p.k) * double(p.batch) <= small_limit;
        problem ref = p;
        a_ = data.host_a();
        b_ = data.host_b();
        c0_.assign(static_cast<const char *>(data.initial_c()), static_cast<const char *>(data.initial_c()) + data.c_bytes());
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        t_.resize(std::size_t(p.n));
        for (double &v : t_) v = uniform(rng);
        expected_.clear();
        bound_.clear();
        for (int64_t batch = 0; batch < p.batch; ++batch) {
            if (full_) full_reference(ref, batch);
            else projected_reference(ref, batch);
        }
        return GEMM_STATUS_SUCCESS;
    }

    // Largest |error| / tolerance over the checked values (<= 1 passes; NaN fails).
    double worst_ratio(const problem &p) const {
        double worst = 0;
        std::size_t idx = 0;
        double u = unit_roundoff(compute_type_for(p.ab_type));  // the accumulation's roundoff
        double gamma = 2.0 * double(p.k + 2) * u;
        double u_out = unit_roundoff(p.c_type);
        for (int64_t batch = 0; batch < p.batch; ++batch) {
            const char *c = static_cast<const char *>(p.c) + std::size_t(batch * p.stride_c) * dtype_size(p.c_type);
            std::vector<double> got = full_ ? whole(c, p) : projected(c, p);
            for (double g : got) {
                double want = expected_[idx], tolerance = (gamma + 2.0 * u_out) * bound_[idx] + 1e-300;
                ++idx;
                double ratio = std::fabs(g - want) / tolerance;
                if (!(ratio <= worst)) worst = std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio;
            }
        }
        return worst;
    }

private:
    double a_at(const problem &p, int64_t batch, int64_t i, int64_t l) const {
        int64_t off = batch * p.stride_a + (p.op_a == transpose::n ? i + l * p.lda : l + i * p.lda);
        return load_element(a_, off, p.ab_type);
    }
    double b_at(const problem &p, int64_t batch, int64_t l, int64_t j) const {
        int64_t off = batch * p.stride_b + (p.op_b == transpose::n ? l + j * p.ldb : j + l * p.ldb);
        return load_element(b_, off, p.ab_type);
    }
    double c0_at(const problem &p, int64_t batch, int64_t i, int64_t j) const {
        return load_element(c0_.data(), batch * p.stride_c + i + j * p.ldc, p.c_type);
    }

    void full_reference(const problem &p, int64_t batch) {
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t i = 0; i < p.m; ++i) {
                double sum = 0, abs_sum = 0;
                for (int64_t l = 0; l < p.k; ++l) {
                    double prod = a_at(p, batch, i, l) * b_at(p, batch, l, j);
                    sum += prod;
                    abs_sum += std::fabs(prod);
                }
                double c0 = p.beta != 0.0 ? c0_at(p, batch, i, j) : 0.0;
                expected_.push_back(p.alpha * sum + p.beta * c0);
                bound_.push_back(std::fabs(p.alpha) * abs_sum + std::fabs(p.beta * c0));
            }
    }

    void projected_reference(const problem &p, int64_t batch) {
        std::vector<double> bt(std::size_t(p.k), 0.0), abs_bt(std::size_t(p.k), 0.0);
        for (int64_t l = 0; l < p.k; ++l)
            for (int64_t j = 0; j < p.n; ++j) {
                double v = b_at(p, batch, l, j) * t_[std::size_t(j)];
                bt[std::size_t(l)] += v;
                abs_bt[std::size_t(l)] += std::fabs(v);
            }
        for (int64_t i = 0; i < p.m; ++i) {
            double sum = 0, abs_sum = 0, c_sum = 0, c_abs = 0;
            for (int64_t l = 0; l < p.k; ++l) {
                double a = a_at(p, batch, i, l);
                sum += a * bt[std::size_t(l)];
                abs_sum += std::fabs(a) * abs_bt[std::size_t(l)];
            }
            for (int64_t j = 0; p.beta != 0.0 && j < p.n; ++j) {
                double v = c0_at(p, batch, i, j) * t_[std::size_t(j)];
                c_sum += v;
                c_abs += std::fabs(v);
            }
            // Each C entry errs by at most gamma (|alpha| |A||B| + |beta| |C0|), so C t errs by
            // at most gamma (|alpha| |A| (|B| |t|) + |beta| |C0| |t|).
            expected_.push_back(p.alpha * sum + p.beta * c_sum);
            bound_.push_back(std::fabs(p.alpha) * abs_sum + std::fabs(p.beta) * c_abs);
        }
    }

    std::vector<double> whole(const char *c, const problem &p) const {
        std::vector<double> v;
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t i = 0; i < p.m; ++i) v.push_back(load_element(c, i + j * p.ldc, p.c_type));
        return v;
    }

    std::vector<double> projected(const char *c, const problem &p) const {
        std::vector<double> v(std::size_t(p.m), 0.0);
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t i = 0; i < p.m; ++i)
                v[std::size_t(i)] += load_element(c, i + j * p.ldc, p.c_type) * t_[std::size_t(j)];
        return v;
    }

    bool full_ = true;
    const void *a_ = nullptr, *b_ = nullptr;
    std::vector<char> c0_;
    std::vector<double> t_, expected_, bound_;
};

struct candidate {
    backend *b;
    std::string variant;
};

// Every (backend, variant) that serves p, the built-in choice first. The reference loop is
// left out unless it is the built-in choice or named: it never wins, and at large sizes one
// run of it would take the whole budget.
std::vector<candidate> candidates_for(const problem &p, const tune_options &options, const candidate &fallback) {
    std::vector<candidate> list{fallback};
    for (backend *b : registered_backends()) {
        bool named = std::find(options.backends.begin(), options.backends.end(), b->name()) != options.backends.end();
        if (!options.backends.empty() && !named) continue;
        if (b->reference() && !named) continue;
        if (!b->available().ok || !b->supports(p).ok) continue;
        for (std::string &v : b->variants(p)) {
            bool is_fallback = b == fallback.b && v.empty();
            if (!is_fallback) list.push_back({b, std::move(v)});
        }
    }
    return list;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct timed_runs {
    backend *b;
    tune_data *data;
    std::string_view variant;
    run_context *ctx;
    int count;
};

gemm_status_t run_repeatedly(void *state) {
    auto *t = static_cast<timed_runs *>(state);
    for (int i = 0; i < t->count; ++i)
        if (gemm_status_t s = t->b->run(t->data->next_problem(), t->variant, *t->ctx); s != GEMM_STATUS_SUCCESS)
            return s;
    return GEMM_STATUS_SUCCESS;
}

// One sample: `count` back-to-back runs of c, in microseconds per run, each on the next
// operand set. Device time between events for device problems; wall time for host problems
// (which, for a GPU backend, includes staging: the cost a host-pointer caller pays). Timed
// runs do not reset C: repeated runs leave it finite (beta is 0 or 0.5).
gemm_status_t sample(const candidate &c, tune_data &data, int count, run_context &ctx, double &us) {
    timed_runs state{c.b, &data, c.variant, &ctx, count};
    gemm_status_t s;
    if (data.on_device()) {
        double ms = 0;
        s = installed_device_services()->time_on_stream(data.device(), data.stream(), run_repeatedly, &state, &ms);
        us = ms * 1e3 / count;
    } else {
        auto start = clock_type::now();
        s = run_repeatedly(&state);
        us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / count;
    }
    return s;
}

// Short runs are timed in batches of this long at least, so that a sample is not mostly the
// timer's own resolution and jitter. A device sample also times the launch of its first run
// (the GPU waits several microseconds for the host to issue it); at 1 ms, as long as a
// repetition of gemm bench, that is under 1 % of the sample.
constexpr double min_host_sample_us = 200, min_device_sample_us = 1000;

int runs_per_sample(double one_run_us, bool on_device) {
    double wanted = on_device ? min_device_sample_us : min_host_sample_us;
    return std::clamp(int(std::ceil(wanted / std::max(one_run_us, 0.1))), 1, 64);
}

// Warm-up lasts at least this long after switching candidates on the host: the previous
// candidate's threads (OpenBLAS's pool, which spins and yields for up to about 0.1 s;
// cpu_omp's pool spins for 50 us at most) keep the cores busy after its last call and slow
// the first calls of the next one by up to 30 times on a 2-core machine. Device work has no
// such tail.
constexpr double host_warmup_ms = 150, device_warmup_ms = 5;

// Whether one run outlasts a candidate's share of the budget (a CPU backend on a host 8192^3
// takes seconds): such a run is its own warm-up, and one sample is all the budget allows.
bool outlasts(double run_us, double budget_ms) { return run_us * 1e-3 > budget_ms; }

// Runs samples of c, not counted, for at least `samples` and the warm-up time; returns the
// fastest time per run among them (infinity if none ran).
double warm_up(const candidate &c, tune_data &data, int samples, int count, run_context &ctx) {
    double us = 0, fastest = std::numeric_limits<double>::infinity();
    double ms = data.on_device() ? device_warmup_ms : host_warmup_ms;
    auto until = clock_type::now() + std::chrono::duration<double, std::milli>(ms);
    for (int i = 0; i < 1000 && (i < samples || clock_type::now() < until); ++i) {
        if (sample(c, data, count, ctx, us) != GEMM_STATUS_SUCCESS) break;
        fastest = std::min(fastest, us);
    }
    return fastest;
}

// Checks one candidate on set 0, then times it over the rotating sets.
candidate_result measure(const candidate &c, tune_data &data, const reference_check &check,
                         const tune_options &options, double budget_ms) {
    candidate_result r;
    r.backend = std::string(c.b->name());
    r.variant = c.variant;
    run_context ctx;
    double us = 0;
    problem result;
    gemm_status_t s = data.start_check();
    if (s == GEMM_STATUS_SUCCESS) s = sample(c, data, 1, ctx, us);
    if (s == GEMM_STATUS_SUCCESS) s = data.result_of_set_0(result);
    if (s != GEMM_STATUS_SUCCESS) {
        r.note = fmt::format("failed: {}", last_error_message());
        return r;
    }
    double ratio = check.worst_ratio(result);
    if (!(ratio <= 1.0)) {
        r.note = fmt::format("wrong result (error {:.3g} x tolerance)", ratio);
        logger().warn("tuner: {} variant '{}' rejected: {}", r.backend, r.variant, r.note);
        return r;
    }
    r.correct = true;
    std::vector<double> times;
    auto deadline = clock_type::now() + std::chrono::duration<double, std::milli>(budget_ms);
    // Otherwise check, warm-up and three samples would take five times such a run.
    bool long_run = outlasts(us, budget_ms);
    // The checked run is the candidate's first and may carry one-time work (loading a kernel,
    // building a cuBLASLt plan, faulting in pages), so the samples are sized from the warm-up:
    // sized from the checked run, a device sample could hold a single run and time its launch
    // latency with it.
    r.runs_per_sample = runs_per_sample(us, data.on_device());
    if (!long_run) {
        double warm_us = warm_up(c, data, options.warmup, r.runs_per_sample, ctx);
        r.runs_per_sample = runs_per_sample(std::min(us, warm_us), data.on_device());
    }
    int min_reps = long_run ? 1 : options.min_reps;
    while (int(times.size()) < options.max_reps) {
        if (sample(c, data, r.runs_per_sample, ctx, us) != GEMM_STATUS_SUCCESS) {
            r.correct = false;
            r.note = fmt::format("failed while timing: {}", last_error_message());
            return r;
        }
        times.push_back(us);
        if (int(times.size()) >= min_reps && clock_type::now() > deadline) break;
    }
    r.reps = int(times.size());
    r.median_us = median(times);
    r.best_us = *std::min_element(times.begin(), times.end());
    r.spread = r.best_us > 0 ? r.median_us / r.best_us - 1 : 0;
    return r;
}

// The challenger against the default again, in alternating blocks so that both see the same
// machine state; replaces their medians with these head-to-head ones. Blocks, not single
// samples, each after a warm-up: two thread pools (cpu_omp's, OpenBLAS's) handing the cores
// back and forth would otherwise time each other's spinning threads.
// When either run is longer than a candidate's share of the budget, one round of one sample
// each, without warm-up (the runs are long enough to be their own).
void confirm(const candidate &fallback, const candidate &challenger, candidate_result &fr, candidate_result &cr,
             tune_data &data, double budget_ms) {
    bool long_runs = outlasts(std::max(fr.median_us, cr.median_us), budget_ms);
    const int rounds = long_runs ? 1 : 3, per_block = long_runs ? 1 : 3;
    std::vector<double> f, c;
    run_context ctx;
    double us = 0;
    int count = std::max(fr.runs_per_sample, cr.runs_per_sample);
    auto block = [&](const candidate &who, std::vector<double> &into) {
        if (!long_runs) warm_up(who, data, 1, count, ctx);
        for (int i = 0; i < per_block; ++i) {
            if (sample(who, data, count, ctx, us) != GEMM_STATUS_SUCCESS) return false;
            into.push_back(us);
        }
        return true;
    };
    for (int r = 0; r < rounds; ++r)
        if (!block(fallback, f) || !block(challenger, c)) return;
    auto spread = [](const std::vector<double> &v, double med) {
        double best = *std::min_element(v.begin(), v.end());
        return best > 0 ? med / best - 1 : 0;
    };
    fr.median_us = median(f);
    cr.median_us = median(c);
    fr.spread = std::max(fr.spread, spread(f, fr.median_us));
    cr.spread = std::max(cr.spread, spread(c, cr.median_us));
}

}  // namespace

tune_spec spec_of(const tune_key &key) {
    tune_spec s;
    s.ab_type = key.ab_type;
    s.c_type = key.c_type;
    s.op_a = key.op_a;
    s.op_b = key.op_b;
    s.m = key.m;
    s.n = key.n;
    s.k = key.k;
    s.batch = key.batch;
    s.ld_padding = key.padded_ld ? -1 : 0;
    s.aligned = key.aligned_16;
    s.beta_zero = key.beta_zero;
    s.space = key.space;
    return s;
}

gemm_status_t tune_problem(const tune_spec &spec, const tune_options &options, tune_outcome &out) {
    tune_data data(spec, spec.device);
    if (gemm_status_t s = data.allocate_sets(); s != GEMM_STATUS_SUCCESS) return s;
    const problem &p = data.problem_of_set_0();
    choice builtin = choose_builtin(p, false);
    if (!builtin.chosen) return set_error(builtin.status, builtin.message);
    reference_check check;
    check.prepare(data);

    std::vector<candidate> list = candidates_for(p, options, {builtin.chosen, ""});
    out = {};
    double budget_each = options.budget_ms / double(list.size());
    for (const candidate &c : list) out.candidates.push_back(measure(c, data, check, options, budget_each));

    candidate_result &fallback = out.candidates.front();
    std::size_t fastest = out.candidates.size();
    for (std::size_t i = 0; i < out.candidates.size(); ++i) {
        const candidate_result &r = out.candidates[i];
        if (r.correct && (fastest == out.candidates.size() || r.median_us < out.candidates[fastest].median_us))
            fastest = i;
    }
    // A challenger to the built-in choice is timed again against it, head to head; it wins only
    // when faster by more than the margin there too: timing noise must not swap a library's
    // default for a variant that is only as fast.
    if (fallback.correct && fastest != 0 && fastest != out.candidates.size())
        confirm(list[0], list[fastest], fallback, out.candidates[fastest], data, budget_each);
    const candidate_result *winner = fastest == out.candidates.size() ? nullptr : &out.candidates[fastest];
    if (fallback.correct && winner && !(winner->median_us * (1.0 + options.margin) < fallback.median_us))
        winner = &fallback;
    if (!winner) return set_error(GEMM_STATUS_EXECUTION_FAILED, "tuner: no candidate computed a correct result");
    out.entry.key = key_of(p);
    out.entry.backend = winner->backend;
    out.entry.variant = winner->variant;
    out.entry.microseconds = winner->median_us;
    out.entry.default_backend = fallback.backend;
    out.entry.default_microseconds = fallback.correct ? fallback.median_us : 0;
    out.disturbed = winner->spread > disturbed_spread || (fallback.correct && fallback.spread > disturbed_spread);
    if (out.disturbed)
        logger().info("tuner: {} timed while the machine was busy (spread {:.0f} % for the winner, {:.0f} % for the "
                      "default)", out.entry.key.to_text(), 100 * winner->spread, 100 * fallback.spread);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
