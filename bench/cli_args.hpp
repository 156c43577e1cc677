// cli_args.hpp: reading command-line options: values, lists, numbers, and the usage error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gemm_cli {

// A mistake in the command line: reported with a hint to --help, exit code 2.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Walks argv once. An option's value is either the next argument or follows '='
// ("--reps 5" or "--reps=5").
class arg_reader {
public:
    arg_reader(int argc, char **argv, int first);

    bool done() const { return next_ >= args_.size(); }
    // The next argument; for "--name=value" only "--name" (the value is kept for value()).
    std::string take();
    // The value of the option just taken.
    std::string value(const std::string &option);
    // For an option without a value: refuses "--flag=value".
    void reject_value(const std::string &option);

private:
    std::vector<std::string> args_;
    std::size_t next_ = 0;
    std::string pending_value_;
    bool has_pending_value_ = false;
};

// The items between separators, empty ones included ("a,,b" has three; the callers refuse
// them); none in "".
std::vector<std::string> split_list(const std::string &text, char separator = ',');
int64_t parse_int(const std::string &text, const std::string &what, int64_t min_value);
double parse_double(const std::string &text, const std::string &what);

// A file an option names for output, closed when dropped; "-" is stdout, left open.
struct output_closer {
    void operator()(std::FILE *f) const {
        if (f != stdout) std::fclose(f);
    }
};
using output_file = std::unique_ptr<std::FILE, output_closer>;

// Opens path for writing, "-" being stdout; null for an empty path. Throws usage_error
// naming the option when the file cannot be written.
output_file output_open(const std::string &path, const char *option);

// Closes f (stdout is left to main's stdout_check), throwing std::runtime_error naming the
// option and path when anything written to it was lost (a full disk): a truncated report
// must not end in exit code 0. Null f: nothing to do.
void output_close(output_file &f, const std::string &path, const char *option);

// Throws std::runtime_error when anything written to stdout was lost.
void stdout_check();

// One word quoted for a POSIX shell (unchanged when it needs no quotes), for the
// "reproduce:" echo and the environment shown by gemm info.
std::string shell_quote(const std::string &word);

}  // namespace gemm_cli
