// test_machine_rates.cpp: the host-memory rates' fit, estimate and text form
// (dispatch/machine_rates.cpp, compiled into this test: the functions are internal). What the
// built-in rule does with rates in a tune cache is tested in test_tuner.cpp (tuner rates).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "dispatch/machine_rates.hpp"

using namespace gemm;

namespace {

// The time rates r give a square NN problem with beta 0 on host memory through the GPU
// (gpu_time) and on device memory (device_time), in microseconds.
double gpu_time(const dtype_rates &r, int64_t n, std::size_t element) {
    const double flops = 2.0 * double(n) * double(n) * double(n), bytes = 3.0 * double(n) * double(n) * double(element);
    return r.gpu_fixed_us + bytes / r.link_gbs / 1e3 + flops / r.gpu_gflops / 1e3;
}
double device_time(const dtype_rates &r, int64_t n) { return 2.0 * double(n) * double(n) * double(n) / r.gpu_gflops / 1e3; }
double host_time(const dtype_rates &r, int64_t n) { return 2.0 * double(n) * double(n) * double(n) / r.host_gflops / 1e3; }

problem square(dtype t, int64_t m, int64_t n, int64_t k) {
    problem p;
    p.ab_type = p.c_type = t;
    p.m = m;
    p.n = n;
    p.k = k;
    return p;
}

}  // namespace

TEST_CASE("machine_rates fit: timings made from rates give those rates back") {
    dtype_rates truth;
    truth.host_gflops = 180;
    truth.gpu_gflops = 45000;
    truth.link_gbs = 7.5;
    truth.gpu_fixed_us = 90;
    for (dtype t : {dtype::f32, dtype::f64}) {
        rate_anchors a;
        a.host_n = a.small_n = 1024;
        a.device_n = a.large_n = 4096;
        a.host_us = host_time(truth, 1024);
        a.device_us = device_time(truth, 4096);
        a.small_us = gpu_time(truth, 1024, dtype_size(t));
        a.large_us = gpu_time(truth, 4096, dtype_size(t));
        std::optional<dtype_rates> r = fit_rates(t, a, "cblas", "cublas");
        REQUIRE(r);
        CHECK(r->host_backend == "cblas");
        CHECK(r->gpu_backend == "cublas");
        CHECK(r->host_gflops == doctest::Approx(truth.host_gflops).epsilon(1e-9));
        CHECK(r->gpu_gflops == doctest::Approx(truth.gpu_gflops).epsilon(1e-9));
        CHECK(r->link_gbs == doctest::Approx(truth.link_gbs).epsilon(1e-9));
        CHECK(r->gpu_fixed_us == doctest::Approx(truth.gpu_fixed_us).epsilon(1e-6));
    }
}

TEST_CASE("machine_rates fit: a small call no faster than the large one's traffic charges it all to the link") {
    rate_anchors a;
    a.host_n = a.small_n = 1024;
    a.device_n = a.large_n = 4096;
    a.host_us = 10000;
    a.device_us = 3000;
    a.small_us = 60000;  // slower than the large call: noise, or a first call's setup
    a.large_us = 50000;
    std::optional<dtype_rates> r = fit_rates(dtype::f32, a, "cblas", "cublas");
    REQUIRE(r);
    CHECK(r->gpu_fixed_us == 0);
    // The large call's time after its multiply-adds is all traffic: 3 * 4096^2 * 4 bytes in 47 ms.
    CHECK(r->link_gbs == doctest::Approx(3.0 * 4096 * 4096 * 4 / 47000.0 / 1e3));
}

TEST_CASE("machine_rates fit: timings that are not positive, or anchors out of order, give no rates") {
    rate_anchors good;
    good.host_n = good.small_n = 1024;
    good.device_n = good.large_n = 4096;
    good.host_us = good.device_us = good.small_us = good.large_us = 1000;
    CHECK(fit_rates(dtype::f32, good, "cblas", "cublas"));
    for (double rate_anchors::*field :
         {&rate_anchors::host_us, &rate_anchors::device_us, &rate_anchors::small_us, &rate_anchors::large_us})
        for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
            rate_anchors a = good;
            a.*field = bad;
            CHECK_FALSE(fit_rates(dtype::f32, a, "cblas", "cublas"));
        }
    rate_anchors swapped = good;
    swapped.small_n = 4096;
    swapped.large_n = 1024;
    CHECK_FALSE(fit_rates(dtype::f32, swapped, "cblas", "cublas"));
}

