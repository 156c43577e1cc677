// test_side_tune.cpp: the tune cache and the tuner for the calls beside GEMM (gemm_omatcopy,
// gemm_spmm_csr, gemm_spmm_coo): entries that auto takes for them (exact and nearest, traced),
// entries it cannot take (a backend that refuses the call, one not in this build, malformed
// lines), GEMM_TUNE=off and GEMM_BACKEND over the cache, GEMM entries in the same file, and
// gemm_tune_key / gemm_tune_verify on their keys, a wrong candidate rejected.
//
// The library reads GEMM_* and loads the tune cache once per process, so each scenario runs
// its library work in a child: this binary re-executed as `test_side_tune --side-child STEP`
// with GEMM_* cleared and the scenario's variables set. The child prints what it saw on stdout
// (one "name value" line per observation); the library's trace and warnings go to its stderr.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "omatcopy_case.hpp"
#include "spmm_case.hpp"

extern char **environ;

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

// The line of text containing all of parts, or "".
std::string line_with(const std::string &text, const std::vector<std::string> &parts) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        bool all = true;
        for (const std::string &p : parts) all = all && contains(line, p);
        if (all) return line;
    }
    return "";
}

// A folder of the scenario's own, removed after it.
class scratch {
public:
    scratch() {
        const char *tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gemm_test_side_tune_XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data())) path_ = buf.data();
        REQUIRE_MESSAGE(!path_.empty(), "mkdtemp failed for " << pattern);
    }
    ~scratch() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    scratch(const scratch &) = delete;
    scratch &operator=(const scratch &) = delete;
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

struct child_output {
    int exit_code = -1;
    std::string out, err;
};

