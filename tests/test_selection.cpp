// test_selection.cpp: backend selection from code (gemm_set_backend, gemm::scoped_backend) and
// from the environment (GEMM_BACKEND, GEMM_VERBOSE, GEMM_LOG_LEVEL, GEMM_ALLOW_TF32,
// GEMM_CHECK_POINTERS, GEMM_TUNE, GEMM_CBLAS_LIB), including the verbose trace on stderr.
//
// The environment is read once per process, so each env_* test suite is one scenario: it is
// skipped by default and CTest runs it with its variables set and
// `--no-skip --test-suite=<scenario>` (see tests/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gemm/gemm.hpp"
#include "harness.hpp"

using namespace gemm_test;

namespace {

std::string env_value(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

// What the selection falls back to without gemm_set_backend.
std::string env_choice() {
    std::string v = env_value("GEMM_BACKEND");
    return v.empty() ? "auto" : v;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Row-major 3x5 * (4x5)^T, checked exactly (small integers are exact in every path).
gemm_status_t small_sgemm(bool check_result = true) {
    std::vector<float> a(15), b(20), c(12, -7.0f);
    for (int i = 0; i < 15; ++i) a[std::size_t(i)] = float(i % 4 - 1);
    for (int i = 0; i < 20; ++i) b[std::size_t(i)] = float(i % 3 - 1);
    gemm_status_t s =
        gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 3, 4, 5, 1.0f, a.data(), 5, b.data(), 5, 0.0f, c.data(), 4);
    if (s == GEMM_STATUS_SUCCESS && check_result)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 4; ++j) {
                float want = 0.0f;
                for (int l = 0; l < 5; ++l) want += a[std::size_t(i * 5 + l)] * b[std::size_t(j * 5 + l)];
                CHECK(c[std::size_t(i * 4 + j)] == want);
            }
    return s;
}

struct call_result {
    std::string what;
    gemm_status_t status;
    std::string error;
    bool c_unchanged;
};

// One call through each entry point (and a quick-return one), each on its own C buffer.
std::vector<call_result> every_kind_of_call() {
    std::vector<call_result> out;
    auto record = [&](const char *what, const gemm_case &c) {
        operands o = make_operands(c);
        run_result r = run_host(c, o);
        out.push_back({what, r.status, r.error, r.c == o.c0});
    };
    gemm_case c;
    c.m = 4;
    c.n = 3;
    c.k = 2;
    c.beta = 0.5;
    set_leading_dims(c, 1);
    record("gemm_sgemm", c);
    gemm_case d = c;
    d.ab_type = d.c_type = GEMM_F64;
    record("gemm_dgemm", d);
    gemm_case h = c;
    h.ab_type = GEMM_F16;
    h.api = entry::ex;
    record("gemm_ex f16", h);
    gemm_case s = c;
    set_batch(s, 2, false, true, 0);
    record("gemm_sgemm_strided_batched", s);
    gemm_case q = c;
    q.m = 0;
    set_leading_dims(q, 0);
    record("gemm_sgemm m=0 (quick return)", q);
    return out;
}

// Every call must fail with `want`, with a message containing `text`, and leave C alone;
// twice, since a first-call-only error would be a silent fallback afterwards.
void expect_every_call_fails(gemm_status_t want, const std::string &text) {
    for (int round = 0; round < 2; ++round)
        for (const call_result &r : every_kind_of_call()) {
            INFO("round " << round << ", " << r.what << ": " << std::string(gemm_status_string(r.status)) << " \""
                          << r.error << "\"");
            CHECK(r.status == want);
            CHECK(contains(r.error, text));
            CHECK(r.c_unchanged);
        }
}

void expect_every_call_succeeds() {
    for (const call_result &r : every_kind_of_call()) {
        INFO(r.what << ": " << std::string(gemm_status_string(r.status)) << " \"" << r.error << "\"");
        CHECK(r.status == GEMM_STATUS_SUCCESS);
    }
}

std::string first_unavailable_backend() {
    for (const backend_entry &b : all_backends())
        if (!b.available) return b.name;
    return "";
}

}  // namespace

