// cli_args.cpp: reading command-line options: values, lists, numbers.
#include "cli_args.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace gemm_cli {

arg_reader::arg_reader(int argc, char **argv, int first) {
    for (int i = first; i < argc; ++i) args_.emplace_back(argv[i]);
}

std::string arg_reader::take() {
    std::string arg = args_[next_++];
    std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
        pending_value_ = arg.substr(eq + 1);
        has_pending_value_ = true;
        return arg.substr(0, eq);
    }
    return arg;
}

std::string arg_reader::value(const std::string &option) {
    if (has_pending_value_) {
        has_pending_value_ = false;
        return pending_value_;
    }
    if (done()) throw usage_error("option " + option + " needs a value");
    return args_[next_++];
}

void arg_reader::reject_value(const std::string &option) {
    if (has_pending_value_) throw usage_error("option " + option + " takes no value");
}

std::vector<std::string> split_list(const std::string &text, char separator) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (!text.empty() && start <= text.size()) {
        std::size_t end = text.find(separator, start);
        if (end == std::string::npos) end = text.size();
        items.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return items;
}

int64_t parse_int(const std::string &text, const std::string &what, int64_t min_value) {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    // strtoll skips leading blanks and takes a '+': the whole text must be the number.
    const bool starts_as_number = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-');
    if (!starts_as_number || *end != '\0') throw usage_error(what + ": '" + text + "' is not an integer");
    if (errno == ERANGE) throw usage_error(what + ": " + text + " is out of the range of a 64-bit integer");
    if (v < min_value) throw usage_error(what + ": " + text + " must be at least " + std::to_string(min_value));
    return int64_t(v);
}

double parse_double(const std::string &text, const std::string &what) {
    errno = 0;
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        throw usage_error(what + ": '" + text + "' is not a number");
    return v;
}

output_file output_open(const std::string &path, const char *option) {
    if (path.empty()) return nullptr;
    if (path == "-") return output_file(stdout);
    output_file f(std::fopen(path.c_str(), "w"));
    if (!f) throw usage_error(std::string(option) + ": cannot write '" + path + "'");
    return f;
}

void output_close(output_file &f, const std::string &path, const char *option) {
    if (!f) return;
    std::FILE *file = f.release();
    if (file == stdout) return;  // main checks stdout once every command is done
    const bool lost = std::ferror(file) != 0;
    errno = 0;
    const bool closed = std::fclose(file) == 0;
    if (lost || !closed)
        throw std::runtime_error(std::string(option) + ": could not write all of '" + path + "'" +
                                 (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

void stdout_check() {
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    if (!flushed || std::ferror(stdout))
        throw std::runtime_error(std::string("could not write all of the output to stdout") +
                                 (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

std::string shell_quote(const std::string &word) {
    const std::string plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=,.:/+@%";
    if (!word.empty() && word.find_first_not_of(plain) == std::string::npos) return word;
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

}  // namespace gemm_cli
