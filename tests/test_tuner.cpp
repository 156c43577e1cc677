// test_tuner.cpp: the tuner (gemm_tune) and the tune cache: storing and hitting entries,
// corrupt, stale and unusable files, an unwritable location, two processes storing at once,
// GEMM_TUNE=off/online, GEMM_RECORD, the nearest-shape rule, and gemm_tune's argument errors.
//
// The library reads GEMM_* once per process and loads the tune cache on its first automatic
// call, so a scenario does its library work in child processes: this binary re-executes
// itself as `test_tuner --tuner-child` with the scenario's environment (GEMM_* cleared, then
// the scenario's variables) and runs the steps TUNER_STEPS lists, printing what it saw on
// stdout: statuses, the tune report, whether each result matched cpu_ref, and the stderr
// lines (trace, warnings) each step produced. The scenario, a doctest case in the parent,
// writes cache files, reads them back and checks the children's observations. Every scenario
// works in its own mkdtemp directory; CTest runs each as its own test (tests/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gemm/gemm.h"
#include "harness.hpp"

extern char **environ;

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

bool starts_with(const std::string &text, const std::string &prefix) { return text.rfind(prefix, 0) == 0; }

// One of the comment lines a store writes at the top of the file.
bool header_line(const std::string &l) {
    return starts_with(l, "# gemm tune cache:") || starts_with(l, "# <dtype A/B>") ||
           starts_with(l, "# keys are column-major") || starts_with(l, "# transposes:") ||
           starts_with(l, "# sparse:") || starts_with(l, "# backend <name> | <identity>:");
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) parts.push_back(part);
    return parts;
}

