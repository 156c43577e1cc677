// test_queries.cpp: problem descriptions (gemm_desc_t) and the capability queries on them,
// gemm_backend_supports and gemm_backend_variants, and the GEMM_* options the build reads:
// answers, reasons and argument errors.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

gemm_desc_t plain(gemm_dtype_t t, int64_t m = 64, int64_t n = 48, int64_t k = 32) {
    gemm_desc_t d;
    gemm_desc_init(&d, t, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, n, k);
    return d;
}

std::vector<std::string> variants_of(const char *backend, const gemm_desc_t *d) {
    const char *const *ids = nullptr;
    int64_t count = -1;
    gemm_status_t s = gemm_backend_variants(backend, d, &ids, &count);
    INFO(backend << ": " << gemm_status_string(s) << " " << gemm_last_error());
    REQUIRE(s == GEMM_STATUS_SUCCESS);
    REQUIRE(count >= 0);
    return std::vector<std::string>(ids, ids + count);
}

bool available(const char *name) {
    for (const backend_entry &b : all_backends())
        if (b.name == name) return b.available;
    return false;
}

void expect_refused(const char *backend, const gemm_desc_t &d, gemm_status_t want, const std::string &text) {
    gemm_status_t s = gemm_backend_supports(backend, &d);
    std::string message = gemm_last_error();
    INFO((backend ? backend : "(selection)") << " -> " << gemm_status_string(s) << " \"" << message << "\"");
    CHECK(s == want);
    CHECK(contains(message, text));
}

// A desc as a newer gemm.h would have it: this library's fields, then ones it does not know.
struct newer_desc {
    gemm_desc_t desc;
    int64_t unknown[3];
};

newer_desc newer(gemm_dtype_t t) {
    newer_desc n;
    std::memset(&n, 0, sizeof n);
    n.desc = plain(t);
    n.desc.struct_size = sizeof n;
    return n;
}

// This test program run again with env added to its environment and args, its exit code and
// what it printed.
struct self_run {
    int exit_code = -1;
    std::string output;
};

extern "C" char **environ;

self_run run_self(const std::vector<std::string> &args, const std::string &env) {
    std::string exe = "/proc/self/exe", name = env.substr(0, env.find('=') + 1);
    std::vector<std::string> env_strings;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, name.c_str(), name.size()) != 0) env_strings.push_back(*e);
    env_strings.push_back(env);
    std::vector<char *> argv{exe.data()}, envp;
    std::vector<std::string> arg_strings = args;
    for (std::string &a : arg_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string &e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2];
    REQUIRE(pipe(out) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    pid_t pid = -1;
    int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    self_run r;
    if (spawned != 0) {
        close(out[0]);
        r.output = std::string("posix_spawn: ") + std::strerror(spawned);
        return r;
    }
    char buffer[4096];
    for (ssize_t got; (got = read(out[0], buffer, sizeof buffer)) != 0;)
        if (got > 0) r.output.append(buffer, std::size_t(got));
        else if (errno != EINTR) break;
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

}  // namespace

// Names callers print and parse (tune-cache keys, variant ids, traces) come from one table.
TEST_CASE("dtype names: gemm_dtype_name gives each dtype the name the library prints") {
    const std::pair<gemm_dtype_t, const char *> names[] = {{GEMM_F32, "f32"},   {GEMM_F64, "f64"}, {GEMM_F16, "f16"},
                                                           {GEMM_BF16, "bf16"}, {GEMM_C32, "c32"}, {GEMM_C64, "c64"}};
    for (const auto &[type, name] : names) {
        const char *got = gemm_dtype_name(type);
        REQUIRE(got != nullptr);
        CHECK(std::string(got) == name);
    }
    // The names in a tune-cache key are these: the key parses back to its dtypes.
    gemm_tune_report_t report;
    CHECK(gemm_tune_key("bf16 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0", -1, 1, "cpu_ref", 0,
                        &report) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_tune_key("f32 bf16 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0", -1, 1, "cpu_ref", 0,
                        &report) != GEMM_STATUS_SUCCESS);
}

