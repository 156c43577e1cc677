// test_queries.cpp: problem descriptions (gemm_desc_t) and the capability queries on them,
// gemm_backend_supports and gemm_backend_variants, and the GEMM_* options the build reads:
// answers, reasons and argument errors.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
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

}  // namespace

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
    expect_refused("cpu_omp", f16, GEMM_STATUS_NOT_SUPPORTED, "f16 not supported");
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
    CHECK(gemm_backend_supports("cpu_ref", nullptr) == GEMM_STATUS_INVALID_POINTER);
    d = plain(GEMM_F32);
    CHECK(gemm_backend_supports(nullptr, nullptr) == GEMM_STATUS_INVALID_POINTER);
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
    CHECK(variants_of("cpu_ref", nullptr).empty());  // its default only
    // A problem the backend does not serve is refused as gemm_backend_supports refuses it.
    gemm_desc_t f16 = plain(GEMM_F16);
    const char *const *ids = nullptr;
    int64_t count = 0;
    CHECK(gemm_backend_variants("cpu_omp", &f16, &ids, &count) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(gemm_backend_variants("cpu_omp", &f32, nullptr, &count) == GEMM_STATUS_INVALID_POINTER);
    CHECK(gemm_backend_variants("cpu_omp", &f32, &ids, nullptr) == GEMM_STATUS_INVALID_POINTER);
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
    CHECK(owner("GEMM_CBLAS_LIB") == "cblas");  // declared by its backend
    bool has_cublasxt = false;
    for (const backend_entry &b : all_backends()) has_cublasxt |= b.name == "cublasxt";
    CHECK(owner("GEMM_XT_DEVICES") == (has_cublasxt ? "cublasxt" : ""));
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
    expect_refused(nullptr, f16, GEMM_STATUS_NOT_SUPPORTED, "f16 not supported");
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
    // Libraries first, the reference last: the host order is cblas, cpu_omp, cpu_ref.
    CHECK(traits["cblas"].kind == GEMM_BACKEND_HOST);
    CHECK(traits["cblas"].builtin_rank == 0);
    CHECK(traits["cpu_omp"].builtin_rank == 1);
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
    CHECK(gemm_backend_get_traits("cpu_ref", nullptr) == GEMM_STATUS_INVALID_POINTER);
}
