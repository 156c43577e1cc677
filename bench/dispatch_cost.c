/* dispatch_cost.c: what routing costs on the host, per call, without any GPU: a 1x1x1 SGEMM
 * forced onto a backend, against the same call through auto when the tune cache holds its
 * shape (so that auto picks that same backend). The difference is the auto decision on a
 * cache hit. Tunes into a cache file of its own (GEMM_TUNE_CACHE is set before the first
 * call). Build target gemm_dispatch_cost; run: ./build/bench/gemm_dispatch_cost */
#include <gemm/gemm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The fastest of several rounds of `calls` calls, in nanoseconds per call. */
static double ns_per_call(const char *backend, int calls) {
    float a = 1, b = 2, c = 0;
    double best = 1e30;
    if (gemm_set_backend(backend) != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "dispatch_cost: %s\n", gemm_last_error());
        exit(1);
    }
    for (int round = 0; round < 5; ++round) {
        double start = seconds_now();
        for (int i = 0; i < calls; ++i)
            gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
        double per = (seconds_now() - start) / calls * 1e9;
        if (per < best) best = per;
    }
    return best;
}

int main(void) {
    char cache[] = "/tmp/gemm-dispatch-cost-XXXXXX";
    int fd = mkstemp(cache);
    if (fd < 0) return perror("mkstemp"), 1;
    setenv("GEMM_TUNE_CACHE", cache, 1);
    gemm_tune_request_t request;
    memset(&request, 0, sizeof request);
    request.ab_type = request.c_type = GEMM_F32;
    request.layout = GEMM_COL_MAJOR;
    request.transa = request.transb = GEMM_OP_N;
    request.m = request.n = request.k = 1;
    request.batch_count = 1;
    request.ld_padding = 0;
    request.beta_zero = 1;
    request.device = -1;
    request.budget_ms = 200;
    gemm_tune_report_t report;
    if (gemm_tune(&request, 1, &report) != GEMM_STATUS_SUCCESS || !report.stored) {
        fprintf(stderr, "dispatch_cost: tuning 1x1x1 failed: %s\n", gemm_last_error());
        return 1;
    }
    char winner[64];
    snprintf(winner, sizeof winner, "%s%s%s", report.backend, *report.variant ? ":" : "", report.variant);
    const int calls = 1000000;
    double forced = ns_per_call(winner, calls), automatic = ns_per_call("auto", calls);
    printf("1x1x1 sgemm, host: forced %s %.1f ns/call; auto (tune cache hit, same choice) %.1f ns/call; "
           "auto decision %.1f ns\n", winner, forced, automatic, automatic - forced);
    remove(cache);
    return 0;
}
