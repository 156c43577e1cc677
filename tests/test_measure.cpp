// test_measure.cpp: gemm_measure, the library's measurement engine as callers use it: each
// backend checked, then timed in rounds; reports, statuses and argument errors.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

gemm_desc_t plain(gemm_dtype_t t, int64_t m, int64_t n, int64_t k) {
    gemm_desc_t d;
    gemm_desc_init(&d, t, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, n, k);
    return d;
}

gemm_measure_options_t quick() {
    gemm_measure_options_t o;
    gemm_measure_options_init(&o);
    o.budget_ms = 20;
    return o;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Options as a newer gemm.h would have them: this library's fields, then ones it does not know.
struct newer_options {
    gemm_measure_options_t options;
    int64_t unknown[2];
};

// The last `size` bytes before an inaccessible page: a read past them faults.
class before_guard_page {
public:
    explicit before_guard_page(std::size_t size) : page_(std::size_t(sysconf(_SC_PAGESIZE))) {
        void *p = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(p != MAP_FAILED);
        base_ = static_cast<char *>(p);
        REQUIRE(mprotect(base_ + page_, page_, PROT_NONE) == 0);
        bytes_ = base_ + page_ - size;
    }
    ~before_guard_page() { munmap(base_, 2 * page_); }
    before_guard_page(const before_guard_page &) = delete;
    before_guard_page &operator=(const before_guard_page &) = delete;
    void *bytes() const { return bytes_; }

private:
    std::size_t page_;
    char *base_ = nullptr;
    char *bytes_ = nullptr;
};

// The next value of real type t above v, a value of t.
double next_up(double v, gemm_dtype_t t) {
    if (t == GEMM_F64) return std::nextafter(v, HUGE_VAL);
    if (t == GEMM_F32) return double(std::nextafter(float(v), HUGE_VALF));
    unsigned char stored[sizeof(double)] = {};  // as large as any type load and store take
    uint16_t bits = 0;
    store(stored, 0, t, v);
    std::memcpy(&bits, stored, sizeof bits);
    bits = v == 0.0 ? uint16_t(1) : std::signbit(v) ? uint16_t(bits - 1) : uint16_t(bits + 1);
    std::memcpy(stored, &bits, sizeof bits);
    return load(stored, 0, t);
}

double next_down(double v, gemm_dtype_t t) { return -next_up(-v, t); }

// |got - want| for an element whose imaginary parts (0 for real types) are fixed, as
// compare_result measures it.
double element_error(double got_re, double want_re, double imaginary_error) {
    return std::hypot(got_re - want_re, imaginary_error);
}

}  // namespace

TEST_CASE("measure: every backend named is checked and timed, or says why not") {
    gemm_desc_t d = plain(GEMM_F32, 64, 48, 32);
    gemm_measure_options_t o = quick();
    const char *names[] = {"cpu_ref", "cpu_omp", "auto", "nosuch", "cpu_omp:generic_f32_8x4", "cpu_omp:nosuch"};
    gemm_measurement_t r[6];
    REQUIRE(gemm_measure(&d, names, 6, &o, r) == GEMM_STATUS_SUCCESS);
    for (int i : {0, 1, 2, 4}) {
        INFO(std::string(names[i]) << ": " << std::string(r[i].error) << " " << std::string(r[i].note));
        CHECK(std::string(r[i].backend) == names[i]);
        CHECK(r[i].status == GEMM_STATUS_SUCCESS);
        CHECK(r[i].checked == 1);
        CHECK(r[i].correct == 1);
        CHECK(std::string(r[i].check_method) == "reference");
        CHECK(r[i].check_ratio <= 1.0);
        CHECK(r[i].timed == 1);
        CHECK(r[i].samples >= o.min_samples);
        CHECK(r[i].samples <= o.max_samples);
        CHECK(r[i].runs_per_sample >= 1);
        CHECK(r[i].best_us > 0);
        CHECK(r[i].median_us >= r[i].best_us);
        CHECK(r[i].spread >= 0);
        CHECK(r[i].round_spread >= 0);  // three rounds
    }
    CHECK(r[3].status == GEMM_STATUS_UNKNOWN_BACKEND);
    CHECK(contains(r[3].error, "nosuch"));
    CHECK(r[3].timed == 0);
    CHECK(r[5].status == GEMM_STATUS_INVALID_VALUE);
    CHECK(r[5].timed == 0);
}

