// side_tuner.cpp: operands for a class of transposes or sparse products, the candidates'
// checked and timed runs on them, and the choice.
#include "side_tuner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "dispatch_omatcopy.hpp"
#include "dispatch_spmm.hpp"
#include "element.hpp"
#include "error.hpp"
#include "log.hpp"
#include "measure/tolerance.hpp"
#include "memory.hpp"
#include "registry.hpp"
#include "side_call.hpp"

namespace gemm {
namespace {

using bytes = std::vector<unsigned char>;

// The rounds the candidates take turns in, so that a drifting machine drifts under all alike.
constexpr int rounds = 3;

// The operands of one class: host arrays, and their device copies for a device class. The
// output (a transpose's B, a sparse product's C) is the last operand.
class side_operands {
public:
    side_operands(const problem_class &key, int device) : key_(key), device_(device) {}
    ~side_operands() {
        const device_services *dev = installed_device_services();
        if (!dev) return;
        for (void *p : on_device_)
            if (p) dev->release(device_, p);
        if (stream_) dev->destroy_stream(device_, stream_);
    }
    side_operands(const side_operands &) = delete;
    side_operands &operator=(const side_operands &) = delete;

    gemm_status_t make();

    bool on_device() const { return key_.space == memory_space::device; }
    const problem_class &key() const { return key_; }

    // The problem on the operands candidates run on (device ones for a device class).
    transpose_problem transpose() const { return transpose_on(pointers(on_device()), output_pointer(), on_device()); }
    sparse_problem sparse() const { return sparse_on(pointers(on_device()), output_pointer(), on_device()); }

    verdict supports(const backend &b) const {
        if (!side_call::in_memory_of(b, key_)) return verdict::no("a backend of the other memory space");
        if (!b.available().ok) return b.available();
        return key_.call == call_kind::omatcopy ? b.supports_omatcopy(transpose()) : b.supports_spmm(sparse());
    }
    backend *builtin(std::string &why) const {
        side_choice c =
            key_.call == call_kind::omatcopy ? choose_omatcopy_builtin(transpose()) : choose_spmm_builtin(sparse());
        why = c.message;
        return c.chosen;
    }
    // The class the operands are of, as auto keys their calls.
    problem_class measured_key() const {
        return key_.call == call_kind::omatcopy ? class_of(transpose()) : class_of(sparse());
    }

    // Runs b on the operands; its time in microseconds (device time for a device class).
    gemm_status_t run(backend &b, double &microseconds);
    // The output as a checked run expects it: NaN where it is written without being read
    // (a transpose's B; C with beta = 0), else its initial values.
    gemm_status_t reset_output();
    gemm_status_t read_output(bytes &out) const;
    // cpu_ref's output on the host operands.
    gemm_status_t reference(bytes &out) const;

    const bytes &initial_output() const { return initial_; }
    int64_t output_elements() const { return int64_t(host_.back().size() / dtype_size(key_.ab_type)); }
    // C's element steps (sparse products).
    int64_t c_row_step() const { return c_row_step_; }
    int64_t c_col_step() const { return c_col_step_; }
    double beta() const { return key_.beta_zero ? 0.0 : 0.5; }

private:
    std::vector<const void *> pointers(bool device) const {
        std::vector<const void *> p;
        for (std::size_t i = 0; i < host_.size(); ++i)
            p.push_back(host_[i].empty() ? nullptr : device ? on_device_[i] : host_[i].data());
        return p;
    }
    // The output candidates write: its device copy, or the host array this class owns.
    void *output_pointer() const {
        return on_device() ? on_device_.back() : const_cast<unsigned char *>(host_.back().data());
    }
    // The problem on pointers p (device ones or not) writing out.
    transpose_problem transpose_on(const std::vector<const void *> &p, void *out, bool device) const;
    sparse_problem sparse_on(const std::vector<const void *> &p, void *out, bool device) const;
    gemm_status_t plan_transpose();
    gemm_status_t plan_sparse();

