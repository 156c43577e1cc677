// tune_cache.hpp: the tuner's persistent choices, a readable text file shared by processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "gemm/gemm.h"
#include "machine_rates.hpp"
#include "problem_class.hpp"
#include "tune_cache_file.hpp"

namespace gemm {

struct tune_entry {
    problem_class key;
    std::string backend;
    std::string variant;          // "" = the backend's default
    double microseconds = 0;      // median time of the winner
    std::string default_backend;  // what the built-in rule picks, and its time
    double default_microseconds = 0;
};

// An entry as the cache hands it out: immutable (a store replaces it, never edits it), so a
// caller may keep using it while another thread stores.
using tune_entry_ptr = std::shared_ptr<const tune_entry>;

// The machine and build a cache section belongs to: library version, CPU model and hardware
// threads, what no entry outlives. What else an entry depends on, a backend's identity
// (backend::identity: cpu_omp's ISA and thread count, cblas's library, a GPU backend's
// device, driver, runtime and cuBLAS), is recorded per backend inside the section.
std::string machine_fingerprint();

// Backend name -> its identity as the file records it (one line, no '|').
using backend_identities = std::map<std::string, std::string>;

// Every registered backend's identity in this process.
backend_identities current_backend_identities();

// Why lines of backend name that were stored under recorded do not hold now, if they do not:
// its recorded identity differs from its identity now. A backend the section records nothing
// of (a section written by hand), or that this build lacks, has no change to report.
std::optional<std::string> identity_change(const backend_identities &recorded, const backend_identities &now,
                                           const std::string &name);

// Why a rates line stored under recorded does not hold now, if it does not. The rates compare
// host backends with device ones and time both, so they hold only while every backend is as
// recorded: the first change found.
std::optional<std::string> rates_change(const backend_identities &recorded, const backend_identities &now);

// $GEMM_TUNE_CACHE, else $XDG_CACHE_HOME/gemm/tune-cache.txt, else ~/.cache/gemm/tune-cache.txt.
std::string tune_cache_path();

// File format, one line each:
//   # comment
//   [machine] <fingerprint>              starts the section of one machine and build
//   backend <name> | <identity>          the backend's identity when the lines below it, up to
//                                        the next such line of that backend, were stored
//   <problem_class text> | <backend> <variant or -> | <time> us | default <backend> <time> us
//                                        the text of a GEMM key starts with its dtypes; that of
//                                        a call beside GEMM with the call's name, and it has
//                                        no variant (-):
//     omatcopy <dtype> <op> <rows> <cols> space=<space>
//     spmm_csr|spmm_coo <dtype> <row|col> <op_a><op_b> <m> <n> <k> density=1e<d> space=<space> beta=<0|any>
//   rates <f32|f64> | host <backend> <x> GFLOP/s | gpu <backend> <x> GFLOP/s <x> GB/s <x> us
//                                        the machine's rates for host memory (machine_rates.hpp)
// Only the section whose fingerprint equals this machine's is used; other sections are kept
// when the file is rewritten (several machines may share a home directory). In it, an entry
// is used only while its backend's identity recorded above it equals the backend's identity
// now (identity_change), a rates line only while every backend's does (rates_change): a
// change of thread count or BLAS library stales that backend's entries, not the others'. Stale
// lines are skipped with one warning per backend and recorded identity naming the change, and
// kept: they hold again when the identity comes back. A store appends "backend" lines for the
// identities that changed before the lines it adds. Lines that do not parse, entries naming a
// backend this build lacks or a variant the backend does not know are skipped with a warning,
// never used. A store changes nothing but the entries it stores: every other line (comments,
// other machines, stale entries, entries this build cannot use) is written back as it was. A
// file that cannot be read (no permission, not a regular file, too large) or is
// not a tune cache (not blank, and neither the header write_file puts first nor a [machine]
// line as its first line that is not blank or a comment) is not used and never replaced;
// nor is a file the caller may not write. A store that would make the file too large to read
// fails. A store through a symbolic link replaces the link's target (cache_store_target).
class tune_cache {
public:
    explicit tune_cache(std::string path);

    const std::string &path() const { return path_; }
    std::size_t size() const;

    tune_entry_ptr find(const problem_class &key) const;

    // The entry equal to key but for m, n, k (same_but_shape) whose m, n, k are nearest on a log
    // scale, if any lies within a factor of 2 in each. Remembered per key until the entries
    // change: an untuned shape is usually called again and again, and the search reads every
    // entry, which with a few hundred entries costs many times a hit (docs/PERFORMANCE.md,
    // "Routing cost").
    tune_entry_ptr nearest(const problem_class &key) const;

    // Adds or replaces entries in memory and in the file: under an exclusive lock on
    // "<path>.lock", re-reads the file, merges, writes a temporary file and renames it over
    // the old one, so concurrent tuners lose no entries and readers never see half a file.
    // Stores in one process take turns; find() and nearest() never wait for the file.
    gemm_status_t store(const std::vector<tune_entry> &fresh);

    // Removes the entry of key, in memory and in the file, the way store() changes them; a
    // key in neither changes nothing (GEMM_STATUS_SUCCESS). Auto then decides for its calls as
    // for any untuned shape.
    gemm_status_t remove(const problem_class &key);

    // Whether a store would be accepted: the checks store() makes before it creates anything
    // (cache_store_target_find; the file must be a tune cache), and a temporary file or folder
    // created and removed where the store would create its own (cache_folder_writable).
    // GEMM_STATUS_SUCCESS, or an error naming the path and why.
    gemm_status_t check_store() const;

