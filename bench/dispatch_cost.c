/* dispatch_cost.c: what routing costs on the host, per call, without any GPU. Tunes a 4x4x4
 * SGEMM into a cache file of its own, adds entries for 256 other shapes of its class (a cache
 * that has seen some use), then runs itself again on that file and times three pairs of calls:
 *   hit:  forced onto the tuned winner, against auto on the tuned shape (the same choice);
 *   near: forced onto the tuned winner, against auto on an 8x8x8 call, not tuned, whose
 *         nearest tuned shape is 4x4x4 (distance log2(9/5) < 1 in each dimension);
 *   miss: forced onto the built-in default, against auto on a 16x16x16 call, not tuned and
 *         with no tuned shape within a factor of 2 (log2(17/5) and log2(65/17) > 1), so the
 *         built-in rule chooses.
 * The differences are the auto decision. Then a plan of the tuned class, made under auto, run
 * on the same operands: what a run costs against the forced call. Last, the hit pair again
 * with one thread per core (up to 8) calling at once, each on its own operands: what threads
 * sharing the cache pay. Build target gemm_dispatch_cost; run:
 * ./build/bench/gemm_dispatch_cost */
#include <gemm/gemm.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { extra_entries = 256, calls = 200000 };

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The fastest of several rounds of n x n x n calls, in nanoseconds per call. malloc's
 * buffers are 16-byte aligned, as the tuned 4x4x4 problem's were (its key says align=16). */
static double ns_per_call(const char *backend, int n) {
    float *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
    float *c = calloc((size_t)n * n, sizeof *c);
    double best = 1e30;
    if (!a || !b || !c || gemm_set_backend(backend) != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "dispatch_cost: %s\n", a && b && c ? gemm_last_error() : "out of memory");
        exit(1);
    }
    for (int round = 0; round < 5; ++round) {
        double start = seconds_now();
        for (int i = 0; i < calls; ++i)
            gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double per = (seconds_now() - start) / calls * 1e9;
        if (per < best) best = per;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

struct thread_job {
    int n;
    double ns; /* per call, this thread */
};

static void *thread_calls(void *arg) {
    struct thread_job *job = arg;
    int n = job->n;
    float *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
    float *c = calloc((size_t)n * n, sizeof *c);
    if (!a || !b || !c) exit(1);
    for (int i = 0; i < 1000; ++i)
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double start = seconds_now();
    for (int i = 0; i < calls; ++i)
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    job->ns = (seconds_now() - start) / calls * 1e9;
    free(a);
    free(b);
    free(c);
    return NULL;
}

/* threads threads making n x n x n calls at once under backend: the mean of their ns/call. */
static double threaded_ns_per_call(const char *backend, int n, int threads) {
    pthread_t id[8];
    struct thread_job jobs[8];
    double sum = 0;
    if (gemm_set_backend(backend) != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "dispatch_cost: %s\n", gemm_last_error());
        exit(1);
    }
    for (int t = 0; t < threads; ++t) {
        jobs[t].n = n;
        if (pthread_create(&id[t], NULL, thread_calls, &jobs[t]) != 0) exit(1);
    }
    for (int t = 0; t < threads; ++t) {
        pthread_join(id[t], NULL);
        sum += jobs[t].ns;
    }
    return sum / threads;
}

/* As ns_per_call, through a plan made under auto for the n x n x n class (beta = 0). */
static double ns_per_plan_run(int n) {
    float *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
    float *c = calloc((size_t)n * n, sizeof *c);
    const float one = 1.0f, zero = 0.0f;
    gemm_desc_t desc;
    gemm_plan_t plan = NULL;
    double best = 1e30;
    gemm_desc_init(&desc, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n);
    desc.beta_zero = 1;
    if (!a || !b || !c || gemm_set_backend("auto") != GEMM_STATUS_SUCCESS ||
        gemm_plan_create(&desc, &plan) != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "dispatch_cost: %s\n", a && b && c ? gemm_last_error() : "out of memory");
        exit(1);
    }
    for (int round = 0; round < 5; ++round) {
        double start = seconds_now();
        for (int i = 0; i < calls; ++i) gemm_plan_run(plan, &one, a, b, &zero, c);
        double per = (seconds_now() - start) / calls * 1e9;
        if (per < best) best = per;
    }
    gemm_plan_destroy(plan);
    free(a);
    free(b);
    free(c);
    return best;
}