    problem_class key_;
    int device_;
    void *stream_ = nullptr;
    std::vector<bytes> host_;  // transpose: A, B; sparse: offsets or row indices, columns, values, B, C
    std::vector<void *> on_device_;
    bytes initial_;
    int64_t rows_ = 0, cols_ = 0, nnz_ = 0;  // a sparse product's stored A
    bool index64_ = false;
    int64_t b_row_step_ = 0, b_col_step_ = 0, c_row_step_ = 0, c_col_step_ = 0;
};

std::mt19937_64 &random_engine() {
    thread_local std::mt19937_64 engine(20250317);
    return engine;
}

// count random values in [-1, 1] (each part of a complex one) of type t.
bytes random_values(dtype t, int64_t count) {
    bytes out(std::size_t(count) * dtype_size(t));
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (int64_t i = 0; i < count; ++i)
        store_value(out.data(), i, t,
                    is_complex(t) ? std::complex<double>(value(random_engine()), value(random_engine()))
                                  : std::complex<double>(value(random_engine()), 0.0));
    return out;
}

bytes nan_values(dtype t, int64_t count) {
    bytes out(std::size_t(count) * dtype_size(t));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < count; ++i) store_value(out.data(), i, t, {nan, nan});
    return out;
}

template <class Index> void put_index(bytes &to, int64_t at, int64_t value) {
    const Index v = Index(value);
    std::memcpy(to.data() + std::size_t(at) * sizeof(Index), &v, sizeof(Index));
}

// Half this machine's memory: operands beyond it would push the process into the OOM killer.
std::size_t host_memory_limit() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) / 2 : std::size_t(1) << 34;
}

gemm_status_t side_operands::plan_transpose() {
    const dtype t = key_.ab_type;
    const double elements = double(std::max<int64_t>(1, key_.m)) * double(key_.n);
    if (2.0 * elements * double(dtype_size(t)) > double(host_memory_limit()))
        return set_error(GEMM_STATUS_ALLOC_FAILED,
                         fmt::format("gemm_tune: {} needs more than half this machine's memory", key_.to_text()));
    host_.push_back(random_values(t, key_.m * key_.n));
    host_.push_back(nan_values(t, key_.m * key_.n));
    return GEMM_STATUS_SUCCESS;
}

