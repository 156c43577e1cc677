// tune_cache.cpp: the tune cache's entries: parsing the file, merging stores into it, lookups.
#include "tune_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include <spdlog/fmt/fmt.h>

#include "error.hpp"
#include "log.hpp"
#include "registry.hpp"
#include "tune_cache_file.hpp"

namespace gemm {
namespace {

constexpr const char *section_marker = "[machine] ";
constexpr const char *identity_marker = "backend ";

// The comment write_file puts first; a read drops these lines, so they are not repeated.
constexpr const char *header_lines[] = {
    "# gemm tune cache: `gemm tune` writes it; one [machine] section per fingerprint.",
    "# <dtype A/B> <dtype C> <ops> <m> <n> <k> batch= ld= align= space= beta= | backend variant | time | default",
    "# keys are column-major: a row-major call m x n x k with ops XY is the key n m k with ops YX",
    "# transposes: omatcopy <dtype> <op> <rows> <cols> space= | backend - | time | default",
    "# sparse: spmm_csr|spmm_coo <dtype> <layout> <ops> <m> <n> <k> density= space= beta= | (as above)",
    "# backend <name> | <identity>: the lines below it in its section hold while that backend is so"};

// Lines longer than this are not entries (an entry is about 150 characters).
constexpr std::size_t max_entry_length = 1024;

// A line as a warning quotes it: at most 120 characters, any byte but printable ASCII as
// \xNN, so that a damaged file cannot send control sequences to the terminal.
std::string quoted(const std::string &line) {
    constexpr std::size_t most = 120;
    std::string out;
    for (std::size_t i = 0; i < std::min(line.size(), most); ++i) {
        const auto byte = static_cast<unsigned char>(line[i]);
        if (byte >= 0x20 && byte < 0x7f) out += char(byte);
        else out += fmt::format("\\x{:02x}", byte);
    }
    return line.size() <= most ? out : out + "... (" + std::to_string(line.size()) + " characters)";
}

bool is_header(const std::string &line) {
    for (const char *h : header_lines)
        if (line == h) return true;
    return false;
}

std::string trim(const std::string &s) {
    auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

// Why text is not a tune cache, if it is not. A cache is blank, or starts with the header
// write_file puts first, or the first of its lines that is neither blank nor a comment opens
// a [machine] section. Anything else (someone's notes, a file named by mistake) is neither
// used nor replaced by a store: the file is not ours to overwrite.
std::optional<std::string> not_a_cache(const std::string &text) {
    std::istringstream in(text);
    std::string line;
    bool comments = false;
    for (int number = 1; std::getline(in, line); ++number) {
        if (number == 1 && line == header_lines[0]) return std::nullopt;
        std::string t = trim(line);
        if (t.empty()) continue;
        if (t[0] == '#') {
            comments = true;
            continue;
        }
        if (t.rfind(section_marker, 0) == 0) return std::nullopt;
        return fmt::format("line {}, its first that is not blank or a comment, opens no [machine] section: {}", number,
                           quoted(t));
    }
    if (!comments) return std::nullopt;
    return std::string("only comments: no [machine] section, and not the header `gemm tune` writes");
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep)) parts.push_back(trim(part));
    return parts;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return trim(line.substr(line.find(':') + 1));
    return "unknown cpu";
}

// "<number> us" -> number
std::optional<double> parse_microseconds(const std::string &field) {
    std::istringstream in(field);
    double v;
    std::string unit, rest;
    if (!(in >> v >> unit) || unit != "us" || (in >> rest) || !(v >= 0)) return std::nullopt;
    return v;
}

std::optional<tune_entry> parse_entry(const std::string &line, std::string &why) {
    std::vector<std::string> fields = split(line, '|');
    if (fields.size() != 4) return why = "expected 4 fields separated by '|'", std::nullopt;
    tune_entry e;
    auto key = problem_class::parse(fields[0]);
    if (!key) return why = "bad problem key '" + quoted(fields[0]) + "'", std::nullopt;
    e.key = *key;
    std::istringstream choice(fields[1]);
    std::string extra;
    if (!(choice >> e.backend >> e.variant) || (choice >> extra))
        return why = "bad choice '" + quoted(fields[1]) + "' (want: backend variant)", std::nullopt;
    if (e.variant == "-") e.variant.clear();
    auto us = parse_microseconds(fields[2]);
    if (!us) return why = "bad time '" + quoted(fields[2]) + "'", std::nullopt;
    e.microseconds = *us;
    std::istringstream def(fields[3]);
    std::string word, default_time, unit;
    if (!(def >> word >> e.default_backend >> default_time >> unit) || word != "default")
        return why = "bad default '" + quoted(fields[3]) + "'", std::nullopt;
    auto dus = parse_microseconds(default_time + " " + unit);
    if (!dus) return why = "bad default time '" + quoted(fields[3]) + "'", std::nullopt;
    e.default_microseconds = *dus;
    return e;
}

// An entry is used only if this build can run exactly what it names.
std::optional<std::string> entry_problem(const tune_entry &e) {
    backend *b = find_backend(e.backend);
    if (!b) return "backend '" + quoted(e.backend) + "' is not in this build";
    // A call beside GEMM runs the backend's own kernel: it has no variants to name.
    if (e.key.side_call() && !e.variant.empty())
        return std::string("an entry of ") + call_kind_name(e.key.call) + " names variant '" + quoted(e.variant) +
               "'; calls beside GEMM have none (-)";
    if (!b->knows_variant(e.variant)) return "backend '" + e.backend + "' has no variant '" + quoted(e.variant) + "'";
    return std::nullopt;
}

std::string entry_line(const tune_entry &e) {
    return fmt::format("{} | {} {} | {:.3f} us | default {} {:.3f} us", e.key.to_text(), e.backend,
                       e.variant.empty() ? "-" : e.variant, e.microseconds, e.default_backend, e.default_microseconds);
}

// "backend <name> | <identity>" -> name and identity; name "" when it has none.
std::pair<std::string, std::string> parse_identity_line(const std::string &line) {
    const std::size_t bar = line.find('|');
    return {trim(line.substr(std::strlen(identity_marker), bar - std::strlen(identity_marker))),
            trim(line.substr(bar + 1))};
}

std::string identity_line(const std::string &name, const std::string &identity) {
    return identity_marker + name + " | " + identity;
}

// In double from the start: a size of INT64_MAX (a valid key) must not overflow.
double log_distance(const problem_class &a, const problem_class &b) {
    auto d = [](int64_t x, int64_t y) { return std::fabs(std::log2((double(x) + 1.0) / (double(y) + 1.0))); };
    return std::max({d(a.m, b.m), d(a.n, b.n), d(a.k, b.k)});
}

}  // namespace

