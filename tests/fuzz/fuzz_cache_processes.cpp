// fuzz_cache_processes.cpp: several processes store into, remove from and read one tune-cache
// file at once. Each child stores entries under keys of its own (drawn from its seed), removes
// some of them again, stores rates, and after every store reloads the file: it must load
// without a warning (no torn or half-written line) and hold every entry the child stored and
// did not remove. When all are done the parent loads the file once more: every child's
// surviving entries there, its removed ones gone, and the lines of another machine's section
// the file started with kept as they were. Built from the library's objects: these are
// internal types.
// usage: fuzz_cache_processes [--processes N] [--stores N] [--seed N]
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dispatch/tune_cache.hpp"
#include "fuzz_main.hpp"

namespace {

struct options {
    uint64_t processes = 4;
    uint64_t stores = 25;  // per process
    uint64_t seed = 20261130;
};

[[noreturn]] void usage_error(const std::string &what) {
    std::fprintf(stderr, "%s\nusage: fuzz_cache_processes [--processes N] [--stores N] [--seed N]\n", what.c_str());
    std::exit(2);
}

options parse(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; i += 2) {
        const std::string name = argv[i];
        if (name != "--processes" && name != "--stores" && name != "--seed") usage_error("unknown option " + name);
        if (i + 1 == argc) usage_error(name + " needs a value");
        const char *text = argv[i + 1];
        char *end = nullptr;
        errno = 0;
        const uint64_t v = std::strtoull(text, &end, 10);
        if (!*text || *end || errno || text[0] == '-') usage_error(name + ": '" + text + "' is not a whole number");
        (name == "--processes" ? o.processes : name == "--stores" ? o.stores : o.seed) = v;
    }
    if (o.processes < 1 || o.processes > 64) usage_error("--processes must be 1 to 64");
    if (o.stores < 1) usage_error("--stores must be at least 1");
    return o;
}

[[noreturn]] void fail(const std::string &who, const std::string &what) {
    std::fprintf(stderr, "fuzz_cache_processes: %s: %s\n", who.c_str(), what.c_str());
    std::_Exit(1);
}

// Entry j of store i of process p: a key no other process or store uses (m, n and k say
// whose it is), its other fields drawn.
gemm::tune_entry entry_of(uint64_t p, uint64_t i, uint64_t j, std::mt19937_64 &rng) {
    static const gemm::dtype types[] = {gemm::dtype::f32, gemm::dtype::f64, gemm::dtype::f16, gemm::dtype::bf16};
    gemm::tune_entry e;
    e.key.ab_type = types[rng() % 4];
    e.key.c_type = e.key.ab_type;
    e.key.op_a = rng() % 2 ? gemm::transpose::n : gemm::transpose::t;
    e.key.op_b = rng() % 2 ? gemm::transpose::n : gemm::transpose::t;
    e.key.m = int64_t(1 + p);
    e.key.n = int64_t(1 + i);
    e.key.k = int64_t(1 + j);
    e.key.padded_ld = rng() % 2;
    e.key.aligned_16 = rng() % 2;
    e.key.beta_zero = rng() % 2;
    e.backend = "cpu_ref";
    e.microseconds = double(1 + rng() % 1000) / 8;
    e.default_backend = "cpu_ref";
    e.default_microseconds = e.microseconds;
    return e;
}

// The keys a child leaves in the file, and those it removed: what the parent expects.
struct child_keys {
    std::vector<gemm::problem_class> kept, removed;
};