TEST_CASE("desc: gemm_desc_init fills every field with its documented default") {
    gemm_desc_t d = plain(GEMM_BF16, 5, 6, 7);
    CHECK(d.struct_size == int64_t(sizeof(gemm_desc_t)));
    CHECK(d.layout == GEMM_ROW_MAJOR);
    CHECK(d.transa == GEMM_OP_N);
    CHECK(d.transb == GEMM_OP_T);
    CHECK(d.m == 5);
    CHECK(d.n == 6);
    CHECK(d.k == 7);
    CHECK(d.a_type == GEMM_BF16);
    CHECK(d.b_type == GEMM_BF16);
    CHECK(d.c_type == GEMM_BF16);
    CHECK(d.compute_type == GEMM_F32);
    CHECK(d.lda == 0);
    CHECK(d.ldb == 0);
    CHECK(d.ldc == 0);
    CHECK(d.batch_count == 1);
    CHECK(d.stride_a == GEMM_DESC_TIGHT);
    CHECK(d.stride_c == GEMM_DESC_TIGHT);
    CHECK(d.device == -1);
    CHECK(d.alignment == 16);
    CHECK(d.beta_zero == 0);
    gemm_desc_t f64 = plain(GEMM_F64);
    CHECK(f64.compute_type == GEMM_F64);
}

TEST_CASE("supports: what each backend serves, and why not") {
    gemm_desc_t f32 = plain(GEMM_F32), f16 = plain(GEMM_F16);
    CHECK(gemm_backend_supports("cpu_ref", &f16) == GEMM_STATUS_SUCCESS);  // the oracle serves every type
    CHECK(std::string(gemm_last_error()).empty());
    CHECK(gemm_backend_supports("cpu_omp", &f32) == GEMM_STATUS_SUCCESS);
    // f16 and bf16 computed in f32, into C of their type or f32.
    CHECK(gemm_backend_supports("cpu_omp", &f16) == GEMM_STATUS_SUCCESS);
    gemm_desc_t bf16_f32 = plain(GEMM_BF16);
    bf16_f32.c_type = GEMM_F32;
    CHECK(gemm_backend_supports("cpu_omp", &bf16_f32) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_backend_supports("cpu_omp:generic_bf16_8x4", &bf16_f32) == GEMM_STATUS_SUCCESS);
    gemm_desc_t on_device = f32;
    on_device.device = 0;
    expect_refused("cpu_omp", on_device, GEMM_STATUS_NOT_SUPPORTED, "needs host pointers");
    gemm_desc_t batched = f32;
    batched.batch_count = 3;  // tight strides
    CHECK(gemm_backend_supports("cpu_omp", &batched) == GEMM_STATUS_SUCCESS);
    if (available("cblas")) CHECK(gemm_backend_supports("cblas", &f32) == GEMM_STATUS_SUCCESS);
    expect_refused("nosuch", f32, GEMM_STATUS_UNKNOWN_BACKEND, "nosuch");
    expect_refused("cpu_omp:nosuch", f32, GEMM_STATUS_INVALID_VALUE, "no variant 'nosuch'");
    CHECK(gemm_backend_supports("cpu_omp:generic_f32_8x4", &f32) == GEMM_STATUS_SUCCESS);
    for (const backend_entry &b : all_backends())
        if (!b.available) expect_refused(b.name.c_str(), f32, GEMM_STATUS_BACKEND_UNAVAILABLE, "unavailable");
}

TEST_CASE("supports: an invalid desc gets the status a call would, naming the field") {
    gemm_desc_t d = plain(GEMM_F32);
    d.lda = 3;  // row-major A, no transpose: needs k = 32
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_LEADING_DIM, "gemm_desc_t: lda = 3 must be >= max(1, k = 32)");
    d = plain(GEMM_F32);
    d.m = -1;
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_SIZE, "gemm_desc_t: m = -1");
    d = plain(GEMM_F32);
    d.c_type = GEMM_F64;
    expect_refused("cpu_ref", d, GEMM_STATUS_NOT_SUPPORTED, "gemm_desc_t: c_type");
    d = plain(GEMM_F32);
    d.k = int64_t(1) << 62;
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_SIZE, "2^63");
    d = plain(GEMM_F32);
    d.batch_count = 2;
    d.stride_c = 5;  // C matrices of 64 x 48 overlap
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_STRIDE, "stride_c = 5");
    d = plain(GEMM_F32);
    d.alignment = 12;
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_VALUE, "alignment = 12");
    d = plain(GEMM_F32);
    d.struct_size = 8;
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_VALUE, "gemm_desc_init");
    expect_refused("cpu_ref", d, GEMM_STATUS_INVALID_VALUE, "smaller than this library's gemm_desc_t");
    CHECK(gemm_backend_supports("cpu_ref", nullptr) == GEMM_STATUS_INVALID_POINTER);
    d = plain(GEMM_F32);
    CHECK(gemm_backend_supports(nullptr, nullptr) == GEMM_STATUS_INVALID_POINTER);
}