TEST_CASE("measure: a backend that cannot serve the problem gets its status; beta = 0 does not read C") {
    gemm_desc_t d = plain(GEMM_F16, 33, 17, 9);
    d.beta_zero = 1;  // C starts as NaN in the checked run: a backend reading it is WRONG
    gemm_measure_options_t o = quick();
    const char *names[] = {"cpu_omp:generic_f64_4x4", "cpu_ref", "cpu_omp"};
    gemm_measurement_t r[3];
    REQUIRE(gemm_measure(&d, names, 3, &o, r) == GEMM_STATUS_SUCCESS);
    CHECK(r[0].status == GEMM_STATUS_NOT_SUPPORTED);  // an f64 kernel computes no f16
    CHECK(contains(r[0].error, "f16"));
    CHECK(r[0].timed == 0);
    for (int i : {1, 2}) {
        INFO(names[i] << ": " << r[i].error);
        CHECK(r[i].correct == 1);
        CHECK(r[i].timed == 1);
    }
}

TEST_CASE("measure: large products are checked with the vector check, batches and f64 too") {
    gemm_desc_t big = plain(GEMM_F64, 600, 600, 400);  // m n k above 2^27
    gemm_measure_options_t o = quick();
    o.rounds = 1;
    o.min_samples = 1;
    const char *omp[] = {"cpu_omp"};
    gemm_measurement_t r[1];
    REQUIRE(gemm_measure(&big, omp, 1, &o, r) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(r[0].check_method) == "vector");
    CHECK(r[0].correct == 1);
    CHECK(r[0].round_spread == -1);  // one round
    gemm_desc_t batch = plain(GEMM_F32, 20, 12, 7);
    batch.batch_count = 5;
    batch.layout = GEMM_COL_MAJOR;
    REQUIRE(gemm_measure(&batch, omp, 1, &o, r) == GEMM_STATUS_SUCCESS);
    CHECK(r[0].correct == 1);
}

TEST_CASE("measure: a desc with an epilogue: checked every element, or sampled when large; batches refused") {
    gemm_measure_options_t o = quick();
    o.rounds = 1;
    o.min_samples = 1;
    const char *names[] = {"cpu_omp", "cpu_ref", "cblas"};
    for (auto [act, axis, aux] :
         {std::tuple{GEMM_ACTIVATION_GELU, GEMM_BIAS_COLUMNS, 1}, std::tuple{GEMM_ACTIVATION_RELU, GEMM_BIAS_ROWS, 0},
          std::tuple{GEMM_ACTIVATION_GELU_BACKWARD, GEMM_BIAS_COLUMNS, 0},
          std::tuple{GEMM_ACTIVATION_RELU_BACKWARD, GEMM_BIAS_NONE, 0}}) {
        gemm_desc_t d = plain(GEMM_F32, 37, 29, 41);
        d.activation = act;
        d.bias_axis = axis;
        d.aux = aux;
        gemm_measurement_t r[3];
        REQUIRE(gemm_measure(&d, names, 3, &o, r) == GEMM_STATUS_SUCCESS);
        for (const gemm_measurement_t &x : r) {
            if (x.status == GEMM_STATUS_BACKEND_UNAVAILABLE) continue;  // no CBLAS here
            INFO(std::string(x.backend) << " activation " << int(act) << ": " << std::string(x.error)
                                        << std::string(x.note));
            CHECK(x.status == GEMM_STATUS_SUCCESS);
            CHECK(x.correct == 1);
            CHECK(std::string(x.check_method) == "reference");
        }
    }
    gemm_desc_t big = plain(GEMM_F32, 600, 600, 400);  // m n k above 2^27
    big.activation = GEMM_ACTIVATION_GELU;
    big.bias_axis = GEMM_BIAS_COLUMNS;
    big.aux = 1;
    big.ld_aux = 608;
    gemm_measurement_t r[1];
    REQUIRE(gemm_measure(&big, names, 1, &o, r) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(r[0].check_method) == "sampled");
    CHECK(r[0].correct == 1);
    big.batch_count = 2;
    CHECK(gemm_measure(&big, names, 1, &o, r) == GEMM_STATUS_NOT_SUPPORTED);
}