// ---- selection from code (runs in any environment without GEMM_* errors) --------------------

TEST_SUITE("code") {
    TEST_CASE("selection set_backend each available backend, auto and NULL") {
        for (const std::string &name : available_backends()) {
            INFO("backend " << name);
            REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
            CHECK(std::string(gemm_get_backend()) == name);
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
        }
        REQUIRE(gemm_set_backend("auto") == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == "auto");
        CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == env_choice());
        // "" is "auto" set here, over GEMM_BACKEND (gemm.h); NULL is not.
        REQUIRE(gemm_set_backend("") == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == "auto");
        CHECK(std::string(gemm_get_backend_source()) == "gemm_set_backend");
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend_source()) != "gemm_set_backend");
    }

    TEST_CASE("selection set_backend errors keep the previous choice") {
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);

        CHECK(gemm_set_backend("nosuch") == GEMM_STATUS_UNKNOWN_BACKEND);
        CHECK(contains(gemm_last_error(), "nosuch"));
        CHECK(contains(gemm_last_error(), "cpu_ref"));  // lists what exists
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");

        CHECK(gemm_set_backend("nosuch:v1") == GEMM_STATUS_UNKNOWN_BACKEND);
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");

        CHECK(gemm_set_backend("cpu_ref:no_such_variant") == GEMM_STATUS_INVALID_VALUE);
        CHECK(contains(gemm_last_error(), "no_such_variant"));
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");

        // auto chooses the variant itself: a variant after it is refused as such, not as an
        // unknown backend (auto is a valid name).
        CHECK(gemm_set_backend("auto:x") == GEMM_STATUS_INVALID_VALUE);
        CHECK(contains(gemm_last_error(), "auto takes no variant"));
        CHECK_FALSE(contains(gemm_last_error(), "no backend named"));
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        REQUIRE(gemm_set_backend("auto:") == GEMM_STATUS_SUCCESS);  // as "name:" is "name"
        CHECK(std::string(gemm_get_backend()) == "auto");
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);

        // "name:" + id for every id a backend lists, the default "" among them, is a valid choice.
        REQUIRE(gemm_set_backend("cpu_omp:") == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == "cpu_omp:");
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);

        std::string unavailable = first_unavailable_backend();
        if (unavailable.empty()) {
            MESSAGE("skipped the unavailable-backend check: every backend is available here "
                    "(selection.env_backend_unavailable covers it)");
        } else {
            INFO("unavailable backend " << unavailable);
            CHECK(gemm_set_backend(unavailable.c_str()) == GEMM_STATUS_BACKEND_UNAVAILABLE);
            CHECK(contains(gemm_last_error(), unavailable));
            CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        }
        // The previous choice is still in force, not just still reported.
        CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }

    // A thread's own choice is over the process's for that thread alone; NULL gives it the
    // process's back; a refused name leaves the thread's choice; the trace's source says which.
    TEST_CASE("selection set_thread_backend: this thread's choice over the process's, no other thread's") {
        REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
        REQUIRE(gemm_set_thread_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        CHECK(std::string(gemm_get_backend_source()) == "gemm_set_thread_backend");
        CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
        std::string other_backend, other_source;
        std::thread other([&] {
            other_backend = gemm_get_backend();
            other_source = gemm_get_backend_source();
        });
        other.join();
        CHECK(other_backend == "cpu_omp");
        CHECK(other_source == "gemm_set_backend");

        CHECK(gemm_set_thread_backend("nosuch") == GEMM_STATUS_UNKNOWN_BACKEND);
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        // A plan made on the thread decides under the thread's choice.
        gemm_desc_t d;
        gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4);
        gemm_plan_t plan = nullptr;
        REQUIRE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS);
        const char *planned = nullptr;
        REQUIRE(gemm_plan_get_backend(plan, &planned, nullptr, nullptr) == GEMM_STATUS_SUCCESS);
        CHECK(std::string(planned) == "cpu_ref");
        gemm_plan_destroy(plan);

        REQUIRE(gemm_set_thread_backend(nullptr) == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_get_backend()) == "cpu_omp");
        {
            gemm::scoped_thread_backend scoped("cpu_ref");
            REQUIRE(scoped.ok());
            CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        }
        CHECK(std::string(gemm_get_backend()) == "cpu_omp");
        CHECK(std::string(gemm_get_backend_source()) == "gemm_set_backend");
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }

    TEST_CASE("selection scoped_backend restores the previous choice") {
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        {
            gemm::scoped_backend outer("cpu_ref");
            REQUIRE(outer.ok());
            CHECK(std::string(gemm_get_backend()) == "cpu_ref");
            for (const std::string &name : available_backends()) {
                gemm::scoped_backend inner(name.c_str());
                CHECK(inner.ok());
                CHECK(std::string(gemm_get_backend()) == name);
            }
            CHECK(std::string(gemm_get_backend()) == "cpu_ref");
            {
                gemm::scoped_backend bad("nosuch");
                CHECK_FALSE(bad.ok());
                CHECK(bad.result().code == GEMM_STATUS_UNKNOWN_BACKEND);
                CHECK(contains(bad.result().message, "nosuch"));
                CHECK(std::string(gemm_get_backend()) == "cpu_ref");
            }
            CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        }
        CHECK(std::string(gemm_get_backend()) == env_choice());
        CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
    }

    TEST_CASE("selection auto serves every dtype; a forced backend may decline with NOT_SUPPORTED") {
        REQUIRE(gemm_set_backend("auto") == GEMM_STATUS_SUCCESS);
        expect_every_call_succeeds();
        gemm_case h;
        h.m = 3;
        h.n = 2;
        h.k = 4;
        h.ab_type = GEMM_BF16;
        h.c_type = GEMM_F32;
        h.api = entry::ex;
        set_leading_dims(h, 0);
        operands o = make_operands(h);
        for (const std::string &name : available_backends()) {
            REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
            run_result r = run_host(h, o);
            INFO("backend " << name << ": " << std::string(gemm_status_string(r.status)) << " \"" << r.error << "\"");
            CHECK((r.status == GEMM_STATUS_SUCCESS || r.status == GEMM_STATUS_NOT_SUPPORTED));
            if (r.status == GEMM_STATUS_NOT_SUPPORTED) {
                CHECK(contains(r.error, "'" + name + "'"));  // says who declined
                CHECK(r.c == o.c0);
            }
        }
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    }
}