TEST_CASE("desc: a newer gemm.h's larger desc is served when the fields this library lacks are 0") {
    newer_desc n = newer(GEMM_F32);
    CHECK(gemm_backend_supports("cpu_ref", &n.desc) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_backend_supports(nullptr, &n.desc) == GEMM_STATUS_SUCCESS);
    CHECK(variants_of("cpu_ref", &n.desc) == std::vector<std::string>{""});
    n.unknown[1] = 5;  // a field this library does not have, set: it cannot do what it asks
    const std::size_t byte = sizeof(gemm_desc_t) + sizeof(int64_t);
    expect_refused("cpu_ref", n.desc, GEMM_STATUS_INVALID_VALUE,
                   "gemm_desc_t: struct_size = " + std::to_string(sizeof n) +
                       " is larger than this library's gemm_desc_t");
    expect_refused("cpu_ref", n.desc, GEMM_STATUS_INVALID_VALUE, "byte " + std::to_string(byte) + " is not 0");
    expect_refused(nullptr, n.desc, GEMM_STATUS_INVALID_VALUE, "gemm_desc_t");
    const char *const *ids = nullptr;
    int64_t count = 42;
    CHECK(gemm_backend_variants("cpu_ref", &n.desc, &ids, &count) == GEMM_STATUS_INVALID_VALUE);
    CHECK(ids == nullptr);  // left as they were
    CHECK(count == 42);
    // A struct_size never set (garbage) is refused without reading that far past the desc.
    gemm_desc_t garbage = plain(GEMM_F32);
    garbage.struct_size = int64_t(1) << 40;
    expect_refused("cpu_ref", garbage, GEMM_STATUS_INVALID_VALUE, "never set");
}