TEST_CASE("measure: argument errors") {
    gemm_desc_t d = plain(GEMM_F32, 8, 8, 8);
    gemm_measure_options_t o = quick();
    const char *names[] = {"cpu_ref"};
    gemm_measurement_t r[1];
    CHECK(gemm_measure(nullptr, names, 1, &o, r) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_measure(&d, nullptr, 1, &o, r) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_measure(&d, names, -1, &o, r) == GEMM_STATUS_INVALID_SIZE);
    CHECK(gemm_measure(&d, names, 1, &o, nullptr) == GEMM_STATUS_INVALID_POINTER);
    // A NULL name names no backend: refused, not measured as "" (gemm.h gives NULL no meaning).
    const char *with_null[] = {"cpu_ref", nullptr};
    gemm_measurement_t two[2];
    CHECK(gemm_measure(&d, with_null, 2, &o, two) == GEMM_STATUS_INVALID_POINTER);
    CHECK(contains(gemm_last_error(), "parameter 2: backends[1] is NULL"));
    CHECK(gemm_last_error_parameter() == 2);
    gemm_measure_options_t bad = o;
    bad.struct_size = 8;
    CHECK(gemm_measure(&d, names, 1, &bad, r) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "parameter 4: options->struct_size = 8 is smaller than this library's "
                                      "gemm_measure_options_t"));
    CHECK(gemm_last_error_parameter() == 4);
    bad = o;
    bad.rounds = 0;
    CHECK(gemm_measure(&d, names, 1, &bad, r) == GEMM_STATUS_INVALID_VALUE);
    bad = o;
    bad.max_samples = 1;  // below min_samples
    CHECK(gemm_measure(&d, names, 1, &bad, r) == GEMM_STATUS_INVALID_VALUE);
    bad = o;
    bad.check = 2;  // a flag is 0 or 1
    CHECK(gemm_measure(&d, names, 1, &bad, r) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "check and pinned must be 0 or 1"));
    gemm_desc_t zero = d;
    zero.beta_zero = 1;
    bad = o;
    bad.beta = 0.5;
    CHECK(gemm_measure(&zero, names, 1, &bad, r) == GEMM_STATUS_INVALID_VALUE);
    gemm_desc_t strided = d;
    strided.batch_count = 2;
    strided.stride_a = 0;
    CHECK(gemm_measure(&strided, names, 1, &o, r) == GEMM_STATUS_NOT_SUPPORTED);
    gemm_desc_t wrong = d;
    wrong.lda = 1;
    CHECK(gemm_measure(&wrong, names, 1, &o, r) == GEMM_STATUS_INVALID_LEADING_DIM);
    CHECK(contains(gemm_last_error(), "gemm_desc_t: lda = 1"));
    CHECK(gemm_measure(&d, names, 0, &o, r) == GEMM_STATUS_SUCCESS);  // nothing to measure
    gemm_desc_t on_device = d;
    on_device.device = 0;
    bool has_device = false;
    for (const backend_entry &b : all_backends()) has_device |= b.name == "cublas" && b.available;
    if (!has_device) CHECK(gemm_measure(&on_device, names, 1, &o, r) != GEMM_STATUS_SUCCESS);
}

TEST_CASE("measure: options' struct_size is checked before the options are read") {
    gemm_desc_t d = plain(GEMM_F32, 8, 8, 8);
    const char *names[] = {"cpu_ref"};
    gemm_measurement_t r[1];
    // An older caller's options of 8 bytes, the end of its memory: nothing past them is read.
    before_guard_page older(sizeof(int64_t));
    int64_t size = 8;
    std::memcpy(older.bytes(), &size, sizeof size);
    CHECK(gemm_measure(&d, names, 1, static_cast<const gemm_measure_options_t *>(older.bytes()), r) ==
          GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "options->struct_size = 8"));
    // A struct_size never set (garbage) is refused without reading that far past the options.
    gemm_measure_options_t garbage = quick();
    garbage.struct_size = int64_t(1) << 40;
    CHECK(gemm_measure(&d, names, 1, &garbage, r) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "never set"));
}

TEST_CASE("measure: a newer gemm.h's larger options are used when the fields this library lacks are 0") {
    gemm_desc_t d = plain(GEMM_F32, 8, 8, 8);
    const char *names[] = {"cpu_ref"};
    gemm_measurement_t r[1];
    newer_options n;
    std::memset(&n, 0, sizeof n);
    n.options = quick();
    n.options.struct_size = sizeof n;
    n.options.max_samples = 3;
    REQUIRE(gemm_measure(&d, names, 1, &n.options, r) == GEMM_STATUS_SUCCESS);
    CHECK(r[0].status == GEMM_STATUS_SUCCESS);
    CHECK(r[0].timed == 1);
    CHECK(r[0].samples <= 3);  // the known fields were read
    n.unknown[1] = 1;          // a field this library does not have, set: it cannot do what it asks
    r[0].backend = "untouched";
    CHECK(gemm_measure(&d, names, 1, &n.options, r) == GEMM_STATUS_INVALID_VALUE);
    std::string message = gemm_last_error();
    CHECK(contains(message, "options->struct_size = " + std::to_string(sizeof n) +
                                " is larger than this library's gemm_measure_options_t"));
    CHECK(contains(message, "byte " + std::to_string(sizeof(gemm_measure_options_t) + sizeof(int64_t)) + " is not 0"));
    CHECK(std::string(r[0].backend) == "untouched");  // the reports are left as they were
}