namespace {

// Text from a backend or the system as one line of the file: no line break, no '|'.
std::string one_line(std::string text) {
    for (char &c : text)
        if (c == '\n' || c == '\r' || c == '|') c = ' ';
    return trim(text);
}

}  // namespace

std::string machine_fingerprint() {
    return one_line(fmt::format("gemm {}; cpu {}; hardware threads {}", GEMM_VERSION_STRING, cpu_model(),
                                std::thread::hardware_concurrency()));
}

backend_identities current_backend_identities() {
    backend_identities now;
    for (backend *b : registered_backends()) now[std::string(b->name())] = one_line(b->identity());
    return now;
}

std::optional<std::string> identity_change(const backend_identities &recorded, const backend_identities &now,
                                           const std::string &name) {
    auto was = recorded.find(name);
    auto is = now.find(name);
    if (was == recorded.end() || is == now.end() || was->second == is->second) return std::nullopt;
    return fmt::format("{}'s identity changed from '{}' to '{}'", name, quoted(was->second), quoted(is->second));
}

std::optional<std::string> rates_change(const backend_identities &recorded, const backend_identities &now) {
    for (const auto &[name, identity] : now)
        if (auto change = identity_change(recorded, now, name)) return change;
    return std::nullopt;
}

std::string tune_cache_path() {
    if (const char *p = std::getenv("GEMM_TUNE_CACHE"); p && *p) return p;
    // The XDG Base Directory rules: a relative XDG_CACHE_HOME is invalid and ignored.
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/gemm/tune-cache.txt";
    if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/gemm/tune-cache.txt";
    return "gemm-tune-cache.txt";
}