TEST_CASE("variants: those worth timing for a problem, and every id a backend knows") {
    gemm_desc_t f64 = plain(GEMM_F64), f32 = plain(GEMM_F32);
    std::vector<std::string> for_f64 = variants_of("cpu_omp", &f64);
    REQUIRE_FALSE(for_f64.empty());
    for (const std::string &id : for_f64) {
        INFO(id);
        CHECK(contains(id, "_f64_"));
        CHECK(gemm_set_backend(("cpu_omp:" + id).c_str()) == GEMM_STATUS_SUCCESS);  // the ids round-trip
    }
    CHECK(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    std::vector<std::string> all = variants_of("cpu_omp", nullptr);
    for (const char *id : {"generic_f32_8x4", "generic_f64_4x4"}) {
        INFO(id);
        CHECK(std::find(all.begin(), all.end(), id) != all.end());
    }
    for (const std::string &id : for_f64) CHECK(std::find(all.begin(), all.end(), id) != all.end());
    CHECK(variants_of("cpu_ref", &f32) == std::vector<std::string>{""});  // only its default
    CHECK(variants_of("cpu_ref", nullptr).empty());                       // its default only
    // f16 and bf16 run the f32 kernels under ids of their own, which round-trip.
    for (gemm_dtype_t t : {GEMM_F16, GEMM_BF16}) {
        gemm_desc_t half = plain(t);
        const std::vector<std::string> for_half = variants_of("cpu_omp", &half);
        CHECK(for_half.size() == variants_of("cpu_omp", &f32).size());
        for (const std::string &id : for_half) {
            INFO(id);
            CHECK(contains(id, std::string("_") + gemm_dtype_name(t) + "_"));
            CHECK(std::find(all.begin(), all.end(), id) != all.end());
            CHECK(gemm_set_backend(("cpu_omp:" + id).c_str()) == GEMM_STATUS_SUCCESS);
        }
    }
    CHECK(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    // A problem the backend does not serve is refused as gemm_backend_supports refuses it.
    gemm_desc_t on_device = f32;
    on_device.device = 0;
    const char *const *ids = nullptr;
    int64_t count = 0;
    CHECK(gemm_backend_variants("cpu_omp", &on_device, &ids, &count) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(gemm_backend_variants("cpu_omp", &f32, nullptr, &count) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_backend_variants("cpu_omp", &f32, &ids, nullptr) == GEMM_STATUS_INVALID_POINTER);
    // No backend: refused (the selection in force has no variants to list), with a desc or not.
    for (const gemm_desc_t *d : {static_cast<const gemm_desc_t *>(&f32), static_cast<const gemm_desc_t *>(nullptr)}) {
        ids = nullptr;
        count = 0;
        CHECK(gemm_backend_variants(nullptr, d, &ids, &count) == GEMM_STATUS_INVALID_POINTER);
        CHECK(std::string(gemm_last_error()) == "parameter 1: backend is NULL");
        CHECK(gemm_last_error_parameter() == 1);
        CHECK(ids == nullptr);
        CHECK(count == 0);
    }
}

TEST_CASE("options: every GEMM_* variable the build reads, with its owner, value and meaning") {
    std::map<std::string, gemm_option_info_t> by_name;
    for (int64_t i = 0; i < gemm_option_count(); ++i) {
        gemm_option_info_t o{};
        REQUIRE(gemm_option_get_info(i, &o) == GEMM_STATUS_SUCCESS);
        INFO(o.name);
        CHECK(std::string(o.name).rfind("GEMM_", 0) == 0);
        CHECK(*o.meaning);
        CHECK(*o.values);
        CHECK(by_name.emplace(o.name, o).second);  // each once
        const char *env = std::getenv(o.name);
        if (env && *env) CHECK(o.value != nullptr);
        else CHECK(o.value == nullptr);
        if (o.value) CHECK(std::string(o.value) == env);
    }
    auto owner = [&](const char *name) { return by_name.count(name) ? std::string(by_name[name].owner) : ""; };
    CHECK(owner("GEMM_BACKEND") == "library");
    CHECK(owner("GEMM_TUNE_CACHE") == "library");
    CHECK(owner("GEMM_BLAS_ON_FAILURE") == "drop-in BLAS");
    CHECK(owner("GEMM_PBLAS_BLOCK") == "drop-in BLAS");
    CHECK(owner("GEMM_CBLAS_LIB") == "cblas");  // declared by its backend
    bool has_cublasxt = false;
    for (const backend_entry &b : all_backends()) has_cublasxt |= b.name == "cublasxt";
    CHECK(owner("GEMM_XT_DEVICES") == (has_cublasxt ? "cublasxt" : ""));
    CHECK(owner("GEMM_OFFLOAD_MAX_DEVICE_BYTES") == (has_cublasxt ? "GPU offload" : ""));  // CUDA builds
    CHECK(owner("GEMM_OFFLOAD_DEVICES") == (has_cublasxt ? "GPU offload" : ""));
    gemm_option_info_t o{};
    CHECK(gemm_option_get_info(-1, &o) == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_option_get_info(gemm_option_count(), &o) == GEMM_STATUS_INVALID_VALUE);
    CHECK(gemm_option_get_info(0, nullptr) == GEMM_STATUS_INVALID_POINTER);
}

TEST_CASE("supports without a backend: what the selection in force would do with a call") {
    gemm_desc_t f32 = plain(GEMM_F32), f16 = plain(GEMM_F16);
    CHECK(gemm_backend_supports(nullptr, &f32) == GEMM_STATUS_SUCCESS);  // auto
    CHECK(gemm_backend_supports(nullptr, &f16) == GEMM_STATUS_SUCCESS);  // auto finds cpu_ref
    REQUIRE(gemm_set_backend("cpu_omp") == GEMM_STATUS_SUCCESS);
    CHECK(gemm_backend_supports(nullptr, &f32) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_backend_supports(nullptr, &f16) == GEMM_STATUS_SUCCESS);
    gemm_desc_t on_device = f32;
    on_device.device = 0;
    expect_refused(nullptr, on_device, GEMM_STATUS_NOT_SUPPORTED, "needs host pointers");
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

TEST_CASE("traits: each backend's kind, whether it is the reference, and its place in the built-in order") {
    std::map<std::string, gemm_backend_traits_t> traits;
    for (const backend_entry &b : all_backends()) {
        gemm_backend_traits_t t{};
        t.struct_size = sizeof t;
        INFO(b.name);
        REQUIRE(gemm_backend_get_traits(b.name.c_str(), &t) == GEMM_STATUS_SUCCESS);  // available or not
        traits[b.name] = t;
    }
    // Our own cpu_omp first, the reference last: the host order is cpu_omp, cblas, cpu_ref.
    CHECK(traits["cblas"].kind == GEMM_BACKEND_HOST);
    CHECK(traits["cblas"].builtin_rank == 1);
    CHECK(traits["cpu_omp"].builtin_rank == 0);
    CHECK(traits["cpu_ref"].builtin_rank == 2);
    CHECK(traits["cpu_ref"].reference == 1);
    CHECK(traits["cpu_omp"].reference == 0);
    if (traits.count("cublas")) {
        CHECK(traits["cublas"].kind == GEMM_BACKEND_DEVICE);
        CHECK(traits["cublas"].builtin_rank == 0);
        CHECK(traits["cublasxt"].kind == GEMM_BACKEND_MULTI_DEVICE);
        CHECK(traits["cublasxt"].builtin_rank == -1);
    }
    gemm_backend_traits_t t{};
    t.struct_size = sizeof t;
    CHECK(gemm_backend_get_traits("nosuch", &t) == GEMM_STATUS_UNKNOWN_BACKEND);
    t.struct_size = 4;
    CHECK(gemm_backend_get_traits("cpu_ref", &t) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "smaller than this library's gemm_backend_traits_t"));
    CHECK(gemm_backend_get_traits("cpu_ref", nullptr) == GEMM_STATUS_INVALID_POINTER);
    // A newer gemm.h's larger traits: this library fills what it knows and leaves the rest 0.
    struct {
        gemm_backend_traits_t traits;
        int64_t unknown[2];
    } newer;
    std::memset(&newer, 0, sizeof newer);
    newer.traits.struct_size = sizeof newer;
    REQUIRE(gemm_backend_get_traits("cpu_ref", &newer.traits) == GEMM_STATUS_SUCCESS);
    CHECK(newer.traits.reference == 1);
    CHECK(newer.unknown[0] == 0);
    CHECK(newer.unknown[1] == 0);
    newer.unknown[0] = 1;
    CHECK(gemm_backend_get_traits("cpu_ref", &newer.traits) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "gemm_backend_traits_t"));
}

// Run by the case below in a child whose GEMM_TUNE is invalid: settings are read once per
// process, so this process cannot change them.
TEST_SUITE("queries_invalid_setting" * doctest::skip()) {
    TEST_CASE("supports under GEMM_TUNE=sometimes: refused as a call forced onto the backend is") {
        const char *tune = std::getenv("GEMM_TUNE");
        REQUIRE(tune != nullptr);
        REQUIRE(std::string(tune) == "sometimes");
        gemm_desc_t f32 = plain(GEMM_F32);
        expect_refused("cpu_ref", f32, GEMM_STATUS_INVALID_CONFIG, "GEMM_TUNE='sometimes'");
        expect_refused("cpu_omp:generic_f32_8x4", f32, GEMM_STATUS_INVALID_CONFIG, "GEMM_TUNE='sometimes'");
        expect_refused(nullptr, f32, GEMM_STATUS_INVALID_CONFIG, "GEMM_TUNE='sometimes'");
        const char *const *ids = nullptr;
        int64_t count = 0;
        CHECK(gemm_backend_variants("cpu_ref", &f32, &ids, &count) == GEMM_STATUS_INVALID_CONFIG);
        // What a call forced onto the backend returns.
        REQUIRE(gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS);
        float a = 1, b = 1, c = 0;
        CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1) ==
              GEMM_STATUS_INVALID_CONFIG);
        REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
        // As in a call, the arguments are checked before the settings.
        gemm_desc_t bad = f32;
        bad.m = -1;
        expect_refused("cpu_ref", bad, GEMM_STATUS_INVALID_SIZE, "m = -1");
        expect_refused(nullptr, bad, GEMM_STATUS_INVALID_SIZE, "m = -1");
        std::printf("queries_invalid_setting: checked\n");
    }
}

TEST_CASE("supports: an invalid GEMM_* setting refuses a named backend too") {
    self_run r = run_self({"--no-skip", "--test-suite=queries_invalid_setting"}, "GEMM_TUNE=sometimes");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "queries_invalid_setting: checked"));
}