// A with nnz = 10^density * rows * cols entries, row r holding the entries between
// nnz * r / rows and nnz * (r + 1) / rows in columns drawn at random without repeats (Floyd's
// sampling), sorted.
gemm_status_t side_operands::plan_sparse() {
    const dtype t = key_.ab_type;
    const bool as_stored = key_.op_a == transpose::n;
    rows_ = as_stored ? key_.m : key_.k;
    cols_ = as_stored ? key_.k : key_.m;
    const double cells = double(rows_) * double(cols_);
    nnz_ = cells > 0 ? std::clamp<int64_t>(std::llround(std::pow(10.0, key_.density) * cells), 1, int64_t(cells)) : 0;
    const int64_t n = key_.n, m = key_.m, k = key_.k;
    // B laid out as C (op_b N) or the other way (T, C); a step that must not be 1 is at least 2.
    const bool c_col_major = !key_.row_major;
    const bool b_col_major = (key_.op_b == transpose::n) == c_col_major;
    b_row_step_ = b_col_major ? 1 : std::max<int64_t>(2, n);
    b_col_step_ = b_col_major ? std::max<int64_t>(1, k) : 1;
    c_row_step_ = c_col_major ? 1 : std::max<int64_t>(2, n);
    c_col_step_ = c_col_major ? std::max<int64_t>(1, m) : 1;
    auto span = [](int64_t r, int64_t c, int64_t rs, int64_t cs) {
        return r > 0 && c > 0 ? (r - 1) * rs + (c - 1) * cs + 1 : 0;
    };
    const int64_t b_elements = span(k, n, b_row_step_, b_col_step_), c_elements = span(m, n, c_row_step_, c_col_step_);
    index64_ = std::max({rows_, cols_, nnz_}) > int64_t(std::numeric_limits<int32_t>::max());
    const std::size_t index = index64_ ? 8 : 4;
    const double total = double(nnz_) * double(2 * index + dtype_size(t)) +
                         double(b_elements + 2 * c_elements) * double(dtype_size(t)) + double(rows_ + 1) * double(index);
    if (total > double(host_memory_limit()))
        return set_error(GEMM_STATUS_ALLOC_FAILED,
                         fmt::format("gemm_tune: {} needs more than half this machine's memory", key_.to_text()));
    const bool csr = key_.call == call_kind::spmm_csr;
    bytes rows_array(std::size_t(csr ? rows_ + 1 : nnz_) * index), columns(std::size_t(nnz_) * index);
    std::vector<char> taken(std::size_t(cols_), 0);
    std::vector<int64_t> picked;
    int64_t at = 0;
    for (int64_t r = 0; r < rows_; ++r) {
        if (csr) index64_ ? put_index<int64_t>(rows_array, r, at) : put_index<int32_t>(rows_array, r, at);
        const int64_t count = nnz_ / rows_ + (r < nnz_ % rows_ ? 1 : 0);
        picked.clear();
        for (int64_t j = cols_ - count; j < cols_; ++j) {
            const int64_t c = std::uniform_int_distribution<int64_t>(0, j)(random_engine());
            const int64_t chosen = taken[std::size_t(c)] ? j : c;
            taken[std::size_t(chosen)] = 1;
            picked.push_back(chosen);
        }
        std::sort(picked.begin(), picked.end());
        for (int64_t c : picked) {
            taken[std::size_t(c)] = 0;
            if (!csr) index64_ ? put_index<int64_t>(rows_array, at, r) : put_index<int32_t>(rows_array, at, r);
            index64_ ? put_index<int64_t>(columns, at, c) : put_index<int32_t>(columns, at, c);
            ++at;
        }
    }
    if (csr) index64_ ? put_index<int64_t>(rows_array, rows_, at) : put_index<int32_t>(rows_array, rows_, at);
    host_.push_back(std::move(rows_array));
    host_.push_back(std::move(columns));
    host_.push_back(random_values(t, nnz_));
    host_.push_back(random_values(t, b_elements));
    host_.push_back(random_values(t, c_elements));
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t side_operands::make() {
    try {
        gemm_status_t s = key_.call == call_kind::omatcopy ? plan_transpose() : plan_sparse();
        if (s != GEMM_STATUS_SUCCESS) return s;
    } catch (const std::bad_alloc &) {
        return set_error(GEMM_STATUS_ALLOC_FAILED, "gemm_tune: cannot allocate the operands of " + key_.to_text());
    }
    initial_ = host_.back();
    on_device_.assign(host_.size(), nullptr);
    if (!on_device()) return GEMM_STATUS_SUCCESS;
    const device_services *dev = installed_device_services();
    if (!dev)
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "gemm_tune: " + key_.to_text() + " is of device memory, and this build has no device runtime");
    if (gemm_status_t s = dev->create_stream(device_, &stream_); s != GEMM_STATUS_SUCCESS) return s;
    for (std::size_t i = 0; i < host_.size(); ++i) {
        if (host_[i].empty()) continue;
        if (gemm_status_t s = dev->allocate(device_, host_[i].size(), &on_device_[i]); s != GEMM_STATUS_SUCCESS)
            return s;
        if (gemm_status_t s = dev->copy(device_, on_device_[i], host_[i].data(), host_[i].size());
            s != GEMM_STATUS_SUCCESS)
            return s;
    }
    return GEMM_STATUS_SUCCESS;
}

transpose_problem side_operands::transpose_on(const std::vector<const void *> &p, void *out, bool device) const {
    transpose_problem t;
    t.op = key_.op_a;
    t.rows = key_.m;
    t.cols = key_.n;
    t.type = key_.ab_type;
    t.a = p[0];
    t.lda = std::max<int64_t>(1, t.rows);
    t.b = out;
    t.ldb = std::max<int64_t>(1, t.b_rows());
    t.space = device ? key_.space : memory_space::host;
    t.device = device ? device_ : -1;
    t.stream = device ? stream_ : nullptr;
    return t;
}

sparse_problem side_operands::sparse_on(const std::vector<const void *> &p, void *out, bool device) const {
    sparse_problem s;
    s.format = key_.call == call_kind::spmm_csr ? sparse_format::csr : sparse_format::coo;
    s.op_a = key_.op_a;
    s.m = key_.m;
    s.n = key_.n;
    s.k = key_.k;
    s.type = key_.ab_type;
    s.rows = rows_;
    s.cols = cols_;
    s.nnz = nnz_;
    s.index64 = index64_;
    (s.format == sparse_format::csr ? s.row_offsets : s.row_indices) = p[0];
    s.col_indices = p[1];
    s.values = p[2];
    s.b = p[3];
    s.b_row_step = b_row_step_;
    s.b_col_step = b_col_step_;
    s.b_conj = key_.op_b == transpose::c;
    s.c = out;
    s.c_row_step = c_row_step_;
    s.c_col_step = c_col_step_;
    s.beta = beta();
    s.space = device ? key_.space : memory_space::host;
    s.device = device ? device_ : -1;
    s.stream = device ? stream_ : nullptr;
    if (s.scales_only()) s.row_offsets = s.row_indices = s.col_indices = s.values = s.b = nullptr;
    return s;
}