// ---- selection from the environment: one process per scenario ------------------------------

TEST_SUITE("env_backend_cpu_ref_verbose1" * doctest::skip()) {
    TEST_CASE("selection GEMM_BACKEND=cpu_ref GEMM_VERBOSE=1: forced, one trace line per call") {
        REQUIRE(env_value("GEMM_BACKEND") == "cpu_ref");
        REQUIRE(env_value("GEMM_VERBOSE") == "1");
        CHECK(std::string(gemm_get_backend()) == "cpu_ref");
        std::vector<std::string> lines;
        {
            stderr_capture capture;
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
            lines = capture.lines();
        }
        REQUIRE(lines.size() == 1);
        const std::string &t = lines[0];
        INFO("trace: " << t);
        CHECK(contains(t, "backend=cpu_ref"));
        CHECK(contains(t, "dtype=f32"));
        CHECK(contains(t, "layout=row"));
        CHECK(contains(t, "ops=NT"));
        CHECK(contains(t, "m=3 n=4 k=5"));
        CHECK(contains(t, "lda=5 ldb=5 ldc=4"));
        CHECK(contains(t, "forced by GEMM_BACKEND"));
        CHECK(contains(t, "time="));
        CHECK_FALSE(contains(t, "skipped"));
    }
}

TEST_SUITE("env_verbose2" * doctest::skip()) {
    TEST_CASE("selection GEMM_VERBOSE=2: one trace line with backend= plus the skipped backends") {
        REQUIRE(env_value("GEMM_VERBOSE") == "2");
        CHECK(std::string(gemm_get_backend()) == "auto");
        std::vector<std::string> lines;
        {
            stderr_capture capture;
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
            lines = capture.lines();
        }
        std::string all;
        int traces = 0, skipped = 0;
        for (const std::string &l : lines) {
            all += l + "\n";
            traces += contains(l, "backend=") ? 1 : 0;
            skipped += contains(l, "skipped") ? 1 : 0;
        }
        INFO("stderr:\n" << all);
        CHECK(traces == 1);
        CHECK(traces + skipped == int(lines.size()));
        // Every other host backend appears with the reason it was passed over.
        if (gemm_backend_count() > 1) CHECK(skipped >= 1);
        CHECK(contains(all, "auto"));
    }
}

