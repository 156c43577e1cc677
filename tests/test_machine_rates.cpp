// test_machine_rates.cpp: the host-memory rates' fits, estimates and text form
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
double device_time(const dtype_rates &r, int64_t n) {
    return 2.0 * double(n) * double(n) * double(n) / r.gpu_gflops / 1e3;
}
double host_time(const host_rate &h, int64_t n) {
    return h.fixed_us + 2.0 * double(n) * double(n) * double(n) / h.gflops / 1e3;
}

problem square(dtype t, int64_t m, int64_t n, int64_t k) {
    problem p;
    p.ab_type = p.c_type = t;
    p.m = m;
    p.n = n;
    p.k = k;
    return p;
}

}  // namespace

TEST_CASE("machine_rates fit_host_rate: timings made from a rate and a fixed cost give them back") {
    host_rate truth{"cpu_omp", 180, 7.5};
    std::optional<host_rate> h = fit_host_rate("cpu_omp", 64, host_time(truth, 64), 384, host_time(truth, 384));
    REQUIRE(h);
    CHECK(h->backend == "cpu_omp");
    CHECK(h->gflops == doctest::Approx(180).epsilon(1e-9));
    CHECK(h->fixed_us == doctest::Approx(7.5).epsilon(1e-9));
    // The small size relatively faster than the rate allows: no negative fixed cost.
    h = fit_host_rate("cpu_omp", 64, 1.0, 384, 1000.0);
    REQUIRE(h);
    CHECK(h->fixed_us == 0);
    // The large size no slower (noise): its whole time at no fixed cost.
    h = fit_host_rate("cblas", 64, 500.0, 384, 400.0);
    REQUIRE(h);
    CHECK(h->gflops == doctest::Approx(2.0 * 384 * 384 * 384 / 400.0 / 1e3));
    CHECK(h->fixed_us == 0);
}

TEST_CASE("machine_rates fit_host_rate: times that are not positive, or sizes out of order, give no rate") {
    for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
        CHECK_FALSE(fit_host_rate("cpu_omp", 64, bad, 384, 100.0));
        CHECK_FALSE(fit_host_rate("cpu_omp", 64, 10.0, 384, bad));
    }
    CHECK_FALSE(fit_host_rate("cpu_omp", 384, 10.0, 64, 100.0));
    CHECK_FALSE(fit_host_rate("cpu_omp", 0, 10.0, 64, 100.0));
}

TEST_CASE("machine_rates fit_host_bandwidth: a matrix-vector time slower than the rate gives the bandwidth") {
    host_rate h{"cblas", 200, 5};
    const problem vector = square(dtype::f32, 1024, 1, 1024);
    const double bytes = (1024.0 * 1024 + 1024 + 1024) * 4;
    // A time the operand bytes streamed at the checked bandwidth explain, far above the rate's share.
    REQUIRE(fit_host_bandwidth(h, vector, 5 + bytes / 20 / 1e3));
    CHECK(h.gbs == doctest::Approx(20).epsilon(1e-9));
    CHECK(h.gflops == 200);
    CHECK(h.fixed_us == 5);
    // As fast as the rate allows: arithmetic bounds it, no bandwidth bound is kept.
    REQUIRE(fit_host_bandwidth(h, vector, 5 + vector.flops() / 200 / 1e3));
    CHECK(h.gbs == 0);
    for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
        host_rate untouched{"cblas", 200, 5, 7};
        CHECK_FALSE(fit_host_bandwidth(untouched, vector, bad));
        CHECK(untouched.gbs == 7);
    }
}

