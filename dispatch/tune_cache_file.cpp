// tune_cache_file.cpp: bounded reads, the lock file and atomic replacement of the tune cache.
#include "tune_cache_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "error.hpp"

namespace gemm {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

gemm_status_t fail(const std::string &what) { return set_error(GEMM_STATUS_EXECUTION_FAILED, "tune cache: " + what); }
// append_line_once serves GEMM_RECORD's file, not the tune cache: its errors have no "tune cache:"
// prefix (the caller names GEMM_RECORD).
gemm_status_t fail_record(const std::string &what) { return set_error(GEMM_STATUS_EXECUTION_FAILED, what); }

// Reads up to limit + 1 bytes, so that a longer file shows as longer.
bool read_bounded(int fd, std::size_t limit, std::string &out, int &error) {
    std::vector<char> buffer(1 << 16);
    while (out.size() <= limit) {
        ssize_t got = read(fd, buffer.data(), std::min(buffer.size(), limit + 1 - out.size()));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return error = errno, false;
        if (got == 0) break;
        out.append(buffer.data(), std::size_t(got));
    }
    return true;
}

// While a thread writes with SIGXFSZ blocked, exceeding a file-size limit fails the write
// with EFBIG instead of killing the process; the signal it leaves pending for the thread is
// taken back unless it was already pending before.
class sigxfsz_blocked {
public:
    sigxfsz_blocked() {
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, SIGXFSZ);
        blocked_ = pthread_sigmask(SIG_BLOCK, &only, &previous_) == 0;
        sigset_t pending;
        was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
    }
    ~sigxfsz_blocked() {
        if (!blocked_) return;
        sigset_t pending, only;
        sigemptyset(&only);
        sigaddset(&only, SIGXFSZ);
        if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1) {
            timespec zero{0, 0};
            while (sigtimedwait(&only, nullptr, &zero) < 0 && errno == EINTR) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    sigxfsz_blocked(const sigxfsz_blocked &) = delete;
    sigxfsz_blocked &operator=(const sigxfsz_blocked &) = delete;

private:
    sigset_t previous_;
    bool blocked_ = false, was_pending_ = false;
};

bool write_all(int fd, const std::string &text, int &error) {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t put = write(fd, text.data() + done, text.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) return error = errno, false;
        done += std::size_t(put);
    }
    return true;
}

// The process's umask, read from /proc (umask() would set it, racing other threads); 022
// where /proc does not say.
mode_t process_umask() {
    std::FILE *f = std::fopen("/proc/self/status", "re");
    if (!f) return 022;
    unsigned mask = 022;
    char line[256];
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    std::fclose(f);
    return mode_t(mask & 0777);
}

// An existing cache keeps its mode, so that a shared cache stays shared; a new one gets what
// open(O_CREAT, 0666) would give it (mkostemp's 0600 would hide it from a group).
mode_t mode_to_keep(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? (st.st_mode & 07777) : (0666 & ~process_umask());
}

// What sits at a path that is not a regular file, in words.
std::string kind_text(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "something else";
}

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
    return text;
}