TEST_SUITE("env_backend_auto" * doctest::skip()) {
    TEST_CASE("selection GEMM_BACKEND=auto") {
        REQUIRE(env_value("GEMM_BACKEND") == "auto");
        CHECK(std::string(gemm_get_backend()) == "auto");
        expect_every_call_succeeds();
    }
}

TEST_SUITE("env_valid_settings" * doctest::skip()) {
    TEST_CASE("selection valid GEMM_LOG_LEVEL, GEMM_ALLOW_TF32, GEMM_CHECK_POINTERS and GEMM_VERBOSE=0 are accepted") {
        REQUIRE(env_value("GEMM_LOG_LEVEL") == "trace");
        REQUIRE(env_value("GEMM_ALLOW_TF32") == "1");
        REQUIRE(env_value("GEMM_CHECK_POINTERS") == "1");
        REQUIRE(env_value("GEMM_VERBOSE") == "0");
        expect_every_call_succeeds();
    }
}

TEST_SUITE("env_backend_unknown" * doctest::skip()) {
    TEST_CASE("selection GEMM_BACKEND=nosuch: every call fails with UNKNOWN_BACKEND") {
        REQUIRE(env_value("GEMM_BACKEND") == "nosuch");
        CHECK(std::string(gemm_get_backend()) == "nosuch");
        expect_every_call_fails(GEMM_STATUS_UNKNOWN_BACKEND, "GEMM_BACKEND='nosuch'");
        CHECK(contains(gemm_last_error(), "cpu_ref"));  // the message lists what exists

        // gemm_set_backend takes precedence; NULL goes back to the (failing) environment.
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
        expect_every_call_succeeds();
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        expect_every_call_fails(GEMM_STATUS_UNKNOWN_BACKEND, "nosuch");
    }

    // scoped_backend must restore the environment's choice, even a failing one, rather than
    // leave cpu_ref in force after the scope.
    TEST_CASE("selection GEMM_BACKEND=nosuch: scoped_backend restores the environment's choice") {
        REQUIRE(env_value("GEMM_BACKEND") == "nosuch");
        {
            gemm::scoped_backend scope("cpu_ref");
            REQUIRE(scope.ok());
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
        }
        CHECK(std::string(gemm_get_backend()) == "nosuch");
        CHECK(small_sgemm(false) == GEMM_STATUS_UNKNOWN_BACKEND);
    }
}

TEST_SUITE("env_backend_unavailable" * doctest::skip()) {
    TEST_CASE("selection GEMM_BACKEND=cblas with GEMM_CBLAS_LIB=/nonexistent: BACKEND_UNAVAILABLE") {
        REQUIRE(env_value("GEMM_BACKEND") == "cblas");
        REQUIRE(env_value("GEMM_CBLAS_LIB") == "/nonexistent/libx.so");
        expect_every_call_fails(GEMM_STATUS_BACKEND_UNAVAILABLE, "cblas");
        CHECK(contains(gemm_last_error(), "/nonexistent/libx.so"));  // says why

        bool listed = false;
        for (const backend_entry &b : all_backends())
            if (b.name == "cblas") {
                listed = true;
                CHECK_FALSE(b.available);
                CHECK(contains(b.reason, "/nonexistent/libx.so"));
            }
        CHECK(listed);
        CHECK(gemm_set_backend("cblas") == GEMM_STATUS_BACKEND_UNAVAILABLE);

        // auto passes over the unavailable backend.
        REQUIRE(gemm_set_backend("auto") == GEMM_STATUS_SUCCESS);
        expect_every_call_succeeds();
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        expect_every_call_fails(GEMM_STATUS_BACKEND_UNAVAILABLE, "cblas");
    }
}