TEST_CASE("machine_rates fit_gpu_rates: timings made from rates give those rates back") {
    dtype_rates truth;
    truth.gpu_gflops = 45000;
    truth.link_gbs = 7.5;
    truth.gpu_fixed_us = 90;
    for (dtype t : {dtype::f32, dtype::f64}) {
        gpu_anchors a;
        a.small_n = 512;
        a.device_n = a.large_n = 2048;
        a.device_us = device_time(truth, 2048);
        a.small_us = gpu_time(truth, 512, dtype_size(t));
        a.large_us = gpu_time(truth, 2048, dtype_size(t));
        dtype_rates r;
        REQUIRE(fit_gpu_rates(t, a, "cublas", r));
        CHECK(r.gpu_backend == "cublas");
        CHECK(r.has_gpu());
        CHECK(r.gpu_gflops == doctest::Approx(truth.gpu_gflops).epsilon(1e-9));
        CHECK(r.link_gbs == doctest::Approx(truth.link_gbs).epsilon(1e-9));
        CHECK(r.gpu_fixed_us == doctest::Approx(truth.gpu_fixed_us).epsilon(1e-6));
    }
}

TEST_CASE(
    "machine_rates fit_gpu_rates: a small call no faster than the large one's traffic charges it all to the link") {
    gpu_anchors a;
    a.small_n = 1024;
    a.device_n = a.large_n = 4096;
    a.device_us = 3000;
    a.small_us = 60000;  // slower than the large call: noise, or a first call's setup
    a.large_us = 50000;
    dtype_rates r;
    REQUIRE(fit_gpu_rates(dtype::f32, a, "cublas", r));
    CHECK(r.gpu_fixed_us == 0);
    // The large call's time after its multiply-adds is all traffic: 3 * 4096^2 * 4 bytes in 47 ms.
    CHECK(r.link_gbs == doctest::Approx(3.0 * 4096 * 4096 * 4 / 47000.0 / 1e3));
}

TEST_CASE("machine_rates fit_gpu_rates: timings that are not positive, or anchors out of order, give no rates") {
    gpu_anchors good;
    good.small_n = 1024;
    good.device_n = good.large_n = 4096;
    good.device_us = good.small_us = good.large_us = 1000;
    dtype_rates r;
    CHECK(fit_gpu_rates(dtype::f32, good, "cublas", r));
    for (double gpu_anchors::*field : {&gpu_anchors::device_us, &gpu_anchors::small_us, &gpu_anchors::large_us})
        for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
            gpu_anchors a = good;
            a.*field = bad;
            dtype_rates untouched;
            CHECK_FALSE(fit_gpu_rates(dtype::f32, a, "cublas", untouched));
            CHECK_FALSE(untouched.has_gpu());
        }
    gpu_anchors swapped = good;
    swapped.small_n = 4096;
    swapped.large_n = 1024;
    CHECK_FALSE(fit_gpu_rates(dtype::f32, swapped, "cublas", r));
}

TEST_CASE("machine_rates fit_locked_link: page-locked timings give the page-locked link, the GPU's rate kept") {
    dtype_rates r;
    r.gpu_backend = "cublas";
    r.gpu_gflops = 45000;
    r.link_gbs = 7.5;
    r.gpu_fixed_us = 90;
    dtype_rates locked = r;
    locked.link_gbs = 24;
    locked.gpu_fixed_us = 30;
    gpu_anchors a;
    a.small_n = 256;
    a.large_n = 1024;
    a.small_us = gpu_time(locked, 256, 4);
    a.large_us = gpu_time(locked, 1024, 4);
    REQUIRE(fit_locked_link(dtype::f32, a, r));
    CHECK(r.has_locked_link());
    CHECK(r.locked_link_gbs == doctest::Approx(24).epsilon(1e-9));
    CHECK(r.locked_fixed_us == doctest::Approx(30).epsilon(1e-6));
    CHECK(r.link_gbs == 7.5);
    CHECK(r.gpu_fixed_us == 90);
    // Without a GPU part, or from times that are not positive: nothing.
    dtype_rates host_only;
    CHECK_FALSE(fit_locked_link(dtype::f32, a, host_only));
    CHECK_FALSE(host_only.has_locked_link());
    for (double bad : {0.0, -1.0, std::nan("")}) {
        gpu_anchors b = a;
        b.large_us = bad;
        dtype_rates untouched = locked;
        CHECK_FALSE(fit_locked_link(dtype::f32, b, untouched));
        CHECK_FALSE(untouched.has_locked_link());
    }
}