TEST_CASE("machine_rates estimate: the host by its rate, the GPU by fixed cost, traffic and rate") {
    dtype_rates r;
    r.host_gflops = 100;
    r.gpu_gflops = 10000;
    r.link_gbs = 10;
    r.gpu_fixed_us = 50;
    problem p = square(dtype::f32, 1000, 2000, 3000);
    offload_estimate e = estimate(r, p);
    CHECK(e.host_us == doctest::Approx(2.0 * 1000 * 2000 * 3000 / 100 / 1e3));
    const double bytes = (1000.0 * 3000 + 3000.0 * 2000 + 1000.0 * 2000) * 4;
    CHECK(host_traffic_bytes(p) == doctest::Approx(bytes));
    CHECK(e.gpu_us == doctest::Approx(50 + bytes / 10 / 1e3 + 2.0 * 1000 * 2000 * 3000 / 10000 / 1e3));
    // beta != 0 brings C to the device too; a batch multiplies everything; complex counts
    // 4 real multiply-adds per one.
    p.beta = 0.5;
    CHECK(host_traffic_bytes(p) == doctest::Approx(bytes + 1000.0 * 2000 * 4));
    p.beta = 0;
    p.batch = 3;
    CHECK(host_traffic_bytes(p) == doctest::Approx(3 * bytes));
    CHECK(estimate(r, p).host_us == doctest::Approx(3 * e.host_us));
    problem z = square(dtype::c32, 10, 10, 10);
    CHECK(estimate(r, z).host_us == doctest::Approx(8.0 * 1000 / 100 / 1e3));
    // f16 inputs with C in f32: 2-byte A and B, a 4-byte C.
    problem h = square(dtype::f16, 10, 10, 10);
    h.c_type = dtype::f32;
    CHECK(host_traffic_bytes(h) == doctest::Approx(100.0 * 2 + 100.0 * 2 + 100.0 * 4));
}

TEST_CASE("machine_rates for_type: f64's rates for f64 and c64, f32's for every other type") {
    machine_rates m;
    CHECK(m.for_type(dtype::f32) == nullptr);
    m.f32 = dtype_rates{};
    m.f32->host_gflops = 1;
    CHECK(m.for_type(dtype::f64) == nullptr);
    m.f64 = dtype_rates{};
    m.f64->host_gflops = 2;
    for (dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::c32}) CHECK(m.for_type(t)->host_gflops == 1);
    for (dtype t : {dtype::f64, dtype::c64}) CHECK(m.for_type(t)->host_gflops == 2);
}

TEST_CASE("machine_rates line: written and read back; anything else is not a rates line") {
    dtype_rates r;
    r.host_backend = "cblas";
    r.host_gflops = 95.25;
    r.gpu_backend = "cublas";
    r.gpu_gflops = 41234;
    r.link_gbs = 6.912;
    r.gpu_fixed_us = 120.5;
    const std::string line = rates_line(dtype::f64, r);
    CHECK(line == "rates f64 | host cblas 95.25 GFLOP/s | gpu cublas 41234 GFLOP/s 6.912 GB/s 120.5 us");
    std::string why;
    auto back = parse_rates_line(line, why);
    REQUIRE(back);
    CHECK(back->first == dtype::f64);
    CHECK(back->second.host_backend == "cblas");
    CHECK(back->second.gpu_backend == "cublas");
    CHECK(back->second.host_gflops == 95.25);
    CHECK(back->second.gpu_gflops == 41234);
    CHECK(back->second.link_gbs == 6.912);
    CHECK(back->second.gpu_fixed_us == 120.5);
    for (const char *bad : {
             "rates f16 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",       // not a real type it keeps
             "rates f32 | host cblas 1 GFLOP/s",                                           // a part missing
             "rates f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us | x",    // a part too many
             "rates f32 | host cblas 1 MFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",       // a wrong unit
             "rates f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s us",         // a number missing
             "rates f32 | host cblas 0 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",       // a rate of 0
             "rates f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s -1 us",      // a negative cost
             "rates f32 | host cblas nan GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",     // not a number
             "rates f32 | host Cblas! 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",      // not a backend name
             "rates f32 f64 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",   // two types
             "rates f32 | host cblas 1 GFLOP/s 2 | gpu cublas 1 GFLOP/s 1 GB/s 1 us",     // a word too many
             "rate f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us"}) {
        INFO(bad);
        CHECK_FALSE(parse_rates_line(bad, why));
        CHECK_FALSE(why.empty());
    }
}