TEST_CASE("measure: options NULL takes gemm_measure_options_init's defaults") {
    gemm_desc_t d = plain(GEMM_F32, 4, 4, 4);
    const char *names[] = {"cpu_ref"};
    gemm_measurement_t r[1];
    REQUIRE(gemm_measure(&d, names, 1, nullptr, r) == GEMM_STATUS_SUCCESS);
    CHECK(r[0].status == GEMM_STATUS_SUCCESS);
    CHECK(r[0].checked == 1);  // check defaults to 1
    CHECK(r[0].correct == 1);
    CHECK(r[0].samples >= 3);  // min_samples defaults to 3
}

// FP8 classes: the engine makes FP8 operands and scales of the desc's mode (values in [1/2, 2),
// each block its own), checks every backend that serves them against its reference, which
// applies the same scales, and times them.
TEST_CASE("measure: FP8 descs, e4m3 and e5m2 into bf16 and f32, checked and timed") {
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2})
        for (gemm_dtype_t ct : {GEMM_BF16, GEMM_F32})
            for (gemm_scale_mode_t mode : {GEMM_SCALE_NONE, GEMM_SCALE_TENSOR, GEMM_SCALE_BLOCK}) {
                gemm_desc_t d;
                gemm_desc_init(&d, ab, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 33, 17, 140);
                d.c_type = ct;
                d.scale_mode = mode;
                INFO(gemm_dtype_name(ab) << "->" << gemm_dtype_name(ct) << " scale_mode " << int(mode));
                const char *names[] = {"cpu_omp", "cpu_ref"};
                gemm_measurement_t r[2];
                gemm_measure_options_t options = quick();
                REQUIRE_MESSAGE(gemm_measure(&d, names, 2, &options, r) == GEMM_STATUS_SUCCESS, gemm_last_error());
                for (const gemm_measurement_t &m : r) {
                    CHECK_MESSAGE(m.status == GEMM_STATUS_SUCCESS, m.backend << ": " << m.error);
                    CHECK(m.checked == 1);
                    CHECK_MESSAGE(m.correct == 1, m.backend << ": " << m.note);
                    CHECK(m.timed == 1);
                }
            }
}

// FP8 classes past the whole-C check's limit (m·n·k > 2^27) take the vector check with the
// tensor cores' allowance; cpu_ref and cpu_omp, which sum in f64 and f32, pass it.
TEST_CASE("measure: FP8 descs large enough for the vector check, e4m3 and e5m2") {
    for (gemm_dtype_t ab : {GEMM_F8_E4M3, GEMM_F8_E5M2}) {
        gemm_desc_t d;
        gemm_desc_init(&d, ab, GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 521, 263, 1031);
        d.c_type = ab == GEMM_F8_E4M3 ? GEMM_BF16 : GEMM_F32;
        INFO(gemm_dtype_name(ab) << "->" << gemm_dtype_name(d.c_type));
        const char *names[] = {"cpu_omp", "cpu_ref"};
        gemm_measurement_t r[2];
        gemm_measure_options_t options = quick();
        options.min_samples = 1;
        REQUIRE_MESSAGE(gemm_measure(&d, names, 2, &options, r) == GEMM_STATUS_SUCCESS, gemm_last_error());
        for (const gemm_measurement_t &m : r) {
            CHECK_MESSAGE(m.status == GEMM_STATUS_SUCCESS, m.backend << ": " << m.error);
            CHECK(m.checked == 1);
            CHECK_MESSAGE(m.correct == 1, m.backend << ": " << m.note);
        }
    }
}

