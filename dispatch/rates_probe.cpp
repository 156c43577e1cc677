// rates_probe.cpp: timing the anchors of this machine's host-memory rates, once, briefly.
#include "rates_probe.hpp"

#include <atomic>
#include <chrono>
#include <mutex>

#include "error.hpp"
#include "log.hpp"
#include "measure/operand_sets.hpp"
#include "measure/result_check.hpp"
#include "measure/sampler.hpp"
#include "registry.hpp"
#include "tune_cache.hpp"

namespace gemm {
namespace {

using clock_type = std::chrono::steady_clock;

// The host anchors: 64^3 shows a backend's cost per call (threads woken, packing set up), 384^3
// its rate, in a few milliseconds a run even for a BLAS that misdetects the CPU; a 1024 x 1024
// matrix times a vector (column-major, as a row-major 1 x 1024 x 1024 is) the speed it streams
// operands at, where arithmetic is not what bounds it (4 MiB in f32, in cache on most hosts,
// as a call repeated on the same operands finds them).
constexpr int64_t host_small_n = 64, host_large_n = 384, host_vector_n = 1024;
// The GPU anchors: 1024^3 on device memory for its rate, and 256 and 1024 on pageable and on
// page-locked host memory for each link's fixed cost and its rate. Larger anchors fit large calls better but cost more to
// make than to time, past the probe's budget; the rate at 1024 is below the rate at 8192,
// which errs towards the host only where the GPU's margin is small.
constexpr int64_t gpu_small_n = 256, gpu_large_n = 1024;
// Each anchor's timing: at least 2 samples after a warm-up sample, at most this long.
constexpr double anchor_budget_ms = 12;
// A backend whose large-anchor run is predicted longer than this (from the small anchor, at
// the small anchor's rate) is timed at host_medium_n instead: a reference BLAS would take the
// probe's whole budget at 384, and a library waking many threads for 64^3 looks that slow.
constexpr double longest_large_run_ms = 60;
constexpr int64_t host_medium_n = 192;

problem_class shape_class(dtype t, int64_t m, int64_t n, int64_t k, memory_space space) {
    problem_class c;
    c.ab_type = c.c_type = t;
    c.m = m;
    c.n = n;
    c.k = k;
    c.space = space;
    return c;
}

problem_class square_class(dtype t, int64_t n, memory_space space) { return shape_class(t, n, n, n, space); }

// The anchors' operands: operand_layout's defaults, host operands pageable or page-locked.
operand_layout operands(bool page_locked) {
    operand_layout l;
    l.pinned = page_locked;
    return l;
}

// The problem the class's operands make, for the fits' operation and byte counts.
problem shape_of(const problem_class &c) {
    problem p;
    p.ab_type = c.ab_type;
    p.c_type = c.c_type;
    p.m = c.m;
    p.n = c.n;
    p.k = c.k;
    return p;
}

// The fastest sample of b on class c (timed only: backends' results are checked by the tests
// and the tuner, and the rates only rank them), warm in cache, without the 150 ms host
// warm-up the tuner waits between targets: the probe times each library after cpu_omp.
gemm_status_t time_class(const problem_class &c, const operand_layout &layout, backend *b, double &us) {
    const auto start = clock_type::now();
    operand_sets sets(c, layout);
    sets.limit_sets(1);
    if (gemm_status_t s = sets.allocate(); s != GEMM_STATUS_SUCCESS)
        return set_error(s, std::string("gemm rates: ") + last_error_message());
    if (verdict v = b->supports(sets.first()); !v.ok)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm rates: " + std::string(b->name()) + ": " + v.reason);
    const result_check unprepared;  // not judged: check is false
    sample_settings s;
    s.budget_ms = anchor_budget_ms;
    s.min_samples = 2;
    s.max_samples = 50;
    s.check = false;
    s.host_warmup_ms = 0;
    const measurement m = measure_targets(sets, unprepared, {{b, ""}}, s).front();
    if (!m.timed)
        return set_error(m.status != GEMM_STATUS_SUCCESS ? m.status : GEMM_STATUS_EXECUTION_FAILED,
                         "gemm rates: " + m.target.label() + ": " + m.error);
    us = m.best_us;
    // What the probe's time goes to, anchor by anchor (GEMM_LOG_LEVEL=debug): making the
    // operands, the warm-up and the samples.
    logger().debug("gemm rates: {} {}x{}x{} {}{} memory: {:.4g} us, timed in {:.1f} ms", b->name(), c.m, c.n, c.k,
                   layout.pinned ? "page-locked " : "", memory_space_name(c.space), us,
                   std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
    return GEMM_STATUS_SUCCESS;
}

double square_flops(int64_t n) { return 2.0 * double(n) * double(n) * double(n); }

// b's host_rate for type t from its anchors: the two squares (the large one smaller for a
// backend too slow for it), then the matrix times a vector.
gemm_status_t time_host(dtype t, backend *b, host_rate &out) {
    double small_us = 0, large_us = 0;
    if (gemm_status_t s = time_class(square_class(t, host_small_n, memory_space::host), operands(false), b, small_us);
        s != GEMM_STATUS_SUCCESS)
        return s;
    const double predicted_ms = small_us * square_flops(host_large_n) / square_flops(host_small_n) / 1e3;
    const int64_t large_n = predicted_ms > longest_large_run_ms ? host_medium_n : host_large_n;
    if (gemm_status_t s = time_class(square_class(t, large_n, memory_space::host), operands(false), b, large_us);
        s != GEMM_STATUS_SUCCESS)
        return s;
    std::optional<host_rate> h = fit_host_rate(std::string(b->name()), host_small_n, small_us, large_n, large_us);
    if (!h)
        return set_error(GEMM_STATUS_EXECUTION_FAILED,
                         "gemm rates: " + std::string(b->name()) + ": no rate from its timings");
    const problem_class vector = shape_class(t, host_vector_n, 1, host_vector_n, memory_space::host);
    double vector_us = 0;
    if (gemm_status_t s = time_class(vector, operands(false), b, vector_us); s != GEMM_STATUS_SUCCESS) return s;
    if (!fit_host_bandwidth(*h, shape_of(vector), vector_us))
        return set_error(GEMM_STATUS_EXECUTION_FAILED,
                         "gemm rates: " + std::string(b->name()) + ": no bandwidth from its timing");
    out = *h;
    return GEMM_STATUS_SUCCESS;
}

// The page-locked link of r's GPU backend gpu, timed on the host anchors' sizes; where that
// fails (page-locking refused), the rates go without it and estimates take the pageable link.
void time_locked_link(dtype t, backend *gpu, dtype_rates &r) {
    gpu_anchors a;
    a.small_n = gpu_small_n;
    a.large_n = gpu_large_n;
    gemm_status_t s = time_class(square_class(t, a.small_n, memory_space::host), operands(true), gpu, a.small_us);
    if (s == GEMM_STATUS_SUCCESS)
        s = time_class(square_class(t, a.large_n, memory_space::host), operands(true), gpu, a.large_us);
    if (s == GEMM_STATUS_SUCCESS && !fit_locked_link(t, a, r))
        s = set_error(GEMM_STATUS_EXECUTION_FAILED, "gemm rates: the page-locked timings give no link");
    if (s != GEMM_STATUS_SUCCESS) {
        logger().debug("{}; the rates have no page-locked link", last_error_message());
        clear_error();
    }
}

// The GPU part from the first available device backend, in the preference order, that serves
// the anchors (asked on the anchors' own operands: a backend's answer depends on the problem's
// every field, its compute type included).
gemm_status_t time_gpu(dtype t, dtype_rates &r) {
    gpu_anchors a;
    a.device_n = a.large_n = gpu_large_n;
    a.small_n = gpu_small_n;
    for (backend *gpu : registered_backends()) {
        if (gpu->kind() != backend_kind::device || !gpu->available().ok) continue;
        gemm_status_t s =
            time_class(square_class(t, a.device_n, memory_space::device), operands(false), gpu, a.device_us);
        if (s == GEMM_STATUS_NOT_SUPPORTED) {
            clear_error();
            continue;
        }
        if (s == GEMM_STATUS_SUCCESS)
            s = time_class(square_class(t, a.small_n, memory_space::host), operands(false), gpu, a.small_us);
        if (s == GEMM_STATUS_SUCCESS)
            s = time_class(square_class(t, a.large_n, memory_space::host), operands(false), gpu, a.large_us);
        if (s != GEMM_STATUS_SUCCESS) return s;
        if (!fit_gpu_rates(t, a, std::string(gpu->name()), r))
            return set_error(GEMM_STATUS_EXECUTION_FAILED, "gemm rates: the GPU's timings give no rates");
        time_locked_link(t, gpu, r);
        return GEMM_STATUS_SUCCESS;
    }
    return set_error(GEMM_STATUS_NOT_SUPPORTED,
                     "gemm rates: no device backend serves " + std::string(dtype_name(t)) + " on host memory");
}

bool device_backend_available() {
    for (backend *b : registered_backends())
        if (b->kind() == backend_kind::device && b->available().ok) return true;
    return false;
}

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

}  // namespace

gemm_status_t measure_host_rates(dtype t, dtype_rates &out) {
    const auto start = clock_type::now();
    dtype_rates r;
    gemm_status_t first_failure = GEMM_STATUS_SUCCESS;
    // Registry order puts cpu_omp, whose threads stop spinning within 50 us, before any library.
    for (backend *b : registered_backends()) {
        if (b->kind() != backend_kind::host || b->reference() || !b->available().ok) continue;
        host_rate h;
        if (gemm_status_t s = time_host(t, b, h); s != GEMM_STATUS_SUCCESS) {
            if (first_failure == GEMM_STATUS_SUCCESS) first_failure = s;
            logger().debug("{}", last_error_message());
            clear_error();
            continue;
        }
        r.host.push_back(h);
    }
    if (r.host.empty())
        return set_error(first_failure != GEMM_STATUS_SUCCESS ? first_failure : GEMM_STATUS_NOT_SUPPORTED,
                         "gemm rates: no host backend could be timed");
    order_fastest_first(r.host);
    r.measured_ms = ms_since(start);
    out = std::move(r);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t measure_gpu_rates(dtype t, dtype_rates &r) {
    const auto start = clock_type::now();
    dtype_rates with_gpu = r;
    if (gemm_status_t s = time_gpu(t, with_gpu); s != GEMM_STATUS_SUCCESS) return s;
    with_gpu.measured_ms += ms_since(start);
    r = std::move(with_gpu);
    return GEMM_STATUS_SUCCESS;
}

bool rates_matter(const problem &p) {
    int hosts = 0;
    for (backend *b : registered_backends())
        hosts += b->kind() == backend_kind::host && !b->reference() && b->available().ok && b->supports(p).ok;
    return hosts > 1 || (hosts == 1 && gpu_rates_matter(p));
}

bool gpu_rates_matter(const problem &p) {
    if (p.flops() < offload_min_flops) return false;  // before asking: that probes the CUDA backends
    static const bool device = device_backend_available();
    return device;
}

void ensure_rates(dtype t, bool with_gpu, double *measured_ms) {
    if (measured_ms) *measured_ms = 0;
    const dtype real = rates_type(t);
    const int i = real == dtype::f64;
    static std::mutex one_at_a_time;
    // Per real type, a part whose measurement failed is not tried again by this process; read
    // without the lock by every call that finds rates without a GPU part.
    static std::atomic<bool> host_tried[2] = {false, false}, gpu_tried[2] = {false, false};
    tune_cache &cache = process_tune_cache();
    auto wanted = [&] {  // what is missing, if it may still be measured
        std::shared_ptr<const machine_rates> m = cache.rates();
        const dtype_rates *r = m ? m->for_type(real) : nullptr;
        if (!r) return !host_tried[i].load();
        return with_gpu && !r->has_gpu() && !gpu_tried[i].load();
    };
    if (!wanted()) return;
    std::lock_guard<std::mutex> lock(one_at_a_time);
    if (!wanted()) return;
    // Another process (a rank beside this one) may have stored them meanwhile: the cache
    // measures under the file's lock, only what the file still lacks.
    double before_ms = 0;
    auto enough = [&](const dtype_rates &r) { return !with_gpu || r.has_gpu() || gpu_tried[i].load(); };
    auto complete = [&](dtype_rates &r) {
        before_ms = r.measured_ms;
        if (r.host.empty()) {
            host_tried[i] = true;
            if (gemm_status_t s = measure_host_rates(real, r); s != GEMM_STATUS_SUCCESS) return s;
        }
        if (with_gpu && !r.has_gpu()) {
            gpu_tried[i] = true;
            if (measure_gpu_rates(real, r) != GEMM_STATUS_SUCCESS) {
                logger().debug("{}; the rates have no GPU part", last_error_message());
                clear_error();
            }
        }
        return GEMM_STATUS_SUCCESS;
    };
    tune_cache::rates_source source = tune_cache::rates_source::none;
    const gemm_status_t stored = cache.share_rates(real, enough, complete, source);
    if (source == tune_cache::rates_source::none) {
        logger().warn("{}; auto takes the preference order for host memory", last_error_message());
        clear_error();
        return;
    }
    std::shared_ptr<const machine_rates> m = cache.rates();
    const dtype_rates &rates = *m->for_type(real);
    if (source == tune_cache::rates_source::file) {
        logger().info("gemm rates: this machine's {} rates, as another process stored them: {}", dtype_name(real),
                      rates_line(real, rates));
        return;
    }
    if (measured_ms) *measured_ms = rates.measured_ms - before_ms;
    logger().info("gemm rates: measured this machine's {} rates in {:.0f} ms: {}", dtype_name(real),
                  rates.measured_ms - before_ms, rates_line(real, rates));
    // A cache file the load warned about (one not used, or with lines skipped) is not warned
    // about again: its store usually fails for the reason already said.
    if (stored != GEMM_STATUS_SUCCESS) {
        if (cache.warnings().empty())
            logger().warn("gemm rates: kept for this process only, not stored: {}", last_error_message());
        else logger().debug("gemm rates: kept for this process only, not stored: {}", last_error_message());
    }
    clear_error();
}

}  // namespace gemm