TEST_SUITE("env_cblas_lib_unusable" * doctest::skip()) {
    TEST_CASE("selection GEMM_CBLAS_LIB=/nonexistent under auto: a warning naming it, once, and calls still run") {
        REQUIRE(env_choice() == "auto");
        REQUIRE(env_value("GEMM_CBLAS_LIB") == "/nonexistent/libx.so");
        std::vector<std::string> first, second;
        {
            stderr_capture capture;
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
            first = capture.lines();
        }
        {
            stderr_capture capture;
            CHECK(small_sgemm() == GEMM_STATUS_SUCCESS);
            second = capture.lines();
        }
        std::string all;
        for (const std::string &l : first) all += l + "\n";
        INFO("stderr of the first call:\n" << all);
        REQUIRE(first.size() == 1);
        CHECK(contains(first[0], "[warning]"));
        CHECK(contains(first[0], "cblas is unavailable"));
        CHECK(contains(first[0], "GEMM_CBLAS_LIB='/nonexistent/libx.so'"));
        CHECK(second.empty());
    }
}

TEST_SUITE("env_backend_bad_variant" * doctest::skip()) {
    TEST_CASE(
        "selection GEMM_BACKEND=cpu_omp:no_such_variant: every call fails with INVALID_CONFIG, listing the variants") {
        REQUIRE(env_value("GEMM_BACKEND") == "cpu_omp:no_such_variant");
        expect_every_call_fails(GEMM_STATUS_INVALID_CONFIG, "no_such_variant");
        float a = 1, b = 1, c = 0;
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
        std::string message = gemm_last_error();
        CHECK(message.find("its variants: ") != std::string::npos);
        CHECK(message.find("generic_f32_8x4") != std::string::npos);
        CHECK(message.find("generic_f64_4x4") != std::string::npos);
        // From code the same name is an invalid argument, and the selection stays as it was.
        CHECK(gemm_set_backend("cpu_omp:also_no_such") == GEMM_STATUS_INVALID_VALUE);
        CHECK(std::string(gemm_last_error()).find("generic_f32_8x4") != std::string::npos);
        CHECK(std::string(gemm_get_backend()) == "cpu_omp:no_such_variant");
    }
}

namespace {
// An invalid GEMM_* value fails every call, even with a backend chosen from code.
void expect_invalid_config(const std::string &text) {
    expect_every_call_fails(GEMM_STATUS_INVALID_CONFIG, text);
    REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
    expect_every_call_fails(GEMM_STATUS_INVALID_CONFIG, text);
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}
}  // namespace

TEST_SUITE("env_verbose_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_VERBOSE=7: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_VERBOSE") == "7");
        expect_invalid_config("GEMM_VERBOSE='7'");
    }
}

TEST_SUITE("env_log_level_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_LOG_LEVEL=loud: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_LOG_LEVEL") == "loud");
        expect_invalid_config("GEMM_LOG_LEVEL='loud'");
    }
}

TEST_SUITE("env_allow_tf32_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_ALLOW_TF32=yes: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_ALLOW_TF32") == "yes");
        expect_invalid_config("GEMM_ALLOW_TF32='yes'");
    }
}

TEST_SUITE("env_check_pointers_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_CHECK_POINTERS=2: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_CHECK_POINTERS") == "2");
        expect_invalid_config("GEMM_CHECK_POINTERS='2'");
    }
}

TEST_SUITE("env_tune_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_TUNE=sometimes: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_TUNE") == "sometimes");
        expect_invalid_config("GEMM_TUNE='sometimes'");
    }
}

TEST_SUITE("env_xt_devices_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_XT_DEVICES=0,0: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_XT_DEVICES") == "0,0");
        expect_invalid_config("GEMM_XT_DEVICES='0,0'");
    }
}

