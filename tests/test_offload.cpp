// test_offload.cpp: the offload engine of host-memory GEMMs on the GPU (backends/cuda_common/
// offload/: offload_plan.cpp, offload_engine.cpp, offload_spread.cpp; plain C++, so built and run
// without CUDA too), against a simulated GPU whose three streams run their work in a random
// interleaving that respects only the events: a missing wait (a GEMM before its blocks arrive,
// a slot overwritten while a GEMM still reads it, a page-locked wave packed again before its
// copy left, C unpacked before it arrived) changes the result, and every result is compared
// exactly with the same double reference computed on the caller's matrices.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda_common/offload/offload_engine.hpp"
#include "backends/cuda_common/offload/offload_plan.hpp"
#include "backends/cuda_common/offload/offload_spread.hpp"
#include "dispatch/error.hpp"

using namespace gemm;
using namespace gemm::cuda;

namespace {

using cplx = std::complex<double>;

// Elements as the library stores them; bf16 is the high half of an f32.
cplx load(dtype t, const char *at) {
    switch (t) {
    case dtype::f32: {
        float f;
        std::memcpy(&f, at, 4);
        return f;
    }
    case dtype::f64: {
        double d;
        std::memcpy(&d, at, 8);
        return d;
    }
    case dtype::bf16: {
        uint16_t h;
        std::memcpy(&h, at, 2);
        uint32_t bits = uint32_t(h) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    case dtype::c32: {
        float f[2];
        std::memcpy(f, at, 8);
        return {f[0], f[1]};
    }
    case dtype::c64: {
        double d[2];
        std::memcpy(d, at, 16);
        return {d[0], d[1]};
    }
    default: FAIL("type not simulated"); return 0;
    }
}

void store(dtype t, char *at, cplx v) {
    switch (t) {
    case dtype::f32: {
        float f = float(v.real());
        std::memcpy(at, &f, 4);
        break;
    }
    case dtype::f64: {
        double d = v.real();
        std::memcpy(at, &d, 8);
        break;
    }
    case dtype::c32: {
        float f[2] = {float(v.real()), float(v.imag())};
        std::memcpy(at, f, 8);
        break;
    }
    case dtype::c64: {
        double d[2] = {v.real(), v.imag()};
        std::memcpy(at, d, 16);
        break;
    }
    default: FAIL("C type not simulated");
    }
}

// C = alpha op(A) op(B) + beta C wherever p's pointers are: the simulated GPU's GEMM and the
// expected result alike, so that a correct offload gives the same bits.
void reference_gemm(const problem &p) {
    const std::size_t ea = dtype_size(p.ab_type), ec = dtype_size(p.c_type);
    const cplx alpha(p.alpha, p.alpha_imag), beta(p.beta, p.beta_imag);
    auto element = [&](const void *base, transpose op, int64_t ld, int64_t stride, int64_t b, int64_t r, int64_t c) {
        const int64_t row = op == transpose::n ? r : c, col = op == transpose::n ? c : r;
        cplx v = load(p.ab_type, static_cast<const char *>(base) + std::size_t(b * stride + col * ld + row) * ea);
        return op == transpose::c ? std::conj(v) : v;
    };
    for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t i = 0; i < p.m; ++i) {
                cplx sum = 0;
                if (!p.scales_only())
                    for (int64_t l = 0; l < p.k; ++l)
                        sum += element(p.a, p.op_a, p.lda, p.stride_a, b, i, l) *
                               element(p.b, p.op_b, p.ldb, p.stride_b, b, l, j);
                char *c = static_cast<char *>(p.c) + std::size_t(b * p.stride_c + j * p.ldc + i) * ec;
                store(p.c_type, c, alpha * sum + (p.beta_zero() ? cplx(0) : beta * load(p.c_type, c)));
            }
}

// The simulated GPU. Device memory and page-locked buffers are host vectors; each stream is a
// queue of work that runs when the scheduler picks it (at random among the streams whose next
// work is ready) while the host waits for an event or finishes.
class simulated_device final : public offload_device {
public:
    std::size_t budget = std::numeric_limits<std::size_t>::max();
    std::vector<std::pair<const char *, std::size_t>> locked;  // page-locked host ranges
    std::function<bool(const problem &)> refuses;              // check() says NOT_SUPPORTED
    int fail_copy = -1;                                        // the copy that fails (0-based)
    int throw_copy = -1;                                       // the copy that throws bad_alloc
    int copies = 0, gemms = 0;
    bool stuck = false;    // a host wait that nothing could satisfy
    bool outside = false;  // a copy or GEMM outside the device memory

    // Each stream runs at a speed of its own, from 1 to 128, so that one may fall far behind.
    explicit simulated_device(unsigned seed) : rng_(seed) {
        for (unsigned &w : weights_) w = 1u << unsigned(rng_() % 8);
    }