TEST_CASE("machine_rates estimate: a thin product by its bytes where they take longer than its arithmetic") {
    const host_rate h{"cpu_omp", 100, 4, 10};
    problem vector = square(dtype::f64, 4096, 1, 4096);
    const double bytes = (4096.0 * 4096 + 4096 + 4096) * 8;
    CHECK(host_estimate_us(h, vector) == doctest::Approx(4 + bytes / 10 / 1e3));
    // A square reuses its operands: its arithmetic bounds it.
    problem cube = square(dtype::f64, 512, 512, 512);
    CHECK(host_estimate_us(h, cube) == doctest::Approx(4 + 2.0 * 512 * 512 * 512 / 100 / 1e3));
    // No bandwidth (0): arithmetic alone, as before it was measured.
    const host_rate unbounded{"cpu_omp", 100, 4, 0};
    CHECK(host_estimate_us(unbounded, vector) == doctest::Approx(4 + vector.flops() / 100 / 1e3));
}

TEST_CASE("machine_rates estimate: page-locked operands go by the page-locked link where the rates have it") {
    dtype_rates r;
    r.gpu_backend = "cublas";
    r.gpu_gflops = 10000;
    r.link_gbs = 10;
    r.gpu_fixed_us = 50;
    problem p = square(dtype::f32, 1000, 1000, 1000);
    const double bytes = 3.0 * 1000 * 1000 * 4, flops_us = 2e9 / 10000 / 1e3;
    p.page_locked = true;
    CHECK(gpu_estimate_us(r, p) == doctest::Approx(50 + bytes / 10 / 1e3 + flops_us));  // not measured: pageable's
    r.locked_link_gbs = 40;
    r.locked_fixed_us = 20;
    CHECK(gpu_estimate_us(r, p) == doctest::Approx(20 + bytes / 40 / 1e3 + flops_us));
    p.page_locked = false;
    CHECK(gpu_estimate_us(r, p) == doctest::Approx(50 + bytes / 10 / 1e3 + flops_us));
}

TEST_CASE("machine_rates estimate: a host backend by fixed cost and rate, the GPU by fixed cost, traffic and rate") {
    dtype_rates r;
    r.gpu_backend = "cublas";
    r.gpu_gflops = 10000;
    r.link_gbs = 10;
    r.gpu_fixed_us = 50;
    const host_rate h{"cpu_omp", 100, 4};
    problem p = square(dtype::f32, 1000, 2000, 3000);
    CHECK(host_estimate_us(h, p) == doctest::Approx(4 + 2.0 * 1000 * 2000 * 3000 / 100 / 1e3));
    const double bytes = (1000.0 * 3000 + 3000.0 * 2000 + 1000.0 * 2000) * 4;
    CHECK(host_traffic_bytes(p) == doctest::Approx(bytes));
    CHECK(gpu_estimate_us(r, p) == doctest::Approx(50 + bytes / 10 / 1e3 + 2.0 * 1000 * 2000 * 3000 / 10000 / 1e3));
    // beta != 0 brings C to the device too; a batch multiplies everything but the fixed cost;
    // complex counts 4 real multiply-adds per one.
    p.beta = 0.5;
    CHECK(host_traffic_bytes(p) == doctest::Approx(bytes + 1000.0 * 2000 * 4));
    p.beta = 0;
    p.batch = 3;
    CHECK(host_traffic_bytes(p) == doctest::Approx(3 * bytes));
    CHECK(host_estimate_us(h, p) == doctest::Approx(4 + 3 * 2.0 * 1000 * 2000 * 3000 / 100 / 1e3));
    problem z = square(dtype::c32, 10, 10, 10);
    CHECK(host_estimate_us(h, z) == doctest::Approx(4 + 8.0 * 1000 / 100 / 1e3));
    // f16 inputs with C in f32: 2-byte A and B, a 4-byte C.
    problem f = square(dtype::f16, 10, 10, 10);
    f.c_type = dtype::f32;
    CHECK(host_traffic_bytes(f) == doctest::Approx(100.0 * 2 + 100.0 * 2 + 100.0 * 4));
}