// The folder holding path ("." for a bare name).
std::string folder_of(const std::string &path) {
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// Where the link at path points, as a path usable from here (a relative target is relative to
// the link's folder); empty with why when it cannot be read.
std::string link_target(const std::string &path, std::string &why) {
    std::vector<char> buffer(4096);
    const ssize_t got = readlink(path.c_str(), buffer.data(), buffer.size());
    if (got < 0 || std::size_t(got) >= buffer.size()) {
        why = "cannot read the link " + path + ": " + errno_text(got < 0 ? errno : ENAMETOOLONG);
        return "";
    }
    std::string target(buffer.data(), std::size_t(got));
    if (target.empty() || target[0] == '/' || path.find('/') == std::string::npos) return target;
    return folder_of(path) + "/" + target;
}

// Whether the caller may write the file st describes at path. Root passes access() for any
// file, so for root a file without any write bit in its mode counts as read-only: its owner
// made it so on purpose, and a rename would replace it all the same.
bool may_write(const std::string &path, const struct stat &st, std::string &why) {
    if (geteuid() == 0) {
        if ((st.st_mode & 0222) != 0) return true;
        why = "read-only (mode " + mode_text(st.st_mode) + ")";
        return false;
    }
    if (faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0) return true;
    why = "not writable by this user (mode " + mode_text(st.st_mode) + ": " + errno_text(errno) + ")";
    return false;
}

// Follows the links at path to what sits at the end of them (file, with its lstat in st), or
// to the name nothing sits at yet (exists = false); false with why where they loop or cannot
// be read.
// Why lstat of path said ENOTDIR, naming the folder of the path that is none: "/a/notes:
// Not a directory" says more than the whole path does.
std::string not_a_folder_text(const std::string &path) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        const std::string prefix = path.substr(0, slash);
        struct stat st;
        if (stat(prefix.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return prefix + ": " + errno_text(ENOTDIR);
    }
    return "cannot look at " + path + ": " + errno_text(ENOTDIR);
}

bool follow_links(const std::string &path, std::string &file, struct stat &st, bool &exists, std::string &why) {
    constexpr int most_links = 40;  // the kernel's own limit before ELOOP
    file = path;
    for (int links = 0;; ++links) {
        if (lstat(file.c_str(), &st) != 0) {
            if (errno == ENOTDIR) return why = not_a_folder_text(file), false;
            if (errno != ENOENT) return why = "cannot look at " + file + ": " + errno_text(errno), false;
            exists = false;
            return true;
        }
        if (!S_ISLNK(st.st_mode)) {
            exists = true;
            return true;
        }
        if (links == most_links) return why = "more than 40 symbolic links in a row (a loop?)", false;
        file = link_target(file, why);
        if (file.empty()) return false;
    }
}

// Creates and removes a temporary file beside path: what a store does first.
bool try_temporary_file(const std::string &path, std::string &why) {
    std::string probe = path + ".tmp.XXXXXX";
    const int fd = mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) return why = "cannot create a file in " + folder_of(path) + ": " + errno_text(errno), false;
    close(fd);
    unlink(probe.c_str());
    return true;
}

}  // namespace

cache_file_text read_cache_file(const std::string &path, std::size_t limit) {
    cache_file_text file;
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return file;  // no cache yet
        file.status = cache_file_text::state::unusable;
        file.problem = "cannot read it: " + errno_text(errno);
        return file;
    }
    struct stat st;
    int error = 0;
    if (fstat(fd, &st) != 0) {
        file.status = cache_file_text::state::unusable;
        file.problem = "cannot read it: " + errno_text(errno);
    } else if (!S_ISREG(st.st_mode)) {
        file.status = cache_file_text::state::unusable;
        file.problem = "not a regular file";
    } else if (std::size_t(st.st_size) > limit || !read_bounded(fd, limit, file.text, error) ||
               file.text.size() > limit) {
        file.status = cache_file_text::state::unusable;
        file.problem =
            error ? "cannot read it: " + errno_text(error) : "larger than " + std::to_string(limit >> 20) + " MiB";
        file.text.clear();
    } else {
        file.status = cache_file_text::state::read;
    }
    close(fd);
    return file;
}

bool cache_store_target_find(const std::string &path, cache_store_target &target, std::string &why) {
    if (path.empty()) return why = "the path is empty", false;
    // A store would create the folder and then fail on the name: nothing is created for it.
    if (path.back() == '/') return why = "the path ends in '/', so it names a folder, not a file", false;
    struct stat st;
    if (!follow_links(path, target.file, st, target.exists, why)) return false;
    const bool linked = target.file != path;
    const std::string through = linked ? "a link to " + target.file + ", " : "";
    if (!target.exists) {
        // Folders are created only for the path as given, never for a link's target.
        if (!linked) return true;
        struct stat folder;
        if (stat(folder_of(target.file).c_str(), &folder) == 0 && S_ISDIR(folder.st_mode)) return true;
        return why = through + "whose folder " + folder_of(target.file) + " does not exist", false;
    }
    if (!S_ISREG(st.st_mode)) return why = through + kind_text(st.st_mode) + ", not a regular file", false;
    std::string unwritable;
    if (!may_write(target.file, st, unwritable)) return why = through + unwritable, false;
    return true;
}