struct run_state {
    backend *b;
    const side_operands *operands;
    run_report report;
};

gemm_status_t run_work(void *state) {
    auto *r = static_cast<run_state *>(state);
    return r->operands->key().call == call_kind::omatcopy ? r->b->run_omatcopy(r->operands->transpose(), r->report)
                                                          : r->b->run_spmm(r->operands->sparse(), r->report);
}

gemm_status_t side_operands::run(backend &b, double &microseconds) {
    run_state state{&b, this, {}};
    if (on_device()) {
        double ms = 0;
        gemm_status_t s = installed_device_services()->time_on_stream(device_, stream_, run_work, &state, &ms);
        microseconds = ms * 1e3;
        return s;
    }
    const auto start = std::chrono::steady_clock::now();
    gemm_status_t s = run_work(&state);
    microseconds = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return s;
}

gemm_status_t side_operands::reset_output() {
    const bool written_only = key_.call == call_kind::omatcopy || key_.beta_zero;
    bytes fill = written_only ? nan_values(key_.ab_type, output_elements()) : initial_;
    host_.back() = fill;
    if (!on_device()) return GEMM_STATUS_SUCCESS;
    return installed_device_services()->copy(device_, on_device_.back(), fill.data(), fill.size());
}

gemm_status_t side_operands::read_output(bytes &out) const {
    out.resize(host_.back().size());
    if (!on_device()) {
        out = host_.back();
        return GEMM_STATUS_SUCCESS;
    }
    return installed_device_services()->copy(device_, out.data(), on_device_.back(), out.size());
}

gemm_status_t side_operands::reference(bytes &out) const {
    backend *ref = nullptr;
    for (backend *b : registered_backends())
        if (b->reference()) ref = b;
    if (!ref) return set_error(GEMM_STATUS_EXECUTION_FAILED, "gemm_tune: no reference backend to check against");
    const bool written_only = key_.call == call_kind::omatcopy || key_.beta_zero;
    out = written_only ? nan_values(key_.ab_type, output_elements()) : initial_;
    run_report report;
    const std::vector<const void *> host = pointers(false);
    if (key_.call == call_kind::omatcopy) return ref->run_omatcopy(transpose_on(host, out.data(), false), report);
    return ref->run_spmm(sparse_on(host, out.data(), false), report);
}

// Why got is not the reference's want, if it is not: a transpose must match bit for bit, a
// sparse product element by element within tolerance.hpp's rule.
std::optional<std::string> judge(const side_operands &o, const bytes &got, const bytes &want) {
    const problem_class &key = o.key();
    const dtype t = key.ab_type;
    if (key.call == call_kind::omatcopy) {
        if (got == want) return std::nullopt;
        const std::size_t size = dtype_size(t);
        std::size_t i = 0;
        while (i + 1 < got.size() / size && std::memcmp(&got[i * size], &want[i * size], size) == 0) ++i;
        const std::complex<double> g = load_value(got.data(), int64_t(i), t), w = load_value(want.data(), int64_t(i), t);
        return fmt::format("wrong result (element {} of B is {}, cpu_ref's {}; a transpose must match bit for bit)", i,
                           g.real(), w.real());
    }
    tolerance_rule rule;
    rule.ab_type = rule.c_type = static_cast<gemm_dtype_t>(t);
    rule.k = key.k;
    rule.beta_size = std::fabs(o.beta());
    double worst = 0;
    int64_t worst_i = 0, worst_j = 0;
    for (int64_t j = 0; j < key.n; ++j)
        for (int64_t i = 0; i < key.m; ++i) {
            const int64_t at = i * o.c_row_step() + j * o.c_col_step();
            const std::complex<double> g = load_value(got.data(), at, t), w = load_value(want.data(), at, t);
            const std::complex<double> c0 = load_value(o.initial_output().data(), at, t);
            const double tol = rule.element(std::abs(w), key.beta_zero ? 0.0 : std::abs(c0));
            const double err = std::max(std::fabs(g.real() - w.real()), std::fabs(g.imag() - w.imag()));
            const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity() : err / tol;
            if (ratio > worst) worst = ratio, worst_i = i, worst_j = j;
        }
    if (worst <= 1) return std::nullopt;
    return fmt::format("wrong result (error {:.3g} x tolerance at C({}, {}))", worst, worst_i, worst_j);
}