namespace {

// The rates lines of a file's contents (the last of a type wins), null without any.
template <class Lines> std::shared_ptr<const machine_rates> rates_of(const Lines &lines) {
    machine_rates r;
    bool any = false;
    for (const auto &l : lines)
        if (l.rates) {
            (l.rates->first == dtype::f64 ? r.f64 : r.f32) = l.rates->second;
            any = true;
        }
    return any ? std::make_shared<const machine_rates>(std::move(r)) : nullptr;
}

}  // namespace

tune_cache::tune_cache(std::string path)
    : path_(std::move(path)), fingerprint_(machine_fingerprint()), identities_(current_backend_identities()) {
    file_contents contents = read_file(warnings_);
    for (file_line &l : contents.lines)
        if (l.entry) entries_[l.entry->key] = std::make_shared<const tune_entry>(std::move(*l.entry));
    rates_ = rates_of(contents.lines);
    has_rates_.store(rates_ != nullptr, std::memory_order_release);
    for (const std::string &w : warnings_) logger().warn("{}", w);
}

std::shared_ptr<const machine_rates> tune_cache::rates() const {
    if (!has_rates_.load(std::memory_order_acquire)) return nullptr;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return rates_;
}

void tune_cache::keep_rates(dtype t, const dtype_rates &r) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    machine_rates m = rates_ ? *rates_ : machine_rates{};
    (t == dtype::f64 ? m.f64 : m.f32) = r;
    rates_ = std::make_shared<const machine_rates>(std::move(m));
    has_rates_.store(true, std::memory_order_release);
}

// The usable line of t leaves; the new one goes where every identity now is recorded.
void tune_cache::replace_rates_line(file_contents &contents, dtype t, const dtype_rates &r) const {
    for (std::size_t i = 0; i < contents.lines.size();) {
        if (contents.lines[i].rates && contents.lines[i].rates->first == t) {
            contents.lines.erase(contents.lines.begin() + std::ptrdiff_t(i));
            if (i < contents.mine_end) --contents.mine_end;
        } else {
            ++i;
        }
    }
    add_to_mine(contents, {rates_line(t, r), std::nullopt, std::pair{t, r}});
}

gemm_status_t tune_cache::store_rates(dtype t, const dtype_rates &r) {
    std::lock_guard<std::mutex> one_store(store_mutex_);
    keep_rates(t, r);
    return rewrite_file("nothing stored", [&](file_contents &contents) {
        replace_rates_line(contents, t, r);
        return true;
    });
}

