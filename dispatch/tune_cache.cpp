// tune_cache.cpp: reading, merging and atomically rewriting the tune cache file.
#include "tune_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

namespace gemm {
namespace {

constexpr const char *section_marker = "[machine] ";

std::string trim(std::string s) {
    auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
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
    auto key = tune_key::parse(fields[0]);
    if (!key) return why = "bad problem key '" + fields[0] + "'", std::nullopt;
    e.key = *key;
    std::istringstream choice(fields[1]);
    std::string extra;
    if (!(choice >> e.backend >> e.variant) || (choice >> extra))
        return why = "bad choice '" + fields[1] + "' (want: backend variant)", std::nullopt;
    if (e.variant == "-") e.variant.clear();
    auto us = parse_microseconds(fields[2]);
    if (!us) return why = "bad time '" + fields[2] + "'", std::nullopt;
    e.microseconds = *us;
    std::istringstream def(fields[3]);
    std::string word, default_time, unit;
    if (!(def >> word >> e.default_backend >> default_time >> unit) || word != "default")
        return why = "bad default '" + fields[3] + "'", std::nullopt;
    auto dus = parse_microseconds(default_time + " " + unit);
    if (!dus) return why = "bad default time '" + fields[3] + "'", std::nullopt;
    e.default_microseconds = *dus;
    return e;
}

// An entry is used only if this build can run exactly what it names.
std::optional<std::string> entry_problem(const tune_entry &e) {
    backend *b = find_backend(e.backend);
    if (!b) return "backend '" + e.backend + "' is not in this build";
    if (!b->knows_variant(e.variant)) return "backend '" + e.backend + "' has no variant '" + e.variant + "'";
    return std::nullopt;
}

std::string entry_line(const tune_entry &e) {
    return fmt::format("{} | {} {} | {:.3f} us | default {} {:.3f} us", e.key.to_text(), e.backend,
                       e.variant.empty() ? "-" : e.variant, e.microseconds, e.default_backend,
                       e.default_microseconds);
}

gemm_status_t make_parent_dirs(const std::string &path) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        std::string dir = path.substr(0, slash);
        if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            return set_error(GEMM_STATUS_EXECUTION_FAILED,
                             "tune cache: cannot create directory " + dir + ": " + std::strerror(errno));
    }
    return GEMM_STATUS_SUCCESS;
}

// An exclusive advisory lock on "<path>.lock", released when destroyed.
class file_lock {
public:
    explicit file_lock(const std::string &path) {
        fd_ = open((path + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
            close(fd_);
            fd_ = -1;
        }
    }
    ~file_lock() {
        if (fd_ >= 0) close(fd_);  // closing releases the lock
    }
    file_lock(const file_lock &) = delete;
    file_lock &operator=(const file_lock &) = delete;
    bool held() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

double log_distance(const tune_key &a, const tune_key &b) {
    auto d = [](int64_t x, int64_t y) { return std::fabs(std::log2(double(x + 1) / double(y + 1))); };
    return std::max({d(a.m, b.m), d(a.n, b.n), d(a.k, b.k)});
}

}  // namespace

std::string machine_fingerprint() {
    std::string fp = fmt::format("gemm {}; cpu {}; hardware threads {}", GEMM_VERSION_STRING, cpu_model(),
                                 std::thread::hardware_concurrency());
    for (backend *b : registered_backends()) {
        const verdict &v = b->available();
        fp += fmt::format("; {} {}", b->name(), v.ok ? (v.detail.empty() ? "available" : v.detail) : "unavailable");
    }
    for (char &c : fp)
        if (c == '\n' || c == '|') c = ' ';
    return fp;
}

std::string tune_cache_path() {
    if (const char *p = std::getenv("GEMM_TUNE_CACHE"); p && *p) return p;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/gemm/tune-cache.txt";
    if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/gemm/tune-cache.txt";
    return "gemm-tune-cache.txt";
}

tune_cache::tune_cache(std::string path) : path_(std::move(path)), fingerprint_(machine_fingerprint()) {
    file_contents contents = read_file(warnings_);
    for (tune_entry &e : contents.mine) entries_[e.key] = std::make_shared<const tune_entry>(std::move(e));
    for (const std::string &w : warnings_) logger().warn("{}", w);
}

std::size_t tune_cache::size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return entries_.size();
}