TEST_CASE("machine_rates for_type: f64's rates for f64 and c64, f32's for every other type") {
    machine_rates m;
    CHECK(m.for_type(dtype::f32) == nullptr);
    m.f32 = dtype_rates{};
    m.f32->host = {{"cpu_omp", 1, 0}};
    CHECK(m.for_type(dtype::f64) == nullptr);
    m.f64 = dtype_rates{};
    m.f64->host = {{"cpu_omp", 2, 0}};
    for (dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::c32}) {
        CHECK(m.for_type(t)->fastest_host()->gflops == 1);
        CHECK(rates_type(t) == dtype::f32);
    }
    for (dtype t : {dtype::f64, dtype::c64}) {
        CHECK(m.for_type(t)->fastest_host()->gflops == 2);
        CHECK(rates_type(t) == dtype::f64);
    }
}

TEST_CASE("machine_rates line: written and read back; anything else is not a rates line") {
    dtype_rates r;
    r.host = {{"cpu_omp", 251.5, 6.25, 41.5}, {"cblas", 95.25, 11, 0}};
    r.gpu_backend = "cublas";
    r.gpu_gflops = 41234;
    r.link_gbs = 6.912;
    r.gpu_fixed_us = 120.5;
    r.locked_link_gbs = 24.25;
    r.locked_fixed_us = 35.5;
    r.measured_ms = 212.5;
    const std::string line = rates_line(dtype::f64, r);
    CHECK(line == "rates f64 | host cpu_omp 251.5 GFLOP/s 6.25 us 41.5 GB/s | host cblas 95.25 GFLOP/s 11 us 0 GB/s | "
                  "gpu cublas 41234 GFLOP/s 6.912 GB/s 120.5 us | page-locked 24.25 GB/s 35.5 us | measured 212.5 ms");
    std::string why;
    auto back = parse_rates_line(line, why);
    REQUIRE(back);
    CHECK(back->first == dtype::f64);
    REQUIRE(back->second.host.size() == 2);
    CHECK(back->second.host[0].backend == "cpu_omp");
    CHECK(back->second.host[0].gflops == 251.5);
    CHECK(back->second.host[0].fixed_us == 6.25);
    CHECK(back->second.host[0].gbs == 41.5);
    CHECK(back->second.host[1].gbs == 0);
    CHECK(back->second.host[1].backend == "cblas");
    CHECK(back->second.host[1].fixed_us == 11);
    CHECK(back->second.gpu_backend == "cublas");
    CHECK(back->second.gpu_gflops == 41234);
    CHECK(back->second.link_gbs == 6.912);
    CHECK(back->second.gpu_fixed_us == 120.5);
    CHECK(back->second.locked_link_gbs == 24.25);
    CHECK(back->second.locked_fixed_us == 35.5);
    CHECK(back->second.measured_ms == 212.5);
    // Without a GPU: no gpu part; the GPU and measured parts are optional when read.
    dtype_rates host_only;
    host_only.host = {{"cpu_omp", 100, 2}};
    CHECK(rates_line(dtype::f32, host_only) == "rates f32 | host cpu_omp 100 GFLOP/s 2 us 0 GB/s");
    auto plain = parse_rates_line("rates f32 | host cpu_omp 100 GFLOP/s 2 us", why);
    REQUIRE(plain);
    CHECK_FALSE(plain->second.has_gpu());
    CHECK(plain->second.measured_ms == 0);
    // Host parts are kept fastest first, whatever the order written; a host part without its
    // fixed cost (the older form) reads as 0.
    auto older = parse_rates_line("rates f32 | host cblas 95.3 GFLOP/s | host cpu_omp 120 GFLOP/s | gpu cublas 1 "
                                  "GFLOP/s 1 GB/s 1 us",
                                  why);
    REQUIRE(older);
    CHECK(older->second.fastest_host()->backend == "cpu_omp");
    CHECK(older->second.host_of("cblas")->fixed_us == 0);
    CHECK(older->second.host_of("cblas")->gbs == 0);
    CHECK_FALSE(older->second.has_locked_link());
    for (const char *bad :
         {"rates f16 | host cblas 1 GFLOP/s 1 us",                                         // not a real type it keeps
          "rates f32",                                                                     // no host part
          "rates f32 | gpu cublas 1 GFLOP/s 1 GB/s 1 us",                                  // no host part
          "rates f32 | host cblas 1 GFLOP/s 1 us | gpu cublas 1 GFLOP/s 1 GB/s 1 us | x",  // a part too many
          "rates f32 | host cblas 1 GFLOP/s 1 us | measured 1 ms | measured 1 ms",         // measured twice
          "rates f32 | gpu cublas 1 GFLOP/s 1 GB/s 1 us | host cblas 1 GFLOP/s 1 us",      // gpu before host
          "rates f32 | host cblas 1 GFLOP/s 1 us | host cblas 2 GFLOP/s 1 us",             // a backend twice
          "rates f32 | host cblas 1 MFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",           // a wrong unit
          "rates f32 | host cblas 1 GFLOP/s 1 ms",                                         // a wrong unit
          "rates f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s us",             // a number missing
          "rates f32 | host cblas 0 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",           // a rate of 0
          "rates f32 | host cblas 1 GFLOP/s -1 us",                                        // a negative cost
          "rates f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s -1 us",          // a negative cost
          "rates f32 | host cblas 1 GFLOP/s | measured -1 ms",                             // a negative time
          "rates f32 | host cblas nan GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",         // not a number
          "rates f32 | host Cblas! 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",          // not a backend name
          "rates f32 f64 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",       // two types
          "rates f32 | host cblas 1 GFLOP/s 2 | gpu cublas 1 GFLOP/s 1 GB/s 1 us",         // a unit missing
          "rates f32 | host cblas 1 GFLOP/s 2 us 3 | gpu cublas 1 GFLOP/s 1 GB/s 1 us",    // a word too many
          "rate f32 | host cblas 1 GFLOP/s | gpu cublas 1 GFLOP/s 1 GB/s 1 us",
          "rates f32 | host cblas 1 GFLOP/s 1 us -1 GB/s",                    // a negative bandwidth
          "rates f32 | host cblas 1 GFLOP/s 1 us 1 MB/s",                     // a wrong unit
          "rates f32 | host cblas 1 GFLOP/s 1 us 1 GB/s 1",                   // a word too many
          "rates f32 | host cblas 1 GFLOP/s 1 us | page-locked 1 GB/s 1 us",  // page-locked, no gpu
          "rates f32 | host cblas 1 GFLOP/s 1 us | gpu cublas 1 GFLOP/s 1 GB/s 1 us | page-locked 0 GB/s 1 us",
          "rates f32 | host cblas 1 GFLOP/s 1 us | gpu cublas 1 GFLOP/s 1 GB/s 1 us | page-locked 1 GB/s -1 us",
          "rates f32 | host cblas 1 GFLOP/s 1 us | gpu cublas 1 GFLOP/s 1 GB/s 1 us | page-locked 1 GB/s",
          "rates f32 | host cblas 1 GFLOP/s 1 us | page-locked 1 GB/s 1 us | gpu cublas 1 GFLOP/s 1 GB/s 1 us"}) {
        INFO(bad);
        CHECK_FALSE(parse_rates_line(bad, why));
        CHECK_FALSE(why.empty());
    }
}