gemm_status_t tune_cache::share_rates(dtype t, const std::function<bool(const dtype_rates &)> &enough,
                                      const std::function<gemm_status_t(dtype_rates &)> &complete,
                                      rates_source &source) {
    std::lock_guard<std::mutex> one_store(store_mutex_);
    source = rates_source::none;
    auto mine = [&] {
        std::shared_lock<std::shared_mutex> lock(mutex_);
        const dtype_rates *r = rates_ ? rates_->for_type(t) : nullptr;
        return r ? *r : dtype_rates{};
    };
    bool ran = false;
    gemm_status_t status = with_file_locked(
        "nothing stored",
        [&](file_contents &contents, const std::string &file) {
            std::shared_ptr<const machine_rates> in_file = rates_of(contents.lines);
            const dtype_rates *shared = in_file ? in_file->for_type(t) : nullptr;
            if (shared && enough(*shared)) {  // stored by another process since this one loaded
                keep_rates(t, *shared);
                take_in(contents);
                source = rates_source::file;
                return GEMM_STATUS_SUCCESS;
            }
            dtype_rates r = shared ? *shared : mine();
            if (gemm_status_t s = complete(r); s != GEMM_STATUS_SUCCESS) return s;
            keep_rates(t, r);
            source = rates_source::measured;
            replace_rates_line(contents, t, r);
            take_in(contents);
            return write_file(contents, file);
        },
        ran);
    if (ran) return status;
    // No file to share them through: measured for this process alone, the status says why.
    const std::string why = last_error_message();
    clear_error();
    dtype_rates r = mine();
    if (gemm_status_t s = complete(r); s != GEMM_STATUS_SUCCESS) return s;
    keep_rates(t, r);
    source = rates_source::measured;
    return set_error(status, why);
}

std::size_t tune_cache::size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return entries_.size();
}

tune_cache::file_contents tune_cache::read_file(std::vector<std::string> &warnings) const {
    file_contents contents;
    cache_file_text file = read_cache_file(path_);
    if (file.status == cache_file_text::state::unusable) {
        contents.usable = false;
        contents.problem = "tune cache " + path_ + ": " + file.problem;
        warnings.push_back(contents.problem + "; its entries are not used and it will not be overwritten");
        return contents;
    }
    if (std::optional<std::string> why = not_a_cache(file.text)) {
        contents.usable = false;
        contents.problem = "tune cache " + path_ + ": not a tune cache (" + *why + ")";
        warnings.push_back(contents.problem + "; it is not used and will not be overwritten");
        return contents;
    }
    std::istringstream in(file.text);
    std::string line;
    bool in_section = false, in_mine = false, saw_other_machine = false;
    std::size_t usable_entries = 0;
    std::unordered_map<problem_class, int, problem_class_hash> entry_lines;  // the line number of each key's entry
    stale_entries stale;
    for (int number = 1; std::getline(in, line); ++number) {
        if (is_header(line)) continue;
        std::string t = trim(line);
        if (t.empty() || t[0] == '#' || in_section) contents.lines.push_back({line, std::nullopt, std::nullopt});
        if (t.empty() || t[0] == '#') continue;
        if (t.rfind(section_marker, 0) == 0) {
            if (!in_section) contents.lines.push_back({line, std::nullopt, std::nullopt});
            in_section = true;
            in_mine = t.substr(std::strlen(section_marker)) == fingerprint_;
            saw_other_machine |= !in_mine;
            contents.has_mine |= in_mine;
            if (in_mine) {
                contents.mine_end = contents.lines.size();
                contents.recorded_at_end.clear();  // identities are recorded per section
            }
            continue;
        }
        if (!in_section) {
            warnings.push_back(fmt::format("tune cache {}:{}: skipped (outside any [machine] section; a store "
                                           "drops it): {}",
                                           path_, number, quoted(t)));
            continue;
        }
        if (!in_mine) continue;
        std::string why;
        if (t.rfind(identity_marker, 0) == 0 && t.find('|') != std::string::npos) {
            if (auto [name, identity] = parse_identity_line(t); !name.empty()) {
                contents.recorded_at_end[name] = identity;
            } else {
                contents.lines.pop_back();
                warnings.push_back(fmt::format("tune cache {}:{}: skipped (a backend line without a backend name; a "
                                               "store drops it): {}",
                                               path_, number, quoted(t)));
            }
        } else if (t.rfind("rates ", 0) == 0) {
            if (auto r = parse_rates_line(t, why)) {
                if (auto change = rates_change(contents.recorded_at_end, identities_))
                    warnings.push_back(fmt::format("tune cache {}:{}: rates not used ({} since they were measured; "
                                                   "kept for it, and measured again when needed): {}",
                                                   path_, number, *change, quoted(t)));
                else contents.lines.back().rates = std::move(r);
            } else {
                contents.lines.pop_back();
                warnings.push_back(
                    fmt::format("tune cache {}:{}: skipped ({}; a store drops it): {}", path_, number, why, quoted(t)));
            }
        } else if (read_entry(t, number, contents, entry_lines, stale, warnings)) {
            ++usable_entries;
        }
        contents.mine_end = contents.lines.size();
    }
    for (const auto &[change, count] : stale)
        warnings.push_back(fmt::format("tune cache {}: {}, so {} {} of {} {} stale (kept for that identity, not "
                                       "used); run `gemm tune` again",
                                       path_, change.second, count, count == 1 ? "entry" : "entries", change.first,
                                       count == 1 ? "is" : "are"));
    if (saw_other_machine && usable_entries == 0 && stale.empty())
        warnings.push_back("tune cache " + path_ +
                           ": no section for this machine (stale: tuned on another machine or build); "
                           "run `gemm tune` here");
    return contents;
}