TEST_SUITE("env_xt_max_device_bytes_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_XT_MAX_DEVICE_BYTES=1.5G: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_XT_MAX_DEVICE_BYTES") == "1.5G");
        expect_invalid_config("GEMM_XT_MAX_DEVICE_BYTES='1.5G'");
    }
}

TEST_SUITE("env_offload_max_device_bytes_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_OFFLOAD_MAX_DEVICE_BYTES=0: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_OFFLOAD_MAX_DEVICE_BYTES") == "0");
        expect_invalid_config("GEMM_OFFLOAD_MAX_DEVICE_BYTES='0'");
    }
}

TEST_SUITE("env_offload_tile_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_OFFLOAD_TILE=1024: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_OFFLOAD_TILE") == "1024");
        expect_invalid_config("GEMM_OFFLOAD_TILE='1024'");
    }
}

TEST_SUITE("env_offload_devices_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_OFFLOAD_DEVICES=0,gpu1: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_OFFLOAD_DEVICES") == "0,gpu1");
        expect_invalid_config("GEMM_OFFLOAD_DEVICES='0,gpu1'");
    }
}

// A listed device the machine lacks is judged at the call that would use it
// (gpu.offload_missing_device): a host call on the CPU runs.
TEST_SUITE("env_offload_valid" * doctest::skip()) {
    TEST_CASE(
        "selection GEMM_OFFLOAD_MAX_DEVICE_BYTES=64M GEMM_OFFLOAD_TILE=512x256 GEMM_OFFLOAD_DEVICES=0,1,1: accepted") {
        REQUIRE(env_value("GEMM_OFFLOAD_TILE") == "512x256");
        REQUIRE(env_value("GEMM_OFFLOAD_DEVICES") == "0,1,1");
        float a = 2, b = 3, c = 0;
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1) ==
              GEMM_STATUS_SUCCESS);
        CHECK(c == 6.0f);
    }
}

// The GEMM_OFFLOAD_* variables are declared by the offload engine, which a build without CUDA
// does not have: there they are neither listed nor read, so no value of theirs fails a call.
TEST_SUITE("env_offload_tile_without_cuda" * doctest::skip()) {
    TEST_CASE("selection GEMM_OFFLOAD_TILE=1024 without CUDA: not an option of the build, calls run") {
        REQUIRE(env_value("GEMM_OFFLOAD_TILE") == "1024");
        for (int64_t i = 0; i < gemm_option_count(); ++i) {
            gemm_option_info_t o{};
            REQUIRE(gemm_option_get_info(i, &o) == GEMM_STATUS_SUCCESS);
            CHECK(std::string(o.name).rfind("GEMM_OFFLOAD_", 0) != 0);
        }
        float a = 2, b = 3, c = 0;
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1) ==
              GEMM_STATUS_SUCCESS);
        CHECK(c == 6.0f);
    }
}

TEST_SUITE("env_blas_on_failure_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_BLAS_ON_FAILURE=sometimes: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_BLAS_ON_FAILURE") == "sometimes");
        expect_invalid_config("GEMM_BLAS_ON_FAILURE='sometimes'");
    }
}

TEST_SUITE("env_pblas_block_invalid" * doctest::skip()) {
    TEST_CASE("selection GEMM_PBLAS_BLOCK=65537: every call fails with INVALID_CONFIG") {
        REQUIRE(env_value("GEMM_PBLAS_BLOCK") == "65537");
        expect_invalid_config("GEMM_PBLAS_BLOCK='65537'");
    }
}

TEST_SUITE("env_xt_valid" * doctest::skip()) {
    TEST_CASE("selection GEMM_XT_DEVICES=1,0 GEMM_XT_MAX_DEVICE_BYTES=512M: accepted") {
        REQUIRE(env_value("GEMM_XT_DEVICES") == "1,0");
        REQUIRE(env_value("GEMM_XT_MAX_DEVICE_BYTES") == "512M");
        float a = 2, b = 3, c = 0;
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1) ==
              GEMM_STATUS_SUCCESS);
        CHECK(c == 6.0f);
    }
}