// Runs one child's stores and checks; returns what it kept and removed (the parent draws the
// same from the same seed).
child_keys child_work(const std::string &path, uint64_t p, const options &o, bool check) {
    const std::string who = "process " + std::to_string(p);
    std::mt19937_64 rng(o.seed + p);
    std::optional<gemm::tune_cache> cache;
    if (check) cache.emplace(path);
    child_keys keys;
    for (uint64_t i = 0; i < o.stores; ++i) {
        std::vector<gemm::tune_entry> fresh;
        for (uint64_t j = 0, count = 1 + rng() % 3; j < count; ++j) fresh.push_back(entry_of(p, i, j, rng));
        for (const gemm::tune_entry &e : fresh) keys.kept.push_back(e.key);
        const bool remove = rng() % 4 == 0, rates = rng() % 8 == 0;
        if (check && cache->store(fresh) != GEMM_STATUS_SUCCESS)
            fail(who, "a store failed: " + std::string(gemm_last_error()));
        if (remove) {
            keys.removed.push_back(keys.kept.front());
            if (check && cache->remove(keys.kept.front()) != GEMM_STATUS_SUCCESS)
                fail(who, "a removal failed: " + std::string(gemm_last_error()));
            keys.kept.erase(keys.kept.begin());
        }
        gemm::dtype_rates r;
        r.host = {{"cpu_omp", double(1 + rng() % 100), 0}};
        r.gpu_backend = "cpu_ref";
        r.gpu_gflops = 1;
        r.link_gbs = 1;
        if (check && rates && cache->store_rates(p % 2 ? gemm::dtype::f64 : gemm::dtype::f32, r) != GEMM_STATUS_SUCCESS)
            fail(who, "storing rates failed: " + std::string(gemm_last_error()));
        if (!check) continue;
        gemm::tune_cache reloaded(path);
        if (!reloaded.warnings().empty()) fail(who, "the file loads with a warning: " + reloaded.warnings().front());
        for (const gemm::problem_class &k : keys.kept)
            if (!reloaded.find(k)) fail(who, "an entry it stored is not in the file: " + k.to_text());
        for (const gemm::problem_class &k : keys.removed)
            if (reloaded.find(k)) fail(who, "an entry it removed is in the file: " + k.to_text());
    }
    return keys;
}

std::string read_all(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Lines of another machine's section, which every store must write back as they were.
const char *const foreign_lines[] = {
    "[machine] another box of this fuzz run",
    "f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0 | cpu_ref - | 1.500 us | default cpu_ref 2.000 us",
    "# a comment that stays"};

}  // namespace

int main(int argc, char **argv) {
    const options o = parse(argc, argv);
    gemm_fuzz::prepare_environment();
    const std::string path = std::string(std::getenv("GEMM_FUZZ_DIR")) + "/shared-cache.txt";
    {
        std::ofstream out(path);
        for (const char *line : foreign_lines) out << line << "\n";
    }
    // The children start before this process touches the library: no threads, no state to
    // inherit.
    std::vector<pid_t> children;
    for (uint64_t p = 0; p < o.processes; ++p) {
        const pid_t pid = fork();
        if (pid < 0) fail("parent", std::string("fork: ") + std::strerror(errno));
        if (pid == 0) {
            child_work(path, p, o, true);
            std::_Exit(0);
        }
        children.push_back(pid);
    }
    bool failed = false;
    for (pid_t pid : children) {
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
    }
    if (failed) fail("parent", "a child process failed (its message is above)");
    gemm::tune_cache final_cache(path);
    if (!final_cache.warnings().empty())
        fail("parent", "the file loads with a warning: " + final_cache.warnings().front());
    std::size_t kept = 0;
    for (uint64_t p = 0; p < o.processes; ++p) {
        const child_keys keys = child_work(path, p, o, false);
        for (const gemm::problem_class &k : keys.kept)
            if (!final_cache.find(k))
                fail("parent", "process " + std::to_string(p) + "'s entry is lost: " + k.to_text());
        for (const gemm::problem_class &k : keys.removed)
            if (final_cache.find(k))
                fail("parent", "process " + std::to_string(p) + "'s removed entry is back: " + k.to_text());
        kept += keys.kept.size();
    }
    const std::string text = read_all(path);
    for (const char *line : foreign_lines)
        if (text.find(std::string(line) + "\n") == std::string::npos)
            fail("parent", std::string("a line was lost: ") + line);
    if (final_cache.size() != kept)
        fail("parent", "the file holds " + std::to_string(final_cache.size()) + " entries of this machine, not the " +
                           std::to_string(kept) + " stored and kept");
    std::printf("fuzz_cache_processes: seed %llu: %llu processes x %llu stores, %zu entries kept in one file; no "
                "failure\n",
                (unsigned long long)o.seed, (unsigned long long)o.processes, (unsigned long long)o.stores, kept);
    std::remove(path.c_str());
    std::remove((path + ".lock").c_str());
    rmdir(std::getenv("GEMM_FUZZ_DIR"));
    return 0;
}