bool tune_cache::read_entry(const std::string &t, int number, file_contents &contents,
                            std::unordered_map<problem_class, int, problem_class_hash> &entry_lines,
                            stale_entries &stale, std::vector<std::string> &warnings) const {
    std::string why = "longer than any entry";
    std::optional<tune_entry> e = t.size() <= max_entry_length ? parse_entry(t, why) : std::nullopt;
    const bool well_formed = e.has_value();
    if (e)
        if (auto problem = entry_problem(*e)) {
            why = *problem;
            e.reset();
        }
    if (!e) {
        // A line that is no entry at all is garbage a store drops; an entry this build
        // cannot use stays, for the build that can.
        if (!well_formed) contents.lines.pop_back();
        warnings.push_back(fmt::format("tune cache {}:{}: skipped ({}{}): {}", path_, number, why,
                                       well_formed ? "" : "; a store drops it", quoted(t)));
        return false;
    }
    // Stored under another identity of its backend: kept for it, counted for one warning.
    if (auto change = identity_change(contents.recorded_at_end, identities_, e->backend)) {
        ++stale[{e->backend, *change}];
        return false;
    }
    // Of two entries of one key the later is used, and said; the earlier leaves contents,
    // so that a store drops it.
    auto [earlier, fresh] = entry_lines.try_emplace(e->key, number);
    if (!fresh) {
        warnings.push_back(fmt::format("tune cache {}:{}: supersedes line {}, an entry of the same problem "
                                       "(a store drops that line): {}",
                                       path_, number, earlier->second, quoted(t)));
        earlier->second = number;
        auto same_key = [&](const file_line &l) { return l.entry && l.entry->key == e->key; };
        contents.lines.erase(std::find_if(contents.lines.begin(), contents.lines.end(), same_key));
    }
    contents.lines.back().entry = std::move(e);
    return true;
}

gemm_status_t tune_cache::write_file(const file_contents &contents, const std::string &file) const {
    std::string text;
    for (const char *h : header_lines) text += std::string(h) + '\n';
    for (const file_line &l : contents.lines) text += l.text + '\n';
    return replace_cache_file(file, text);
}