// Runs `this binary --side-child step` with GEMM_* cleared, then env, and waits for it.
child_output run_child(const scratch &dir, const std::string &step, const std::vector<std::string> &env) {
    std::vector<std::string> strings;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "GEMM_", 5) != 0) strings.emplace_back(*e);
    strings.insert(strings.end(), env.begin(), env.end());
    std::vector<char *> envp, argv;
    for (std::string &s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = std::filesystem::read_symlink("/proc/self/exe").string(), flag = "--side-child", name = step;
    argv = {exe.data(), flag.data(), name.data(), nullptr};
    const std::string out_path = dir.file(step + ".out"), err_path = dir.file(step + ".err");
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(out >= 0);
    REQUIRE(err >= 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
        if (dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
        execve(exe.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    close(out);
    close(err);
    REQUIRE(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    child_output r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(out_path);
    r.err = read_file(err_path);
    return r;
}

// ---- the children's steps ----

// A host f32 transpose, column-major: B = op(A), checked against the test's own oracle.
void transpose_step(const char *label, gemm_op_t op, int64_t rows, int64_t cols) {
    const omatcopy_case c = make_omatcopy_case(GEMM_F32, GEMM_COL_MAJOR, op, rows, cols, 0, 1.0);
    const omatcopy_operands o = make_omatcopy_operands(c);
    bytes b = o.b0;
    const gemm_status_t s = call_omatcopy(c, o.a.data(), b.data());
    std::printf("%s status=%d result=%s\n", label, int(s), compare_b(c, b, expected_b(c, o)).empty() ? "ok" : "WRONG");
}

// The host f32 CSR product the cache's spmm entry is for: column-major NN 30 x 5 x 40.
spmm_case sparse_case() {
    spmm_case c;
    c.m = 30;
    c.n = 5;
    c.k = 40;
    c.density = 0.15;
    set_spmm_leading_dims(c, 0);
    return c;
}

// The density decade of the case's A, as the library keys it.
int sparse_decade() {
    const spmm_case c = sparse_case();
    const spmm_operands o = make_spmm_operands(c);
    return int(std::lround(std::log10(double(o.nnz()) / double(c.m * c.k))));
}

void sparse_step(const char *label) {
    const spmm_case c = sparse_case();
    const spmm_operands o = make_spmm_operands(c);
    bytes out = o.c0;
    const gemm_status_t s = call_spmm(c, o, out.data());
    std::printf("%s status=%d result=%s\n", label, int(s),
                compare_spmm(c, o, out, expected_spmm(c, o)).empty() ? "ok" : "WRONG");
}

void gemm_step() {
    std::vector<float> a(64, 0.5f), b(64, 0.25f), c(64, 0.0f);
    const gemm_status_t s =
        gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 8, 8, 1.0f, a.data(), 8, b.data(), 8, 0.0f, c.data(), 8);
    std::printf("gemm status=%d result=%s\n", int(s), c[0] == 1.0f && c[63] == 1.0f ? "ok" : "WRONG");
}

void report_step(const char *label, gemm_status_t s, const gemm_tune_report_t &r) {
    std::printf("%s status=%d\n", label, int(s));
    if (s != GEMM_STATUS_SUCCESS) {
        std::printf("%s error %s\n", label, gemm_last_error());
        return;
    }
    std::printf("%s winner=%s default=%s stored=%d\n", label, r.backend, r.default_backend, r.stored);
    for (int64_t i = 0; i < r.candidate_count; ++i)
        std::printf("%s candidate %s correct=%d note=%s\n", label, r.candidates[i].backend, r.candidates[i].correct,
                    r.candidates[i].note);
}

const char *gemm_key = "f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0";
const char *transpose_key = "omatcopy f32 T 64 48 space=host";

std::string sparse_key() {
    return "spmm_csr f32 col NN 30 5 40 density=1e" + std::to_string(sparse_decade()) + " space=host beta=0";
}

int run_step(const std::string &step) {
    gemm_tune_report_t r{};
    if (step == "seed") {  // a cache of this machine and build, with one GEMM entry
        report_step("seed", gemm_tune_key(gemm_key, -1, 5, nullptr, 1, &r), r);
    } else if (step == "calls") {
        transpose_step("hit", GEMM_OP_T, 40, 30);
        transpose_step("nearest", GEMM_OP_T, 44, 31);
        transpose_step("refused", GEMM_OP_T, 90, 70);
        transpose_step("absent", GEMM_OP_N, 90, 70);
        sparse_step("sparse");
        gemm_step();
    } else if (step == "one_call") {
        transpose_step("hit", GEMM_OP_T, 40, 30);
    } else if (step == "tune") {
        report_step("transpose", gemm_tune_key(transpose_key, -1, 20, nullptr, 1, &r), r);
        report_step("sparse", gemm_tune_key(sparse_key().c_str(), -1, 20, nullptr, 1, &r), r);
    } else if (step == "list") {
        const gemm_tune_entry_t *entries = nullptr;
        int64_t count = 0;
        std::printf("list status=%d\n", int(gemm_tune_cache_entries(&entries, &count)));
        for (int64_t i = 0; i < count; ++i) std::printf("entry %s | %s\n", entries[i].key, entries[i].backend);
    } else if (step == "wrong") {  // GEMM_TEST_TUNE_WRONG names cpu_omp
        report_step("transpose", gemm_tune_key(transpose_key, -1, 20, "cpu_ref", 0, &r), r);
        report_step("sparse", gemm_tune_key(sparse_key().c_str(), -1, 20, "cpu_ref", 0, &r), r);
    } else if (step == "refusals") {
        report_step("empty", gemm_tune_key("omatcopy f32 T 0 5 space=host", -1, 20, nullptr, 0, &r), r);
        report_step("fp8", gemm_tune_key("omatcopy e4m3 T 4 4 space=host", -1, 20, nullptr, 0, &r), r);
        report_step("device", gemm_tune_key("omatcopy f32 T 4 4 space=device", -1, 20, nullptr, 0, &r), r);
        report_step("f16_spmm",
                    gemm_tune_key("spmm_csr f16 col NN 4 4 4 density=1e0 space=host beta=0", -1, 20, nullptr, 0, &r), r);
    } else if (step == "verify") {
        gemm_tune_verdict_t v{};
        const gemm_status_t s = gemm_tune_verify("omatcopy f32 T 40 30 space=host", -1, 20, 0, &v);
        std::printf("verify status=%d\n", int(s));
        if (s == GEMM_STATUS_SUCCESS)
            std::printf("verify default=%s measured=%d median=%g default_median=%g\n", v.default_backend, v.measured,
                        v.median_us, v.default_median_us);
        else std::printf("verify error %s\n", gemm_last_error());
    } else {
        std::printf("unknown step %s\n", step.c_str());
        return 2;
    }
    return 0;
}

// ---- the scenarios ----

bool has_backend(const std::string &name) {
    for (const std::string &n : available_backends())
        if (n == name) return true;
    return false;
}

// The seeded cache: its GEMM entry edited to name cpu_ref, then entries for the calls beside
// GEMM (cpu_ref for a transpose and a sparse product; cblas, which has no transpose; a
// backend this build lacks) and malformed ones, all in this machine's section.
std::string make_cache(const scratch &dir) {
    const std::string cache = dir.file("cache.txt");
    child_output seed = run_child(dir, "seed", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TEST_TUNE_DISTURBED=never"});
    INFO(seed.out << seed.err);
    REQUIRE(contains(seed.out, "seed status=0"));
    std::string text, line;
    std::istringstream in(read_file(cache));
    while (std::getline(in, line))
        if (line.rfind(gemm_key, 0) == 0)
            text += std::string(gemm_key) + " | cpu_ref - | 1.000 us | default cpu_omp 2.000 us\n";
        else text += line + "\n";
    const std::string tail = " | 1.000 us | default cpu_omp 2.000 us\n";
    text += "omatcopy f32 T 40 30 space=host | cpu_ref -" + tail;
    text += "omatcopy f32 T 90 70 space=host | cblas -" + tail;
    text += "omatcopy f32 N 90 70 space=host | no_such_backend -" + tail;
    text += sparse_key() + " | cpu_ref -" + tail;
    text += "omatcopy f32 X 10 10 space=host | cpu_ref -" + tail;                               // no such op
    text += "spmm_csr f32 col NN 10 10 10 density=0.01 space=host beta=0 | cpu_ref -" + tail;   // density not a decade
    text += "omatcopy f32 T 10 10 space=host | cpu_ref tiles_f32_64x64" + tail;                 // a variant
    text += "spmm_csr f64 diag NN 10 10 10 density=1e-1 space=host beta=0 | cpu_ref -" + tail;  // no such layout
    write_file(cache, text);
    return cache;
}

}  // namespace

TEST_CASE("side_tune auto: entries for transposes and sparse products are taken, traced, or refused with why") {
    REQUIRE(has_backend("cpu_omp"));
    scratch dir;
    const std::string cache = make_cache(dir);
    child_output r = run_child(dir, "calls", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"});
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    for (const char *label : {"hit", "nearest", "refused", "absent", "sparse", "gemm"})
        CHECK(contains(r.out, std::string(label) + " status=0 result=ok"));
    // The exact entry, and the nearest tuned shape within a factor of 2 of it.
    CHECK(!line_with(r.err, {"backend=cpu_ref", "call=omatcopy", "rows=40 cols=30", "why=\"auto: tune cache hit\""})
               .empty());
    CHECK(!line_with(r.err,
                     {"backend=cpu_ref", "call=omatcopy", "rows=44 cols=31", "why=\"auto: nearest tuned shape 40x30\""})
               .empty());
    // cblas has no transpose: the built-in rule serves it, and the trace says why.
    const std::string refused = line_with(r.err, {"call=omatcopy", "trans=T", "rows=90 cols=70"});
    CHECK(contains(refused, "backend=cpu_omp"));
    CHECK(contains(refused, "auto: built-in rule"));
    CHECK(contains(refused, "(cached cblas not usable: "));
    // A backend this build lacks: warned when the cache loads, the built-in rule serves.
    CHECK(contains(r.err, "backend 'no_such_backend' is not in this build"));
    CHECK(!line_with(r.err, {"backend=cpu_omp", "call=omatcopy", "trans=N", "rows=90 cols=70", "auto: built-in rule"})
               .empty());
    CHECK(!line_with(r.err, {"backend=cpu_ref", "call=spmm_csr", "why=\"auto: tune cache hit\""}).empty());
    // The GEMM entry beside them still serves GEMM calls.
    CHECK(!line_with(r.err, {"backend=cpu_ref", "m=8 n=8 k=8", "auto: tune cache hit"}).empty());
    // Malformed lines: warned with their line, skipped.
    CHECK(contains(r.err, "bad problem key 'omatcopy f32 X 10 10 space=host'"));
    CHECK(contains(r.err, "bad problem key 'spmm_csr f32 col NN 10 10 10 density=0.01"));
    CHECK(contains(r.err, "bad problem key 'spmm_csr f64 diag NN"));
    CHECK(contains(r.err, "an entry of omatcopy names variant 'tiles_f32_64x64'"));
}

TEST_CASE("side_tune off_and_forced: GEMM_TUNE=off ignores the entries; GEMM_BACKEND is never overridden") {
    REQUIRE(has_backend("cpu_omp"));
    scratch dir;
    const std::string cache = make_cache(dir);
    child_output off = run_child(dir, "one_call", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=off"});
    INFO("off:\n" << off.out << off.err);
    CHECK(contains(off.out, "hit status=0 result=ok"));
    const std::string off_line = line_with(off.err, {"call=omatcopy", "rows=40 cols=30"});
    CHECK(contains(off_line, "backend=cpu_omp"));
    CHECK(contains(off_line, "auto: built-in rule"));
    child_output forced =
        run_child(dir, "one_call", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_BACKEND=cpu_omp"});
    INFO("forced:\n" << forced.out << forced.err);
    CHECK(contains(forced.out, "hit status=0 result=ok"));
    const std::string forced_line = line_with(forced.err, {"call=omatcopy", "rows=40 cols=30"});
    CHECK(contains(forced_line, "backend=cpu_omp"));
    CHECK(contains(forced_line, "forced by GEMM_BACKEND"));
}

TEST_CASE("side_tune tune: gemm_tune_key stores transpose and sparse entries that load back; bad keys are refused") {
    REQUIRE(has_backend("cpu_omp"));
    scratch dir;
    const std::string cache = dir.file("tuned.txt");
    const std::vector<std::string> env = {"GEMM_TUNE_CACHE=" + cache, "GEMM_TEST_TUNE_DISTURBED=never"};
    child_output tuned = run_child(dir, "tune", env);
    INFO("tune:\n" << tuned.out << tuned.err);
    CHECK(contains(tuned.out, "transpose status=0"));
    CHECK(contains(tuned.out, "transpose winner=cpu_omp default=cpu_omp stored=1"));
    CHECK(contains(tuned.out, "transpose candidate cpu_omp correct=1"));
    CHECK(contains(tuned.out, "sparse status=0"));
    CHECK(contains(tuned.out, "sparse winner=cpu_omp default=cpu_omp stored=1"));
    const std::string file = read_file(cache);
    CHECK(contains(file, std::string(transpose_key) + " | cpu_omp - | "));
    CHECK(contains(file, sparse_key() + " | cpu_omp - | "));
    child_output listed = run_child(dir, "list", env);
    INFO("list:\n" << listed.out << listed.err);
    CHECK(contains(listed.out, std::string("entry ") + transpose_key + " | cpu_omp"));
    CHECK(contains(listed.out, "entry " + sparse_key() + " | cpu_omp"));
    CHECK(!contains(listed.err, "warning"));
    child_output refusals = run_child(dir, "refusals", env);
    INFO("refusals:\n" << refusals.out << refusals.err);
    CHECK(contains(refusals.out, "empty status=" + std::to_string(int(GEMM_STATUS_INVALID_VALUE))));
    CHECK(contains(refusals.out, "is empty (nothing is computed): nothing to tune"));
    CHECK(contains(refusals.out, "fp8 status=" + std::to_string(int(GEMM_STATUS_INVALID_VALUE))));
    CHECK(contains(refusals.out, "device status=" + std::to_string(int(GEMM_STATUS_INVALID_VALUE))));
    CHECK(contains(refusals.out, "parameter 2: device must be a CUDA device ordinal"));
    CHECK(contains(refusals.out, "f16_spmm status=" + std::to_string(int(GEMM_STATUS_INVALID_VALUE))));
}

TEST_CASE("side_tune wrong: a candidate whose result is wrong is rejected with why, never chosen") {
    REQUIRE(has_backend("cpu_omp"));
    scratch dir;
    child_output r =
        run_child(dir, "wrong", {"GEMM_TUNE_CACHE=" + dir.file("wrong.txt"), "GEMM_TEST_TUNE_WRONG=cpu_omp"});
    INFO(r.out << r.err);
    for (const char *label : {"transpose", "sparse"}) {
        const std::string l = label;
        CHECK(contains(r.out, l + " status=0"));
        CHECK(contains(r.out, l + " winner=cpu_ref default=cpu_omp stored=0"));
        CHECK(contains(r.out, l + " candidate cpu_omp correct=0 note=wrong result"));
        CHECK(contains(r.out, l + " candidate cpu_ref correct=1"));
    }
    CHECK(contains(r.out, "a transpose must match bit for bit"));
    CHECK(contains(r.err, "tuner: cpu_omp rejected for omatcopy f32 T 64 48 space=host"));
}

TEST_CASE("side_tune verify: a stored transpose choice is measured against the built-in one") {
    REQUIRE(has_backend("cpu_omp"));
    scratch dir;
    const std::string cache = make_cache(dir);
    child_output r = run_child(dir, "verify", {"GEMM_TUNE_CACHE=" + cache});
    INFO(r.out << r.err);
    CHECK(contains(r.out, "verify status=0"));
    CHECK(contains(r.out, "verify default=cpu_omp measured=1"));
}

int main(int argc, char **argv) {
    if (argc == 3 && std::string(argv[1]) == "--side-child") {
        const int code = run_step(argv[2]);
        std::fflush(nullptr);
        return code;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