/* Appends copies of the 4x4x4 entry for shapes 64..1084 (all beyond a factor of 2 of 8). */
static int add_entries(const char *cache) {
    const char prefix[] = "f32 f32 NN 4 4 4 ";
    char line[1024], rest[1024] = "";
    FILE *f = fopen(cache, "r");
    if (!f) return 1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, prefix, sizeof prefix - 1) == 0) snprintf(rest, sizeof rest, "%s", line + sizeof prefix - 1);
    fclose(f);
    if (!*rest || !(f = fopen(cache, "a"))) return 1;
    for (int i = 0; i < extra_entries; ++i)
        fprintf(f, "f32 f32 NN %d %d %d %s", 64 + 4 * i, 64 + 4 * i, 64 + 4 * i, rest);
    return fclose(f) != 0;
}

static int measure(const char *winner, const char *builtin) {
    double forced_hit = ns_per_call(winner, 4), auto_hit = ns_per_call("auto", 4);
    double forced_near = ns_per_call(winner, 8), auto_near = ns_per_call("auto", 8);
    double forced_miss = ns_per_call(builtin, 16), auto_miss = ns_per_call("auto", 16);
    printf("host, tune cache of %d entries: 4x4x4 sgemm forced %s %.1f ns/call, auto (cache hit, same choice) "
           "%.1f ns/call: auto decision %.1f ns\n",
           extra_entries + 1, winner, forced_hit, auto_hit, auto_hit - forced_hit);
    printf("host, same cache: 8x8x8 sgemm forced %s %.1f ns/call, auto (not tuned, nearest tuned shape 4x4x4) "
           "%.1f ns/call: auto decision %.1f ns\n",
           winner, forced_near, auto_near, auto_near - forced_near);
    printf("host, same cache: 16x16x16 sgemm forced %s %.1f ns/call, auto (not tuned, none near: built-in rule) "
           "%.1f ns/call: auto decision %.1f ns\n",
           builtin, forced_miss, auto_miss, auto_miss - forced_miss);
    double plan_run = ns_per_plan_run(4);
    printf("host, same cache: 4x4x4 sgemm through a plan made under auto (%s) %.1f ns/run: %+.1f ns against the "
           "forced call\n",
           winner, plan_run, plan_run - forced_hit);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 2 ? 2 : cores > 8 ? 8 : (int)cores;
    double forced_threads = threaded_ns_per_call(winner, 4, threads),
           auto_threads = threaded_ns_per_call("auto", 4, threads);
    printf("host, same cache, %d threads at once: 4x4x4 sgemm forced %s %.1f ns/call, auto (cache hit) %.1f ns/call: "
           "auto decision %.1f ns\n",
           threads, winner, forced_threads, auto_threads, auto_threads - forced_threads);
    const char *cache = getenv("GEMM_TUNE_CACHE");
    char lock[4096];
    snprintf(lock, sizeof lock, "%s.lock", cache);
    remove(cache);
    remove(lock);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--measure") == 0) return measure(argv[2], argv[3]);
    char cache[] = "/tmp/gemm-dispatch-cost-XXXXXX";
    int fd = mkstemp(cache);
    if (fd < 0) return perror("mkstemp"), 1;
    close(fd);
    setenv("GEMM_TUNE_CACHE", cache, 1);
    gemm_tune_request_t request;
    memset(&request, 0, sizeof request);
    request.ab_type = request.c_type = GEMM_F32;
    request.layout = GEMM_COL_MAJOR;
    request.transa = request.transb = GEMM_OP_N;
    request.m = request.n = request.k = 4;
    request.batch_count = 1;
    request.ld_padding = 0;
    request.beta_zero = 1;
    request.device = -1;
    request.budget_ms = 200;
    gemm_tune_report_t report;
    if (gemm_tune(&request, 1, &report) != GEMM_STATUS_SUCCESS || !report.stored) {
        fprintf(stderr, "dispatch_cost: tuning 4x4x4 failed: %s\n", gemm_last_error());
        return 1;
    }
    if (add_entries(cache) != 0) {
        fprintf(stderr, "dispatch_cost: cannot add entries to %s\n", cache);
        return 1;
    }
    char winner[64];
    snprintf(winner, sizeof winner, "%s%s%s", report.backend, *report.variant ? ":" : "", report.variant);
    /* A new process loads the cache with its added entries (this one loaded it while tuning). */
    execl("/proc/self/exe", argv[0], "--measure", winner, report.default_backend, (char *)NULL);
    perror("dispatch_cost: exec");
    return 1;
}
