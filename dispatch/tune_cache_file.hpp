// tune_cache_file.hpp: the tune cache's file operations, safe against what may sit at its
// path: bounded reads of regular files only, a lock that follows no link, and replacement
// through a private temporary file renamed into place.
#pragma once

#include <cstddef>
#include <string>

#include "gemm/gemm.h"

namespace gemm {

// Larger files are not read (nor replaced): a cache of 100,000 entries is about 15 MB.
constexpr std::size_t tune_cache_file_limit = std::size_t(64) << 20;

struct cache_file_text {
    enum class state { absent, read, unusable };
    state status = state::absent;
    std::string text;     // the whole file, when read
    std::string problem;  // why unusable ("Permission denied", "not a regular file", ...)
};

// The file at path: absent (no such file, or a path component is not a folder), read, or
// unusable (unreadable, not a regular file, larger than the limit). Never blocks on a FIFO
// or device, never reads more than limit + 1 bytes.
cache_file_text read_cache_file(const std::string &path, std::size_t limit = tune_cache_file_limit);

// The file a store replaces: the cache path itself, or the file a symbolic link there leads to.
// A store through a link replaces the link's target and keeps the link; its lock goes beside
// the target, so that a process naming the link and one naming the target exclude each other.
struct cache_store_target {
    std::string file;     // where the temporary, the rename and "<file>.lock" go
    bool exists = false;  // false: the store creates it
};

// Where a store to path would write, checked before anything is created (folder, lock file,
// temporary), so that a refused store leaves no trace. Refused, with why: a path ending in
// '/'; a loop of links; a link whose target's folder does not exist (a dangling link into an
// existing folder is followed, its target created, as a shell's `>` would); a folder, FIFO,
// device or socket; a file the caller may not write (access(W_OK); for root, which passes
// that, a mode without any write bit).
bool cache_store_target_find(const std::string &path, cache_store_target &target, std::string &why);

// Whether a store could create its files for target: a temporary file beside an existing
// target, else a folder in the nearest existing folder above it, created and removed at once.
// Trying is the only answer that holds for root, which access() lets write where the file
// system will not (/proc, a read-only mount).
bool cache_folder_writable(const cache_store_target &target, std::string &why);

// An exclusive advisory lock on "<path>.lock", released when destroyed. The lock file is
// opened without following a symbolic link.
class cache_file_lock {
public:
    explicit cache_file_lock(const std::string &path);
    ~cache_file_lock();
    cache_file_lock(const cache_file_lock &) = delete;
    cache_file_lock &operator=(const cache_file_lock &) = delete;
    bool held() const { return fd_ >= 0; }
    const std::string &error() const { return error_; }  // why not held

private:
    int fd_ = -1;
    std::string error_;
};

// Writes text to a new temporary file beside path (O_EXCL: never an existing file or link)
// and renames it over path. On failure path is unchanged, the temporary removed, and the
// thread's error names what failed. Text longer than limit is refused before anything is
// written: read_cache_file would refuse the file forever after. A file-size limit (ulimit -f)
// fails the write instead of killing the process with SIGXFSZ.
gemm_status_t replace_cache_file(const std::string &path, const std::string &text,
                                 std::size_t limit = tune_cache_file_limit);

// Appends line (and a newline) to the file at path, created if absent, unless the file already
// has that line; under an exclusive lock on the file itself. Regular files only.
gemm_status_t append_line_once(const std::string &path, const std::string &line);

// Creates the folders above path that do not exist.
gemm_status_t make_parent_dirs(const std::string &path);

}  // namespace gemm