// One candidate's timings over the rounds.
struct timed {
    backend *b = nullptr;
    candidate_result result;
    std::vector<double> samples;
};

// The first run of c, checked; false (with c's note) when it failed or was wrong.
bool checked_run(side_operands &o, const bytes &want, timed &c) {
    double us = 0;
    gemm_status_t s = o.reset_output();
    if (s == GEMM_STATUS_SUCCESS) s = o.run(*c.b, us);
    bytes got;
    if (s == GEMM_STATUS_SUCCESS) s = o.read_output(got);
    if (s != GEMM_STATUS_SUCCESS) {
        c.result.note = fmt::format("{}: {}", gemm_status_string(s), last_error_message());
        clear_error();
        return false;
    }
    if (const std::optional<std::string> wrong = forced_wrong_backend(); wrong && *wrong == c.b->name() && !got.empty())
        store_value(got.data(), 0, o.key().ab_type, load_value(got.data(), 0, o.key().ab_type) + 1.0);
    if (std::optional<std::string> why = judge(o, got, want)) {
        c.result.note = *why;
        logger().warn("tuner: {} rejected for {}: {}", c.b->name(), o.key().to_text(), *why);
        return false;
    }
    return true;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Checks every candidate once, then times the correct ones in rounds, each round giving each a
// warm-up and samples of its share of the budget (at least its share of min_reps).
std::vector<timed> measure(side_operands &o, const std::vector<backend *> &list, const tune_options &options) {
    std::vector<timed> out;
    bytes want;
    gemm_status_t ref = o.reference(want);
    for (backend *b : list) {
        timed c;
        c.b = b;
        c.result.backend = std::string(b->name());
        if (ref != GEMM_STATUS_SUCCESS) c.result.note = std::string("no reference result: ") + last_error_message();
        else c.result.correct = checked_run(o, want, c);
        out.push_back(std::move(c));
    }
    clear_error();
    const double share_us = 1e3 * options.budget_ms / double(rounds * std::max<std::size_t>(1, list.size()));
    // A lone correct candidate has nothing to beat: its least samples give its time, and the
    // budget is not spent deciding nothing.
    const auto correct = std::count_if(out.begin(), out.end(), [](const timed &c) { return c.result.correct; });
    const int least = (options.min_reps + rounds - 1) / rounds;
    const int most = correct <= 1 ? least : std::max(least, options.max_reps / rounds);
    for (int round = 0; round < rounds; ++round)
        for (timed &c : out) {
            if (!c.result.correct) continue;
            double us = 0;
            gemm_status_t s = GEMM_STATUS_SUCCESS;
            for (int w = 0; w < options.warmup && s == GEMM_STATUS_SUCCESS; ++w) s = o.run(*c.b, us);
            double spent = 0;
            for (int n = 0; s == GEMM_STATUS_SUCCESS && n < most && (n < least || spent < share_us); ++n) {
                s = o.run(*c.b, us);
                spent += us;
                c.samples.push_back(us);
            }
            if (s != GEMM_STATUS_SUCCESS) {
                c.result.correct = false;
                c.result.note = fmt::format("{}: {}", gemm_status_string(s), last_error_message());
                clear_error();
            }
        }
    for (timed &c : out) {
        if (!c.result.correct || c.samples.empty()) continue;
        c.result.median_us = median_of(c.samples);
        c.result.best_us = *std::min_element(c.samples.begin(), c.samples.end());
        c.result.reps = int(c.samples.size());
        c.result.spread = c.result.best_us > 0 ? c.result.median_us / c.result.best_us - 1 : 0;
    }
    return out;
}

bool named(const tune_options &options, const backend &b) {
    return std::find(options.backends.begin(), options.backends.end(), b.name()) != options.backends.end();
}

// The operands of key and the built-in rule's choice for them.
gemm_status_t prepare(side_operands &o, backend *&builtin) {
    const problem_class &key = o.key();
    if (key.m == 0 || key.n == 0)
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "gemm_tune: " + key.to_text() + " is empty (nothing is computed): nothing to tune");
    if (key.space == memory_space::managed)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm_tune: space=managed is not tuned (host or device memory)");
    if (gemm_status_t s = o.make(); s != GEMM_STATUS_SUCCESS) return s;
    std::string why;
    builtin = o.builtin(why);
    return builtin ? GEMM_STATUS_SUCCESS : set_error(GEMM_STATUS_NOT_SUPPORTED, "gemm_tune: " + why);
}