    // This machine's usable entries, ordered by their key's text.
    std::vector<tune_entry_ptr> entries() const;

    // This machine's rates for host memory (null: none stored), and their store: t's line of
    // this machine's section replaced or added, as store() does for entries.
    std::shared_ptr<const machine_rates> rates() const;
    gemm_status_t store_rates(dtype t, const dtype_rates &r);

    // Where share_rates found the rates: nowhere (complete failed), in the file (another
    // process stored them), or measured here.
    enum class rates_source { none, file, measured };

    // The rates of t, once for the processes that start together on a machine (the ranks of a
    // node): under the file's exclusive lock, the file is read again; where its rates of t are
    // enough, this process takes them and measures nothing; else complete(r) completes what
    // there is (r: the file's rates of t, else this process's, else none) and they are stored
    // before the lock is released, so that a process waiting for it reads them instead of
    // measuring too. Where the file cannot be locked or read, complete runs all the same, its
    // rates kept for this process only, and the error says why they were not stored.
    // complete's failure (its status) leaves everything as it was.
    gemm_status_t share_rates(dtype t, const std::function<bool(const dtype_rates &)> &enough,
                              const std::function<gemm_status_t(dtype_rates &)> &complete, rates_source &source);

    // Changes whenever the entries do (a store, or entries of other processes that a store
    // found in the file): what a caller remembers about the entries is stale once it moves.
    // Lock-free.
    std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

    // Warnings met while loading (also logged), for tests and `gemm tune`.
    const std::vector<std::string> &warnings() const { return warnings_; }

private:
    // A line of the file as read: verbatim, and the entry it holds when it is a usable entry
    // of this machine's section.
    struct file_line {
        std::string text;
        std::optional<tune_entry> entry;
        std::optional<std::pair<dtype, dtype_rates>> rates;  // a rates line of this machine's section
    };
    struct file_contents {
        bool usable = true;            // false: the file exists but cannot be read
        std::string problem;           // why not
        std::vector<file_line> lines;  // all but the header comments write_file adds
        std::size_t mine_end = 0;      // where new entries go: after this machine's last section
        bool has_mine = false;
        backend_identities recorded_at_end;  // the identities in force at mine_end
    };
    file_contents read_file(std::vector<std::string> &warnings) const;
    // (backend, its identity_change) -> how many entries of this machine's section it stales.
    using stale_entries = std::map<std::pair<std::string, std::string>, int>;
    // Takes in line t (number), the last of contents.lines, as an entry of this machine's
    // section: whether it is a usable one; else it is warned about, counted as stale, or
    // dropped from contents when it is no entry at all.
    bool read_entry(const std::string &t, int number, file_contents &contents,
                    std::unordered_map<problem_class, int, problem_class_hash> &entry_lines, stale_entries &stale,
                    std::vector<std::string> &warnings) const;
    // The file a store replaces, once it passed the checks made before anything is created;
    // else the error, which ends with undone.
    gemm_status_t store_target(cache_store_target &target, const char *undone) const;
    gemm_status_t write_file(const file_contents &contents, const std::string &file) const;
    void merge(file_contents &contents, const std::vector<tune_entry> &fresh) const;
    // Adds line at the end of this machine's section, which is created at the end of the file
    // if absent, after a "backend" line for each identity now that the section's end lacks.
    void add_to_mine(file_contents &contents, file_line line) const;
    bool drop(file_contents &contents, const problem_class &key) const;
    // Under the file's lock: re-read, change by edit (merge or drop; it returns whether it
    // changed anything), take in other processes' entries, write if edit changed the file.
    // undone ends the error of a file that cannot be read ("nothing stored").
    template <class Edit> gemm_status_t rewrite_file(const char *undone, Edit edit);
    // Takes the file's lock (creating its folder first where the store target is absent),
    // re-reads the file and returns run(contents, file)'s status, ran set; or, ran false, why
    // the file could not be locked or read (ending with undone).
    template <class Locked> gemm_status_t with_file_locked(const char *undone, Locked run, bool &ran);
    // Other processes' entries, and rates of the types this one lacks, from contents.
    void take_in(const file_contents &contents);
    void keep_rates(dtype t, const dtype_rates &r);  // in this process
    void replace_rates_line(file_contents &contents, dtype t, const dtype_rates &r) const;

    std::string path_;
    std::string fingerprint_;
    backend_identities identities_;  // every backend's identity now
    std::vector<std::string> warnings_;
    std::mutex store_mutex_;           // one store at a time: file lock, re-read, merge, write
    mutable std::shared_mutex mutex_;  // entries_, nearest_memo_, and writes of version_
    std::unordered_map<problem_class, tune_entry_ptr, problem_class_hash> entries_;
    std::atomic<std::uint64_t> version_{0};       // read without the lock: every auto call reads it
    std::shared_ptr<const machine_rates> rates_;  // replaced whole, under mutex_
    // Whether rates_ is set (never unset after): every untuned host-memory call asks for the
    // rates, and a cache without them answers without taking the lock.
    std::atomic<bool> has_rates_{false};
    // nearest()'s answers, null where none was near; cleared by store(), and when full, since
    // a program may call with ever new shapes.
    mutable std::unordered_map<problem_class, tune_entry_ptr, problem_class_hash> nearest_memo_;
    tune_entry_ptr search_nearest(const problem_class &key) const;  // caller holds mutex_
};

// The process's cache at tune_cache_path(), loaded on first use.
tune_cache &process_tune_cache();

}  // namespace gemm
