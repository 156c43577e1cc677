// fuzz_tune_cache.cpp: the tune-cache parser and its stores, on files assembled from valid
// and damaged pieces (sections, entries with sizes across the int64 range, unknown backends,
// rates lines, backend identity lines as they are now and as they were under another
// identity, comments, binary garbage, overlong lines). It checks that every usable entry is
// found (an entry is usable only under its backend's identity now), that the nearest-shape search answers within its rule,
// that a type has rates exactly when a rates line of it loaded without a warning, that a store keeps every line but the
// entries it replaces and the garbage the load said it would drop, that stored rates are read
// back, and that a file which is no tune cache by the documented rule is neither used nor
// changed by a store. Built from the library's objects: these are internal types.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "dispatch/tune_cache.hpp"
#include "fuzz_main.hpp"

namespace gemm_fuzz {
namespace {

[[noreturn]] void fail(const std::string &what, const std::string &file) {
    std::fprintf(stderr, "fuzz_tune_cache: %s\n--- the file (its first 4000 bytes):\n%s\n---\n", what.c_str(),
                 file.substr(0, 4000).c_str());
    std::abort();
}

std::string fingerprint_line() {
    static const std::string line = "[machine] " + gemm::machine_fingerprint();
    return line;
}

const char *const header_lines[] = {
    "# gemm tune cache: `gemm tune` writes it; one [machine] section per fingerprint.",
    "# <dtype A/B> <dtype C> <ops> <m> <n> <k> batch= ld= align= space= beta= | backend variant | time | default",
    "# keys are column-major: a row-major call m x n x k with ops XY is the key n m k with ops YX",
    "# transposes: omatcopy <dtype> <op> <rows> <cols> space= | backend - | time | default",
    "# sparse: spmm_csr|spmm_coo <dtype> <layout> <ops> <m> <n> <k> density= space= beta= | (as above)",
    "# backend <name> | <identity>: the lines below it in its section hold while that backend is so"};

bool is_header(const std::string &l) {
    return std::find(std::begin(header_lines), std::end(header_lines), l) != std::end(header_lines);
}

// A backend's identity line: as it is now, or as it was under another identity (a thread
// count, another BLAS library), which stales the entries and rates below it.
std::string identity_text(byte_source &in) {
    static const gemm::backend_identities now = gemm::current_backend_identities();
    static const char *names[] = {"cpu_ref", "cpu_omp", "cblas"};
    const std::string name = names[in.byte() % 3];
    auto it = now.find(name);
    const std::string identity =
        in.one_in(2) && it != now.end() ? it->second : "another identity " + std::to_string(in.byte() % 4);
    return "backend " + name + " | " + identity;
}

gemm::problem_class draw_key(byte_source &in) {
    static const gemm::dtype types[] = {gemm::dtype::f32, gemm::dtype::f64, gemm::dtype::f16, gemm::dtype::bf16};
    gemm::problem_class k;
    k.ab_type = types[in.byte() % 4];
    k.c_type = in.one_in(4) ? gemm::dtype::f32 : k.ab_type;
    k.op_a = in.one_in(2) ? gemm::transpose::n : gemm::transpose::t;
    k.op_b = in.one_in(2) ? gemm::transpose::n : gemm::transpose::t;
    auto size = [&in] {
        int64_t v = in.size_value();
        return v < 0 ? -(v + 1) : v;
    };  // >= 0, all of int64
    k.m = size();
    k.n = size();
    k.k = size();
    k.batch = std::max<int64_t>(1, size());
    k.padded_ld = in.one_in(4);
    k.aligned_16 = !in.one_in(4);
    k.space = in.one_in(8) ? gemm::memory_space::device : gemm::memory_space::host;
    k.beta_zero = !in.one_in(3);
    k.tf32 = k.ab_type == gemm::dtype::f32 && in.one_in(4);
    return k;
}

std::string choice_text(byte_source &in) {
    static const char *choices[] = {"cpu_ref -",
                                    "cpu_omp -",
                                    "cblas -",
                                    "cpu_omp generic_f32_8x4",
                                    "cpu_omp avx2_f64_8x6",
                                    "nosuch -",
                                    "cpu_omp nosuch_variant"};
    return choices[in.byte() % (sizeof choices / sizeof choices[0])];
}

std::string entry_text(const gemm::problem_class &k, const std::string &choice) {
    return k.to_text() + " | " + choice + " | 1.500 us | default cpu_ref 2.000 us";
}

// A rates line whose numbers the cache would write back as they are.
std::string rates_text(byte_source &in) {
    auto number = [&in] { return std::to_string(1 + in.byte() * 7) + "." + std::to_string(in.byte() % 10); };
    return std::string("rates ") + (in.one_in(2) ? "f32" : "f64") + " | host " + (in.one_in(2) ? "cblas" : "cpu_omp") +
           " " + number() + " GFLOP/s | gpu cpu_ref " + number() + " GFLOP/s " + number() + " GB/s " + number() + " us";
}

std::string piece(byte_source &in) {
    switch (in.byte() % 16) {
    case 0: return fingerprint_line();
    case 1: return "[machine] another box " + std::to_string(in.byte());
    case 2:
    case 3:
    case 4: return entry_text(draw_key(in), choice_text(in));
    case 5: return "# a comment " + std::to_string(in.byte());
    case 6: return in.one_in(2) ? "" : "   \t ";
    case 7: {
        std::string garbage(in.byte() % 64, ' ');
        for (char &c : garbage) c = char(in.byte());
        return garbage;
    }
    case 8: {  // one character of a valid entry changed
        std::string e = entry_text(draw_key(in), choice_text(in));
        e[in.byte() % e.size()] = char(in.byte());
        return e;
    }
    case 9: return std::string(1000 + in.byte() * 20, char('a' + in.byte() % 26));
    case 10: return header_lines[in.byte() % 4];
    case 11: return rates_text(in);
    case 12: {  // one character of a rates line changed
        std::string r = rates_text(in);
        r[in.byte() % r.size()] = char(in.byte());
        return r;
    }
    case 14: return identity_text(in);
    case 15: {  // one character of an identity line changed
        std::string l = identity_text(in);
        l[in.byte() % l.size()] = char(in.byte());
        return l;
    }
    default: return entry_text(draw_key(in), choice_text(in)) + (in.one_in(2) ? " extra" : " |");
    }
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

std::string read_all(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The lines (numbered from 1) the load warned about, and whether it said a store drops them.
std::map<int, bool> warned_lines(const gemm::tune_cache &cache) {
    std::map<int, bool> warned;
    for (const std::string &w : cache.warnings()) {
        std::size_t colon = w.find(".txt:");
        if (colon != std::string::npos && std::isdigit(static_cast<unsigned char>(w[colon + 5])))
            warned[std::atoi(w.c_str() + colon + 5)] = w.find("a store drops it") != std::string::npos;
    }
    return warned;
}

// The key of an entry line, if its first field parses as one.
std::optional<gemm::problem_class> key_of_line(const std::string &line) {
    std::size_t bar = line.find('|');
    return bar == std::string::npos ? std::nullopt : gemm::problem_class::parse(line.substr(0, bar));
}

std::string trimmed(const std::string &l) {
    std::size_t first = l.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    return l.substr(first, l.find_last_not_of(" \t\r\n") - first + 1);
}

// "backend <name> | <identity>" as the cache reads it: name and identity trimmed, name "" when
// the line is none.
std::pair<std::string, std::string> identity_of_line(const std::string &t) {
    const std::size_t bar = t.find('|');
    if (t.rfind("backend ", 0) != 0 || bar == std::string::npos) return {};
    return {trimmed(t.substr(8, bar - 8)), trimmed(t.substr(bar + 1))};
}

// The backend an entry line names (its second field's first word).
std::string backend_of_line(const std::string &line) {
    std::size_t bar = line.find('|');
    std::istringstream choice(bar == std::string::npos ? "" : line.substr(bar + 1));
    std::string backend;
    choice >> backend;
    return backend;
}

// For each line: the key of a usable entry of this machine's section (parsed, not warned, and
// its backend's identity recorded above it in its section, if any, the identity now).
std::vector<std::optional<gemm::problem_class>> usable_keys(const std::vector<std::string> &lines,
                                                            const std::map<int, bool> &warned) {
    static const gemm::backend_identities now = gemm::current_backend_identities();
    std::vector<std::optional<gemm::problem_class>> keys(lines.size());
    bool in_mine = false;
    gemm::backend_identities recorded;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string t = trimmed(lines[i]);
        if (t.rfind("[machine] ", 0) == 0) {
            in_mine = t == fingerprint_line();
            recorded.clear();
            continue;
        }
        if (!in_mine || warned.count(int(i) + 1) || t.empty() || t[0] == '#') continue;
        auto [name, identity] = identity_of_line(t);
        if (!name.empty()) {
            recorded[name] = identity;
            continue;
        }
        const std::string backend = backend_of_line(t);
        auto was = recorded.find(backend);
        auto is = now.find(backend);
        if (was == recorded.end() || is == now.end() || was->second == is->second) keys[i] = key_of_line(lines[i]);
    }
    return keys;
}

// Whether the load found the file no tune cache (which no store replaces).
bool load_refused(const gemm::tune_cache &cache) {
    return std::any_of(cache.warnings().begin(), cache.warnings().end(),
                       [](const std::string &w) { return w.find(": not a tune cache (") != std::string::npos; });
}

// The documented rule: a tune cache is blank, or starts with the header, or the first of its
// lines that is neither blank nor a comment opens a [machine] section.
bool is_cache_text(const std::string &text) {
    const std::vector<std::string> lines = lines_of(text);
    if (!lines.empty() && lines[0] == header_lines[0]) return true;
    for (const std::string &l : lines) {
        const std::string t = trimmed(l);
        if (!t.empty() && t[0] != '#') return t.rfind("[machine] ", 0) == 0;
    }
    return std::all_of(lines.begin(), lines.end(), [](const std::string &l) { return trimmed(l).empty(); });
}

void check_store(const std::string &path, const std::string &text, gemm::tune_cache &cache, byte_source &in) {
    std::vector<gemm::tune_entry> fresh;
    for (int i = 0, count = 1 + in.byte() % 3; i < count; ++i) {
        gemm::tune_entry e;
        e.key = draw_key(in);
        e.backend = "cpu_ref";
        e.microseconds = 3;
        e.default_backend = "cpu_ref";
        e.default_microseconds = 3;
        fresh.push_back(e);
    }
    std::map<int, bool> warned = warned_lines(cache);
    // A file that is not a tune cache is never replaced: the store fails and leaves it as it was.
    if (load_refused(cache)) {
        if (cache.store(fresh) == GEMM_STATUS_SUCCESS) fail("a store replaced a file that is not a tune cache", text);
        if (read_all(path) != text) fail("a refused store changed the file", text);
        ++counters().stores;
        return;
    }
    if (cache.store(fresh) != GEMM_STATUS_SUCCESS) fail("a store failed: " + std::string(gemm_last_error()), text);
    ++counters().stores;
    std::string after = read_all(path);
    // Every line but headers, dropped garbage, and usable entries of this machine whose key was
    // stored, in the same order.
    std::vector<std::string> before = lines_of(text), expected;
    std::vector<std::optional<gemm::problem_class>> keys = usable_keys(before, warned);
    for (std::size_t i = 0; i < before.size(); ++i) {
        const std::string &l = before[i];
        auto w = warned.find(int(i) + 1);
        const bool header = is_header(l);
        if (header || (w != warned.end() && w->second)) continue;
        bool replaced = false;
        for (const gemm::tune_entry &e : fresh) replaced |= keys[i] && *keys[i] == e.key;
        if (!replaced) expected.push_back(l);
    }
    std::vector<std::string> got = lines_of(after);
    std::size_t at = 0;
    for (const std::string &l : got)
        if (at < expected.size() && l == expected[at]) ++at;
    if (at != expected.size()) fail("a store lost the line \"" + expected[at].substr(0, 200) + "\"", text);
    gemm::tune_cache reloaded(path);
    ++counters().cache_files;
    for (const gemm::tune_entry &e : fresh) {
        gemm::tune_entry_ptr found = reloaded.find(e.key);
        if (!found || found->backend != "cpu_ref") fail("a stored entry is not found after a reload", after);
    }
}

// A type has rates exactly when a rates line of it in this machine's section loaded without a
// warning.
void check_rates(const gemm::tune_cache &cache, const std::string &text) {
    const std::vector<std::string> lines = lines_of(text);
    const std::map<int, bool> warned = warned_lines(cache);
    bool in_mine = false, f32 = false, f64 = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string t = trimmed(lines[i]);
        if (t.rfind("[machine] ", 0) == 0) {
            in_mine = t == fingerprint_line();
            continue;
        }
        if (in_mine && !warned.count(int(i) + 1) && t.rfind("rates ", 0) == 0) {
            std::istringstream words(t);  // the type is the second word, whatever blank follows it
            std::string rates, type;
            words >> rates >> type;
            (type == "f64" ? f64 : f32) = true;
        }
    }
    const std::shared_ptr<const gemm::machine_rates> r = cache.rates();
    if (bool(r && r->f32) != f32 || bool(r && r->f64) != f64)
        fail("the loaded rates do not match the file's unwarned rates lines", text);
}

// Rates stored for a type are what a reload of the file gives for it.
void check_store_rates(const std::string &path, gemm::tune_cache &cache, byte_source &in) {
    const gemm::dtype t = in.one_in(2) ? gemm::dtype::f32 : gemm::dtype::f64;
    gemm::dtype_rates r;
    r.host = {{"cpu_omp", 2.0 + in.byte(), double(in.byte())}};
    if (in.one_in(2)) r.host.push_back({"cblas", 1, 0.5 * in.byte()});  // slower: stays second
    if (in.one_in(2)) {
        r.gpu_backend = "cpu_ref";
        r.gpu_gflops = 1 + in.byte() * 100;
        r.link_gbs = 1 + in.byte();
        r.gpu_fixed_us = in.byte();
    }
    r.measured_ms = in.one_in(2) ? 0.0 : 0.25 * in.byte();
    if (cache.store_rates(t, r) != GEMM_STATUS_SUCCESS)
        fail("storing rates failed: " + std::string(gemm_last_error()), read_all(path));
    gemm::tune_cache reloaded(path);
    ++counters().cache_files;
    const std::shared_ptr<const gemm::machine_rates> got = reloaded.rates();
    const gemm::dtype_rates *x = got ? got->for_type(t) : nullptr;
    if (!x || rates_line(t, *x) != rates_line(t, r)) fail("stored rates are not read back", read_all(path));
}

// Every usable entry is found (equal keys: one of them), and nearest() keeps to its rule.
void check_lookups(const gemm::tune_cache &cache, const std::string &text, byte_source &in) {
    std::vector<std::string> lines = lines_of(text);
    for (const std::optional<gemm::problem_class> &k : usable_keys(lines, warned_lines(cache)))
        if (k && !cache.find(*k)) fail("a usable entry is not found: " + k->to_text(), text);
    for (int i = 0, count = 1 + in.byte() % 4; i < count; ++i) {
        gemm::problem_class k = draw_key(in);
        gemm::tune_entry_ptr near = cache.nearest(k);
        if (!near) continue;
        if (!near->key.same_but_shape(k)) fail("nearest() answered an entry of another class", text);
        auto within = [](int64_t a, int64_t b) {
            double x = double(a) + 1.0, y = double(b) + 1.0;
            return x <= 2.0 * y && y <= 2.0 * x;
        };
        if (!within(near->key.m, k.m) || !within(near->key.n, k.n) || !within(near->key.k, k.k))
            fail("nearest() answered an entry beyond a factor of 2", text);
    }
}

}  // namespace

void fuzz_one(const uint8_t *data, std::size_t size) {
    byte_source in(data, size);
    // Decided first (bytes past the input's end read as 0), and rarely: a store syncs the file
    // to disk, tens of milliseconds.
    const bool store = in.one_in(32);
    // Half the files start as `gemm tune` writes them; the others as the pieces fall, most of
    // them no tune cache.
    std::string text = in.one_in(2) ? std::string(header_lines[0]) + "\n" : "";
    for (int pieces = 1 + in.byte() % 24; pieces > 0 && !in.empty(); --pieces)
        text += piece(in) + (in.one_in(16) ? "" : "\n");
    std::string path = std::string(std::getenv("GEMM_FUZZ_DIR")) + "/cache.txt";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    gemm::tune_cache cache(path);
    ++counters().cache_files;
    const bool refused = load_refused(cache);
    if (refused == is_cache_text(text))
        fail(refused ? "a tune cache was taken for no cache" : "a file that is no cache was used", text);
    if (refused && (cache.size() != 0 || cache.rates())) fail("a file that is no cache gave entries", text);
    if (!refused) {
        check_lookups(cache, text, in);
        check_rates(cache, text);
    }
    if (store) check_store(path, text, cache, in);
    if (store && in.one_in(2) && !refused) check_store_rates(path, cache, in);
}

// Every input loads a file and one in 32 also stores into it (about 290 stores in 10^4
// files); the floor is a tenth of that (none for runs too short to count).
std::string shortfall(const fuzz_counters &c, uint64_t made) {
    if (c.stores < made / 320)
        return std::to_string(c.stores) + " stores, under 1 in 320 of " + std::to_string(made) + " cache files";
    return "";
}

}  // namespace gemm_fuzz