bool cache_folder_writable(const cache_store_target &target, std::string &why) {
    const std::string folder = folder_of(target.file);
    // The nearest folder that exists, and the first missing one below it, which the store
    // would create.
    std::string existing = folder, missing;
    struct stat st;
    while (stat(existing.c_str(), &st) != 0) {
        if (errno != ENOENT || existing == "/" || existing == ".")
            return why = "cannot look at " + existing + ": " + errno_text(errno), false;
        missing = existing;
        existing = folder_of(existing);
    }
    if (!S_ISDIR(st.st_mode)) return why = existing + " is not a folder", false;
    if (missing.empty()) return try_temporary_file(target.file, why);
    std::string probe = missing + ".tmp.XXXXXX";
    if (!mkdtemp(probe.data())) return why = "cannot create a folder in " + existing + ": " + errno_text(errno), false;
    rmdir(probe.c_str());
    return true;
}

cache_file_lock::cache_file_lock(const std::string &path) {
    std::string lock_path = path + ".lock";
    fd_ = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0666);
    // flock needs no write access: another user's lock file, readable, still serves. Where
    // there is none, the reason is the first one (a directory we may not write), not ENOENT.
    const int create_error = errno;
    if (fd_ < 0 && create_error == EACCES) fd_ = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) {
        error_ = "cannot open " + lock_path + ": " + errno_text(errno == ENOENT ? create_error : errno);
        return;
    }
    while (flock(fd_, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        error_ = "cannot lock " + lock_path + ": " + errno_text(errno);
        close(fd_);
        fd_ = -1;
        return;
    }
}

cache_file_lock::~cache_file_lock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
}

gemm_status_t replace_cache_file(const std::string &path, const std::string &text, std::size_t limit) {
    if (text.size() > limit)
        return fail(path + " would grow to " + std::to_string(text.size()) + " bytes, more than the " +
                    std::to_string(limit >> 20) + " MiB a read accepts; left as it was");
    std::string temp = path + ".tmp.XXXXXX";
    int fd = mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return fail("cannot create a temporary file beside " + path + ": " + errno_text(errno));
    int error = 0;
    bool written;
    {
        sigxfsz_blocked no_kill;
        written = fchmod(fd, mode_to_keep(path)) == 0 && write_all(fd, text, error) && fsync(fd) == 0;
        if (!written && !error) error = errno;
    }
    if (close(fd) != 0 && written) written = false, error = errno;
    if (!written) {
        unlink(temp.c_str());
        return fail("cannot write " + temp + ": " + errno_text(error) + "; " + path + " left as it was");
    }
    if (rename(temp.c_str(), path.c_str()) != 0) {
        error = errno;
        unlink(temp.c_str());
        return fail("cannot replace " + path + ": " + errno_text(error));
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t append_line_once(const std::string &path, const std::string &line) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) return fail_record("cannot open " + path + ": " + errno_text(errno));
    struct stat st;
    std::string text;
    int error = 0;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) s = fail_record(path + " is not a regular file");
    else if (flock(fd, LOCK_EX) != 0) s = fail_record("cannot lock " + path + ": " + errno_text(errno));
    else if (!read_bounded(fd, tune_cache_file_limit, text, error) || text.size() > tune_cache_file_limit)
        s = fail_record("cannot read " + path + (error ? ": " + errno_text(error) : ": larger than the limit"));
    bool present = ("\n" + text).find("\n" + line + "\n") != std::string::npos;
    if (s == GEMM_STATUS_SUCCESS && !present) {
        sigxfsz_blocked no_kill;
        std::string add = (text.empty() || text.back() == '\n' ? "" : "\n") + line + "\n";
        if (!write_all(fd, add, error)) s = fail_record("cannot append to " + path + ": " + errno_text(error));
    }
    close(fd);  // releases the lock
    return s;
}

gemm_status_t make_parent_dirs(const std::string &path) {
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        std::string dir = path.substr(0, slash);
        if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            return fail("cannot create directory " + dir + ": " + errno_text(errno));
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