gemm_status_t tune_cache::store_target(cache_store_target &target, const char *undone) const {
    std::string why;
    if (!cache_store_target_find(path_, target, why))
        return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache " + path_ + ": " + why + "; " + undone);
    // Read again under the lock; this read spares a lock file beside a file that is no cache.
    std::vector<std::string> ignored;
    file_contents contents = read_file(ignored);
    if (!contents.usable)
        return set_error(GEMM_STATUS_EXECUTION_FAILED, contents.problem + ": not replaced, " + undone);
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t tune_cache::check_store() const {
    cache_store_target target;
    if (gemm_status_t s = store_target(target, "nothing would be stored"); s != GEMM_STATUS_SUCCESS) return s;
    std::string why;
    if (!cache_folder_writable(target, why))
        return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache " + path_ + ": " + why + "; nothing would be stored");
    return GEMM_STATUS_SUCCESS;
}

// Each fresh entry replaces the usable lines of its key: they leave, and it goes at the end of
// this machine's section, under the identities now (in place it could fall under another
// backend's older identity, when the winner changed backend).
void tune_cache::merge(file_contents &contents, const std::vector<tune_entry> &fresh) const {
    for (const tune_entry &e : fresh) {
        drop(contents, e.key);
        add_to_mine(contents, {entry_line(e), e, std::nullopt});
    }
}

void tune_cache::add_to_mine(file_contents &contents, file_line line) const {
    if (!contents.has_mine) {
        contents.lines.push_back({section_marker + fingerprint_, std::nullopt, std::nullopt});
        contents.mine_end = contents.lines.size();
        contents.has_mine = true;
    }
    auto insert = [&contents](file_line l) {
        contents.lines.insert(contents.lines.begin() + std::ptrdiff_t(contents.mine_end), std::move(l));
        ++contents.mine_end;
    };
    // The line holds under the identities now: record those the section's end does not have.
    for (const auto &[name, identity] : identities_) {
        auto recorded = contents.recorded_at_end.find(name);
        if (recorded != contents.recorded_at_end.end() && recorded->second == identity) continue;
        insert({identity_line(name, identity), std::nullopt, std::nullopt});
        contents.recorded_at_end[name] = identity;
    }
    insert(std::move(line));
}

// Removes the lines holding an entry of key from this machine's section; whether there were any.
bool tune_cache::drop(file_contents &contents, const problem_class &key) const {
    bool dropped = false;
    for (std::size_t i = 0; i < contents.lines.size();) {
        const file_line &l = contents.lines[i];
        if (!(l.entry && l.entry->key == key)) {
            ++i;
            continue;
        }
        contents.lines.erase(contents.lines.begin() + std::ptrdiff_t(i));
        if (i < contents.mine_end) --contents.mine_end;
        dropped = true;
    }
    return dropped;
}

template <class Locked> gemm_status_t tune_cache::with_file_locked(const char *undone, Locked run, bool &ran) {
    ran = false;
    cache_store_target target;
    if (gemm_status_t s = store_target(target, undone); s != GEMM_STATUS_SUCCESS) return s;
    if (!target.exists)
        if (gemm_status_t s = make_parent_dirs(target.file); s != GEMM_STATUS_SUCCESS) return s;
    cache_file_lock file(target.file);
    if (!file.held()) return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache: " + file.error());
    std::vector<std::string> ignored;  // reported when this process loaded the file
    file_contents contents = read_file(ignored);
    if (!contents.usable)
        return set_error(GEMM_STATUS_EXECUTION_FAILED, contents.problem + ": not replaced, " + undone);
    ran = true;
    return run(contents, target.file);
}

void tune_cache::take_in(const file_contents &contents) {
    // Entries other processes stored since we loaded become visible here too.
    std::unique_lock<std::shared_mutex> lock(mutex_);
    bool added = false;
    for (const file_line &l : contents.lines)
        if (l.entry && !entries_.count(l.entry->key)) {
            entries_.emplace(l.entry->key, std::make_shared<const tune_entry>(*l.entry));
            added = true;
        }
    if (added) {
        nearest_memo_.clear();
        version_.fetch_add(1, std::memory_order_release);
    }
    // Rates another process stored since we loaded, for the types this one has none of.
    if (std::shared_ptr<const machine_rates> in_file = rates_of(contents.lines)) {
        machine_rates m = rates_ ? *rates_ : machine_rates{};
        if (!m.f32) m.f32 = in_file->f32;
        if (!m.f64) m.f64 = in_file->f64;
        rates_ = std::make_shared<const machine_rates>(std::move(m));
        has_rates_.store(true, std::memory_order_release);
    }
}

template <class Edit> gemm_status_t tune_cache::rewrite_file(const char *undone, Edit edit) {
    bool ran = false;
    return with_file_locked(
        undone,
        [&](file_contents &contents, const std::string &file) {
            const bool changed = edit(contents);
            take_in(contents);
            return changed ? write_file(contents, file) : GEMM_STATUS_SUCCESS;
        },
        ran);
}

gemm_status_t tune_cache::store(const std::vector<tune_entry> &fresh) {
    // Stores take turns; lookups wait only while entries_ itself changes, never on the file.
    std::lock_guard<std::mutex> one_store(store_mutex_);
    {
        // Kept for this process even when the file cannot take them.
        std::unique_lock<std::shared_mutex> lock(mutex_);
        nearest_memo_.clear();
        for (const tune_entry &e : fresh) entries_[e.key] = std::make_shared<const tune_entry>(e);
        version_.fetch_add(1, std::memory_order_release);
    }
    return rewrite_file("nothing stored", [&](file_contents &contents) {
        merge(contents, fresh);
        return true;
    });
}

gemm_status_t tune_cache::remove(const problem_class &key) {
    std::lock_guard<std::mutex> one_store(store_mutex_);
    {
        std::unique_lock<std::shared_mutex> lock(mutex_);
        if (entries_.erase(key) != 0) {
            nearest_memo_.clear();
            version_.fetch_add(1, std::memory_order_release);
        }
    }
    // Also when this process did not have it: another process may have stored it since.
    return rewrite_file("nothing removed", [&](file_contents &contents) { return drop(contents, key); });
}

std::vector<tune_entry_ptr> tune_cache::entries() const {
    std::vector<std::pair<std::string, tune_entry_ptr>> keyed;
    {
        std::shared_lock<std::shared_mutex> lock(mutex_);
        for (const auto &[k, e] : entries_) keyed.emplace_back(k.to_text(), e);
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<tune_entry_ptr> list;
    list.reserve(keyed.size());
    for (auto &[text, e] : keyed) list.push_back(std::move(e));
    return list;
}

tune_entry_ptr tune_cache::find(const problem_class &key) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
}

tune_entry_ptr tune_cache::nearest(const problem_class &key) const {
    {
        std::shared_lock<std::shared_mutex> lock(mutex_);
        if (auto it = nearest_memo_.find(key); it != nearest_memo_.end()) return it->second;
    }
    std::unique_lock<std::shared_mutex> lock(mutex_);
    if (auto it = nearest_memo_.find(key); it != nearest_memo_.end()) return it->second;
    constexpr std::size_t memo_limit = 4096;
    if (nearest_memo_.size() >= memo_limit) nearest_memo_.clear();
    return nearest_memo_[key] = search_nearest(key);
}

tune_entry_ptr tune_cache::search_nearest(const problem_class &key) const {
    const tune_entry_ptr *best = nullptr;
    double best_distance = 1.0;  // within a factor of 2 in each dimension
    for (const auto &[k, e] : entries_) {
        if (!k.same_but_shape(key)) continue;
        double d = log_distance(k, key);
        // Ties go to the smaller shape, so the answer never depends on hash order.
        bool tie_won = best && d == best_distance &&
                       std::tie(k.m, k.n, k.k) < std::tie((*best)->key.m, (*best)->key.n, (*best)->key.k);
        if (d < best_distance || (d == best_distance && (!best || tie_won))) {
            best_distance = d;
            best = &e;
        }
    }
    return best ? *best : nullptr;
}

tune_cache &process_tune_cache() {
    static tune_cache *cache = new tune_cache(tune_cache_path());  // lives until exit
    return *cache;
}

}  // namespace gemm