std::vector<std::string> words(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

struct shape {
    int64_t m = 0, n = 0, k = 0;
};

// "MxNxK"
shape parse_shape(const std::string &text) {
    shape s;
    char x1 = 0, x2 = 0;
    std::istringstream in(text);
    if (!(in >> s.m >> x1 >> s.n >> x2 >> s.k) || x1 != 'x' || x2 != 'x') s = {-1, -1, -1};
    return s;
}

// The tune-cache key of a column-major NN f32 call with tight leading dimensions, 16-byte
// aligned operands (every shape used here has m and k multiples of 4) and beta = 0 or not.
std::string key_text(int64_t m, int64_t n, int64_t k, bool beta_zero = true) {
    std::ostringstream s;
    s << "f32 f32 NN " << m << ' ' << n << ' ' << k
      << " batch=1 ld=tight align=16 space=host beta=" << (beta_zero ? "0" : "any");
    return s.str();
}

bool one_of(const std::string &word, std::initializer_list<const char *> choices) {
    for (const char *c : choices)
        if (word == c) return true;
    return false;
}

bool digits(const std::string &text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// "name=" followed by one of `values`.
bool flag(const std::string &word, const std::string &name, std::initializer_list<const char *> values) {
    return starts_with(word, name + "=") && one_of(word.substr(name.size() + 1), values);
}

// "<digits>.<3 digits>", as the cache writes times.
bool time_text(const std::string &text) {
    auto dot = text.find('.');
    return dot != std::string::npos && digits(text.substr(0, dot)) && text.size() == dot + 4 &&
           digits(text.substr(dot + 1));
}

bool name_text(const std::string &text, const char *also = "") {
    std::string allowed = std::string("abcdefghijklmnopqrstuvwxyz0123456789_") + also;
    return !text.empty() && text.find_first_not_of(allowed) == std::string::npos;
}

// What problem_class::to_text writes, and so what GEMM_RECORD writes and `gemm tune --shapes` reads:
// "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0", single spaces.
bool is_key_text(const std::string &text) {
    std::vector<std::string> w = words(text);
    std::string joined;
    for (const std::string &x : w) joined += (joined.empty() ? "" : " ") + x;
    if (joined != text) return false;
    // An f32 key of TF32 math ends in math=tf32.
    if (w.size() == 12 && w[11] == "math=tf32" && w[0] == "f32") w.pop_back();
    return w.size() == 11 && one_of(w[0], {"f32", "f64", "f16", "bf16"}) &&
           one_of(w[1], {"f32", "f64", "f16", "bf16"}) && one_of(w[2], {"NN", "NT", "TN", "TT"}) && digits(w[3]) &&
           digits(w[4]) && digits(w[5]) && starts_with(w[6], "batch=") && digits(w[6].substr(6)) &&
           flag(w[7], "ld", {"tight", "padded"}) && flag(w[8], "align", {"16", "elem"}) &&
           flag(w[9], "space", {"host", "device", "managed"}) && flag(w[10], "beta", {"0", "any"});
}

// One entry line of the cache file, as the library writes it:
// "<key> | <backend> <variant or -> | <t> us | default <backend> <t> us".
bool is_entry_line(const std::string &line) {
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (std::size_t at; (at = line.find(" | ", from)) != std::string::npos; from = at + 3)
        fields.push_back(line.substr(from, at - from));
    fields.push_back(line.substr(from));
    if (fields.size() != 4 || !is_key_text(fields[0])) return false;
    std::vector<std::string> choice = words(fields[1]), time = words(fields[2]), def = words(fields[3]);
    return fields[1] == (choice.size() == 2 ? choice[0] + " " + choice[1] : "") && name_text(choice[0]) &&
           name_text(choice[1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ-") &&
           fields[2] == (time.size() == 2 ? time[0] + " us" : "") && time_text(time[0]) && def.size() == 4 &&
           fields[3] == "default " + def[1] + " " + def[2] + " us" && name_text(def[1]) && time_text(def[2]);
}

// A rates line of the cache file, as the library writes it: "rates <f32|f64>", then parts
// after "|": one or more "host <backend> <x> GFLOP/s <x> us", maybe "gpu <backend> <x> GFLOP/s
// <x> GB/s <x> us", maybe "measured <x> ms".
bool is_rates_line(const std::string &line) {
    auto number = [](const std::string &x) {
        char *end = nullptr;
        double v = std::strtod(x.c_str(), &end);
        return !x.empty() && *end == '\0' && std::isfinite(v) && v >= 0;
    };
    std::vector<std::string> parts = split(line, '|');
    if (parts.size() < 2) return false;
    std::vector<std::string> head = words(parts[0]);
    if (head.size() != 2 || head[0] != "rates" || !one_of(head[1], {"f32", "f64"})) return false;
    std::size_t i = 1, hosts = 0;
    for (; i < parts.size(); ++i, ++hosts) {
        std::vector<std::string> w = words(parts[i]);
        if (w.empty() || w[0] != "host") break;
        // The bandwidth is optional: a line of the older form is kept as it was written.
        const bool bandwidth = w.size() == 8 && number(w[6]) && w[7] == "GB/s";
        if (!((w.size() == 6 || bandwidth) && name_text(w[1]) && number(w[2]) && w[3] == "GFLOP/s" && number(w[4]) &&
              w[5] == "us"))
            return false;
    }
    if (i < parts.size()) {
        std::vector<std::string> w = words(parts[i]);
        if (!w.empty() && w[0] == "gpu") {
            if (!(w.size() == 8 && name_text(w[1]) && number(w[2]) && w[3] == "GFLOP/s" && number(w[4]) &&
                  w[5] == "GB/s" && number(w[6]) && w[7] == "us"))
                return false;
            ++i;
            if (i < parts.size() && words(parts[i])[0] == "page-locked") {
                w = words(parts[i]);
                if (!(w.size() == 5 && number(w[1]) && w[2] == "GB/s" && number(w[3]) && w[4] == "us")) return false;
                ++i;
            }
        }
    }
    if (i < parts.size()) {
        std::vector<std::string> w = words(parts[i]);
        if (!(w.size() == 3 && w[0] == "measured" && number(w[1]) && w[2] == "ms")) return false;
        ++i;
    }
    return hosts >= 1 && i == parts.size();
}

// ---- the child side ------------------------------------------------------------------------

void print_stderr(const std::vector<std::string> &lines) {
    for (const std::string &l : lines) std::printf("  stderr %s\n", l.c_str());
}

// "key=value" options after a step's first two words.
std::map<std::string, std::string> options_of(const std::vector<std::string> &w) {
    std::map<std::string, std::string> o;
    for (std::size_t i = 2; i < w.size(); ++i) {
        auto eq = w[i].find('=');
        if (eq != std::string::npos) o[w[i].substr(0, eq)] = w[i].substr(eq + 1);
    }
    return o;
}

std::string option(const std::map<std::string, std::string> &o, const char *name, const char *fallback) {
    auto it = o.find(name);
    return it == o.end() ? fallback : it->second;
}

// tune MxNxK [store=0|1] [budget=MS] [backends=LIST]: gemm_tune on a column-major NN f32
// problem with beta = 0, as key_text describes it.
void child_tune(const std::vector<std::string> &w) {
    auto o = options_of(w);
    shape s = parse_shape(w[1]);
    std::string backends = option(o, "backends", "");
    gemm_tune_request_t r;
    std::memset(&r, 0, sizeof r);
    r.ab_type = GEMM_F32;
    r.c_type = GEMM_F32;
    r.layout = GEMM_COL_MAJOR;
    r.transa = GEMM_OP_N;
    r.transb = GEMM_OP_N;
    r.m = s.m;
    r.n = s.n;
    r.k = s.k;
    r.batch_count = 1;
    r.beta_zero = 1;
    r.device = -1;
    r.budget_ms = std::atof(option(o, "budget", "100").c_str());
    r.backends = backends.empty() ? nullptr : backends.c_str();
    int store = std::atoi(option(o, "store", "1").c_str());
    gemm_tune_report_t report;
    std::memset(&report, 0, sizeof report);
    stderr_capture capture;
    gemm_status_t status = gemm_tune(&r, store, &report);
    std::string error = gemm_last_error();
    std::vector<std::string> err = capture.lines();
    auto text = [](const char *p) { return std::string(!p ? "(null)" : *p ? p : "-"); };
    std::printf("tune %s status=%d stored=%d disturbed=%d backend=%s variant=%s default=%s median_us=%.6g "
                "default_median_us=%.6g candidates=%lld\n",
                w[1].c_str(), int(status), report.stored, report.disturbed, text(report.backend).c_str(),
                text(report.variant).c_str(), text(report.default_backend).c_str(), report.median_us,
                report.default_median_us, (long long)report.candidate_count);
    for (int64_t i = 0; report.candidates && i < report.candidate_count; ++i) {
        const gemm_tune_candidate_t &c = report.candidates[i];
        std::printf("  candidate %s %s correct=%d median_us=%.6g note=%s\n", text(c.backend).c_str(),
                    text(c.variant).c_str(), c.correct, c.median_us, text(c.note).c_str());
    }
    std::printf("  error %s\n", error.c_str());
    print_stderr(err);
}

// call MxNxK [beta=X] [lda=N] [ldc=N]: gemm_sgemm (column-major NN) with the automatic
// choice, then the same call on cpu_ref, compared with the harness's tolerance. Only the
// automatic call's stderr is reported.
void child_call(const std::vector<std::string> &w) {
    auto o = options_of(w);
    shape s = parse_shape(w[1]);
    gemm_case c;
    c.m = s.m;
    c.n = s.n;
    c.k = s.k;
    c.beta = std::atof(option(o, "beta", "0").c_str());
    set_leading_dims(c, 0);
    c.lda = std::atoll(option(o, "lda", std::to_string(c.lda).c_str()).c_str());
    c.ldc = std::atoll(option(o, "ldc", std::to_string(c.ldc).c_str()).c_str());
    operands ops = make_operands(c);
    run_result got;
    std::vector<std::string> err;
    {
        stderr_capture capture;
        got = run_host(c, ops);
        err = capture.lines();
    }
    bool correct = false;
    std::string mismatch;
    if (got.status == GEMM_STATUS_SUCCESS && gemm_set_backend("cpu_ref") == GEMM_STATUS_SUCCESS) {
        run_result ref = run_host(c, ops);
        gemm_set_backend(nullptr);
        if (ref.status == GEMM_STATUS_SUCCESS) {
            comparison cmp = compare_result(c, ops, got.c, window_values(c, ref.c));
            correct = cmp.ok;
            mismatch = cmp.first;
        } else {
            mismatch = "cpu_ref failed: " + ref.error;
        }
    }
    std::printf("call %s status=%d correct=%d\n", w[1].c_str(), int(got.status), correct ? 1 : 0);
    std::printf("  error %s\n", got.error.c_str());
    if (!mismatch.empty()) std::printf("  mismatch %s\n", mismatch.c_str());
    print_stderr(err);
}

// broadcast KxBATCH: gemm_sgemm_strided_batched, column-major NN, m = n = 1, k = K, alpha = 0,
// beta = 0.5, BATCH matrices sharing one A and one B (stride 0) and C = 2 each: every C must
// become 1. Cheap to call, while the tuner, which measures its classes on operands of their
// own, would need K · BATCH elements for each of A and B.
void child_broadcast(const std::vector<std::string> &w) {
    int64_t k = 0, batch = 0;
    char x = 0;
    std::istringstream in(w[1]);
    in >> k >> x >> batch;
    std::vector<float> a(std::size_t(k), 1.0f), b(std::size_t(k), 1.0f), c(std::size_t(batch), 2.0f);
    std::vector<std::string> err;
    gemm_status_t status;
    {
        stderr_capture capture;
        status = gemm_sgemm_strided_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, k, 0.0f, a.data(), 1, 0,
                                            b.data(), k, 0, 0.5f, c.data(), 1, 1, batch);
        err = capture.lines();
    }
    std::string error = status == GEMM_STATUS_SUCCESS ? "" : gemm_last_error();
    bool correct = status == GEMM_STATUS_SUCCESS && std::all_of(c.begin(), c.end(), [](float v) { return v == 1.0f; });
    std::printf("broadcast %s status=%d correct=%d\n", w[1].c_str(), int(status), correct ? 1 : 0);
    std::printf("  error %s\n", error.c_str());
    print_stderr(err);
}

// entries: gemm_tune_cache_entries, each entry on a line of its own.
void child_entries() {
    const gemm_tune_entry_t *entries = nullptr;
    int64_t count = -1;
    gemm_status_t status = gemm_tune_cache_entries(&entries, &count);
    std::printf("entries - status=%d count=%lld\n", int(status), (long long)count);
    for (int64_t i = 0; status == GEMM_STATUS_SUCCESS && i < count; ++i)
        std::printf("  entry %s | %s %s | %.3f | %s %.3f\n", entries[i].key, entries[i].backend,
                    *entries[i].variant ? entries[i].variant : "-", entries[i].median_us, entries[i].default_backend,
                    entries[i].default_median_us);
    std::printf("  error %s\n", status == GEMM_STATUS_SUCCESS ? "" : gemm_last_error());
}

// rates: gemm_tune_cache_rates, each type's rates on a line of its own (the host backends as
// name:gflops:fixed_us:gbs); then its NULL arguments.
void child_rates() {
    const gemm_host_rates_t *rates = nullptr;
    int64_t count = -1;
    gemm_status_t status = gemm_tune_cache_rates(&rates, &count);
    std::printf("rates - status=%d count=%lld null_rates=%d null_count=%d\n", int(status), (long long)count,
                int(gemm_tune_cache_rates(nullptr, &count)), int(gemm_tune_cache_rates(&rates, nullptr)));
    for (int64_t i = 0; status == GEMM_STATUS_SUCCESS && i < count; ++i) {
        std::printf("  entry %s %s %g %s %g %g %g hosts", rates[i].type == GEMM_F64 ? "f64" : "f32",
                    rates[i].host_backend, rates[i].host_gflops, rates[i].gpu_backend, rates[i].gpu_gflops,
                    rates[i].link_gbs, rates[i].gpu_fixed_us);
        for (int64_t h = 0; h < rates[i].host_count; ++h)
            std::printf(" %s:%g:%g:%g", rates[i].hosts[h].backend, rates[i].hosts[h].gflops, rates[i].hosts[h].fixed_us,
                        rates[i].hosts[h].gbs);
        std::printf(" measured %g\n", rates[i].measured_ms);
    }
    std::printf("  error %s\n", status == GEMM_STATUS_SUCCESS ? "" : gemm_last_error());
}

// verify MxNxK [remove=0|1] [budget=MS] [tf32=1]: gemm_tune_verify on key_text(M, N, K) (with
// " math=tf32" for tf32=1); with MxNxK "null", a NULL key, and "garbage", a key that does not
// parse.
void child_verify(const std::vector<std::string> &w) {
    auto o = options_of(w);
    shape s = parse_shape(w[1]);
    std::string key = key_text(s.m, s.n, s.k) + (option(o, "tf32", "0") == "1" ? " math=tf32" : "");
    const char *key_arg = w[1] == "null" ? nullptr : w[1] == "garbage" ? "f32 f32 NN 1 2" : key.c_str();
    gemm_tune_verdict_t v;
    std::memset(&v, 0, sizeof v);
    stderr_capture capture;
    gemm_status_t status = gemm_tune_verify(key_arg, 0, std::atof(option(o, "budget", "100").c_str()),
                                            std::atoi(option(o, "remove", "0").c_str()), &v);
    std::string error = status == GEMM_STATUS_SUCCESS ? "" : gemm_last_error();
    std::vector<std::string> err = capture.lines();
    std::printf("verify %s status=%d measured=%d holds=%d removed=%d disturbed=%d default=%s median_us=%.6g "
                "default_median_us=%.6g\n",
                w[1].c_str(), int(status), v.measured, v.holds, v.removed, v.disturbed,
                v.default_backend ? v.default_backend : "(null)", v.median_us, v.default_median_us);
    std::printf("  note %s\n", v.note ? v.note : "(null)");
    std::printf("  error %s\n", error.c_str());
    print_stderr(err);
}

// wait FILE: until FILE exists (at most 30 s), so that the parent can prepare the scratch
// directory for this very process (a name with its pid in it) before the next step.
void child_wait(const std::string &path) {
    for (int i = 0; i < 3000 && access(path.c_str(), F_OK) != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::printf("wait %s\n", path.c_str());
}

int run_child() {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *steps = std::getenv("TUNER_STEPS");
    if (!steps) return 2;
    for (const std::string &text : split(steps, ';')) {
        std::vector<std::string> w = words(text);
        if (w.empty()) continue;
        if (w[0] == "path") std::printf("path %s\n", gemm_tune_cache_path());
        else if (w[0] == "tune" && w.size() >= 2) child_tune(w);
        else if (w[0] == "call" && w.size() >= 2) child_call(w);
        else if (w[0] == "broadcast" && w.size() >= 2) child_broadcast(w);
        else if (w[0] == "wait" && w.size() >= 2) child_wait(w[1]);
        else if (w[0] == "entries") child_entries();
        else if (w[0] == "rates") child_rates();
        else if (w[0] == "verify" && w.size() >= 2) child_verify(w);
        else return std::fprintf(stderr, "test_tuner: unknown step '%s'\n", text.c_str()), 2;
    }
    return 0;
}

// ---- the parent side: scratch directories, children, their observations -------------------

// Where scratch directories are made: TMPDIR, else /tmp.
std::string scratch_base() {
    const char *tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

// A fresh directory for one scenario's files, removed with everything in it afterwards.
class scratch_dir {
public:
    scratch_dir() {
        std::string pattern = scratch_base() + "/gemm_test_tuner_XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data())) path_ = buf.data();
        REQUIRE_MESSAGE(!path_.empty(), "mkdtemp failed for " << pattern);
    }
    ~scratch_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    scratch_dir(const scratch_dir &) = delete;
    scratch_dir &operator=(const scratch_dir &) = delete;

    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

std::string read_text(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> read_lines(const std::string &path) {
    std::vector<std::string> lines;
    std::ifstream in(path, std::ios::binary);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

void write_text(const std::string &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    REQUIRE_MESSAGE(bool(out), "cannot write " << path);
}

bool file_exists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

struct candidate_seen {
    std::string backend, variant;
    bool correct = false;
    double median_us = 0;
};

// One step a child ran, as it printed it.
struct step_seen {
    std::string verb, arg;
    std::map<std::string, std::string> field;
    std::vector<candidate_seen> candidates;
    std::string error, mismatch, note;
    std::vector<std::string> entries;  // "key | backend variant | us | default us", of `entries`
    std::vector<std::string> err;      // the library's stderr during the step

    std::string get(const std::string &name) const {
        auto it = field.find(name);
        return it == field.end() ? "" : it->second;
    }
    int status() const { return get("status").empty() ? -1 : std::atoi(get("status").c_str()); }
    bool correct() const { return get("correct") == "1"; }

    // The GEMM_VERBOSE=1 trace line, or "".
    std::string trace() const {
        for (const std::string &l : err)
            if (contains(l, " backend=") && contains(l, " why=\"")) return l;
        return "";
    }
    std::string why() const {
        std::string t = trace();
        auto at = t.find(" why=\"");
        if (at == std::string::npos) return "";
        at += 6;
        return t.substr(at, t.find('"', at) - at);
    }
    std::string traced_backend() const {
        for (const std::string &w : words(trace()))
            if (starts_with(w, "backend=")) return w.substr(8);
        return "";
    }
    std::vector<std::string> warnings() const {
        std::vector<std::string> out;
        for (const std::string &l : err)
            if (contains(l, "[warning]")) out.push_back(l);
        return out;
    }
    bool warned(const std::string &part) const {
        for (const std::string &w : warnings())
            if (contains(w, part)) return true;
        return false;
    }
};

struct child_result {
    std::string label;
    int exit_code = -1;  // 128 + signal when killed, -1 when it never ran
    std::string out, err;
    std::vector<step_seen> steps;

    bool ok() const { return exit_code == 0; }
    // Everything a failure needs to be understood, for INFO.
    std::string report() const {
        std::ostringstream s;
        s << "child '" << label << "' exit " << exit_code << "\n--- its stdout:\n" << out << "--- its stderr:\n" << err;
        return s.str();
    }
    // Steps with this verb, in order.
    std::vector<step_seen> of(const std::string &verb) const {
        std::vector<step_seen> out_steps;
        for (const step_seen &s : steps)
            if (s.verb == verb) out_steps.push_back(s);
        return out_steps;
    }
};

std::vector<step_seen> parse_steps(const std::string &out) {
    std::vector<step_seen> steps;
    for (const std::string &line : split(out, '\n')) {
        if (starts_with(line, "  ")) {
            if (steps.empty()) continue;
            step_seen &s = steps.back();
            std::string rest = line.substr(2);
            if (starts_with(rest, "stderr ")) s.err.push_back(rest.substr(7));
            else if (starts_with(rest, "error ")) s.error = rest.substr(6);
            else if (starts_with(rest, "mismatch ")) s.mismatch = rest.substr(9);
            else if (starts_with(rest, "note ")) s.note = rest.substr(5);
            else if (starts_with(rest, "entry ")) s.entries.push_back(rest.substr(6));
            else if (starts_with(rest, "candidate ")) {
                std::vector<std::string> w = words(rest);
                candidate_seen c;
                if (w.size() >= 5) {
                    c.backend = w[1];
                    c.variant = w[2];
                    c.correct = w[3] == "correct=1";
                    c.median_us = std::atof(w[4].substr(w[4].find('=') + 1).c_str());
                }
                s.candidates.push_back(c);
            }
            continue;
        }
        std::vector<std::string> w = words(line);
        if (w.size() < 2) continue;
        step_seen s;
        s.verb = w[0];
        s.arg = w[1];
        s.field = options_of(w);
        steps.push_back(s);
    }
    return steps;
}

std::string self_path() {
    std::vector<char> buf(4096);
    ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    return n > 0 ? std::string(buf.data(), std::size_t(n)) : "";
}

// How a child runs besides its environment.
struct child_options {
    rlim_t file_size_limit = RLIM_INFINITY;  // RLIMIT_FSIZE in bytes (ulimit -f)
    bool unprivileged = false;               // as user nobody when the parent is root
};

// ---- children as user nobody ----------------------------------------------------------------
// Root gets past permissions, so a scenario about them runs its children as user nobody. nobody
// must then reach the test binary and its libraries, which a checkout under /root or in a 0700
// folder hides from it: those are copied to a folder nobody can reach and run from there. Where
// even that fails, the scenario is skipped with the reason, never failed.

constexpr uid_t nobody_uid = 65534;

// After fork: only async-signal-safe calls.
void become_nobody() {
    if (setgroups(0, nullptr) != 0 || setgid(nobody_uid) != 0 || setuid(nobody_uid) != 0) _exit(124);
}

// For each (path, access mode), whether user nobody has that access, asked of a child that
// became nobody (access() answers for the real user).
std::vector<bool> nobody_may(const std::vector<std::pair<std::string, int>> &checks) {
    std::vector<bool> may(checks.size(), false);
    int fds[2];
    if (pipe(fds) != 0) return may;
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        become_nobody();
        for (const auto &[path, mode] : checks) {
            const char answer = access(path.c_str(), mode) == 0 ? '1' : '0';
            if (write(fds[1], &answer, 1) != 1) _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    char answer;
    for (std::size_t i = 0; pid > 0 && i < may.size() && read(fds[0], &answer, 1) == 1; ++i) may[i] = answer == '1';
    close(fds[0]);
    if (pid > 0) waitpid(pid, nullptr, 0);
    return may;
}

// The shared libraries this process has mapped, by path.
std::vector<std::string> mapped_libraries() {
    std::set<std::string> found;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        const std::size_t slash = line.find('/');
        if (slash == std::string::npos) continue;
        std::string path = line.substr(slash);
        if (path.find(".so") != std::string::npos && path.find(" (deleted)") == std::string::npos) found.insert(path);
    }
    return {found.begin(), found.end()};
}

// The test binary as user nobody can run it: itself where nobody reaches it, else a copy (with
// the libraries nobody cannot read) in a folder under TMPDIR, /tmp or /var/tmp that nobody can
// search; removed when the process ends.
class nobody_executable {
public:
    nobody_executable() {
        const std::string self = self_path();
        std::vector<std::string> libraries = mapped_libraries();
        std::vector<std::pair<std::string, int>> checks = {{self, R_OK | X_OK}};
        for (const std::string &l : libraries) checks.push_back({l, R_OK});
        std::vector<bool> may = nobody_may(checks);
        if (may[0] && std::all_of(may.begin(), may.end(), [](bool b) { return b; })) {
            exe_ = self;
            return;
        }
        if (!make_folder()) return;
        for (std::size_t i = 0; i < checks.size(); ++i)
            if (!may[i] && !copy_in(checks[i].first)) return;
        const std::string copy = folder_ + "/" + std::filesystem::path(self).filename().string();
        if (!nobody_may({{copy, R_OK | X_OK}})[0]) {
            problem_ = "user nobody cannot run " + copy + " (a copy of this test)";
            return;
        }
        exe_ = copy;
        library_path_ = folder_;
    }
    ~nobody_executable() {
        std::error_code ignored;
        if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
    }
    nobody_executable(const nobody_executable &) = delete;
    nobody_executable &operator=(const nobody_executable &) = delete;

    const std::string &exe() const { return exe_; }                    // "" where none
    const std::string &library_path() const { return library_path_; }  // "" where no copy was needed
    const std::string &problem() const { return problem_; }            // why there is none

private:
    // Copies file into the folder, with the links beside it that lead to it under their names
    // too: the loader looks a library up by its soname (libgemm.so.0), a link to the file
    // mapped (libgemm.so.0.1.0).
    bool copy_in(const std::string &file) {
        namespace fs = std::filesystem;
        std::error_code error;
        const fs::path from(file);
        const std::string copy = folder_ + "/" + from.filename().string();
        if (!fs::copy_file(from, copy, error) || chmod(copy.c_str(), 0755) != 0) {
            problem_ = "cannot copy " + file + " to " + folder_ + ": " + error.message();
            return false;
        }
        for (const fs::directory_entry &e : fs::directory_iterator(from.parent_path(), error)) {
            std::error_code ignored;
            if (e.is_symlink(ignored) && fs::equivalent(e.path(), from, ignored))
                fs::create_symlink(from.filename(), folder_ + "/" + e.path().filename().string(), ignored);
        }
        return true;
    }

    bool make_folder() {
        std::vector<std::string> bases = {"/tmp", "/var/tmp"};
        if (const char *tmp = std::getenv("TMPDIR"); tmp && *tmp) bases.insert(bases.begin(), tmp);
        for (const std::string &base : bases) {
            std::string pattern = base + "/gemm_test_tuner_nobody_XXXXXX";
            if (!mkdtemp(pattern.data())) continue;
            if (chmod(pattern.c_str(), 0755) == 0 && nobody_may({{pattern, X_OK}})[0]) {
                folder_ = pattern;
                return true;
            }
            rmdir(pattern.c_str());
        }
        problem_ = "user nobody cannot reach this test binary, and no folder it can reach takes a copy "
                   "(TMPDIR, /tmp, /var/tmp)";
        return false;
    }

    std::string exe_, library_path_, problem_, folder_;
};

const nobody_executable &executable_for_nobody() {
    static const nobody_executable made;
    return made;
}

// Ends this test process as skipped: exit 77 (the tuner tests' SKIP_RETURN_CODE), the reason on
// stdout and in the file GEMM_TEST_SKIP_REASON_FILE names, which ctest prints after its
// summary (tests/CMakeLists.txt). Called before a scenario makes anything.
[[noreturn]] void skip_scenario(const std::string &reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    if (const char *file = std::getenv("GEMM_TEST_SKIP_REASON_FILE"); file && *file)
        std::ofstream(file) << reason << "\n";
    std::fflush(nullptr);
    std::_Exit(77);
}

// For a scenario whose children run as nobody: skipped where nobody could not run them, or
// could not reach the scratch folders (under TMPDIR or /tmp).
void require_nobody_can_run(const std::string &scratch_base) {
    if (geteuid() != 0) return;  // the children run as this user
    if (!executable_for_nobody().problem().empty()) skip_scenario(executable_for_nobody().problem());
    if (!nobody_may({{scratch_base, X_OK}})[0]) skip_scenario("user nobody cannot reach " + scratch_base);
}

// After fork, before exec: only async-signal-safe calls.
void apply_child_options(const child_options &o) {
    if (o.file_size_limit != RLIM_INFINITY) {
        struct rlimit limit = {o.file_size_limit, o.file_size_limit};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    }
    if (o.unprivileged && geteuid() == 0) become_nobody();
}

// A child running TUNER_STEPS, its environment the parent's without any GEMM_* or TUNER_*
// variable, plus `env`.
class child_process {
public:
    child_process(const scratch_dir &dir, std::string label, const std::vector<std::string> &env,
                  const std::string &steps, const child_options &options = {}) {
        result_.label = std::move(label);
        out_path_ = dir.file(result_.label + ".stdout");
        err_path_ = dir.file(result_.label + ".stderr");
        const bool as_nobody = options.unprivileged && geteuid() == 0;
        std::string exe = as_nobody ? executable_for_nobody().exe() : self_path();
        REQUIRE_MESSAGE(!exe.empty(), executable_for_nobody().problem());
        std::string library_path = as_nobody ? executable_for_nobody().library_path() : "";
        std::vector<std::string> env_strings;
        // A variable env sets replaces the parent's (OMP_NUM_THREADS): the first of a name wins.
        auto set_by_env = [&env](const char *var) {
            const std::string name = std::string(var).substr(0, std::string(var).find('=') + 1);
            return std::any_of(env.begin(), env.end(), [&](const std::string &e) { return starts_with(e, name); });
        };
        for (char **e = environ; *e; ++e) {
            if (!library_path.empty() && starts_with(*e, "LD_LIBRARY_PATH="))
                library_path += ":" + std::string(*e + 16);
            else if (!starts_with(*e, "GEMM_") && !starts_with(*e, "TUNER_") && !set_by_env(*e))
                env_strings.push_back(*e);
        }
        if (!library_path.empty()) env_strings.push_back("LD_LIBRARY_PATH=" + library_path);
        env_strings.insert(env_strings.end(), env.begin(), env.end());
        // Scenarios that store must store on a busy machine too: only the one about
        // disturbed timings lets them count.
        if (!set_by_env("GEMM_TEST_TUNE_DISTURBED=")) env_strings.push_back("GEMM_TEST_TUNE_DISTURBED=never");
        env_strings.push_back("TUNER_STEPS=" + steps);
        std::vector<char *> envp, argv;
        for (std::string &s : env_strings) envp.push_back(s.data());
        envp.push_back(nullptr);
        std::string flag = "--tuner-child";
        argv = {exe.data(), flag.data(), nullptr};
        int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        REQUIRE(out >= 0);
        REQUIRE(err >= 0);
        std::fflush(nullptr);
        pid_ = fork();
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            if (dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
            apply_child_options(options);
            execve(exe.c_str(), argv.data(), envp.data());
            _exit(127);
        }
        close(out);
        close(err);
        REQUIRE_MESSAGE(pid_ > 0, "fork failed: " << std::strerror(errno));
    }
    ~child_process() {
        if (pid_ > 0) wait();
    }
    child_process(const child_process &) = delete;
    child_process &operator=(const child_process &) = delete;

    pid_t pid() const { return pid_; }

    // Waits for the child (killing it after a minute: a hung child is a failure, not a hung
    // suite) and returns what it printed.
    child_result wait() {
        if (pid_ > 0) {
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            int status = 0;
            pid_t done = 0;
            while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            if (done == 0) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &status, 0);
                result_.err = "(killed after 60 s)\n";
            }
            pid_ = -1;
            result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            result_.out = read_text(out_path_);
            result_.err += read_text(err_path_);
            result_.steps = parse_steps(result_.out);
        }
        return result_;
    }

private:
    pid_t pid_ = -1;
    std::string out_path_, err_path_;
    child_result result_;
};

child_result run_child(const scratch_dir &dir, const std::string &label, const std::vector<std::string> &env,
                       const std::string &steps, const child_options &options = {}) {
    child_process child(dir, label, env, steps, options);
    return child.wait();
}

bool available_backend(const std::string &name) {
    for (const backend_entry &b : all_backends())
        if (b.name == name && b.available) return true;
    return false;
}

// What the built-in rule picks for a host f32 problem without rates (GEMM_TUNE=off): the
// first available of its preference order (our own cpu_omp first).
std::string preferred_host_backend() {
    for (const char *name : {"cpu_omp", "cblas", "cpu_ref"})
        if (available_backend(name)) return name;
    return "";
}

// Whether the built-in rule may pick name for an untuned host f32 problem: any available
// host backend but the reference. Which one a child takes depends on the rates it measured
// on its first such call; tuner rates checks the rule's choice with rates written into the
// cache.
bool builtin_host(const std::string &name) { return (name == "cpu_omp" || name == "cblas") && available_backend(name); }

std::string numbered(const std::vector<std::string> &lines) {
    std::ostringstream s;
    for (std::size_t i = 0; i < lines.size(); ++i) s << (i + 1) << ": " << lines[i] << "\n";
    return s.str();
}

// The "[machine] ..." line of this machine, build and thread count: the section a child
// of this process writes, read back from a file one tune stored.
std::string this_machine_line(const scratch_dir &dir) {
    std::string cache = dir.file("fingerprint-cache.txt");
    child_result r = run_child(dir, "fingerprint", {"GEMM_TUNE_CACHE=" + cache}, "tune 8x8x8 budget=5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    REQUIRE(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    std::string found;
    for (const std::string &l : read_lines(cache))
        if (starts_with(l, "[machine] ")) found = l;
    REQUIRE_MESSAGE(!found.empty(), "no [machine] line in " << read_text(cache));
    std::remove(cache.c_str());
    return found;
}

// The head of this machine's section as a child with env writes it: its "[machine]" line and
// the "backend <name> | <identity>" lines a store records before its entries.
std::vector<std::string> section_head(const scratch_dir &dir, const std::vector<std::string> &env) {
    std::string cache = dir.file("head-cache.txt");
    std::vector<std::string> child_env = env;
    child_env.push_back("GEMM_TUNE_CACHE=" + cache);
    child_result r = run_child(dir, "head", child_env, "tune 8x8x8 budget=5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    REQUIRE(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    std::vector<std::string> head;
    for (const std::string &l : read_lines(cache))
        if (starts_with(l, "[machine] ") || starts_with(l, "backend ")) head.push_back(l);
    std::remove(cache.c_str());
    REQUIRE_MESSAGE(head.size() >= 2, "no [machine] and backend lines in the file");
    return head;
}

// The recorded identity of backend in a section head, "" when it records none.
std::string recorded_identity(const std::vector<std::string> &head, const std::string &backend) {
    for (const std::string &l : head)
        if (starts_with(l, "backend " + backend + " | "))
            return l.substr(std::string("backend " + backend + " | ").size());
    return "";
}

std::string joined_lines(const std::vector<std::string> &lines) {
    std::string text;
    for (const std::string &l : lines) text += l + "\n";
    return text;
}

std::vector<std::string> entry_lines_for(const std::vector<std::string> &lines, const std::string &key) {
    std::vector<std::string> out;
    for (const std::string &l : lines)
        if (starts_with(l, key + " | ")) out.push_back(l);
    return out;
}

int count_prefix(const std::vector<std::string> &lines, const std::string &prefix) {
    int n = 0;
    for (const std::string &l : lines) n += starts_with(l, prefix) ? 1 : 0;
    return n;
}

// True when `block` appears in `lines` as consecutive lines.
bool has_block(const std::vector<std::string> &lines, const std::vector<std::string> &block) {
    for (std::size_t i = 0; i + block.size() <= lines.size(); ++i)
        if (std::equal(block.begin(), block.end(), lines.begin() + std::ptrdiff_t(i))) return true;
    return false;
}

// Every line after this machine's "[machine]" line, up to the next section, is a well-formed
// entry or rates line; returns the ones that are not.
std::vector<std::string> malformed_entries(const std::vector<std::string> &lines, const std::string &machine) {
    std::vector<std::string> bad;
    bool mine = false;
    for (const std::string &l : lines) {
        if (starts_with(l, "[machine] ")) {
            mine = l == machine;
            continue;
        }
        if (mine && !l.empty() && l[0] != '#' && !is_entry_line(l) && !is_rates_line(l) && !starts_with(l, "backend "))
            bad.push_back(l);
    }
    return bad;
}

// A trace line that says the built-in rule chose, because the shape is not in the cache.
void check_builtin_untuned(const step_seen &s) {
    INFO("trace: " << s.trace());
    CHECK(builtin_host(s.traced_backend()));
    CHECK(contains(s.why(), "built-in rule"));
    CHECK(contains(s.why(), "(shape not tuned)"));
}

// A call served through the nearest tuned shape, 64x64x64, by the backend tuned for it.
void check_nearest_64(const step_seen &s, const std::string &tuned) {
    INFO("trace: " << s.trace());
    CHECK(s.why() == "auto: nearest tuned shape 64x64x64");
    CHECK(s.traced_backend() == tuned);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::string(argv[1]) == "--tuner-child") return run_child();
    doctest::Context context(argc, argv);
    return context.run();
}

// ---- 0. the format checks the scenarios rely on -------------------------------------------

TEST_CASE("tuner format_checker: is_key_text and is_entry_line accept the cache format and nothing else") {
    const std::string key = "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0";
    CHECK(is_key_text(key));
    CHECK(is_key_text("bf16 f32 TN 1 2 3 batch=4 ld=padded align=elem space=device beta=any"));
    CHECK(is_key_text(key + " math=tf32"));
    for (const char *bad : {"bf16 f32 TN 1 2 3 batch=4 ld=padded align=elem space=device beta=any math=tf32",
                            "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0 math=f32",
                            "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host",
                            "f32 f32 NN 64 64 64 batch=1x "
                            "ld=tight align=16 space=host beta=0",
                            "f32 f32 NC 64 64 64 batch=1 ld=tight align=16 "
                            "space=host beta=0",
                            "f32  f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0",
                            "f32 f32 NN -1 64 64 batch=1 ld=tight align=16 space=host beta=0", ""}) {
        INFO(bad);
        CHECK_FALSE(is_key_text(bad));
    }
    CHECK(is_entry_line(key + " | cpu_omp avx2_f32_16x6 | 12.618 us | default cblas 16.002 us"));
    CHECK(is_entry_line(key + " | cblas - | 1.000 us | default cblas 1.000 us"));
    for (const std::string &bad :
         {key + " | cpu_omp", key + " | cblas - | 1.0 us | default cblas 1.000 us",
          key + " | cblas - | abc us | default cblas 1.000 us",
          key + " | cblas - x | 1.000 us | default cblas 1.000 us", key + " | cblas - | 1.000 us | cblas 1.000 us",
          key + " | cblas - | 1.000 us | default cblas 1.000 us | extra"}) {
        INFO(bad);
        CHECK_FALSE(is_entry_line(bad));
    }
}

// ---- 1. store, then hit ----------------------------------------------------------------------

TEST_CASE("tuner store_and_hit: gemm_tune stores one entry; later calls and processes hit it") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string key = key_text(64, 64, 64);
    REQUIRE(!preferred_host_backend().empty());

    child_result tuning = run_child(dir, "tune", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                                    "path; tune 64x64x64 budget=200; call 64x64x64");
    INFO(tuning.report());
    REQUIRE(tuning.ok());
    REQUIRE(tuning.steps.size() == 3);
    CHECK(tuning.steps[0].arg == cache);  // gemm_tune_cache_path() is GEMM_TUNE_CACHE

    const step_seen &t = tuning.steps[1];
    REQUIRE(t.status() == GEMM_STATUS_SUCCESS);
    CHECK(t.error.empty());
    CHECK(t.get("stored") == "1");
    CHECK(builtin_host(t.get("default")));
    CHECK(std::atoll(t.get("candidates").c_str()) == int64_t(t.candidates.size()));
    CHECK(t.candidates.size() >= 2);  // the built-in choice and at least one other
    bool winner_listed = false, default_listed = false;
    for (const candidate_seen &c : t.candidates) {
        INFO("candidate " << c.backend << " " << c.variant);
        CHECK(c.correct);
        CHECK(c.median_us > 0);
        CHECK(c.backend != "cpu_ref");  // the reference loop is never timed unless asked for
        winner_listed |= c.backend == t.get("backend") && c.variant == t.get("variant");
        default_listed |= c.backend == t.get("default") && c.variant == "-";
    }
    CHECK(winner_listed);
    CHECK(default_listed);
    double winner_us = std::atof(t.get("median_us").c_str()), default_us = std::atof(t.get("default_median_us").c_str());
    CHECK(winner_us > 0);
    CHECK(default_us > 0);
    if (t.get("backend") == t.get("default") && t.get("variant") == "-") CHECK(winner_us == default_us);
    else CHECK(winner_us * 1.02 < default_us);  // a winner beats the default by more than 2%

    // A later call in the same process finds the entry the tune stored.
    const step_seen &same = tuning.steps[2];
    CHECK(same.status() == GEMM_STATUS_SUCCESS);
    CHECK(same.correct());
    CHECK(same.why() == "auto: tune cache hit");
    CHECK(same.traced_backend() == t.get("backend"));

    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    CHECK(count_prefix(lines, "[machine] ") == 1);
    std::vector<std::string> entries = entry_lines_for(lines, key);
    REQUIRE(entries.size() == 1);
    CHECK(is_entry_line(entries[0]));
    CHECK(starts_with(entries[0], key + " | " + t.get("backend") + " " + t.get("variant") + " | "));
    CHECK(contains(entries[0], "| default " + t.get("default") + " "));
    for (const std::string &l :
         lines)  // nothing but comments, the section, identities, the rates the tune measured and the entry
        CHECK((l.empty() || l[0] == '#' || starts_with(l, "[machine] ") || starts_with(l, "backend ") ||
               is_rates_line(l) || l == entries[0]));

    // A new process loads the file: a hit with the cached backend, and correct results.
    child_result later =
        run_child(dir, "later", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64; call 64x64x64");
    INFO(later.report());
    REQUIRE(later.ok());
    REQUIRE(later.steps.size() == 2);
    for (const step_seen &s : later.steps) {
        INFO("trace: " << s.trace());
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
        CHECK(s.why() == "auto: tune cache hit");
        CHECK(s.traced_backend() == t.get("backend"));
        if (t.get("variant") != "-") CHECK(contains(s.trace(), " variant=" + t.get("variant") + " "));
        CHECK(s.warnings().empty());
    }
}

// ---- 2. a corrupt file ---------------------------------------------------------------------

TEST_CASE("tuner corrupt_file: bad lines are skipped with a warning naming file and line; a store keeps the rest") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    std::string k64 = key_text(64, 64, 64);
    const std::vector<std::string> other = {
        "[machine] another box; cpu Imaginary 9000; hardware threads 512",
        key_text(100, 100, 100) + " | cblas - | 5.000 us | default cblas 5.000 us",
    };
    const std::string valid = key_text(8, 8, 8) + " | cpu_ref - | 1.000 us | default cblas 2.000 us";
    // Every damaged line names cpu_ref for 64x64x64: if one were used, the trace would say so.
    std::vector<std::string> file = {
        "# hand-edited, then damaged",                              // 1
        other[0],                                                   // 2
        other[1],                                                   // 3
        "",                                                         // 4
        mine,                                                       // 5
        "this line is not an entry",                                // 6
        k64 + " | cpu_ref",                                         // 7 truncated
        k64 + " | cpu_ref - | abc us | default cblas 1.000 us",     // 8
        k64 + " | cpu_ref - | -3.000 us | default cblas 1.000 us",  // 9
        "f32 f32 NN 64 sixty-four 64 batch=1 ld=tight align=16 space=host beta=0 | cpu_ref - | 1.000 us | "
        "default cblas 1.000 us",                                         // 10
        k64 + " | cpu_ref - | 1.000 us | default cblas 1e999 us",         // 11
        std::string("\x01\x02\x7f\xff\xfe binary \x80") + '\0' + "junk",  // 12
        valid,                                                            // 13
        "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=ho",         // 14, cut short
    };
    std::string text;
    for (std::size_t i = 0; i < file.size(); ++i) text += file[i] + (i + 1 < file.size() ? "\n" : "");
    write_text(cache, text);

    child_result r = run_child(dir, "corrupt", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; call 8x8x8; tune 32x32x32 budget=50; call 32x32x32");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 4);
    const step_seen &first = r.steps[0];  // the call that loads the cache
    CHECK(first.status() == GEMM_STATUS_SUCCESS);
    CHECK(first.correct());
    check_builtin_untuned(first);
    for (int line : {6, 7, 8, 9, 10, 11, 12, 14}) {
        INFO("line " << line);
        CHECK(first.warned(cache + ":" + std::to_string(line) + ":"));
    }
    for (int line : {1, 2, 3, 4, 5, 13}) {
        INFO("line " << line);
        CHECK_FALSE(first.warned(cache + ":" + std::to_string(line) + ":"));
    }
    CHECK(first.warnings().size() == 8);
    // A damaged line is quoted with every byte but printable ASCII escaped: no control
    // sequence reaches the terminal.
    CHECK(first.warned("\\x01\\x02\\x7f\\xff\\xfe binary \\x80\\x00junk"));
    for (const std::string &w : first.warnings()) {
        INFO("warning: " << w);
        CHECK(std::all_of(w.begin(), w.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    }

    const step_seen &valid_hit = r.steps[1];  // the valid line after the damage is still used
    CHECK(valid_hit.status() == GEMM_STATUS_SUCCESS);
    CHECK(valid_hit.correct());
    CHECK(valid_hit.why() == "auto: tune cache hit");
    CHECK(valid_hit.traced_backend() == "cpu_ref");
    CHECK(r.steps[2].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[2].get("stored") == "1");
    CHECK(r.steps[3].why() == "auto: tune cache hit");
    for (std::size_t i = 1; i < r.steps.size(); ++i) CHECK(r.steps[i].warnings().empty());  // loaded once

    // The rewrite keeps the other machine's section and the valid entry, adds the new one,
    // and leaves a file that loads without a warning.
    std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the store:\n" << numbered(after));
    CHECK(has_block(after, other));
    CHECK(count_prefix(after, mine) == 1);
    CHECK(count_prefix(after, "[machine] ") == 2);
    CHECK(std::count(after.begin(), after.end(), valid) == 1);
    CHECK(entry_lines_for(after, key_text(32, 32, 32)).size() == 1);
    CHECK(malformed_entries(after, mine).empty());

    child_result clean =
        run_child(dir, "reload", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 8x8x8; call 32x32x32");
    INFO(clean.report());
    REQUIRE(clean.ok());
    REQUIRE(clean.steps.size() == 2);
    for (const step_seen &s : clean.steps) {
        CHECK(s.warnings().empty());
        CHECK(s.why() == "auto: tune cache hit");
        CHECK(s.correct());
    }
    CHECK(!contains(clean.err, "[warning]"));
}

// Two entries of one problem: the later is used, with a warning naming both lines; a store
// leaves one.
TEST_CASE(
    "tuner duplicate_entries: the later of two entries of one problem is used, said, and a store keeps it alone") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    std::string k64 = key_text(64, 64, 64);
    const std::string later = k64 + " | cpu_ref - | 1.000 us | default cblas 2.000 us";
    write_text(cache, mine + "\n" + k64 + " | cpu_omp - | 1.000 us | default cblas 2.000 us\n" + later + "\n");
    child_result r = run_child(dir, "duplicate", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; tune 32x32x32 budget=50");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    const step_seen &first = r.steps[0];
    CHECK(first.correct());
    CHECK(first.why() == "auto: tune cache hit");
    CHECK(first.traced_backend() == "cpu_ref");
    CHECK(first.warned(cache + ":3: supersedes line 2"));
    CHECK(first.warnings().size() == 1);
    CHECK(r.steps[1].get("stored") == "1");

    std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the store:\n" << numbered(after));
    CHECK(entry_lines_for(after, k64).size() == 1);
    CHECK(std::count(after.begin(), after.end(), later) == 1);
    child_result clean = run_child(dir, "reload", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(clean.report());
    REQUIRE(clean.ok());
    REQUIRE(clean.steps.size() == 1);
    CHECK(clean.steps[0].warnings().empty());
    CHECK(clean.steps[0].traced_backend() == "cpu_ref");
}

// Lines before the first "[machine]" line belong to no machine: they are warned about on load,
// not filed silently with the other machines' sections (where a store would carry them along).
// A file that starts with such lines is no tune cache at all (tuner not_a_cache); one that
// starts with the header has them only by damage.
TEST_CASE("tuner corrupt_file_no_section: garbage before any section is warned about") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    write_text(cache, "# gemm tune cache: `gemm tune` writes it; one [machine] section per fingerprint.\n"
                      "garbage line\n" +
                          std::string("\x01\x02\xff binary\n"));
    child_result r = run_child(dir, "garbage", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[0].correct());
    check_builtin_untuned(r.steps[0]);
    CHECK(r.steps[0].warned(cache + ":2:"));
    CHECK(r.steps[0].warned(cache + ":3:"));
}

// A file that is not a tune cache (someone's notes, a script, a file named by mistake) is not
// the library's to overwrite: auto warns once and uses the built-in rule, a store is refused
// naming the path and why, and nothing is created beside it. An empty file is a cache.
TEST_CASE("tuner not_a_cache: a file that is not a tune cache is warned about once and never overwritten") {
    scratch_dir dir;
    for (const std::string text : {"my notes\n", "#!/bin/sh\necho hello\n", "# only a comment\n\n"}) {
        INFO("file: " << text);
        std::string cache = dir.file("notes.txt");
        write_text(cache, text);
        child_result r = run_child(dir, "notes", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                                   "call 64x64x64; tune 32x32x32 budget=20; call 48x48x48");
        INFO(r.report());
        REQUIRE(r.ok());
        REQUIRE(r.steps.size() == 3);
        CHECK(r.steps[0].correct());
        check_builtin_untuned(r.steps[0]);
        CHECK(r.steps[0].warned(cache + ": not a tune cache ("));
        CHECK(r.steps[0].warned("will not be overwritten"));
        CHECK(r.steps[0].warnings().size() == 1);
        const step_seen &t = r.steps[1];
        CHECK(t.status() == GEMM_STATUS_EXECUTION_FAILED);
        CHECK(t.get("stored") == "0");
        CHECK(contains(t.error, cache + ": not a tune cache ("));
        CHECK(contains(t.error, "nothing stored"));
        CHECK(r.steps[2].correct());
        CHECK(r.steps[2].warnings().empty());  // warned once
        CHECK(read_text(cache) == text);
        CHECK_FALSE(file_exists(cache + ".lock"));
    }
    std::string empty = dir.file("empty.txt");
    write_text(empty, "");
    child_result r = run_child(dir, "empty", {"GEMM_TUNE_CACHE=" + empty, "GEMM_VERBOSE=1"},
                               "call 64x64x64; tune 32x32x32 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].warnings().empty());
    CHECK(r.steps[1].get("stored") == "1");
    CHECK(entry_lines_for(read_lines(empty), key_text(32, 32, 32)).size() == 1);
}

// A number with trailing junk is a bad number.
// The whole field must be a number: a parser that stops at the first non-digit would read
// "batch=1x" as batch=1 and use the damaged entry without a warning.
TEST_CASE("tuner corrupt_batch_number: an entry with batch=1x is skipped with a warning") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    write_text(cache, mine + "\nf32 f32 NN 64 64 64 batch=1x ld=tight align=16 space=host beta=0 | cpu_ref - | "
                             "1.000 us | default cblas 2.000 us\n");
    child_result r = run_child(dir, "batch", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].correct());
    CHECK(r.steps[0].warned(cache + ":2:"));
    check_builtin_untuned(r.steps[0]);
}

// A thread remembers its last exact hit, so that calls of one shape in a loop skip the
// cache's lock; a store that replaces the entry must still change the next call's choice.
TEST_CASE(
    "tuner hit_after_store: a store replacing a shape's entry changes the next call's choice in the same thread") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    write_text(cache, mine + "\n" + key_text(24, 24, 24) + " | cpu_ref - | 1.000 us | default cblas 2.000 us\n");
    child_result r = run_child(dir, "hit_after_store", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 24x24x24; call 24x24x24; tune 24x24x24 budget=20; call 24x24x24; call 24x24x24");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 5);
    for (int i : {0, 1}) {
        CHECK(r.steps[std::size_t(i)].correct());
        CHECK(r.steps[std::size_t(i)].traced_backend() == "cpu_ref");  // the hand-written entry
        CHECK(r.steps[std::size_t(i)].why() == "auto: tune cache hit");
    }
    const step_seen &t = r.steps[2];
    REQUIRE(t.status() == GEMM_STATUS_SUCCESS);
    REQUIRE(t.get("stored") == "1");
    REQUIRE(t.get("backend") != "cpu_ref");  // the reference is not a candidate unless named
    for (int i : {3, 4}) {
        CHECK(r.steps[std::size_t(i)].correct());
        CHECK(r.steps[std::size_t(i)].traced_backend() == t.get("backend"));
        CHECK(r.steps[std::size_t(i)].why() == "auto: tune cache hit");
    }
}

// ---- 2b. the machine's rates for host memory ---------------------------------------------

// A call the built-in rule sent to the host backend the machine's rates name.
void check_rates_host(const step_seen &s, const std::string &backend) {
    INFO("trace: " << s.trace());
    CHECK(s.correct());
    CHECK(s.traced_backend() == backend);
    CHECK(s.why() == "auto: built-in rule, the host backend this machine's rates estimate fastest (shape not tuned)");
}

// Rates in this machine's section steer the built-in rule for untuned host-memory calls: the
// backend the rates name for the GPU (here cpu_ref, which any build has, standing in for
// cublas) where its estimate is shorter than every host backend's (never under 2^21
// operations), else the host backend of the shortest estimate, whichever the preference order
// puts first; with GEMM_TUNE=off, or when no host backend the rates name is one of this
// build's (the reference aside), the preference order. The tuner's default follows the rule.
// A rates line that does not parse is warned about, not used, and dropped by a store; a store
// keeps the good ones.
TEST_CASE("tuner rates: a cache's rates send untuned host calls to the faster side; bad lines are skipped") {
    scratch_dir dir;
    const std::string mine = this_machine_line(dir), host = preferred_host_backend();
    REQUIRE(!host.empty());
    auto rates = [&](const char *type, const char *host_gflops, const std::string &named = "") {
        return std::string("rates ") + type + " | host " + (named.empty() ? host : named) + " " + host_gflops +
               " GFLOP/s 0 us | gpu cpu_ref 1000 GFLOP/s 1000 GB/s 1 us";
    };
    const std::string slow_host = dir.file("slow-host.txt"), fast_host = dir.file("fast-host.txt");
    const std::string ref_host = dir.file("ref-host.txt"), device_as_host = dir.file("device-as-host.txt");
    write_text(slow_host, mine + "\n" + rates("f32", "0.001") + "\n");
    write_text(fast_host, mine + "\n" + rates("f32", "1e+09") + "\n");
    write_text(ref_host, mine + "\n" + rates("f32", "1e+09", "cpu_ref") + "\n");
    write_text(device_as_host, mine + "\n" + rates("f32", "1e+09", "cuda_naive") + "\n");
    const std::string offload_why =
        "auto: built-in rule, the GPU for host memory where this machine's rates say it is faster";

    child_result r = run_child(dir, "slow_host", {"GEMM_TUNE_CACHE=" + slow_host, "GEMM_VERBOSE=1"},
                               "call 256x256x256; call 64x64x64; tune 256x256x256 budget=30 store=0; rates");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 4);
    // gemm_tune_cache_rates says what the file holds; NULL arguments are refused.
    CHECK(r.steps[3].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[3].get("count") == "1");
    CHECK(r.steps[3].get("null_rates") == std::to_string(GEMM_STATUS_INVALID_POINTER));
    CHECK(r.steps[3].get("null_count") == std::to_string(GEMM_STATUS_INVALID_POINTER));
    REQUIRE(r.steps[3].entries.size() == 1);
    CHECK(r.steps[3].entries[0] == "f32 " + host + " 0.001 cpu_ref 1000 1000 1 hosts " + host + ":0.001:0:0 measured 0");
    CHECK(r.steps[0].correct());
    CHECK(r.steps[0].traced_backend() == "cpu_ref");
    CHECK(starts_with(r.steps[0].why(), offload_why + " (estimated "));
    CHECK(contains(r.steps[0].why(), " ms on " + host + ")"));
    CHECK(r.steps[0].warnings().empty());
    check_rates_host(r.steps[1], host);  // 2^19 operations: the host without a look at the GPU's rates
    CHECK(r.steps[2].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[2].get("default") == "cpu_ref");

    r = run_child(dir, "fast_host", {"GEMM_TUNE_CACHE=" + fast_host, "GEMM_VERBOSE=1"}, "call 256x256x256");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    check_rates_host(r.steps[0], host);

    // Of two host backends, the one of the shorter estimate, whichever the order puts first:
    // cblas with a rate far above cpu_omp's, and at a small size, where cpu_omp's fixed cost
    // decides.
    if (available_backend("cblas") && available_backend("cpu_omp")) {
        const std::string two = dir.file("two-hosts.txt");
        write_text(two, mine + "\nrates f32 | host cpu_omp 100 GFLOP/s 1000 us | host cblas 1e+09 GFLOP/s 0 us\n");
        r = run_child(dir, "two_hosts", {"GEMM_TUNE_CACHE=" + two, "GEMM_VERBOSE=1"},
                      "call 8x8x8; call 256x256x256; tune 64x64x64 budget=5 store=0");
        INFO(r.report());
        REQUIRE(r.ok());
        REQUIRE(r.steps.size() == 3);
        check_rates_host(r.steps[0], "cblas");
        check_rates_host(r.steps[1], "cblas");
        CHECK(r.steps[2].get("default") == "cblas");
    }

    // The reference and a device backend are never the rates' host backend: the preference order.
    for (const std::string &file : {ref_host, device_as_host}) {
        r = run_child(dir, "not_a_host", {"GEMM_TUNE_CACHE=" + file, "GEMM_VERBOSE=1"}, "call 256x256x256");
        INFO(r.report());
        REQUIRE(r.ok());
        REQUIRE(r.steps.size() == 1);
        CHECK(r.steps[0].correct());
        CHECK(r.steps[0].traced_backend() == host);
        CHECK(r.steps[0].why() ==
              "auto: built-in rule, first of the preference order that serves it (shape not tuned)");
    }

    r = run_child(dir, "off", {"GEMM_TUNE_CACHE=" + slow_host, "GEMM_TUNE=off", "GEMM_VERBOSE=1"}, "call 256x256x256");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].traced_backend() == host);
    CHECK(contains(r.steps[0].why(), "(GEMM_TUNE=off)"));

    const std::string damaged = dir.file("damaged.txt");
    const std::string bad = "rates f32 | host " + host + " -1 GFLOP/s | gpu cpu_ref 1000 GFLOP/s 1000 GB/s 1 us";
    write_text(damaged, mine + "\n" + bad + "\n" + rates("f64", "0.001") + "\n");
    r = run_child(dir, "damaged", {"GEMM_TUNE_CACHE=" + damaged, "GEMM_VERBOSE=1"},
                  "call 256x256x256; tune 8x8x8 budget=5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].warned(damaged + ":2:"));
    CHECK(r.steps[0].warned("rates must be positive"));
    check_builtin_untuned(r.steps[0]);  // f32: its only rates line is damaged
    REQUIRE(r.steps[1].get("stored") == "1");
    const std::vector<std::string> after = read_lines(damaged);
    INFO(numbered(after));
    CHECK(std::find(after.begin(), after.end(), bad) == after.end());
    CHECK(std::find(after.begin(), after.end(), rates("f64", "0.001")) != after.end());
    CHECK(malformed_entries(after, mine).empty());
}

namespace {

// The host backend whose model in a listed rates entry ("... hosts name:gflops:fixed_us:gbs
// ...") estimates the shortest time for an f32 n^3 call with beta 0, as auto's rule estimates
// it (dispatch/machine_rates.cpp, host_estimate_us): "" where the entry lists none.
std::string fastest_host_at(const std::string &listed, double n) {
    std::string best;
    double best_us = 0;
    const double flops = 2 * n * n * n, bytes = 3 * n * n * 4;
    for (const std::string &word : words(listed.substr(listed.find(" hosts ") + 7))) {
        if (word == "measured") break;
        const std::vector<std::string> f = split(word, ':');
        if (f.size() != 4) return "";
        const double gflops = std::atof(f[1].c_str()), fixed_us = std::atof(f[2].c_str()), gbs = std::atof(f[3].c_str());
        const double us = fixed_us + std::max(flops / gflops / 1e3, gbs > 0 ? bytes / gbs / 1e3 : 0.0);
        if (best.empty() || us < best_us) {
            best = f[0];
            best_us = us;
        }
    }
    return best;
}

}  // namespace

// Without rates in the cache, the first untuned host call that needs them measures them, once,
// within the probe's budget, says so in its trace and stores them; the next call and the next
// process use them without measuring. With GEMM_TUNE=off nothing is measured and the
// preference order (cpu_omp first) serves.
TEST_CASE("tuner rates_first_need: a fresh cache's first untuned host call measures the rates once and stores them") {
    if (!(available_backend("cpu_omp") && available_backend("cblas")))
        skip_scenario("tuner rates_first_need: needs cpu_omp and cblas (with one host backend besides the reference, "
                      "no call needs rates)");
    scratch_dir dir;
    const std::string cache = dir.file("tune-cache.txt");
    child_result off =
        run_child(dir, "off", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TUNE=off", "GEMM_VERBOSE=1"}, "call 96x96x96");
    INFO(off.report());
    REQUIRE(off.ok());
    REQUIRE(off.steps.size() == 1);
    CHECK(off.steps[0].traced_backend() == "cpu_omp");
    CHECK(!contains(off.steps[0].why(), "measured"));
    CHECK_FALSE(file_exists(cache));

    child_result r =
        run_child(dir, "first", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 96x96x96; call 80x80x80; rates");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 3);
    for (int i : {0, 1}) {
        const step_seen &s = r.steps[std::size_t(i)];
        INFO("trace: " << s.trace());
        CHECK(s.correct());
        CHECK(builtin_host(s.traced_backend()));
        CHECK(starts_with(s.why(), "auto: built-in rule, the host backend this machine's rates estimate fastest "
                                   "(shape not tuned)"));
    }
    CHECK(contains(r.steps[0].why(), "(rates measured now, in "));
    CHECK(!contains(r.steps[1].why(), "measured"));  // once
    // The probe's budget is 0.5 s on an idle machine; a 2-core CI machine running sanitized
    // tests beside this one gets three times that.
    const std::string measured = r.steps[0].why().substr(r.steps[0].why().find("measured now, in ") + 17);
    CHECK(std::atof(measured.c_str()) > 0);
    CHECK(std::atof(measured.c_str()) < 1500);
    REQUIRE(r.steps[2].entries.size() == 1);  // f32's only: no f64 call needed them
    const std::string &listed = r.steps[2].entries[0];
    // The first call went where the rates it measured estimate the shortest time: the highest
    // rate, unless a fixed cost or a matrix-vector bandwidth outweighs it at 96^3.
    CHECK(r.steps[0].traced_backend() == fastest_host_at(listed, 96));
    CHECK(contains(listed, " cpu_omp:"));
    CHECK(contains(listed, " cblas:"));
    CHECK(!contains(listed, " cpu_ref:"));  // the reference is never timed
    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    CHECK(count_prefix(lines, "rates f32 | host ") == 1);
    for (const std::string &l : lines) {
        if (!starts_with(l, "rates ")) continue;
        CHECK(is_rates_line(l));
        // Every backend measured has its matrix-vector bandwidth (0 where arithmetic bounds it).
        for (const std::string &part : split(l, '|'))
            if (words(part)[0] == "host") CHECK(words(part).back() == "GB/s");
    }

    child_result later = run_child(dir, "later", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 96x96x96");
    INFO(later.report());
    REQUIRE(later.ok());
    REQUIRE(later.steps.size() == 1);
    CHECK(later.steps[0].traced_backend() == r.steps[0].traced_backend());
    CHECK(!contains(later.steps[0].why(), "measured"));
    CHECK(read_lines(cache) == lines);
}

TEST_CASE("tuner rates_shared: processes started together on a fresh cache measure the rates once") {
    if (!(available_backend("cpu_omp") && available_backend("cblas")))
        skip_scenario("tuner rates_shared: needs cpu_omp and cblas (with one host backend besides the reference, "
                      "no call needs rates)");
    // The ranks of an MPI job on one node: each one's first untuned call needs the rates. One
    // measures them under the cache file's lock; the others wait for it and read what it stored
    // (or, started later, find them when they load the file).
    scratch_dir dir;
    const std::string cache = dir.file("tune-cache.txt");
    const std::vector<std::string> env = {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_LOG_LEVEL=info"};
    std::vector<child_result> ranks;
    {
        std::vector<std::unique_ptr<child_process>> started;
        for (int r = 0; r < 4; ++r)
            started.push_back(std::make_unique<child_process>(dir, "rank" + std::to_string(r), env, "call 96x96x96"));
        for (auto &c : started) ranks.push_back(c->wait());
    }
    int measured = 0;
    for (const child_result &r : ranks) {
        INFO(r.report());
        REQUIRE(r.ok());
        REQUIRE(r.steps.size() == 1);
        CHECK(r.steps[0].correct());
        CHECK(r.steps[0].traced_backend() == ranks[0].steps[0].traced_backend());
        measured += contains(r.steps[0].why(), "(rates measured now, in ");
    }
    CHECK(measured == 1);
    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    CHECK(count_prefix(lines, "rates f32 | host ") == 1);
}

// ---- 3. a stale file -----------------------------------------------------------------------

TEST_CASE("tuner stale_section: another machine's entries are not used and survive a store verbatim") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    const std::vector<std::string> other = {
        "[machine] some other machine; cpu Imaginary 9000; hardware threads 512",
        key_text(64, 64, 64) + " | cpu_ref - | 1.000 us | default cblas 9.000 us",
        key_text(32, 32, 32) + " | cpu_ref - | 1.000 us | default cblas 9.000 us",
        "a line this build cannot read, kept for the build that wrote it",
    };
    std::string text;
    for (const std::string &l : other) text += l + "\n";
    write_text(cache, text);

    child_result r = run_child(dir, "stale", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; call 32x32x32; tune 16x16x16 budget=50");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 3);
    CHECK(r.steps[0].warned("tune cache " + cache + ": no section for this machine"));
    CHECK(r.steps[0].warnings().size() == 1);
    for (int i = 0; i < 2; ++i) {
        CHECK(r.steps[std::size_t(i)].status() == GEMM_STATUS_SUCCESS);
        CHECK(r.steps[std::size_t(i)].correct());
        check_builtin_untuned(r.steps[std::size_t(i)]);
    }
    CHECK(r.steps[2].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[2].get("stored") == "1");

    std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the store:\n" << numbered(after));
    CHECK(has_block(after, other));
    CHECK(count_prefix(after, "[machine] ") == 2);
    CHECK(entry_lines_for(after, key_text(16, 16, 16)).size() == 1);
    CHECK(entry_lines_for(after, key_text(64, 64, 64)).size() == 1);  // only the other machine's
}

TEST_CASE("tuner stale_threads: a thread-count change stales only cpu_omp's entries, said once, and keeps them") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    const std::vector<std::string> head = section_head(dir, {"OMP_NUM_THREADS=2"});
    const std::string two_threads = recorded_identity(head, "cpu_omp");
    REQUIRE(contains(two_threads, "2 threads"));
    const std::string omp = key_text(256, 256, 256) + " | cpu_omp - | 1.000 us | default cpu_ref 9.000 us";
    const std::string blas = key_text(64, 64, 64) + " | cblas - | 1.000 us | default cpu_ref 9.000 us";
    const std::string ref = key_text(16, 16, 16) + " | cpu_ref - | 1.000 us | default cpu_ref 9.000 us";
    write_text(cache, joined_lines(head) + omp + "\n" + blas + "\n" + ref + "\n");

    child_result r = run_child(dir, "one_thread", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "OMP_NUM_THREADS=1"},
                               "call 256x256x256; call 64x64x64; call 16x16x16; tune 8x8x8 budget=5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 4);
    INFO("warnings: " << numbered(r.steps[0].warnings()));
    CHECK(r.steps[0].warnings().size() == 1);
    CHECK(r.steps[0].warned("tune cache " + cache + ": cpu_omp's identity changed from '" + two_threads + "' to '"));
    CHECK(r.steps[0].warned("1 thread (the caller's)', so 1 entry of cpu_omp is stale"));
    check_builtin_untuned(r.steps[0]);
    const bool has_cblas = std::any_of(all_backends().begin(), all_backends().end(),
                                       [](const backend_entry &b) { return b.name == "cblas" && b.available; });
    if (has_cblas) {
        CHECK(r.steps[1].why() == "auto: tune cache hit");
        CHECK(r.steps[1].traced_backend() == "cblas");
    }
    CHECK(r.steps[2].why() == "auto: tune cache hit");
    CHECK(r.steps[2].traced_backend() == "cpu_ref");
    for (std::size_t i = 0; i < 3; ++i) CHECK(r.steps[i].correct());
    REQUIRE(r.steps[3].get("stored") == "1");

    // The store kept the stale line and recorded the identity now before its entry.
    const std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the store:\n" << numbered(after));
    auto at = [&after](const std::string &line) { return std::find(after.begin(), after.end(), line) - after.begin(); };
    const std::ptrdiff_t one_thread_line =
        std::find_if(after.begin(), after.end(),
                     [](const std::string &l) {
                         return starts_with(l, "backend cpu_omp | ") && contains(l, "1 thread (the caller's)");
                     }) -
        after.begin();
    CHECK(at(omp) < std::ptrdiff_t(after.size()));
    CHECK(at(omp) < one_thread_line);
    CHECK(one_thread_line < at(entry_lines_for(after, key_text(8, 8, 8)).at(0)));

    // Back at 2 threads the cpu_omp entry holds again.
    child_result back = run_child(
        dir, "two_threads", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "OMP_NUM_THREADS=2"}, "call 256x256x256");
    INFO(back.report());
    REQUIRE(back.steps.size() == 1);
    CHECK(back.steps[0].why() == "auto: tune cache hit");
    CHECK(back.steps[0].traced_backend() == "cpu_omp");
}

TEST_CASE("tuner stale_blas: another BLAS library stales only cblas's entries and the rates") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::vector<std::string> head = section_head(dir, {});
    // The section as a process with another GEMM_CBLAS_LIB wrote it.
    const std::string other_blas = "/opt/other/libblas.so.3 (sgemm_/dgemm_)";
    for (std::string &l : head)
        if (starts_with(l, "backend cblas | ")) l = "backend cblas | " + other_blas;
    const std::string blas = key_text(64, 64, 64) + " | cblas - | 1.000 us | default cpu_ref 9.000 us";
    const std::string omp = key_text(256, 256, 256) + " | cpu_omp - | 1.000 us | default cpu_ref 9.000 us";
    const std::string rates = "rates f32 | host cpu_omp 1e+09 GFLOP/s | gpu cpu_ref 1 GFLOP/s 1 GB/s 1 us";
    write_text(cache, joined_lines(head) + blas + "\n" + omp + "\n" + rates + "\n");

    child_result r = run_child(dir, "blas", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; call 256x256x256; rates");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 3);
    INFO("warnings: " << numbered(r.steps[0].warnings()));
    CHECK(r.steps[0].warnings().size() == 2);
    CHECK(r.steps[0].warned("cblas's identity changed from '" + other_blas + "' to '"));
    CHECK(r.steps[0].warned("so 1 entry of cblas is stale"));
    CHECK(r.steps[0].warned(": rates not used (cblas's identity changed from '" + other_blas));
    check_builtin_untuned(r.steps[0]);
    CHECK(r.steps[1].why() == "auto: tune cache hit");
    CHECK(r.steps[1].traced_backend() == "cpu_omp");
    // The stale rates are not used: the first untuned call measured this machine's again.
    CHECK(contains(r.steps[0].why(), "(rates measured now, in "));
    CHECK(r.steps[2].get("count") == "1");
}

// GEMM_TEST_TUNE_DISTURBED=N makes the first N timings of each problem count as disturbed.
TEST_CASE("tuner disturbed: a disturbed winner is timed again; one that stays disturbed is not stored") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    auto retimes = [](const step_seen &s) {
        return std::count_if(s.err.begin(), s.err.end(),
                             [](const std::string &l) { return contains(l, "timed again"); });
    };
    child_result stays =
        run_child(dir, "stays", {"GEMM_TUNE_CACHE=" + cache, "GEMM_LOG_LEVEL=info", "GEMM_TEST_TUNE_DISTURBED=9"},
                  "tune 8x8x8 budget=5; entries");
    INFO(stays.report());
    REQUIRE(stays.ok());
    REQUIRE(stays.steps.size() == 2);
    CHECK(stays.steps[0].status() == GEMM_STATUS_SUCCESS);
    CHECK(stays.steps[0].get("disturbed") == "1");
    CHECK(stays.steps[0].get("stored") == "0");
    CHECK(retimes(stays.steps[0]) == 2);
    CHECK(stays.steps[1].get("count") == "0");
    CHECK(entry_lines_for(read_lines(cache), key_text(8, 8, 8)).empty());

    child_result settles =
        run_child(dir, "settles", {"GEMM_TUNE_CACHE=" + cache, "GEMM_LOG_LEVEL=info", "GEMM_TEST_TUNE_DISTURBED=1"},
                  "tune 8x8x8 budget=5");
    INFO(settles.report());
    REQUIRE(settles.steps.size() == 1);
    CHECK(settles.steps[0].get("disturbed") == "0");
    CHECK(settles.steps[0].get("stored") == "1");
    CHECK(retimes(settles.steps[0]) == 1);
    CHECK(entry_lines_for(read_lines(cache), key_text(8, 8, 8)).size() == 1);

    // GEMM_TUNE=online does not time again within the caller's call: a disturbed shape is not
    // stored, its call goes on to the built-in rule, and it is not tuned again in the process.
    child_result online = run_child(
        dir, "online", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TUNE=online", "GEMM_VERBOSE=1", "GEMM_TEST_TUNE_DISTURBED=9"},
        "call 48x48x48; call 48x48x48");
    INFO(online.report());
    REQUIRE(online.ok());
    REQUIRE(online.steps.size() == 2);
    for (const step_seen &s : online.steps) {
        CHECK(s.correct());
        CHECK(contains(s.why(), "built-in rule"));
    }
    CHECK(contains(online.steps[0].why(), "online tuning was disturbed (the machine was busy); not stored"));
    CHECK(contains(online.steps[1].why(), "online tuning failed earlier in this process"));
    CHECK(entry_lines_for(read_lines(cache), key_text(48, 48, 48)).empty());
}

// ---- 4. entries this build cannot run ------------------------------------------------------

TEST_CASE("tuner unknown_backend_variant: entries naming an unknown backend or variant are skipped") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    write_text(cache, mine + "\n" +                                                                             // 1
                          key_text(64, 64, 64) + " | nosuch_backend - | 1.000 us | default cblas 9.000 us\n" +  // 2
                          key_text(48, 48, 48) +
                          " | cpu_omp avx2_f32_99x99 | 1.000 us | default cblas 9.000 us\n" +         // 3
                          key_text(8, 8, 8) + " | cpu_ref - | 1.000 us | default cblas 2.000 us\n");  // 4

    child_result r = run_child(dir, "unknown", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; call 48x48x48; call 8x8x8");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 3);
    const step_seen &first = r.steps[0];
    CHECK(first.warned(cache + ":2:"));
    CHECK(first.warned("nosuch_backend"));
    CHECK(first.warned(cache + ":3:"));
    CHECK(first.warned("avx2_f32_99x99"));
    CHECK(first.warnings().size() == 2);
    for (int i = 0; i < 2; ++i) {
        const step_seen &s = r.steps[std::size_t(i)];
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
        check_builtin_untuned(s);
    }
    CHECK(r.steps[2].why() == "auto: tune cache hit");  // the valid entry in the same section
    CHECK(r.steps[2].traced_backend() == "cpu_ref");
    CHECK(r.steps[2].correct());
}

// An entry whose variant the backend knows but that cannot compute this problem (an f64
// kernel for an f32 key; likewise an AVX-512 kernel on a CPU without it) must not make the
// call fail: skipped on load or passed over at the call, like an unknown variant.
// Such an entry passes every check on load (cpu_omp knows every id of its build), so the rule
// sits at the call: a tuned choice the backend refuses falls back to the built-in rule instead
// of failing with GEMM_STATUS_NOT_SUPPORTED ("variant 'avx2_f64_8x6' does not compute f32").
TEST_CASE("tuner wrong_dtype_variant: a cached variant of the other dtype does not fail the call") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    write_text(cache,
               mine + "\n" + key_text(64, 64, 64) + " | cpu_omp avx2_f64_8x6 | 1.000 us | default cblas 2.000 us\n");
    child_result r = run_child(dir, "wrong_dtype", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[0].correct());
}

// ---- 5. an unwritable location -------------------------------------------------------------

TEST_CASE("tuner unwritable: a store that cannot write fails naming the path; calls keep working") {
    scratch_dir dir;
    // Its parent is a regular file: no one can create it, root included.
    std::string blocker = dir.file("blocker");
    write_text(blocker, "a regular file\n");
    std::string cache = blocker + "/cache.txt";
    child_result r =
        run_child(dir, "unwritable", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                  "tune 64x64x64 budget=100; call 64x64x64; call 48x48x48; tune 32x32x32 store=0 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 4);
    const step_seen &t = r.steps[0];
    CHECK(t.status() != GEMM_STATUS_SUCCESS);
    CHECK(t.status() >= 20);  // not an argument error
    CHECK(contains(t.error, cache));
    CHECK(t.get("stored") == "0");
    CHECK(builtin_host(t.get("default")));
    bool winner_listed = false;
    for (const candidate_seen &c : t.candidates)
        winner_listed |= c.backend == t.get("backend") && c.variant == t.get("variant");
    CHECK(winner_listed);
    for (int i = 1; i < 3; ++i) {
        CHECK(r.steps[std::size_t(i)].status() == GEMM_STATUS_SUCCESS);
        CHECK(r.steps[std::size_t(i)].correct());
    }
    CHECK(r.steps[3].status() == GEMM_STATUS_SUCCESS);  // store = 0 does not touch the file
    CHECK(r.steps[3].get("stored") == "0");
    CHECK(read_text(blocker) == "a regular file\n");
}

// ---- 5b. what a store keeps, and what may sit at the cache path ---------------------------

TEST_CASE("tuner store_keeps_lines: a store changes only the entries it stores") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    const std::vector<std::string> before = {
        "# kept: a comment above the sections",
        "[machine] another box; cpu Imaginary 9000; hardware threads 512",
        key_text(100, 100, 100) + " | cblas - | 5.000 us | default cblas 5.000 us",
        mine,
        "# kept: a comment inside this machine's section",
        key_text(64, 64, 64) + " | nosuch_backend - | 1.000 us | default cblas 9.000 us",  // another build's
        key_text(48, 48, 48) + " | cpu_omp avx2_f32_99x99 | 1.000 us | default cblas 9.000 us",
        key_text(8, 8, 8) + " | cpu_ref - | 1.000 us | default cblas 2.000 us",  // replaced by the store
        key_text(16, 16, 16) + " | cpu_ref - | 1.000 us | default cblas 2.000 us",
    };
    std::string text;
    for (const std::string &l : before) text += l + "\n";
    write_text(cache, text);
    child_result r = run_child(dir, "keeps", {"GEMM_TUNE_CACHE=" + cache},
                               "tune 8x8x8 budget=20 backends=cpu_omp; tune 32x32x32 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    for (const step_seen &t : r.steps) CHECK(t.get("stored") == "1");
    std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the stores:\n" << numbered(after));
    // Every line but the replaced entry, in its order, then the new entry and the rates the
    // second tune measured in this section.
    std::vector<std::string> kept;
    for (const std::string &l : after)
        if (!starts_with(l, key_text(8, 8, 8)) && !starts_with(l, key_text(32, 32, 32)) && !header_line(l) &&
            !starts_with(l, "rates f32 | ") && !starts_with(l, "backend "))  // the identities a store recorded
            kept.push_back(l);
    std::vector<std::string> expected = before;
    expected.erase(expected.begin() + 7);
    CHECK(kept == expected);
    CHECK(entry_lines_for(after, key_text(8, 8, 8)).size() == 1);
    CHECK(entry_lines_for(after, key_text(32, 32, 32)).size() == 1);
    CHECK(std::count(after.begin(), after.end(), before[7]) == 0);  // replaced, not duplicated
    CHECK(count_prefix(after, "# gemm tune cache:") == 1);          // the header is not repeated
}

// The key format is the file format: every field of a key, read from a file and listed, is the
// text it was read from, and a store writes the lines it did not replace back unchanged.
TEST_CASE("tuner round_trip_keys: keys of every field read back as written and survive a store") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    const std::vector<std::string> keys = {
        "f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0",
        "f64 f64 TN 100 3 7 batch=4 ld=padded align=elem space=host beta=any",
        "f16 f32 NT 64 32 16 batch=1 ld=tight align=16 space=device beta=0",
        "bf16 bf16 TT 5 6 7 batch=1 ld=tight align=elem space=managed beta=any",
        "f32 f32 NN 9 9 9 batch=1 ld=tight align=16 space=host beta=0 epilogue=gelu+bias(rows)+aux",
        "f64 f64 TT 9 9 9 batch=1 ld=padded align=16 space=host beta=any epilogue=relu_backward+bias_grad(columns)",
        "c32 c32 CN 4 4 4 batch=3 ld=tight align=16 space=host beta=any form=pointers",
        "c64 c64 NC 2 3 4 batch=2 ld=padded align=elem space=host beta=0",
        "f32 f32 NT 12 12 12 batch=1 ld=tight align=16 space=host beta=0 math=tf32",
        "f32 f32 TN 12 12 12 batch=5 ld=tight align=16 space=host beta=0 form=pointers math=tf32",
        "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,128x128",
        "e5m2 f32 TN 24 20 64 batch=2 ld=tight align=16 space=host beta=0 form=pointers scales=128x128,1x128",
    };
    std::vector<std::string> lines = {this_machine_line(dir)};
    for (const std::string &k : keys) lines.push_back(k + " | cpu_ref - | 1.000 us | default cpu_ref 1.000 us");
    std::string text;
    for (const std::string &l : lines) text += l + "\n";
    write_text(cache, text);
    child_result r = run_child(dir, "round_trip", {"GEMM_TUNE_CACHE=" + cache}, "entries; tune 16x16x16 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    std::vector<std::string> listed;
    for (const std::string &e : r.steps[0].entries) listed.push_back(e.substr(0, e.find(" | ")));
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> expected = keys;
    std::sort(expected.begin(), expected.end());
    CHECK(listed == expected);
    CHECK(r.steps[1].get("stored") == "1");
    const std::vector<std::string> after = read_lines(cache);
    INFO("cache file after the store:\n" << numbered(after));
    for (const std::string &l : lines) CHECK_MESSAGE(std::count(after.begin(), after.end(), l) == 1, l);
    CHECK(entry_lines_for(after, key_text(16, 16, 16)).size() == 1);
}

TEST_CASE("tuner unreadable: a cache that cannot be read is warned about and never overwritten") {
    require_nobody_can_run(scratch_base());
    scratch_dir dir;
    // nobody (the child, when this runs as root) creates the lock file beside the cache.
    REQUIRE(chmod(dir.path().c_str(), 0777) == 0);
    std::string cache = dir.file("tune-cache.txt");
    std::string text = "[machine] another box; cpu Imaginary 9000; hardware threads 512\n" + key_text(100, 100, 100) +
                       " | cblas - | 5.000 us | default cblas 5.000 us\n";
    write_text(cache, text);
    REQUIRE(chmod(cache.c_str(), 0) == 0);
    child_options unprivileged;
    unprivileged.unprivileged = true;
    child_result r = run_child(dir, "unreadable", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 64x64x64; tune 32x32x32 budget=20", unprivileged);
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    CHECK(r.steps[0].correct());
    CHECK(r.steps[0].warned(cache + ": cannot read it"));
    CHECK(r.steps[0].warned("will not be overwritten"));
    const step_seen &t = r.steps[1];
    CHECK(t.status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(t.get("stored") == "0");
    CHECK(contains(t.error, cache));
    CHECK(contains(t.error, "nothing stored"));

    child_result online = run_child(dir, "online", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TUNE=online"},
                                    "call 40x40x40; call 40x40x40", unprivileged);
    INFO(online.report());
    REQUIRE(online.ok());
    REQUIRE(online.steps.size() == 2);
    for (const step_seen &c : online.steps) CHECK(c.correct());
    REQUIRE(chmod(cache.c_str(), 0644) == 0);
    CHECK(read_text(cache) == text);
}

TEST_CASE("tuner online_unwritable: GEMM_TUNE=online warns once when it cannot store, and keeps what it tuned") {
    scratch_dir dir;
    std::string blocker = dir.file("blocker");
    write_text(blocker, "a regular file\n");
    std::string cache = blocker + "/cache.txt";  // cannot be created, root included
    child_result r = run_child(dir, "online", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TUNE=online", "GEMM_VERBOSE=1"},
                               "call 40x40x40; call 40x40x40; call 44x44x44");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 3);
    for (const step_seen &c : r.steps) {
        CHECK(c.correct());
        CHECK(c.error.empty());  // the call succeeded: no error left behind
    }
    CHECK(r.steps[0].why() == "auto: tuned now (GEMM_TUNE=online)");
    CHECK(r.steps[0].warned("GEMM_TUNE=online"));
    CHECK(r.steps[0].warned(cache));
    CHECK(r.steps[1].why() == "auto: tune cache hit");  // kept in memory: not tuned twice
    CHECK(r.steps[1].warnings().empty());
    CHECK(r.steps[2].why() == "auto: tuned now (GEMM_TUNE=online)");
    CHECK(r.steps[2].warnings().empty());  // once per process
}

TEST_CASE("tuner temp_symlink: the temporary file is created, never opened through a link") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string victim = dir.file("victim.txt"), absent = dir.file("created-through-lock.txt");
    write_text(victim, "precious\n");
    std::string go = dir.file("go");
    child_process child(dir, "store", {"GEMM_TUNE_CACHE=" + cache}, "wait " + go + "; tune 32x32x32 budget=20");
    // The name a writer using "<cache>.tmp.<pid>" would open, pointing at the victim.
    std::string predictable = cache + ".tmp." + std::to_string(child.pid());
    REQUIRE(symlink(victim.c_str(), predictable.c_str()) == 0);
    write_text(go, "");
    child_result r = child.wait();
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[1].get("stored") == "1");
    CHECK(read_text(victim) == "precious\n");
    struct stat st;
    REQUIRE(lstat(cache.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(entry_lines_for(read_lines(cache), key_text(32, 32, 32)).size() == 1);

    // A link at the lock file's name is not followed either: the store fails, nothing is created.
    std::string other_cache = dir.file("other-cache.txt");
    REQUIRE(symlink(absent.c_str(), (other_cache + ".lock").c_str()) == 0);
    child_result locked = run_child(dir, "lock", {"GEMM_TUNE_CACHE=" + other_cache}, "tune 32x32x32 budget=20");
    INFO(locked.report());
    REQUIRE(locked.ok());
    REQUIRE(locked.steps.size() == 1);
    CHECK(locked.steps[0].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(contains(locked.steps[0].error, ".lock"));
    CHECK_FALSE(file_exists(absent));
    CHECK_FALSE(file_exists(other_cache));
}

// A store through a symbolic link replaces the link's target and keeps the link; the lock is
// the target's, so that a process naming the link and one naming the target exclude each other.
TEST_CASE("tuner symlink: a store through a link replaces its target, keeps the link and locks beside the target") {
    scratch_dir dir;
    REQUIRE(mkdir(dir.file("real").c_str(), 0755) == 0);
    std::string target = dir.file("real/tune-cache.txt"), link = dir.file("link.txt");
    REQUIRE(symlink("real/tune-cache.txt", link.c_str()) == 0);
    child_result first = run_child(dir, "first", {"GEMM_TUNE_CACHE=" + target}, "tune 16x16x16 budget=20");
    INFO(first.report());
    REQUIRE(first.ok());
    REQUIRE(first.steps.size() == 1);
    REQUIRE(first.steps[0].get("stored") == "1");

    // The target's lock held here: a store through the link must wait for it.
    int lock = open((target + ".lock").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(lock >= 0);
    REQUIRE(flock(lock, LOCK_EX) == 0);
    child_process child(dir, "through_link", {"GEMM_TUNE_CACHE=" + link, "GEMM_VERBOSE=1"},
                        "tune 32x32x32 budget=20; call 16x16x16");
    bool waited = false;  // /proc/locks shows a blocked flock as "-> FLOCK ... <pid> ..."
    for (int i = 0; i < 3000 && !waited; ++i) {
        std::ifstream locks("/proc/locks");
        for (std::string line; std::getline(locks, line);)
            waited |= contains(line, "-> FLOCK") && contains(line, " " + std::to_string(child.pid()) + " ");
        if (!waited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(waited);
    close(lock);
    child_result r = child.wait();
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].get("stored") == "1");
    CHECK(r.steps[1].why() == "auto: tune cache hit");  // the target's entries, read through the link
    struct stat st;
    REQUIRE(lstat(link.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    std::vector<std::string> lines = read_lines(target);
    CHECK(entry_lines_for(lines, key_text(16, 16, 16)).size() == 1);
    CHECK(entry_lines_for(lines, key_text(32, 32, 32)).size() == 1);
    CHECK_FALSE(file_exists(link + ".lock"));

    // A dangling link into an existing folder: the store creates the target, as `>` would.
    std::string dangling = dir.file("dangling.txt"), created = dir.file("real/created.txt");
    REQUIRE(symlink(created.c_str(), dangling.c_str()) == 0);
    child_result d = run_child(dir, "dangling", {"GEMM_TUNE_CACHE=" + dangling}, "tune 32x32x32 budget=20");
    INFO(d.report());
    REQUIRE(d.ok());
    REQUIRE(d.steps.size() == 1);
    CHECK(d.steps[0].get("stored") == "1");
    REQUIRE(lstat(dangling.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK(entry_lines_for(read_lines(created), key_text(32, 32, 32)).size() == 1);

    // A link whose target's folder does not exist: refused, and no folder made for it.
    std::string nowhere = dir.file("nowhere.txt"), missing = dir.file("missing/cache.txt");
    REQUIRE(symlink(missing.c_str(), nowhere.c_str()) == 0);
    child_result n = run_child(dir, "nowhere", {"GEMM_TUNE_CACHE=" + nowhere}, "tune 32x32x32 budget=20");
    INFO(n.report());
    REQUIRE(n.ok());
    REQUIRE(n.steps.size() == 1);
    CHECK(n.steps[0].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(contains(n.steps[0].error, nowhere + ": a link to " + missing + ", whose folder"));
    CHECK_FALSE(file_exists(dir.file("missing")));
    CHECK_FALSE(file_exists(nowhere + ".lock"));
}

// A cache its owner made read-only is not rewritten (a rename would replace it all the same,
// the folder being writable); auto still reads it.
TEST_CASE("tuner read_only: a read-only cache is used but never rewritten") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    child_result first = run_child(dir, "first", {"GEMM_TUNE_CACHE=" + cache}, "tune 16x16x16 budget=20");
    INFO(first.report());
    REQUIRE(first.ok());
    REQUIRE(first.steps.size() == 1);
    REQUIRE(first.steps[0].get("stored") == "1");
    REQUIRE(chmod(cache.c_str(), 0444) == 0);
    const std::string before = read_text(cache);
    child_result r = run_child(dir, "read_only", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 16x16x16; tune 32x32x32 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].why() == "auto: tune cache hit");
    CHECK(r.steps[0].warnings().empty());
    CHECK(r.steps[1].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(r.steps[1].get("stored") == "0");
    CHECK(contains(r.steps[1].error, cache + ": "));
    CHECK(contains(r.steps[1].error, "(mode 0444"));
    CHECK(contains(r.steps[1].error, "nothing stored"));
    CHECK(read_text(cache) == before);
    struct stat st;
    REQUIRE(stat(cache.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0444);
}

// Every byte a warning takes from the file is escaped, in its reason too: a damaged key,
// backend or variant cannot send a control sequence to the terminal.
TEST_CASE("tuner control_bytes: bytes from the file are escaped in every warning's reason") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    const std::string esc = "\x1b[31m";
    std::string k64 = key_text(64, 64, 64);
    write_text(cache, mine + "\n" + "f32 f32 NN 64 " + esc +
                          " 64 batch=1 ld=tight align=16 space=host beta=0 | cpu_ref - | "
                          "1.000 us | default cblas 1.000 us\n" +
                          k64 + " | cpu_ref " + esc + " | 1.000 us | default cblas 1.000 us\n" + k64 + " | no" + esc +
                          "such - | 1.000 us | default cblas 1.000 us\n" + k64 + " | cpu_ref - extra" + esc +
                          " | 1.000 us | default cblas 1.000 us\n" + k64 + " | cpu_ref - | 1" + esc +
                          " us | default cblas 1.000 us\n" + k64 + " | cpu_ref - | 1.000 us | default" + esc +
                          " cblas 1.000 us\n");
    child_result r = run_child(dir, "escape", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].correct());
    CHECK(r.steps[0].warnings().size() == 6);
    for (const std::string &w : r.steps[0].warnings()) {
        INFO("warning: " << w);
        CHECK(std::all_of(w.begin(), w.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
        // The reason, before the quoted line, shows the byte escaped too.
        const std::string reason = w.substr(0, w.rfind("): "));
        CHECK(contains(reason, "\\x1b[31m"));
    }
    CHECK_FALSE(contains(r.out + r.err, "\x1b"));
}

// What a store refuses is refused before it creates anything: no lock file beside a FIFO, a
// folder or a device, and no folder for a path ending in '/'.
TEST_CASE("tuner nothing_created: a refused store creates no lock file and no folder") {
    scratch_dir dir;
    std::string fifo = dir.file("fifo"), folder = dir.file("folder"), slash = dir.file("new/");
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    REQUIRE(mkdir(folder.c_str(), 0755) == 0);
    const bool full_lock_before = file_exists("/dev/full.lock");
    struct refused {
        std::string path, why;
    };
    for (const refused &c :
         {refused{fifo, "a FIFO, not a regular file"}, refused{folder, "a folder, not a regular file"},
          refused{slash, "ends in '/'"}, refused{"/dev/full", "a character device"}}) {
        INFO("cache: " << c.path);
        child_result r = run_child(dir, "refused", {"GEMM_TUNE_CACHE=" + c.path}, "tune 32x32x32 budget=20");
        INFO(r.report());
        REQUIRE(r.ok());
        REQUIRE(r.steps.size() == 1);
        CHECK(r.steps[0].status() == GEMM_STATUS_EXECUTION_FAILED);
        CHECK(contains(r.steps[0].error, c.path + ": "));
        CHECK(contains(r.steps[0].error, c.why));
    }
    for (const std::string &made : {fifo + ".lock", folder + ".lock", dir.file("new")}) CHECK_FALSE(file_exists(made));
    if (!full_lock_before) {
        CHECK_FALSE(file_exists("/dev/full.lock"));
        unlink("/dev/full.lock");
    }
}

TEST_CASE("tuner huge_key: an entry with m = INT64_MAX loads and the nearest-shape search survives it") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    write_text(cache, mine + "\n" + key_text(INT64_MAX, 64, 64) + " | cpu_ref - | 1.000 us | default cblas 2.000 us\n" +
                          key_text(64, INT64_MAX, INT64_MAX) + " | cpu_ref - | 1.000 us | default cblas 2.000 us\n");
    child_result r =
        run_child(dir, "huge", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64; call 60x60x60");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    for (const step_seen &c : r.steps) {
        CHECK(c.status() == GEMM_STATUS_SUCCESS);
        CHECK(c.correct());
        check_builtin_untuned(c);  // nothing within a factor of 2
    }
}

TEST_CASE("tuner oversized: a long line is not echoed whole, a file over the limit is neither used nor replaced, "
          "a store never makes one") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string mine = this_machine_line(dir);
    std::string long_line =
        key_text(64, 64, 64) + " | cpu_ref " + std::string(2 << 20, 'x') + " | 1.000 us | default cblas 1.000 us";
    write_text(cache, mine + "\n" + long_line + "\n" + key_text(8, 8, 8) +
                          " | cpu_ref - | 1.000 us | default cblas 2.000 us\n");
    child_result r = run_child(dir, "long", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 64x64x64; call 8x8x8");
    INFO(r.report().substr(0, 4000));
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].warned(cache + ":2: skipped (longer than any entry"));
    for (const std::string &w : r.steps[0].warnings()) CHECK(w.size() < 400);
    CHECK(r.steps[1].why() == "auto: tune cache hit");

    // 64 MiB and one more line: too large to read.
    std::string big = mine + "\n" + std::string(64 << 20, '#') + "\n";
    write_text(cache, big);
    child_result over = run_child(dir, "over", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                                  "call 64x64x64; tune 32x32x32 budget=20");
    INFO(over.report().substr(0, 4000));
    REQUIRE(over.ok());
    REQUIRE(over.steps.size() == 2);
    CHECK(over.steps[0].warned("larger than 64 MiB"));
    CHECK(over.steps[0].correct());
    CHECK(over.steps[1].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(contains(over.steps[1].error, "larger than 64 MiB"));
    CHECK(read_text(cache) == big);

    // 64 bytes under the limit: read, but the header and the entry a store adds take it over,
    // so the store fails rather than write a file no read would accept.
    std::string other = "[machine] another box; cpu Imaginary 9000; hardware threads 512\n";
    std::string near = other + std::string((std::size_t(64) << 20) - 64 - other.size() - 1, '#') + "\n";
    write_text(cache, near);
    child_result grow = run_child(dir, "grow", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                                  "tune 32x32x32 budget=20; call 32x32x32");
    INFO(grow.report().substr(0, 4000));
    REQUIRE(grow.ok());
    REQUIRE(grow.steps.size() == 2);
    CHECK_FALSE(grow.steps[0].warned("larger than"));  // it was read
    CHECK(grow.steps[0].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(grow.steps[0].get("stored") == "0");
    CHECK(contains(grow.steps[0].error, cache));
    CHECK(contains(grow.steps[0].error, "more than the 64 MiB a read accepts"));
    CHECK(grow.steps[1].correct());
    CHECK(grow.steps[1].why() == "auto: tune cache hit");  // kept in memory
    CHECK(read_text(cache) == near);
    for (const auto &e : std::filesystem::directory_iterator(dir.path()))
        CHECK_MESSAGE(e.path().filename().string().find(".tmp") == std::string::npos, "left behind: " << e.path());
}

TEST_CASE("tuner file_modes: a new cache gets the mode the umask gives new files; a lock file the user cannot "
          "write still locks") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    mode_t old_mask = umask(027);
    child_result first = run_child(dir, "umask", {"GEMM_TUNE_CACHE=" + cache}, "tune 16x16x16 budget=20");
    umask(old_mask);
    INFO(first.report());
    REQUIRE(first.ok());
    REQUIRE(first.steps.size() == 1);
    CHECK(first.steps[0].get("stored") == "1");
    struct stat st;
    REQUIRE(stat(cache.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);

    // Another user's lock file, readable only: flock needs no write access. (As root the
    // open for writing succeeds anyway; the store must work either way.)
    REQUIRE(chmod((cache + ".lock").c_str(), 0444) == 0);
    child_result second = run_child(dir, "read_only_lock", {"GEMM_TUNE_CACHE=" + cache}, "tune 24x24x24 budget=20");
    INFO(second.report());
    REQUIRE(second.ok());
    REQUIRE(second.steps.size() == 1);
    CHECK(second.steps[0].get("stored") == "1");
    CHECK(second.steps[0].error.empty());
    REQUIRE(stat(cache.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);  // an existing cache keeps its mode
}

TEST_CASE("tuner not_regular: a FIFO or a device at the cache path neither hangs a call nor is replaced") {
    scratch_dir dir;
    std::string fifo = dir.file("fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    child_result r =
        run_child(dir, "fifo", {"GEMM_TUNE_CACHE=" + fifo, "GEMM_VERBOSE=1"}, "call 64x64x64; tune 32x32x32 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].correct());
    CHECK(r.steps[0].warned(fifo + ": not a regular file"));
    CHECK(r.steps[1].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(contains(r.steps[1].error, "not a regular file"));
    struct stat st;
    REQUIRE(lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    // A device is only read here: a store test must never risk replacing one.
    child_result zero = run_child(dir, "zero", {"GEMM_TUNE_CACHE=/dev/zero", "GEMM_VERBOSE=1"}, "call 64x64x64");
    INFO(zero.report());
    REQUIRE(zero.ok());
    REQUIRE(zero.steps.size() == 1);
    CHECK(zero.steps[0].correct());
    CHECK(zero.steps[0].warned("/dev/zero: not a regular file"));
}

TEST_CASE("tuner file_size_limit: under ulimit -f a store fails with a status, the process lives, no temporary stays") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    // A cache larger than the limit, so that rewriting it exceeds the limit while the child's
    // own output (files too) stays well below it.
    std::string text = "[machine] another box; cpu Imaginary 9000; hardware threads 512\n";
    while (text.size() < (256 << 10)) text += "# another machine's notes, kept by every store\n";
    write_text(cache, text);
    child_options limited;
    limited.file_size_limit = 64 << 10;
    child_result r = run_child(dir, "limited", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "tune 32x32x32 budget=20; call 32x32x32", limited);
    INFO(r.report());
    REQUIRE(r.exit_code == 0);  // 128 + SIGXFSZ (153) when killed
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].status() == GEMM_STATUS_EXECUTION_FAILED);
    CHECK(contains(r.steps[0].error, "File too large"));
    CHECK(r.steps[1].correct());
    CHECK(r.steps[1].why() == "auto: tune cache hit");  // stored in memory all the same
    CHECK(read_text(cache) == text);
    for (const auto &e : std::filesystem::directory_iterator(dir.path()))
        CHECK_MESSAGE(e.path().filename().string().find(".tmp") == std::string::npos, "left behind: " << e.path());
}

// ---- 6. two processes storing at once ------------------------------------------------------

TEST_CASE("tuner concurrent_store: two processes tuning into one file lose no entry") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    const std::vector<int> sizes_a = {16, 24, 32, 40, 48, 56, 64, 72};
    const std::vector<int> sizes_b = {20, 28, 36, 44, 52, 60, 68, 76};
    auto steps_for = [](const std::vector<int> &sizes) {
        std::string steps;
        for (int s : sizes)
            steps += "tune " + std::to_string(s) + "x" + std::to_string(s) + "x" + std::to_string(s) + " budget=10;";
        return steps;
    };
    std::vector<std::string> env = {"GEMM_TUNE_CACHE=" + cache};
    child_result a, b;
    {
        child_process first(dir, "writer_a", env, steps_for(sizes_a));
        child_process second(dir, "writer_b", env, steps_for(sizes_b));
        a = first.wait();
        b = second.wait();
    }
    INFO(a.report());
    INFO(b.report());
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a.steps.size() == sizes_a.size());
    REQUIRE(b.steps.size() == sizes_b.size());
    for (const child_result *c : {&a, &b})
        for (const step_seen &s : c->steps) {
            INFO(c->label << " " << s.arg << ": " << s.error);
            CHECK(s.status() == GEMM_STATUS_SUCCESS);
            CHECK(s.get("stored") == "1");
        }

    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    REQUIRE(count_prefix(lines, "[machine] ") == 1);
    std::string machine;
    for (const std::string &l : lines)
        if (starts_with(l, "[machine] ")) machine = l;
    CHECK(malformed_entries(lines, machine).empty());
    std::vector<int> all = sizes_a;
    all.insert(all.end(), sizes_b.begin(), sizes_b.end());
    for (int s : all) {
        INFO("shape " << s);
        CHECK(entry_lines_for(lines, key_text(s, s, s)).size() == 1);
    }
    std::vector<std::string> leftovers;
    for (const auto &e : std::filesystem::directory_iterator(dir.path()))
        if (contains(e.path().filename().string(), ".tmp.")) leftovers.push_back(e.path().string());
    CHECK_MESSAGE(leftovers.empty(), "temporary files left: " << leftovers.size());

    child_result reader =
        run_child(dir, "reader", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 16x16x16; call 76x76x76");
    INFO(reader.report());
    REQUIRE(reader.ok());
    REQUIRE(reader.steps.size() == 2);
    for (const step_seen &s : reader.steps) {
        CHECK(s.why() == "auto: tune cache hit");
        CHECK(s.correct());
        CHECK(s.warnings().empty());
    }
}

// ---- 7. GEMM_TUNE, GEMM_RECORD and the nearest tuned shape ---------------------------------

TEST_CASE("tuner env_tune_off: GEMM_TUNE=off ignores a cache hit and uses the built-in rule") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string key = key_text(64, 64, 64);
    child_result tuning = run_child(dir, "tune", {"GEMM_TUNE_CACHE=" + cache}, "tune 64x64x64 budget=50");
    INFO(tuning.report());
    REQUIRE(tuning.ok());
    REQUIRE(tuning.steps.size() == 1);
    REQUIRE(tuning.steps[0].status() == GEMM_STATUS_SUCCESS);
    // Make the hit unmistakable: the entry names cpu_ref, which the built-in rule never picks
    // while cblas or cpu_omp is available.
    REQUIRE(preferred_host_backend() != "cpu_ref");
    std::vector<std::string> lines = read_lines(cache);
    std::string text;
    int replaced = 0;
    for (const std::string &l : lines) {
        bool entry = starts_with(l, key + " | ");
        replaced += entry ? 1 : 0;
        text += (entry ? key + " | cpu_ref - | 1.000 us | default " + preferred_host_backend() + " 2.000 us" : l) + "\n";
    }
    REQUIRE(replaced == 1);
    write_text(cache, text);

    child_result use =
        run_child(dir, "use", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=use"}, "call 64x64x64");
    INFO(use.report());
    REQUIRE(use.ok());
    REQUIRE(use.steps.size() == 1);
    CHECK(use.steps[0].why() == "auto: tune cache hit");
    CHECK(use.steps[0].traced_backend() == "cpu_ref");

    child_result off = run_child(dir, "off", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=off"},
                                 "call 64x64x64; call 48x48x48");
    INFO(off.report());
    REQUIRE(off.ok());
    REQUIRE(off.steps.size() == 2);
    for (const step_seen &s : off.steps) {
        INFO("trace: " << s.trace());
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
        CHECK(contains(s.why(), "built-in rule"));
        CHECK(contains(s.why(), "(GEMM_TUNE=off)"));
        CHECK(s.traced_backend() == preferred_host_backend());
    }
}

TEST_CASE("tuner env_tune_online: GEMM_TUNE=online tunes an untuned shape on first sight and stores it; a shape "
          "it cannot tune is not tried again until the cache changes") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    child_result r = run_child(dir, "online", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=online"},
                               "call 48x48x48; call 48x48x48");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].why() == "auto: tuned now (GEMM_TUNE=online)");
    CHECK(r.steps[1].why() == "auto: tune cache hit");
    CHECK(r.steps[1].traced_backend() == r.steps[0].traced_backend());
    for (const step_seen &s : r.steps) {
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
    }
    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    std::vector<std::string> entries = entry_lines_for(lines, key_text(48, 48, 48));
    REQUIRE(entries.size() == 1);
    CHECK(is_entry_line(entries[0]));
    CHECK(contains(entries[0], " | " + r.steps[0].traced_backend() + " "));

    child_result later = run_child(dir, "later", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"}, "call 48x48x48");
    INFO(later.report());
    REQUIRE(later.ok());
    REQUIRE(later.steps.size() == 1);
    CHECK(later.steps[0].why() == "auto: tune cache hit");

    // A shape the tuner cannot measure (its own operands would take 2^43 bytes) is tried once:
    // the call falls back to the built-in rule, the next call of it does not tune again (until
    // the cache changes: here the online tune of 40x40x40 stores, and it is tried once more).
    child_result failing =
        run_child(dir, "online_fails", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=online"},
                  "broadcast 4194304x262144; broadcast 4194304x262144; call 40x40x40; "
                  "broadcast 4194304x262144; broadcast 4194304x262144");
    INFO(failing.report());
    REQUIRE(failing.ok());
    REQUIRE(failing.steps.size() == 5);
    for (std::size_t i = 0; i < failing.steps.size(); ++i) {
        const step_seen &s = failing.steps[i];
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
        CHECK(s.error.empty());
        // Step 2 is tuned now, and runs whichever backend measured fastest on this machine.
        if (i != 2) CHECK(builtin_host(s.traced_backend()));
    }
    const std::string tried = "online tuning failed: ", remembered = "online tuning failed earlier in this process";
    CHECK(contains(failing.steps[0].why(), "built-in rule"));
    CHECK(contains(failing.steps[0].why(), tried));
    CHECK(contains(failing.steps[0].why(), "host memory"));
    CHECK(failing.steps[0].warned("GEMM_TUNE=online: cannot tune f32 f32 NN 1 1 4194304 batch=262144"));
    CHECK(contains(failing.steps[1].why(), remembered));
    CHECK(failing.steps[1].warnings().empty());
    CHECK(failing.steps[2].why() == "auto: tuned now (GEMM_TUNE=online)");
    CHECK(contains(failing.steps[3].why(), tried));
    CHECK(failing.steps[3].warnings().empty());  // once per process
    CHECK(contains(failing.steps[4].why(), remembered));
    CHECK(count_prefix(read_lines(cache), "f32 f32 NN 1 1 4194304 ") == 0);
}

// A call with padded leading dimensions that are still 16-byte multiples (m = 70, lda = ldc
// = 72) has the key "ld=padded align=16"; online tuning must store an entry under that key so
// the second call is a hit rather than another tuning run.
// The tuner measures a key with leading dimensions of the key's own alignment class: padding
// by 16 elements (lda = ldc = 86, 344 bytes, not a multiple of 16) would file the entry under
// "ld=padded align=elem", and every call with this shape would tune again (and so would
// `gemm tune --shapes` for GEMM_RECORD lines).
TEST_CASE("tuner env_tune_online_padded: an online-tuned padded shape is a hit the second time") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    child_result r = run_child(dir, "online_padded", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_TUNE=online"},
                               "call 70x64x64 lda=72 ldc=72; call 70x64x64 lda=72 ldc=72");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].correct());
    CHECK(r.steps[1].correct());
    CHECK(r.steps[0].why() == "auto: tuned now (GEMM_TUNE=online)");
    CHECK(r.steps[1].why() == "auto: tune cache hit");
    std::vector<std::string> lines = read_lines(cache);
    INFO("cache file:\n" << numbered(lines));
    CHECK(entry_lines_for(lines, "f32 f32 NN 70 64 64 batch=1 ld=padded align=16 space=host beta=0").size() == 1);
}

TEST_CASE("tuner env_record: GEMM_RECORD appends each untuned key once, in the key format, across runs") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    std::string record = dir.file("record.txt");
    child_result r = run_child(dir, "record", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_RECORD=" + record},
                               "tune 64x64x64 budget=50; call 8x8x8; call 8x8x8; call 12x12x12; call 64x64x64; "
                               "call 8x8x8 beta=0.5; call 12x12x12");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 7);
    for (const step_seen &s : r.of("call")) {
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
    }
    check_builtin_untuned(r.steps[1]);
    CHECK(r.steps[4].why() == "auto: tune cache hit");  // a tuned shape is not recorded

    std::vector<std::string> lines = read_lines(record);
    INFO("record file:\n" << numbered(lines));
    const std::vector<std::string> want = {key_text(8, 8, 8), key_text(12, 12, 12), key_text(8, 8, 8, false)};
    CHECK(lines == want);
    for (const std::string &l : lines) {
        INFO(l);
        CHECK(is_key_text(l));  // what `gemm tune --shapes FILE` reads
    }

    // Another run of the same program adds only the shape the file lacks; lines someone else
    // wrote there (a comment) stay.
    write_text(record, read_text(record) + "# mine\n");
    child_result again = run_child(dir, "again", {"GEMM_TUNE_CACHE=" + cache, "GEMM_RECORD=" + record},
                                   "call 8x8x8; call 12x12x12; call 8x8x8 beta=0.5; call 20x20x20");
    INFO(again.report());
    REQUIRE(again.ok());
    std::vector<std::string> want_again = want;
    want_again.push_back("# mine");
    want_again.push_back(key_text(20, 20, 20));
    CHECK(read_lines(record) == want_again);

    // A record file that cannot be opened: a warning naming GEMM_RECORD and the file (not the
    // tune cache, which is fine), and the call runs.
    const std::string unopenable = dir.file("no_such_dir/record.txt");
    child_result lost =
        run_child(dir, "lost", {"GEMM_TUNE_CACHE=" + cache, "GEMM_RECORD=" + unopenable}, "call 24x24x24");
    INFO(lost.report());
    REQUIRE(lost.ok());
    REQUIRE(lost.steps.size() == 1);
    CHECK(lost.steps[0].correct());
    CHECK(lost.steps[0].warned("GEMM_RECORD: cannot open " + unopenable));
    CHECK_FALSE(lost.steps[0].warned("tune cache"));
}

// With GEMM_ALLOW_TF32=1 an f32 class is timed in TF32 math and keyed apart (math=tf32): what
// GEMM_RECORD writes and the tuner stores; a process without TF32 neither uses such an entry
// nor measures its key, nor does a TF32 process a full-f32 key.
TEST_CASE("tuner tf32_keys: TF32 classes are keyed apart, recorded, stored and measured only in their math") {
    scratch_dir dir;
    const std::string cache = dir.file("tune-cache.txt"), record = dir.file("record.txt");
    const std::string tf32_key = key_text(64, 64, 64) + " math=tf32";
    child_result r = run_child(
        dir, "tf32", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", "GEMM_RECORD=" + record, "GEMM_ALLOW_TF32=1"},
        "call 64x64x64; tune 64x64x64 budget=20; call 64x64x64; verify 64x64x64 budget=20");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 4);
    CHECK(r.steps[0].correct());
    check_builtin_untuned(r.steps[0]);
    CHECK(read_lines(record) == std::vector<std::string>{tf32_key});
    CHECK(is_key_text(tf32_key));
    REQUIRE(r.steps[1].get("stored") == "1");
    CHECK(r.steps[2].why() == "auto: tune cache hit");
    CHECK(r.steps[3].status() == GEMM_STATUS_INVALID_VALUE);  // the full-f32 key: not this process's math
    CHECK(contains(r.steps[3].error, "full f32 math: measure it without GEMM_ALLOW_TF32=1"));
    const std::vector<std::string> lines = read_lines(cache);
    INFO(numbered(lines));
    CHECK(entry_lines_for(lines, tf32_key).size() == 1);
    CHECK(entry_lines_for(lines, key_text(64, 64, 64)).empty());

    child_result full = run_child(dir, "full", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                                  "call 64x64x64; verify 64x64x64 tf32=1 budget=20; entries");
    INFO(full.report());
    REQUIRE(full.ok());
    REQUIRE(full.steps.size() == 3);
    CHECK(full.steps[0].correct());
    check_builtin_untuned(full.steps[0]);  // the TF32 entry is not this process's class
    CHECK(full.steps[1].status() == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(full.steps[1].error, "of TF32 math (math=tf32): measure it with GEMM_ALLOW_TF32=1"));
    REQUIRE(full.steps[2].entries.size() == 1);
    CHECK(starts_with(full.steps[2].entries[0], tf32_key + " | "));
}

TEST_CASE("tuner nearest: an untuned shape within a factor of 2 uses the nearest tuned one") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    // 72, not 70: 70 floats is not a multiple of 16 bytes, so a tight 70-row call is another
    // class (align=elem) and no 64x64x64 entry stands in for it.
    child_result r = run_child(dir, "nearest", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "tune 64x64x64 budget=100; call 72x64x64; call 64x64x40; call 200x64x64; "
                               "call 64x64x140; call 72x64x64 beta=0.5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 6);
    REQUIRE(r.steps[0].status() == GEMM_STATUS_SUCCESS);
    for (const step_seen &s : r.of("call")) {
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
    }
    for (std::size_t i : {1, 2}) check_nearest_64(r.steps[i], r.steps[0].get("backend"));
    for (std::size_t i : {3, 4, 5}) {  // m, then k, beyond a factor of 2; then another class (beta)
        CHECK_FALSE(contains(r.steps[i].why(), "nearest"));
        check_builtin_untuned(r.steps[i]);
    }
}

// The nearest-shape answer is remembered per shape (the search reads every entry); a store
// must forget it, or a shape first met untuned would stay untuned after a near one is tuned.
// Each repeated call also exercises what a thread remembers of its last decision (a plain miss,
// then a nearest shape): a store must end it.
TEST_CASE(
    "tuner nearest_after_store: a tune in the same process changes the nearest-shape answer, and then the exact one") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    child_result r = run_child(dir, "nearest_after_store", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1"},
                               "call 72x64x64; call 72x64x64; tune 64x64x64 budget=100; call 72x64x64; "
                               "call 72x64x64; tune 72x64x64 budget=100; call 72x64x64; call 72x64x64");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 8);
    REQUIRE(r.steps[2].status() == GEMM_STATUS_SUCCESS);
    for (const step_seen &s : r.of("call")) {
        CHECK(s.status() == GEMM_STATUS_SUCCESS);
        CHECK(s.correct());
    }
    for (std::size_t i : {0, 1}) check_builtin_untuned(r.steps[i]);
    for (std::size_t i : {3, 4}) check_nearest_64(r.steps[i], r.steps[2].get("backend"));
    REQUIRE(r.steps[5].get("stored") == "1");
    for (std::size_t i : {6, 7}) {
        CHECK(r.steps[i].why() == "auto: tune cache hit");
        CHECK(r.steps[i].traced_backend() == r.steps[5].get("backend"));
    }
}

// ---- 8. argument errors ---------------------------------------------------------------------

namespace {

gemm_tune_request_t valid_request() {
    gemm_tune_request_t r;
    std::memset(&r, 0, sizeof r);
    r.ab_type = GEMM_F32;
    r.c_type = GEMM_F32;
    r.layout = GEMM_COL_MAJOR;
    r.transa = GEMM_OP_N;
    r.transb = GEMM_OP_N;
    r.m = r.n = r.k = 8;
    r.batch_count = 1;
    r.beta_zero = 1;
    r.device = -1;
    r.budget_ms = 5;
    return r;
}

// Puts an arbitrary int into an enum field, as a C caller may: C++ cannot form an enum value
// outside the enumeration's range without undefined behaviour, but may copy the bytes; only
// the library's C entry point (gemm_entry.c) reads the field, as an int.
template <class E> void set_raw(E &field, int value) {
    static_assert(sizeof(E) == sizeof(int), "enum fields are int-sized");
    std::memcpy(&field, &value, sizeof value);
}

template <class Change> void expect_tune_error(const char *what, Change change, gemm_status_t want, const char *text) {
    gemm_tune_request_t r = valid_request();
    change(r);
    gemm_tune_report_t report;
    std::memset(&report, 0, sizeof report);
    gemm_status_t s = gemm_tune(&r, 1, &report);
    std::string error = gemm_last_error();
    INFO(what << ": " << gemm_status_string(s) << " \"" << error << "\"");
    CHECK(s == want);
    CHECK(contains(error, "gemm_tune"));
    CHECK(contains(error, text));
    CHECK(report.stored == 0);
}

}  // namespace

// gemm_tune_verify measures a stored choice against the built-in rule's choice now; one that
// is slower by more than 2 % does not hold, and with remove = 1 it leaves the cache, in the
// process and in the file, while every other line stays. cpu_ref (a plain loop) is far
// slower than the built-in choice at 96^3: a stored choice that cannot hold.
TEST_CASE("tuner verify: a stored choice slower than the default does not hold and can be removed; the rest stays") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    // The rates make the built-in rule's choice this machine's preferred host backend whatever
    // it would measure.
    std::string builtin = preferred_host_backend();
    REQUIRE(!builtin.empty());
    REQUIRE(builtin != "cpu_ref");
    const std::string rates = "rates f32 | host " + builtin + " 1e+09 GFLOP/s 0 us";
    std::string k64 = key_text(64, 64, 64), k96 = key_text(96, 96, 96);
    std::string e64 = k64 + " | " + builtin + " - | 5.000 us | default " + builtin + " 5.000 us";
    std::string e96 = k96 + " | cpu_ref - | 10.000 us | default " + builtin + " 30.000 us";
    std::string other = "[machine] gemm 0.0.0; cpu another machine";
    std::string other_entry = k96 + " | cpu_ref - | 1.000 us | default cblas 2.000 us";
    write_text(cache, "# kept comment\n" + this_machine_line(dir) + "\n" + rates + "\n" + e96 + "\n" + e64 + "\n" +
                          other + "\n" + other_entry + "\n");
    std::vector<std::string> before = read_lines(cache);

    // One OpenBLAS thread: with two, a test running beside this one on a 2-core machine can
    // leave OpenBLAS's threads waiting on each other for milliseconds, and the verdict on
    // cpu_ref (about 1 ms at 96^3) would measure that instead.
    const std::string one_thread = "OPENBLAS_NUM_THREADS=1";
    child_result look = run_child(dir, "look", {"GEMM_TUNE_CACHE=" + cache, one_thread},
                                  "entries; verify 96x96x96 budget=100; verify 64x64x64; verify 128x128x128; "
                                  "verify null; verify garbage");
    INFO(look.report());
    REQUIRE(look.ok());
    REQUIRE(look.steps.size() == 6);
    const step_seen &listed = look.steps[0];
    CHECK(listed.status() == GEMM_STATUS_SUCCESS);
    CHECK(listed.get("count") == "2");
    REQUIRE(listed.entries.size() == 2);  // this machine's, ordered by key: 64 before 96
    CHECK(listed.entries[0] == k64 + " | " + builtin + " - | 5.000 | " + builtin + " 5.000");
    CHECK(listed.entries[1] == k96 + " | cpu_ref - | 10.000 | " + builtin + " 30.000");

    const step_seen &slow = look.steps[1];
    CHECK(slow.status() == GEMM_STATUS_SUCCESS);
    CHECK(slow.get("measured") == "1");
    CHECK(slow.get("holds") == "0");
    CHECK(slow.get("removed") == "0");
    CHECK(slow.get("default") == builtin);
    CHECK(std::atof(slow.get("median_us").c_str()) > 1.02 * std::atof(slow.get("default_median_us").c_str()));
    CHECK(contains(slow.note, "the default's speed"));

    const step_seen &same = look.steps[2];
    CHECK(same.status() == GEMM_STATUS_SUCCESS);
    CHECK(same.get("measured") == "0");
    CHECK(same.get("holds") == "1");
    CHECK(same.note == "the built-in choice itself");

    CHECK(look.steps[3].status() == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(look.steps[3].error, "has no entry for '" + key_text(128, 128, 128) + "'"));
    CHECK(look.steps[4].status() == GEMM_STATUS_INVALID_POINTER);
    CHECK(look.steps[5].status() == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(look.steps[5].error, "is not a tune-cache key"));
    CHECK(read_lines(cache) == before);  // remove = 0 changes nothing

    child_result drop = run_child(dir, "drop", {"GEMM_TUNE_CACHE=" + cache, "GEMM_VERBOSE=1", one_thread},
                                  "call 96x96x96; verify 96x96x96 remove=1 budget=100; entries; call 96x96x96; "
                                  "verify 96x96x96");
    INFO(drop.report());
    REQUIRE(drop.ok());
    REQUIRE(drop.steps.size() == 5);
    CHECK(drop.steps[0].why() == "auto: tune cache hit");
    CHECK(drop.steps[0].traced_backend() == "cpu_ref");
    CHECK(drop.steps[1].get("holds") == "0");
    CHECK(drop.steps[1].get("removed") == "1");
    CHECK(drop.steps[2].get("count") == "1");
    // The same thread's next call no longer finds the entry it hit before.
    CHECK(drop.steps[3].status() == GEMM_STATUS_SUCCESS);
    CHECK(drop.steps[3].correct());
    CHECK(drop.steps[3].why() != "auto: tune cache hit");
    CHECK(drop.steps[3].traced_backend() == builtin);
    CHECK(drop.steps[4].status() == GEMM_STATUS_INVALID_VALUE);

    std::vector<std::string> after = read_lines(cache);
    INFO("cache file:\n" << numbered(after));
    std::vector<std::string> expected;
    for (const std::string &l : before)
        if (l != e96) expected.push_back(l);
    std::vector<std::string> body;  // without the header comments a store writes first
    for (const std::string &l : after)
        if (!header_line(l)) body.push_back(l);
    CHECK(body == expected);
    CHECK(std::count(after.begin(), after.end(), other_entry) == 1);  // another machine's stays
}

TEST_CASE("tuner errors: gemm_tune refuses bad requests with the right status and a message") {
    // GEMM_TUNE_CACHE points at a file that must not appear: nothing here stores.
    const char *cache = std::getenv("GEMM_TUNE_CACHE");
    REQUIRE(cache);
    REQUIRE_FALSE(file_exists(cache));

    gemm_tune_report_t report;
    std::memset(&report, 0, sizeof report);
    gemm_tune_request_t ok = valid_request();
    CHECK(gemm_tune(nullptr, 1, &report) == GEMM_STATUS_INVALID_POINTER);
    CHECK(contains(gemm_last_error(), "request"));
    CHECK(gemm_last_error_parameter() == 1);
    CHECK(gemm_tune(&ok, 1, nullptr) == GEMM_STATUS_INVALID_POINTER);
    CHECK(contains(gemm_last_error(), "report"));
    CHECK(gemm_last_error_parameter() == 3);

    // A flag argument is 0 or 1, as a flag field is: another value is a mistake, not "true".
    const char *key = "f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0";
    CHECK(gemm_tune(&ok, -3, &report) == GEMM_STATUS_INVALID_VALUE);
    CHECK(std::string(gemm_last_error()) == "parameter 2: store = -3 must be 0 or 1");
    CHECK(gemm_last_error_parameter() == 2);
    CHECK(gemm_tune_key(key, -1, 20, "cpu_ref", 7, &report) == GEMM_STATUS_INVALID_VALUE);
    CHECK(std::string(gemm_last_error()) == "parameter 5: store = 7 must be 0 or 1");
    CHECK(gemm_last_error_parameter() == 5);
    gemm_tune_verdict_t verdict;
    CHECK(gemm_tune_verify(key, -1, 20, 9, &verdict) == GEMM_STATUS_INVALID_VALUE);
    CHECK(std::string(gemm_last_error()) == "parameter 4: remove = 9 must be 0 or 1");
    CHECK(gemm_last_error_parameter() == 4);

    // A key is stored exactly as written, so that gemm_tune_verify finds it by that text. 5 f32
    // are 20 bytes: tight leading dimensions of 5 x 5 are not 16-byte multiples, so its calls
    // are align=elem, and a key saying align=16 is refused, with the form to write.
    const char *unaligned = "f32 f32 NN 5 5 5 batch=1 ld=tight align=16 space=host beta=0";
    CHECK(gemm_tune_key(unaligned, -1, 20, "cpu_ref", 0, &report) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "write align=elem"));
    CHECK(gemm_last_error_parameter() == 1);
    CHECK(gemm_tune_verify(unaligned, -1, 20, 0, &verdict) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "write align=elem"));
    CHECK(gemm_tune_key("f32 f32 NN 5 5 5 batch=1 ld=tight align=elem space=host beta=0", -1, 20, "cpu_ref", 0,
                        &report) == GEMM_STATUS_SUCCESS);
    CHECK(gemm_tune_key("f32 f32 NN 5 5 5 batch=1 ld=padded align=16 space=host beta=0", -1, 20, "cpu_ref", 0,
                        &report) == GEMM_STATUS_SUCCESS);

    using R = gemm_tune_request_t;
    expect_tune_error(
        "m = -1", [](R &r) { r.m = -1; }, GEMM_STATUS_INVALID_SIZE, "m, n, k");
    expect_tune_error(
        "n = -1", [](R &r) { r.n = -1; }, GEMM_STATUS_INVALID_SIZE, "m, n, k");
    expect_tune_error(
        "k = -5", [](R &r) { r.k = -5; }, GEMM_STATUS_INVALID_SIZE, "m, n, k");
    expect_tune_error(
        "batch_count = 0", [](R &r) { r.batch_count = 0; }, GEMM_STATUS_INVALID_SIZE, "batch_count");
    expect_tune_error(
        "batch_count = -2", [](R &r) { r.batch_count = -2; }, GEMM_STATUS_INVALID_SIZE, "batch_count");
    // -1 asks for the least padding that keeps 16-byte alignment; below that is an error.
    expect_tune_error(
        "ld_padding = -2", [](R &r) { r.ld_padding = -2; }, GEMM_STATUS_INVALID_SIZE, "ld_padding");
    // Sizes whose operands cannot exist: refused before anything is allocated or multiplied
    // into a wrapped byte count; sizes that could exist but not on this machine: ALLOC_FAILED.
    constexpr int64_t max = INT64_MAX;
    expect_tune_error(
        "batch_count = INT64_MAX",
        [](R &r) {
            r.m = r.n = r.k = 1;
            r.batch_count = max;
        },
        GEMM_STATUS_INVALID_SIZE, "2^63");
    expect_tune_error(
        "k = 2^62", [](R &r) { r.k = int64_t(1) << 62; }, GEMM_STATUS_INVALID_SIZE, "2^63");
    expect_tune_error(
        "m = n = k = 2^32", [](R &r) { r.m = r.n = r.k = int64_t(1) << 32; }, GEMM_STATUS_INVALID_SIZE, "2^63");
    expect_tune_error(
        "ld_padding = INT64_MAX", [](R &r) { r.ld_padding = max; }, GEMM_STATUS_INVALID_SIZE, "2^63");
    expect_tune_error(
        "m = n = k = 2^20", [](R &r) { r.m = r.n = r.k = int64_t(1) << 20; }, GEMM_STATUS_ALLOC_FAILED,
        "GiB of host memory");
    expect_tune_error(
        "budget_ms = inf", [](R &r) { r.budget_ms = HUGE_VAL; }, GEMM_STATUS_INVALID_VALUE, "budget_ms");
    // A flag is 0 or 1: 2 is a mistake, not "true".
    expect_tune_error(
        "misaligned = 2", [](R &r) { r.misaligned = 2; }, GEMM_STATUS_INVALID_VALUE, "misaligned");
    expect_tune_error(
        "beta_zero = -1", [](R &r) { r.beta_zero = -1; }, GEMM_STATUS_INVALID_VALUE, "beta_zero");
    expect_tune_error(
        "backends = nosuch", [](R &r) { r.backends = "cblas,nosuch"; }, GEMM_STATUS_UNKNOWN_BACKEND, "nosuch");
    expect_tune_error(
        "layout = GEMM_OP_N", [](R &r) { set_raw(r.layout, GEMM_OP_N); }, GEMM_STATUS_INVALID_LAYOUT, "layout");
    expect_tune_error(
        "layout = 0", [](R &r) { set_raw(r.layout, 0); }, GEMM_STATUS_INVALID_LAYOUT, "layout");
    expect_tune_error(
        "layout = -1", [](R &r) { set_raw(r.layout, -1); }, GEMM_STATUS_INVALID_LAYOUT, "layout");
    expect_tune_error(
        "transa = GEMM_ROW_MAJOR", [](R &r) { set_raw(r.transa, GEMM_ROW_MAJOR); }, GEMM_STATUS_INVALID_OP, "trans");
    expect_tune_error(
        "transb = 0", [](R &r) { set_raw(r.transb, 0); }, GEMM_STATUS_INVALID_OP, "trans");
    expect_tune_error(
        "ab_type = 8", [](R &r) { set_raw(r.ab_type, 8); }, GEMM_STATUS_INVALID_DTYPE, "ab_type");
    expect_tune_error(
        "ab_type = -1", [](R &r) { set_raw(r.ab_type, -1); }, GEMM_STATUS_INVALID_DTYPE, "ab_type");
    expect_tune_error(
        "c_type = GEMM_ROW_MAJOR", [](R &r) { set_raw(r.c_type, GEMM_ROW_MAJOR); }, GEMM_STATUS_INVALID_DTYPE, "c_type");
    // Valid dtypes in a combination no backend serves: not supported, not invalid.
    expect_tune_error(
        "f32 -> f64", [](R &r) { r.c_type = GEMM_F64; }, GEMM_STATUS_NOT_SUPPORTED, "c_type");
    expect_tune_error(
        "f64 -> f32", [](R &r) { r.ab_type = GEMM_F64; }, GEMM_STATUS_NOT_SUPPORTED, "c_type");
    expect_tune_error(
        "f16 -> bf16",
        [](R &r) {
            r.ab_type = GEMM_F16;
            r.c_type = GEMM_BF16;
        },
        GEMM_STATUS_NOT_SUPPORTED, "c_type");

    // The supported mixed and 16-bit combinations tune, and store = 0 writes nothing.
    for (auto types :
         {std::pair<gemm_dtype_t, gemm_dtype_t>{GEMM_F16, GEMM_F32}, {GEMM_BF16, GEMM_BF16}, {GEMM_F64, GEMM_F64}}) {
        gemm_tune_request_t r = valid_request();
        r.ab_type = types.first;
        r.c_type = types.second;
        r.layout = GEMM_ROW_MAJOR;
        r.transb = GEMM_OP_T;
        gemm_status_t s = gemm_tune(&r, 0, &report);
        INFO(gemm_dtype_name(types.first) << " -> " << gemm_dtype_name(types.second) << ": " << gemm_status_string(s)
                                          << " \"" << gemm_last_error() << "\"");
        CHECK(s == GEMM_STATUS_SUCCESS);
        CHECK(std::string(gemm_last_error()).empty());
        CHECK(report.stored == 0);
        REQUIRE(report.backend);
        CHECK(std::string(report.backend) != "");
        REQUIRE(report.candidate_count >= 1);
        for (int64_t i = 0; i < report.candidate_count; ++i) CHECK(report.candidates[i].correct == 1);
    }
    CHECK_FALSE(file_exists(cache));
    CHECK_FALSE(file_exists(std::string(cache) + ".lock"));
}

// test_selection covers gemm_sgemm & co. under an invalid GEMM_TUNE; this is gemm_tune.
TEST_CASE("tuner env_tune_invalid: an invalid GEMM_TUNE makes gemm_tune return INVALID_CONFIG") {
    scratch_dir dir;
    std::string cache = dir.file("tune-cache.txt");
    child_result r = run_child(dir, "invalid", {"GEMM_TUNE_CACHE=" + cache, "GEMM_TUNE=sometimes"},
                               "tune 8x8x8 budget=5; tune 8x8x8 store=0 budget=5");
    INFO(r.report());
    REQUIRE(r.ok());
    REQUIRE(r.steps.size() == 2);
    for (const step_seen &s : r.steps) {
        CHECK(s.status() == GEMM_STATUS_INVALID_CONFIG);
        CHECK(contains(s.error, "GEMM_TUNE='sometimes'"));
        CHECK(s.get("stored") == "0");
    }
    CHECK_FALSE(file_exists(cache));
}