tune_cache::file_contents tune_cache::read_file(std::vector<std::string> &warnings) const {
    file_contents contents;
    std::ifstream in(path_);
    if (!in) return contents;  // no file yet: an empty cache
    std::string line;
    bool in_section = false, in_mine = false, saw_other_machine = false;
    for (int number = 1; std::getline(in, line); ++number) {
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        if (t.rfind(section_marker, 0) == 0) {
            in_section = true;
            in_mine = t.substr(std::strlen(section_marker)) == fingerprint_;
            saw_other_machine |= !in_mine;
            if (!in_mine) contents.other_sections.push_back(t);
            continue;
        }
        if (!in_section) {  // belongs to no machine: dropped when the file is rewritten
            warnings.push_back(fmt::format("tune cache {}:{}: skipped (outside any [machine] section): {}", path_,
                                           number, t));
            continue;
        }
        if (!in_mine) {
            contents.other_sections.push_back(t);
            continue;
        }
        std::string why;
        std::optional<tune_entry> e = parse_entry(t, why);
        if (e) {
            if (auto problem = entry_problem(*e)) {
                why = *problem;
                e.reset();
            }
        }
        if (!e) {
            warnings.push_back(fmt::format("tune cache {}:{}: skipped ({}): {}", path_, number, why, t));
            continue;
        }
        contents.mine.push_back(std::move(*e));
    }
    if (saw_other_machine && contents.mine.empty())
        warnings.push_back("tune cache " + path_ +
                           ": no section for this machine (stale: tuned on another machine or build); "
                           "run `gemm tune` here");
    return contents;
}

gemm_status_t tune_cache::write_file(const file_contents &contents) const {
    std::string temp = fmt::format("{}.tmp.{}", path_, getpid());
    {
        std::ofstream out(temp, std::ios::trunc);
        if (!out)
            return set_error(GEMM_STATUS_EXECUTION_FAILED,
                             "tune cache: cannot write " + temp + ": " + std::strerror(errno));
        out << "# gemm tune cache: `gemm tune` writes it; one [machine] section per fingerprint.\n";
        out << "# <dtype A/B> <dtype C> <ops> <m> <n> <k> batch= ld= align= space= beta= | backend variant"
               " | median time | built-in default and its time\n";
        for (const std::string &l : contents.other_sections) out << l << '\n';
        out << section_marker << fingerprint_ << '\n';
        for (const tune_entry &e : contents.mine) out << entry_line(e) << '\n';
        out.flush();
        if (!out) {
            std::remove(temp.c_str());
            return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache: write to " + temp + " failed");
        }
    }
    if (std::rename(temp.c_str(), path_.c_str()) != 0) {
        std::string why = std::strerror(errno);
        std::remove(temp.c_str());
        return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache: cannot replace " + path_ + ": " + why);
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t tune_cache::store(const std::vector<tune_entry> &fresh) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    nearest_memo_.clear();
    for (const tune_entry &e : fresh) entries_[e.key] = std::make_shared<const tune_entry>(e);

    if (gemm_status_t s = make_parent_dirs(path_); s != GEMM_STATUS_SUCCESS) return s;
    file_lock file(path_);
    if (!file.held())
        return set_error(GEMM_STATUS_EXECUTION_FAILED,
                         "tune cache: cannot lock " + path_ + ".lock: " + std::strerror(errno));
    std::vector<std::string> ignored;  // reported when this process loaded the file
    file_contents contents = read_file(ignored);
    std::unordered_map<tune_key, std::size_t, tune_key_hash> index;
    for (std::size_t i = 0; i < contents.mine.size(); ++i) index[contents.mine[i].key] = i;
    for (const tune_entry &e : fresh) {
        auto it = index.find(e.key);
        if (it != index.end()) {
            contents.mine[it->second] = e;
        } else {
            index[e.key] = contents.mine.size();
            contents.mine.push_back(e);
        }
    }
    // Entries other processes stored since we loaded become visible here too.
    for (const tune_entry &e : contents.mine)
        if (!entries_.count(e.key)) entries_.emplace(e.key, std::make_shared<const tune_entry>(e));
    return write_file(contents);
}

tune_entry_ptr tune_cache::find(const tune_key &key) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
}

tune_entry_ptr tune_cache::nearest(const tune_key &key) const {
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

tune_entry_ptr tune_cache::search_nearest(const tune_key &key) const {
    const tune_entry_ptr *best = nullptr;
    double best_distance = 1.0;  // within a factor of 2 in each dimension
    for (const auto &[k, e] : entries_) {
        if (!k.same_class(key)) continue;
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