// The tests judge results by the measurement engine's rule (dispatch/measure/tolerance.hpp):
// for each dtype, the value of C's type nearest the bound on the inside passes the harness's
// comparison, the next one out fails it.
TEST_CASE("measure: the tolerance rule, just inside passes and just outside fails, every dtype") {
    const gemm_dtype_t types[][2] = {{GEMM_F32, GEMM_F32},   {GEMM_F64, GEMM_F64}, {GEMM_F16, GEMM_F16},
                                     {GEMM_BF16, GEMM_BF16}, {GEMM_F16, GEMM_F32}, {GEMM_BF16, GEMM_F32},
                                     {GEMM_C32, GEMM_C32},   {GEMM_C64, GEMM_C64}};
    for (const auto &type : types) {
        const gemm_case c =
            make_case(type[0], type[1], entry::ex, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 3, 2, 37, 0, 1.5, 0.5);
        INFO(c.describe());
        const operands o = make_operands(c);
        const reference ref = compute_reference(c, o);
        const int64_t np = parts(c.c_type);
        const gemm_dtype_t part = part_type(c.c_type);
        bytes got = o.c0;
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t p = 0; p < np; ++p)
                    store_part(got.data(), c_element(c, 0, i, j), p, c.c_type,
                               ref.value[std::size_t(window_index(c, 0, i, j) * np + p)]);
        REQUIRE(compare_result(c, o, got, ref.value).ok);  // C rounded once to its type

        // Element (0, 0): its real part moved out to the bound, its imaginary part as stored.
        const int64_t e = c_element(c, 0, 0, 0);
        const double want_re = ref.value[0], want_im = np == 2 ? ref.value[1] : 0.0;
        const double imaginary_error = np == 2 ? load_part(got.data(), e, 1, c.c_type) - want_im : 0.0;
        const double c0_size =
            std::hypot(load_part(o.c0.data(), e, 0, c.c_type), np == 2 ? load_part(o.c0.data(), e, 1, c.c_type) : 0.0);
        const double bound = tolerance_of(c).element(std::hypot(want_re, want_im), c0_size);
        REQUIRE(bound > std::fabs(imaginary_error));
        double inside = load_part(got.data(), e, 0, c.c_type);
        while (element_error(next_up(inside, part), want_re, imaginary_error) <= bound) inside = next_up(inside, part);
        while (element_error(inside, want_re, imaginary_error) > bound) inside = next_down(inside, part);
        const double outside = next_up(inside, part);
        CHECK(inside > want_re);

        store_part(got.data(), e, 0, c.c_type, inside);
        const comparison in = compare_result(c, o, got, ref.value);
        CHECK_MESSAGE(in.ok, in.first);
        store_part(got.data(), e, 0, c.c_type, outside);
        const comparison out = compare_result(c, o, got, ref.value);
        CHECK_FALSE(out.ok);
        CHECK(out.wrong == 1);
    }
}

// With GEMM_VERBOSE=1 each measured call's trace line says how its FP8 operands were scaled:
// the engine hands every backend the scales of the desc's mode, not scales of 1. Calls say
// their output scale and amax too.
TEST_SUITE("env_verbose" * doctest::skip()) {
    TEST_CASE("measure: the traces of FP8 measurements name the desc's scale mode") {
        const std::pair<gemm_scale_mode_t, const char *> modes[] = {{GEMM_SCALE_NONE, " scales=none "},
                                                                    {GEMM_SCALE_TENSOR, " scales=tensor "},
                                                                    {GEMM_SCALE_BLOCK, " scales=block "}};
        for (const auto &[mode, text] : modes) {
            gemm_desc_t d;
            gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 9, 150, 260);
            d.c_type = GEMM_BF16;
            d.scale_mode = mode;
            INFO("scale_mode " << int(mode));
            const char *names[] = {"cpu_ref"};
            gemm_measurement_t r;
            gemm_measure_options_t options = quick();
            options.max_samples = 3;
            stderr_capture capture;
            REQUIRE_MESSAGE(gemm_measure(&d, names, 1, &options, &r) == GEMM_STATUS_SUCCESS, gemm_last_error());
            const std::vector<std::string> lines = capture.lines();
            CHECK_MESSAGE(r.correct == 1, r.note);
            REQUIRE_FALSE(lines.empty());
            for (const std::string &line : lines) CHECK_MESSAGE(contains(line, text), line);
        }
    }

    TEST_CASE("calls: an FP8 call's trace names its scales, output scale and amax") {
        const unsigned char a[4] = {0x38, 0x38, 0x38, 0x38};  // e4m3 1.0
        float c[4] = {}, a_scale = 2, b_scale = 0.5f, d_scale = 1, amax = 0;
        const float alpha = 1, beta = 0;
        const gemm_scaling_t x = tensor_scaling(&a_scale, &b_scale, &d_scale, &amax);
        stderr_capture capture;
        REQUIRE_MESSAGE(gemm_ex_scaled(GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 2, 2, 2, &alpha, a, GEMM_F8_E4M3, 2, a,
                                       GEMM_F8_E4M3, 2, &beta, c, GEMM_F32, 2, GEMM_F32, &x) == GEMM_STATUS_SUCCESS,
                        gemm_last_error());
        const std::vector<std::string> lines = capture.lines();
        REQUIRE(lines.size() == 1);
        CHECK_MESSAGE(contains(lines[0], " scales=tensor+d_scale+amax space=host"), lines[0]);
        CHECK(c[0] == 2.0f);
        CHECK(amax == 2.0f);
    }
}