gemm_status_t time_candidates(const problem_class &key, int device, const tune_options &options, tune_outcome &out) {
    side_operands o(key, device);
    backend *builtin = nullptr;
    if (gemm_status_t s = prepare(o, builtin); s != GEMM_STATUS_SUCCESS) return s;
    std::vector<backend *> list{builtin};
    for (backend *b : registered_backends()) {
        if (b == builtin || (!options.backends.empty() && !named(options, *b))) continue;
        if (b->reference() && !named(options, *b)) continue;
        // The tuner's A is sorted; a backend that needs that is wrong on the unsorted or
        // repeated input auto's other callers may pass, so only a tuner told to may store it.
        if (key.call != call_kind::omatcopy && b->spmm_assumes_sorted() && !named(options, *b)) continue;
        if (o.supports(*b).ok) list.push_back(b);
    }
    std::vector<timed> measured = measure(o, list, options);
    out = {};
    for (const timed &t : measured) out.candidates.push_back(t.result);
    const candidate_result &fallback = out.candidates.front();
    const candidate_result *winner = nullptr;
    for (const candidate_result &r : out.candidates)
        if (r.correct && (!winner || r.median_us < winner->median_us)) winner = &r;
    if (fallback.correct && winner && !(winner->median_us * (1.0 + options.margin) < fallback.median_us))
        winner = &fallback;
    if (!winner) return set_error(GEMM_STATUS_EXECUTION_FAILED, "tuner: no candidate computed a correct result");
    out.entry.key = o.measured_key();
    out.entry.backend = winner->backend;
    out.entry.microseconds = winner->median_us;
    out.entry.default_backend = fallback.backend;
    out.entry.default_microseconds = fallback.correct ? fallback.median_us : 0;
    out.disturbed = winner->spread > disturbed_spread || (fallback.correct && fallback.spread > disturbed_spread);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

std::optional<std::string> forced_wrong_backend() {
    const char *v = std::getenv("GEMM_TEST_TUNE_WRONG");
    if (v && *v) return std::string(v);
    return std::nullopt;
}

gemm_status_t tune_side_problem(const problem_class &key, int device, const tune_options &options, tune_outcome &out) {
    for (int timing = 1;; ++timing) {
        if (gemm_status_t s = time_candidates(key, device, options, out); s != GEMM_STATUS_SUCCESS) return s;
        out.timings = timing;
        if (const std::optional<int> forced = forced_disturbed_timings()) out.disturbed = timing <= *forced;
        if (!out.disturbed || timing > options.disturbed_retimes) return GEMM_STATUS_SUCCESS;
        logger().info("tuner: {} timed again in {:.0f} ms: its timings disagreed", key.to_text(),
                      options.retime_pause_ms);
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options.retime_pause_ms));
    }
}

gemm_status_t verify_side_entry(const tune_entry &e, int device, const tune_options &options, verify_outcome &out) {
    out = {};
    side_operands o(e.key, device);
    backend *builtin = nullptr;
    if (gemm_status_t s = prepare(o, builtin); s != GEMM_STATUS_SUCCESS) return s;
    out.default_backend = std::string(builtin->name());
    backend *b = find_backend(e.backend);
    if (b == builtin) {
        out.note = "the built-in choice itself";
        return GEMM_STATUS_SUCCESS;
    }
    const verdict usable = b ? o.supports(*b) : verdict::no("not in this build");
    if (!usable.ok) {
        out.holds = false;
        out.note = e.backend + " cannot serve it here: " + usable.reason;
        return GEMM_STATUS_SUCCESS;
    }
    std::vector<timed> m = measure(o, {builtin, b}, options);
    const candidate_result &fallback = m[0].result, &stored = m[1].result;
    out.measured = true;
    out.median_us = stored.median_us;
    out.default_median_us = fallback.median_us;
    out.disturbed = (stored.correct && stored.spread > disturbed_spread) ||
                    (fallback.correct && fallback.spread > disturbed_spread);
    if (!stored.correct) {
        out.holds = false;
        out.note = stored.note;
    } else if (fallback.correct && stored.median_us > fallback.median_us * (1.0 + options.margin)) {
        out.holds = false;
        out.note = fmt::format("{:.3f}x the default's speed", fallback.median_us / stored.median_us);
    } else if (!fallback.correct) {
        out.note = "the default failed: " + fallback.note;
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