    std::size_t device_budget() override { return budget; }
    bool page_locked(const void *ptr) override {
        auto p = static_cast<const char *>(ptr);
        for (auto &[base, bytes] : locked)
            if (p >= base && p < base + bytes) return true;
        return false;
    }
    gemm_status_t device_memory(std::size_t bytes, char *&out) override {
        if (device_.size() < bytes) device_.assign(bytes, char(0xff));  // NaN in every float slot
        out = device_.data();
        return GEMM_STATUS_SUCCESS;
    }
    // One buffer per thread for all its devices (filling 96 MiB per case would take most of the
    // test's time): what a wave unpacked before its copy arrived reads is then stale data of
    // another case, which fails the comparison as surely.
    gemm_status_t pinned_memory(std::size_t bytes, char *&out) override {
        thread_local std::vector<char> pinned;
        if (pinned.size() < bytes) pinned.assign(bytes, char(0xff));
        out = pinned.data();
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t copy(char *dst, std::size_t dst_pitch, const char *src, std::size_t src_pitch, std::size_t width,
                       std::size_t height, bool to_device, offload_stream s) override {
        if (copies == throw_copy) throw std::bad_alloc();
        if (copies++ == fail_copy) return set_error(GEMM_STATUS_EXECUTION_FAILED, "simulated copy failure");
        const char *dev = to_device ? dst : src;
        const std::size_t dev_pitch = to_device ? dst_pitch : src_pitch;
        if (!inside(dev, (height - 1) * dev_pitch + width)) outside = true;
        push(
            s, [] { return true; },
            [=] {
                for (std::size_t r = 0; r < height; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, width);
            });
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t record(int event, offload_stream s) override {
        const uint64_t id = ++ev(event).recorded;
        push(
            s, [] { return true; }, [this, event, id] { ev(event).completed = std::max(ev(event).completed, id); });
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t wait(offload_stream s, int event) override {
        const uint64_t target = ev(event).recorded;
        push(
            s, [this, event, target] { return ev(event).completed >= target; }, [] {});
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t host_wait(int event) override {
        const uint64_t target = ev(event).recorded;
        run_until([&] { return ev(event).completed >= target; });
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t passed(int event, bool &out) override {
        for (int i = int(rng_() % 4); i > 0 && step(); --i) {
        }
        out = ev(event).completed >= ev(event).recorded;
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t check(const problem &dp) override {
        if (refuses && refuses(dp)) return set_error(GEMM_STATUS_NOT_SUPPORTED, "simulated refusal");
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t gemm(const problem &dp) override {
        ++gemms;
        if (dp.space != memory_space::device || dp.batch < 1) outside = true;
        auto spans = [&](const void *p, int64_t rows, int64_t cols, int64_t ld, int64_t stride, std::size_t elem) {
            return p && inside(static_cast<const char *>(p),
                               std::size_t((dp.batch - 1) * stride + (cols - 1) * ld + rows) * elem);
        };
        const std::size_t ea = dtype_size(dp.ab_type), ec = dtype_size(dp.c_type);
        if (!spans(dp.c, dp.m, dp.n, dp.ldc, dp.stride_c, ec)) outside = true;
        if (!dp.scales_only() && (!spans(dp.a, dp.a_rows(), dp.a_cols(), dp.lda, dp.stride_a, ea) ||
                                  !spans(dp.b, dp.b_rows(), dp.b_cols(), dp.ldb, dp.stride_b, ea)))
            outside = true;
        if (dp.lda < std::max<int64_t>(1, dp.a_rows()) || dp.ldb < std::max<int64_t>(1, dp.b_rows()) || dp.ldc < dp.m ||
            (dp.lda * int64_t(ea)) % 16 || (dp.ldc * int64_t(ec)) % 16)
            outside = true;
        push(
            offload_stream::compute, [] { return true; }, [dp] { reference_gemm(dp); });
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t finish() override {
        run_until([&] { return idle(); });
        return GEMM_STATUS_SUCCESS;
    }
    bool idle() const { return queues_[0].empty() && queues_[1].empty() && queues_[2].empty(); }

private:
    struct work {
        std::function<bool()> ready;
        std::function<void()> run;
    };
    struct event_state {
        uint64_t recorded = 0, completed = 0;
    };

    bool inside(const char *p, std::size_t bytes) const {
        return p >= device_.data() && p + bytes <= device_.data() + device_.size();
    }
    event_state &ev(int i) {
        if (std::size_t(i) >= events_.size()) events_.resize(std::size_t(i) + 1);
        return events_[std::size_t(i)];
    }
    void push(offload_stream s, std::function<bool()> ready, std::function<void()> run) {
        queues_[int(s)].push_back({std::move(ready), std::move(run)});
    }
    // One piece of work of a stream picked at random, by the streams' speeds, among those whose
    // next is ready.
    bool step() {
        unsigned total = 0, weight[3] = {};
        for (int s = 0; s < 3; ++s)
            if (!queues_[s].empty() && queues_[s].front().ready()) total += weight[s] = weights_[s];
        if (total == 0) return false;
        unsigned pick = unsigned(rng_() % total);
        int s = 0;
        while (pick >= weight[s]) pick -= weight[s++];
        std::vector<work> &q = queues_[s];
        work w = std::move(q.front());
        q.erase(q.begin());
        w.run();
        return true;
    }
    template <class Done> void run_until(Done done) {
        while (!done())
            if (!step()) {
                stuck = true;
                return;
            }
    }

    std::mt19937 rng_;
    unsigned weights_[3];
    std::vector<char> device_;
    std::vector<event_state> events_;
    std::vector<work> queues_[3];
};

// A host problem with its matrices: ld beyond the rows and gaps between batch matrices filled
// with a sentinel, A and B with random values, C random or (beta = 0) NaN.
struct host_case {
    problem p;
    std::vector<char> a, b, c;
    std::string text;

    host_case(std::mt19937 &rng, dtype ab, dtype ct, transpose op_a, transpose op_b, int64_t m, int64_t n, int64_t k,
              int64_t batch, int shared, double beta) {
        p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k;
        p.ab_type = ab, p.c_type = ct, p.compute_type = ct == dtype::f64 || ct == dtype::c64 ? ct : dtype::f32;
        p.batch = batch;
        p.alpha = 0.75;
        p.alpha_imag = is_complex(ab) ? -0.5 : 0.0;
        p.beta = beta;
        p.beta_imag = is_complex(ab) && beta != 0 ? 0.25 : 0.0;
        p.space = memory_space::host;
        std::uniform_int_distribution<int64_t> pad(0, 3);
        auto make = [&](std::vector<char> &buf, dtype t, int64_t rows, int64_t cols, int64_t &ld, int64_t &stride,
                        bool share, bool nan_values) {
            const std::size_t e = dtype_size(t);
            ld = std::max<int64_t>(1, rows + pad(rng));
            stride = share ? 0 : ld * cols + pad(rng) * 5;
            const int64_t matrices = share ? 1 : batch;
            buf.assign(std::size_t((matrices - 1) * stride + ld * cols) * e + 16, char(0x7f));  // sentinel
            std::uniform_real_distribution<double> value(-1, 1);
            for (int64_t x = 0; x < matrices; ++x)
                for (int64_t j = 0; j < cols; ++j)
                    for (int64_t i = 0; i < rows; ++i) {
                        char *at = buf.data() + std::size_t(x * stride + j * ld + i) * e;
                        const double nan = std::numeric_limits<double>::quiet_NaN();
                        cplx v = nan_values ? cplx(nan, nan) : cplx(value(rng), value(rng));
                        if (t == dtype::bf16) {
                            float f = float(v.real());
                            uint32_t bits;
                            std::memcpy(&bits, &f, 4);
                            uint16_t h = uint16_t(bits >> 16);
                            std::memcpy(at, &h, 2);
                        } else {
                            store(t, at, v);
                        }
                    }
        };
        make(a, ab, p.a_rows(), p.a_cols(), p.lda, p.stride_a, shared == 1, false);
        make(b, ab, p.b_rows(), p.b_cols(), p.ldb, p.stride_b, shared == 2, false);
        make(c, ct, m, n, p.ldc, p.stride_c, false, beta == 0);
        p.a = a.data(), p.b = b.data(), p.c = c.data();
        std::ostringstream o;
        o << dtype_name(ab) << ">" << dtype_name(ct) << " " << op_name(op_a) << op_name(op_b) << " " << m << "x" << n
          << "x" << k << " batch " << batch << " shared " << shared << " lda " << p.lda << " ldb " << p.ldb << " ldc "
          << p.ldc << " beta " << beta;
        text = o.str();
    }

    // C as the reference computes it from the case's operands (the bytes outside C's m x n
    // elements as they are now).
    std::vector<char> expected_c() const {
        std::vector<char> want = c;
        problem expected = p;
        expected.c = want.data();
        reference_gemm(expected);
        return want;
    }
};

// Runs one case through the engine on a simulated device with `budget` bytes; checks the
// result bit for bit against the reference on a copy of the caller's C, and that nothing
// outside C's m x n elements changed.
void check_case(host_case &hc, std::size_t budget, unsigned seed, int locked_mask) {
    const std::vector<char> before = hc.c;
    const std::vector<char> want = hc.expected_c();

    simulated_device dev(seed);
    dev.budget = budget;
    std::vector<char> *buffers[3] = {&hc.a, &hc.b, &hc.c};
    for (int o = 0; o < 3; ++o)
        if (locked_mask & (1 << o)) dev.locked.push_back({buffers[o]->data(), buffers[o]->size()});
    offload_report report;
    INFO(hc.text << " budget " << budget << " seed " << seed << " locked " << locked_mask);
    const gemm_status_t s = run_offload(hc.p, dev, report);
    INFO("plan: " << report.plan << "; " << last_error_message());
    CHECK_FALSE(dev.stuck);
    CHECK_FALSE(dev.outside);
    if (s == GEMM_STATUS_ALLOC_FAILED) {  // not even the smallest tiles fit: nothing ran
        CHECK(dev.copies == 0);
        CHECK(hc.c == before);
        return;
    }
    REQUIRE(s == GEMM_STATUS_SUCCESS);
    if (locked_mask == 0) CHECK_FALSE(report.all_page_locked);
    if (locked_mask == 7 && hc.p.batch == 1) CHECK(report.all_page_locked);
    // The report's times are parts of the call's, and only pageable operands are packed.
    CHECK(report.packing + report.unpacking + report.waiting <= report.seconds);
    if (report.all_page_locked) CHECK(report.packing + report.unpacking == 0);
    // Bit for bit, NaN included (same double sums, same rounding).
    CHECK(std::memcmp(hc.c.data(), want.data(), want.size()) == 0);
}

}  // namespace

TEST_CASE("offload plan: tiles cover C once, loaded blocks are in their slots when used, slots fit the budget") {
    std::mt19937 rng(7);
    const int64_t sizes[] = {1, 2, 3, 16, 17, 31, 64, 100, 257, 1000, 3000};
    for (int trial = 0; trial < 400; ++trial) {
        problem p;
        p.m = sizes[rng() % std::size(sizes)];
        p.n = sizes[rng() % std::size(sizes)];
        p.k = sizes[rng() % std::size(sizes)] * (trial % 7 == 0 ? 0 : 1);
        p.op_a = rng() % 2 ? transpose::t : transpose::n;
        p.op_b = rng() % 2 ? transpose::t : transpose::n;
        p.batch = trial % 3 == 0 ? 1 + int64_t(rng() % 5) : 1;
        p.stride_a = p.batch > 1 && rng() % 3 == 0 ? 0 : 1;
        p.stride_b = p.batch > 1 && rng() % 3 == 0 ? 0 : 1;
        p.beta = rng() % 2 ? 0.5 : 0.0;
        p.ab_type = p.c_type = rng() % 2 ? dtype::f32 : dtype::f64;
        const std::size_t budget = std::size_t(1) << (12 + rng() % 20);
        offload_plan plan;
        std::string why;
        INFO(p.m << "x" << p.n << "x" << p.k << " batch " << p.batch << " ops " << op_name(p.op_a) << op_name(p.op_b)
                 << " budget " << budget);
        if (!offload_plan::make(p, budget, plan, why)) {
            CHECK(why.find("fit in") != std::string::npos);
            continue;
        }
        INFO(plan.describe());
        CHECK(plan.device_bytes() <= budget);
        std::vector<int> covered(std::size_t(p.m * p.n * p.batch), 0);
        std::vector<offload_block> held[3];
        for (int o = 0; o < 3; ++o) held[o].resize(std::size_t(plan.slots(offload_operand(o))));
        std::size_t moved[2] = {0, 0};
        offload_plan::cursor cursor(plan);
        offload_step st;
        int64_t steps = 0;
        while (cursor.next(st)) {
            ++steps;
            for (int64_t x = st.first; x < st.first + st.count; ++x)
                for (int64_t j = st.j0; j < st.j0 + st.n; ++j)
                    for (int64_t i = st.i0; i < st.i0 + st.m; ++i) ++covered[std::size_t((x * p.n + j) * p.m + i)];
            const offload_block *blocks[2] = {&st.a, &st.b};
            const int slots[2] = {st.slot_a, st.slot_b};
            const bool loads[2] = {st.load_a, st.load_b};
            for (int o = 0; o < 2; ++o) {
                if (p.scales_only()) {
                    CHECK(blocks[o]->empty());
                    continue;
                }
                REQUIRE(slots[o] >= 0);
                REQUIRE(slots[o] < plan.slots(offload_operand(o)));
                if (loads[o]) {
                    held[o][std::size_t(slots[o])] = *blocks[o];
                    moved[o] += std::size_t(blocks[o]->rows * blocks[o]->cols * blocks[o]->count);
                }
                CHECK(held[o][std::size_t(slots[o])] == *blocks[o]);
            }
            CHECK(st.load_c == (p.beta != 0));
            REQUIRE(st.slot_c >= 0);
            REQUIRE(st.slot_c < plan.slots(offload_operand::c));
            // The blocks are the step's: A's rows are the tile's rows of op(A), B's columns its columns.
            if (!p.scales_only()) {
                CHECK((p.op_a == transpose::n ? st.a.rows : st.a.cols) == st.m);
                CHECK((p.op_a == transpose::n ? st.a.row0 : st.a.col0) == st.i0);
                CHECK((p.op_b == transpose::n ? st.b.cols : st.b.rows) == st.n);
                CHECK((p.op_b == transpose::n ? st.b.col0 : st.b.row0) == st.j0);
            }
        }
        CHECK(steps == plan.steps());
        CHECK(std::count(covered.begin(), covered.end(), 1) == int64_t(covered.size()));
        // Each operand's matrices cross once when the stationary one fits; the streamed one once
        // per pass otherwise.
        if (!p.scales_only()) {
            const std::size_t a_all = std::size_t(p.m * p.k * (p.batch > 1 && p.stride_a == 0 ? 1 : p.batch));
            const std::size_t b_all = std::size_t(p.k * p.n * (p.batch > 1 && p.stride_b == 0 ? 1 : p.batch));
            const bool a_stays = plan.stationary() == offload_operand::a;
            const std::size_t passes = std::size_t(plan.passes());
            if (p.batch == 1) {
                CHECK(moved[0] == (a_stays ? a_all : a_all * passes));
                CHECK(moved[1] == (a_stays ? b_all * passes : b_all));
            }
        }
    }
}

TEST_CASE("offload plan: the rule's tiles; both operands stay when they fit, else one, else out of core") {
    problem p;
    p.m = p.n = p.k = 8192;
    offload_plan plan;
    std::string why;
    REQUIRE(offload_plan::make(p, std::size_t(1) << 34, plan, why));
    CHECK(plan.tile_m() == 2048);
    CHECK(plan.tile_n() == 2048);
    CHECK(plan.both_stay());
    CHECK(plan.passes() == 1);
    CHECK(plan.steps() == 16);
    CHECK(plan.describe() == "16 tiles of 2048x2048 (A and B stay on the device, each copied once)");
    // Tiles in the order their blocks arrive: A tiles 0 and 1 against B panel 0, then panel 1
    // against those two, then A tile 2 against both panels, and so on; each block is loaded by
    // the first step that needs it.
    {
        offload_plan::cursor cursor(plan);
        offload_step st;
        std::vector<std::pair<int64_t, int64_t>> first;
        for (int i = 0; i < 6 && cursor.next(st); ++i) first.push_back({st.i0 / 2048, st.j0 / 2048});
        const std::vector<std::pair<int64_t, int64_t>> want{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}};
        CHECK(first == want);
    }
    // 4096^3 takes tiles of 1024, 16 of them.
    problem half = p;
    half.m = half.n = half.k = 4096;
    REQUIRE(offload_plan::make(half, std::size_t(1) << 34, plan, why));
    CHECK(plan.describe() == "16 tiles of 1024x1024 (A and B stay on the device, each copied once)");
    // Without room for all of B, only A stays (A: 4 tiles of 64 MiB, B: 3 panels, C: 3 tiles).
    const std::size_t a_tile = std::size_t(2048) * 8192 * 4, b_panel = a_tile, c_tile = std::size_t(2048) * 2048 * 4;
    REQUIRE(offload_plan::make(p, 4 * a_tile + 3 * (b_panel + c_tile), plan, why));
    CHECK_FALSE(plan.both_stay());
    CHECK(plan.stationary() == offload_operand::a);
    CHECK(plan.describe() == "16 tiles of 2048x2048 (A stays on the device, B streamed once)");
    // Half of A fits beside the turns of B and C: B streamed twice.
    REQUIRE(offload_plan::make(p, 3 * (b_panel + c_tile) + 2 * a_tile + 100, plan, why));
    CHECK(plan.passes() == 2);
    CHECK(plan.describe().find("streamed 2 times: out of core") != std::string::npos);
    // Too little for any tile with all of k.
    CHECK_FALSE(offload_plan::make(p, 4096, plan, why));
    CHECK(why.find("k = 8192") != std::string::npos);
    // A batch of small matrices: several to a step, a shared B (stride 0) in one slot.
    problem small;
    small.m = small.n = small.k = 64;
    small.batch = 1000;
    small.stride_a = small.stride_c = 64 * 64;
    small.stride_b = 0;
    REQUIRE(offload_plan::make(small, std::size_t(1) << 30, plan, why));
    CHECK(plan.group() > 100);
    CHECK(plan.slots(offload_operand::b) == 1);
    CHECK(plan.steps() == (1000 + plan.group() - 1) / plan.group());
}

TEST_CASE("offload engine: results bit for bit against the reference, every op, type, budget and memory kind") {
    std::mt19937 rng(11);
    const int64_t sizes[] = {1, 2, 3, 5, 16, 17, 31, 33, 64, 70};
    const dtype types[][2] = {{dtype::f32, dtype::f32},
                              {dtype::f64, dtype::f64},
                              {dtype::bf16, dtype::f32},
                              {dtype::c32, dtype::c32},
                              {dtype::c64, dtype::c64}};
    for (int trial = 0; trial < 300; ++trial) {
        const auto &t = types[trial % std::size(types)];
        const bool complex = is_complex(t[0]);
        auto op = [&] { return transpose(rng() % (complex ? 3 : 2)); };
        const int64_t m = sizes[rng() % std::size(sizes)], n = sizes[rng() % std::size(sizes)];
        const int64_t k = trial % 11 == 0 ? 0 : sizes[rng() % std::size(sizes)];
        const int64_t batch = trial % 4 == 0 ? 1 + int64_t(rng() % 4) : 1;
        const int shared = batch > 1 ? int(rng() % 3) : 0;
        const double beta = trial % 3 == 0 ? 0.0 : 0.5;
        host_case hc(rng, t[0], t[1], op(), op(), m, n, k, batch, shared, beta);
        if (trial % 13 == 0) hc.p.alpha = hc.p.alpha_imag = 0;  // only scales C
        // From a few KiB (tiles of 16, several passes) to everything at once.
        const std::size_t budgets[] = {std::size_t(4) << 10, std::size_t(24) << 10, std::size_t(96) << 10,
                                       std::size_t(1) << 30};
        check_case(hc, budgets[rng() % std::size(budgets)], unsigned(rng()), int(rng() % 8));
    }
}

TEST_CASE("offload engine: blocks larger than a wave, whole columns and parts of one column") {
    std::mt19937 rng(3);
    // B (op N) of 3000 x 1000 f32: 12 MB, two waves of whole columns; A op T with k = 2.5M: each
    // column of 10 MB in two parts.
    host_case wide(rng, dtype::f32, dtype::f32, transpose::n, transpose::n, 3, 1000, 3000, 1, 0, 0.5);
    for (int mask : {0, 7}) check_case(wide, std::size_t(1) << 30, 5, mask);
    host_case deep(rng, dtype::f32, dtype::f32, transpose::t, transpose::n, 2, 2, 2500000, 1, 0, 0.0);
    for (int mask : {0, 1}) check_case(deep, std::size_t(1) << 30, 6, mask);
}

TEST_CASE("offload engine: a shape of step the backend refuses leaves C untouched and copies nothing") {
    std::mt19937 rng(5);
    host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::t, 40, 45, 20, 1, 0, 0.5);
    const std::vector<char> before = hc.c;
    simulated_device dev(1);
    dev.budget = std::size_t(24) << 10;  // tiles smaller than C: a last column of tiles narrower
    offload_plan plan;
    std::string why;
    REQUIRE(offload_plan::make(hc.p, dev.budget, plan, why));
    REQUIRE(plan.tile_n() < 45);
    const int64_t last_n = 45 - (45 / plan.tile_n()) * plan.tile_n();
    REQUIRE(last_n > 0);
    dev.refuses = [&](const problem &dp) { return dp.n == last_n; };
    offload_report report;
    CHECK(run_offload(hc.p, dev, report) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(last_error_message()) == "simulated refusal");
    CHECK(dev.copies == 0);
    CHECK(dev.gemms == 0);
    CHECK(hc.c == before);
}

TEST_CASE("offload engine: the gate is told once whether the call is ready, and a closed gate copies nothing") {
    std::mt19937 rng(6);
    host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::n, 40, 45, 20, 1, 0, 0.5);
    const std::vector<char> before = hc.c;
    for (bool refuse : {false, true})
        for (bool open : {false, true}) {
            simulated_device dev(2);
            dev.budget = std::size_t(24) << 10;
            if (refuse) dev.refuses = [](const problem &) { return true; };
            std::vector<gemm_status_t> told;
            const offload_gate gate = [&](gemm_status_t s) {
                told.push_back(s);
                CHECK(dev.copies == 0);
                return open;
            };
            offload_report report;
            const gemm_status_t s = run_offload(hc.p, dev, report, 0, 0, gate);
            INFO("refuse " << refuse << " open " << open);
            REQUIRE(told.size() == 1);
            CHECK(told[0] == (refuse ? GEMM_STATUS_NOT_SUPPORTED : GEMM_STATUS_SUCCESS));
            if (refuse || !open) {
                CHECK(s == GEMM_STATUS_NOT_SUPPORTED);
                CHECK(dev.copies == 0);
                CHECK(hc.c == before);
            } else {
                CHECK(s == GEMM_STATUS_SUCCESS);
                CHECK(dev.copies > 0);
                hc.c = before;
            }
        }
}

TEST_CASE("offload engine: a copy that fails stops the call with its status, every stream waited for") {
    std::mt19937 rng(9);
    for (int at : {0, 3, 10}) {
        host_case hc(rng, dtype::f64, dtype::f64, transpose::t, transpose::n, 60, 50, 30, 1, 0, 0.5);
        simulated_device dev{unsigned(at)};
        dev.budget = std::size_t(32) << 10;
        dev.fail_copy = at;
        offload_report report;
        CHECK(run_offload(hc.p, dev, report) == GEMM_STATUS_EXECUTION_FAILED);
        CHECK_FALSE(dev.stuck);
    }
}

// Out of host memory mid-call (the C API turns it into GEMM_STATUS_ALLOC_FAILED): the streams
// are drained before it leaves the engine, so no copy still reads or writes the caller's
// memory once the call has returned.
TEST_CASE("offload engine: an exception mid-call leaves only after every stream is drained") {
    std::mt19937 rng(10);
    for (int at : {1, 4, 9}) {
        for (bool pageable : {true, false}) {
            host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::n, 60, 50, 30, 1, 0, 0.5);
            simulated_device dev{unsigned(at)};
            dev.budget = std::size_t(24) << 10;
            dev.throw_copy = at;
            if (!pageable) {
                std::vector<char> *buffers[3] = {&hc.a, &hc.b, &hc.c};
                for (std::vector<char> *b : buffers) dev.locked.push_back({b->data(), b->size()});
            }
            offload_report report;
            INFO("copy " << at << (pageable ? " pageable" : " page-locked"));
            CHECK_THROWS_AS(run_offload(hc.p, dev, report), std::bad_alloc);
            CHECK(dev.idle());
            CHECK_FALSE(dev.stuck);
        }
    }
}

TEST_CASE("offload engine: several threads at once, each on its own device, sharing the host copy threads") {
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([t, &wrong] {
            std::mt19937 rng(100 + unsigned(t));
            for (int i = 0; i < 20; ++i) {
                host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::n, 50 + t, 40, 30, 1, 0, 0.5);
                const std::vector<char> want = hc.expected_c();
                simulated_device dev{unsigned(i)};
                dev.budget = std::size_t(16) << 10;
                offload_report report;
                if (run_offload(hc.p, dev, report) != GEMM_STATUS_SUCCESS || hc.c != want || dev.stuck)
                    ++wrong[std::size_t(t)];
            }
        });
    for (std::thread &t : threads) t.join();
    for (int w : wrong) CHECK(w == 0);
}

namespace {

// The address of element (row, col) of op(X) in batch matrix x, X being operand 0 (A), 1 (B)
// or 2 (C) of p.
const char *element(const problem &p, int operand, int64_t x, int64_t row, int64_t col) {
    const char *base = static_cast<const char *>(operand == 0 ? p.a : operand == 1 ? p.b : p.c);
    const transpose op = operand == 0 ? p.op_a : operand == 1 ? p.op_b : transpose::n;
    const int64_t ld = operand == 0 ? p.lda : operand == 1 ? p.ldb : p.ldc;
    const int64_t stride = operand == 0 ? p.stride_a : operand == 1 ? p.stride_b : p.stride_c;
    const std::size_t e = dtype_size(operand == 2 ? p.c_type : p.ab_type);
    const int64_t at = op == transpose::n ? col * ld + row : row * ld + col;
    return base + std::size_t(x * stride + at) * e;
}

}  // namespace

TEST_CASE("offload spread: shares cover C once, in proportion to the devices' speeds, each element where it was") {
    std::mt19937 rng(5);
    const int64_t sides[] = {1, 100, 255, 256, 300, 1024, 2000, 4096, 8192, 20000};
    char *const fake = reinterpret_cast<char *>(uintptr_t(1) << 40);  // addresses only, never read
    for (int trial = 0; trial < 2000; ++trial) {
        problem p;
        p.op_a = transpose(rng() % 2), p.op_b = transpose(rng() % 2);
        p.m = sides[rng() % std::size(sides)], p.n = sides[rng() % std::size(sides)];
        p.k = sides[rng() % std::size(sides)];
        p.batch = trial % 3 == 0 ? 1 + int64_t(rng() % 6) : 1;
        p.ab_type = p.c_type = trial % 2 ? dtype::f32 : dtype::f64;
        p.lda = p.a_rows() + int64_t(rng() % 3), p.ldb = p.b_rows() + int64_t(rng() % 3),
        p.ldc = p.m + int64_t(rng() % 3);
        p.stride_a = rng() % 4 == 0 ? 0 : p.lda * p.a_cols() + 7;
        p.stride_b = rng() % 4 == 0 ? 0 : p.ldb * p.b_cols() + 3;
        p.stride_c = p.ldc * p.n + 5;
        p.a = fake, p.b = fake + (int64_t(1) << 36), p.c = fake + (int64_t(2) << 36);
        const int devices = 1 + int(rng() % 4);
        std::vector<double> speeds;
        for (int d = 0; d < devices; ++d) speeds.push_back(0.25 + double(rng() % 8));
        const double least = trial % 4 == 0 ? least_share_bytes : 1.0;
        spread_axis axis = spread_axis::none;
        const std::vector<offload_share> shares = split_offload(p, speeds, axis, least);
        INFO("trial " << trial << ": " << p.m << "x" << p.n << "x" << p.k << " batch " << p.batch << ", " << devices
                      << " devices, axis " << spread_axis_name(axis));
        REQUIRE(!shares.empty());
        REQUIRE(shares.size() <= speeds.size());
        if (shares.size() == 1) {
            CHECK(axis == spread_axis::none);
            CHECK((shares[0].p.m == p.m && shares[0].p.n == p.n && shares[0].p.batch == p.batch));
            CHECK((shares[0].p.a == p.a && shares[0].p.b == p.b && shares[0].p.c == p.c));
            continue;
        }
        CHECK(axis != spread_axis::none);
        CHECK(least * double(shares.size()) <= 3.0 * double(p.m * p.k + p.k * p.n + p.m * p.n) * double(p.batch) * 8);
        const int64_t length = axis == spread_axis::batch ? p.batch : axis == spread_axis::columns ? p.n : p.m;
        if (axis == spread_axis::batch) CHECK(p.batch >= devices);
        if (axis == spread_axis::columns) CHECK(p.m <= p.n);
        double total = 0;
        for (std::size_t d = 0; d < shares.size(); ++d) total += speeds[d];
        double least_want = double(length);
        for (std::size_t d = 0; d < shares.size(); ++d)
            least_want = std::min(least_want, double(length) * speeds[d] / total);
        int64_t next = 0;
        for (std::size_t d = 0; d < shares.size(); ++d) {
            const offload_share &sh = shares[d];
            CHECK(sh.device == d);
            CHECK(sh.first == next);
            CHECK(sh.count > 0);
            next = sh.first + sh.count;
            // In proportion to the speeds, each cut within half a granule of where the speeds put
            // it, where no share is pushed up to its least of one granule.
            const double granule = axis == spread_axis::batch ? 1.0 : 256.0;
            if (least_want >= 2 * granule)
                CHECK(std::abs(double(sh.count) - double(length) * speeds[d] / total) <= granule);
            // The share's first and last elements of op(A), op(B) and C are the problem's.
            const problem &q = sh.p;
            const int64_t x0 = axis == spread_axis::batch ? sh.first : 0, i0 = axis == spread_axis::rows ? sh.first : 0,
                          j0 = axis == spread_axis::columns ? sh.first : 0;
            for (int64_t x : {int64_t(0), q.batch - 1})
                for (int64_t i : {int64_t(0), q.m - 1})
                    for (int64_t j : {int64_t(0), q.n - 1}) {
                        CHECK(element(q, 2, x, i, j) == element(p, 2, x + x0, i + i0, j + j0));
                        for (int64_t l : {int64_t(0), q.k - 1}) {
                            CHECK(element(q, 0, x, i, l) == element(p, 0, x + x0, i + i0, l));
                            CHECK(element(q, 1, x, l, j) == element(p, 1, x + x0, l, j + j0));
                        }
                    }
        }
        CHECK(next == length);
    }
}

namespace {

// The shares of p run at once through run_shares_at_once, share i on its own simulated
// device (refusing every shape when i == refusing), share i > 0 on workers[i - 1] (none
// started for i == unstarted). Returns what run_shares_at_once returns.
struct spread_run {
    std::vector<share_outcome> outcomes;
    std::vector<std::size_t> copies;
    bool stuck = false;
};
std::size_t spread_at_once(const std::vector<offload_share> &shares, std::vector<share_worker> &workers, unsigned seed,
                           std::size_t refusing, std::size_t unstarted, spread_run &out) {
    std::vector<std::unique_ptr<simulated_device>> devices;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        devices.push_back(std::make_unique<simulated_device>(seed + unsigned(i)));
        devices.back()->budget = std::size_t(24) << 10;  // several tiles per share
        if (i == refusing) devices.back()->refuses = [](const problem &) { return true; };
    }
    const share_submit submit = [&](std::size_t i, std::function<void()> job) {
        if (i == unstarted) return false;
        workers[i - 1].submit(std::move(job));
        return true;
    };
    const share_run run = [&](std::size_t i, const offload_gate &gate, offload_report &report) {
        return run_offload(shares[i].p, *devices[i], report, 0, 0, gate);
    };
    const std::size_t failed = run_shares_at_once(shares.size(), submit, run, out.outcomes);
    for (const auto &d : devices) {
        out.copies.push_back(d->copies);
        out.stuck |= d->stuck || d->outside;
    }
    return failed;
}

}  // namespace

TEST_CASE("offload spread: shares at once, each on its own device and thread, give the reference result") {
    std::mt19937 rng(21);
    std::vector<share_worker> workers(2);
    struct shape {
        int64_t m, n, k, batch;
    };
    const shape shapes[] = {{40, 700, 30, 1}, {600, 50, 20, 1}, {20, 30, 17, 3}, {33, 520, 9, 2}, {513, 513, 5, 1}};
    for (int trial = 0; trial < 40; ++trial) {
        const shape sh = shapes[trial % std::size(shapes)];
        const dtype t = trial % 2 ? dtype::f64 : dtype::f32;
        host_case hc(rng, t, t, transpose(rng() % 2), transpose(rng() % 2), sh.m, sh.n, sh.k, sh.batch,
                     sh.batch > 1 ? int(rng() % 3) : 0, trial % 3 == 0 ? 0.0 : 0.5);
        const std::vector<char> want = hc.expected_c();
        const std::vector<double> speeds = {1.0 + double(rng() % 3), 1.0 + double(rng() % 3), 1.0};
        spread_axis axis = spread_axis::none;
        const std::vector<offload_share> shares = split_offload(hc.p, speeds, axis, 1.0);
        INFO(hc.text << ": " << shares.size() << " shares by " << spread_axis_name(axis));
        REQUIRE(shares.size() >= 2);
        spread_run r;
        CHECK(spread_at_once(shares, workers, unsigned(trial * 7), 99, 99, r) == shares.size());
        CHECK_FALSE(r.stuck);
        for (const share_outcome &o : r.outcomes) CHECK(o.status == GEMM_STATUS_SUCCESS);
        CHECK(std::memcmp(hc.c.data(), want.data(), want.size()) == 0);
    }
}

TEST_CASE("offload spread: one share refused, or never started, leaves all of C untouched and names that share") {
    std::mt19937 rng(22);
    std::vector<share_worker> workers(2);
    host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::t, 40, 700, 30, 1, 0, 0.5);
    const std::vector<char> before = hc.c;
    spread_axis axis = spread_axis::none;
    const std::vector<offload_share> shares = split_offload(hc.p, {1.0, 1.0, 1.0}, axis, 1.0);
    REQUIRE(shares.size() == 3);
    for (std::size_t bad = 0; bad < 3; ++bad)
        for (bool refused : {true, false}) {
            if (!refused && bad == 0) continue;  // share 0 runs on the caller: always started
            INFO("share " << bad << (refused ? " refused" : " not started"));
            spread_run r;
            CHECK(spread_at_once(shares, workers, unsigned(bad), refused ? bad : 99, refused ? 99 : bad, r) == bad);
            CHECK(r.outcomes[bad].status == (refused ? GEMM_STATUS_NOT_SUPPORTED : GEMM_STATUS_ALLOC_FAILED));
            CHECK(r.outcomes[bad].error == (refused ? std::string("simulated refusal")
                                                    : std::string("no thread could be started for its share")));
            for (std::size_t i = 0; i < 3; ++i) {
                CHECK(r.copies[i] == 0);
                if (i != bad) CHECK(r.outcomes[i].stopped);
            }
            CHECK_FALSE(r.outcomes[bad].stopped);
            CHECK(hc.c == before);
        }
}

// Two workers, three shares a call: were one call's submissions interleaved with another's, a
// worker could wait at one call's gate for a share queued behind the other's on the second
// worker, which waits for it in turn: this test then hangs (ctest's timeout fails it).
TEST_CASE("offload spread: calls from several threads at once share the workers without waiting on each other") {
    std::vector<share_worker> workers(2);
    std::vector<std::thread> callers;
    std::vector<int> wrong(6, 0);
    for (int t = 0; t < 6; ++t)
        callers.emplace_back([t, &workers, &wrong] {
            std::mt19937 rng(300 + unsigned(t));
            for (int i = 0; i < 15; ++i) {
                host_case hc(rng, dtype::f32, dtype::f32, transpose::n, transpose::n, 20 + t, 700, 12, 1, 0, 0.5);
                const std::vector<char> want = hc.expected_c();
                spread_axis axis = spread_axis::none;
                const std::vector<offload_share> shares = split_offload(hc.p, {1.0, 2.0, 1.0}, axis, 1.0);
                spread_run r;
                const bool ok = shares.size() == 3 &&
                                spread_at_once(shares, workers, unsigned(t * 100 + i), 99, 99, r) == 3 && !r.stuck;
                if (!ok || hc.c != want) ++wrong[std::size_t(t)];
            }
        });
    for (std::thread &c : callers) c.join();
    for (int w : wrong) CHECK(w == 0);
}

TEST_CASE("offload spread: device speeds start equal and move halfway to each measured rate") {
    device_speeds speeds;
    CHECK(speeds.of({0, 1}) == std::vector<double>{1.0, 1.0});
    speeds.record(1, 2e12, 1.0);
    CHECK(speeds.of({0, 1}) == std::vector<double>{2e12, 2e12});  // the unmeasured one at the mean
    speeds.record(0, 1e12, 1.0);
    CHECK(speeds.of({1, 0, 2}) == std::vector<double>{2e12, 1e12, 1.5e12});
    speeds.record(0, 3e12, 1.0);
    CHECK(speeds.of({0}) == std::vector<double>{2e12});
    speeds.record(0, 1e12, 0.0);  // no time: ignored
    speeds.record(-1, 1e12, 1.0);
    CHECK(speeds.of({0, 1}) == std::vector<double>{2e12, 2e12});
}

TEST_CASE("offload spread: without GEMM_OFFLOAD_DEVICES, every GPU, or a launched rank's own by its local rank") {
    CHECK(default_offload_devices(1, -1) == std::vector<int>{0});
    CHECK(default_offload_devices(4, -1) == std::vector<int>{0, 1, 2, 3});
    // Four ranks on a node of two GPUs: two ranks a GPU, none spread over both.
    for (int local = 0; local < 4; ++local) CHECK(default_offload_devices(2, local) == std::vector<int>{local % 2});
    CHECK(default_offload_devices(8, 3) == std::vector<int>{3});
    CHECK(default_offload_devices(1, 5) == std::vector<int>{0});
}
