// main.cpp: the `gemm` program: picks the subcommand (info, bench, tune) and turns usage
// errors into exit code 2.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli_args.hpp"
#include "commands.hpp"
#include "gemm/gemm.h"

namespace {

constexpr const char *top_help =
    "usage: gemm <command> [options]\n"
    "       gemm --help [command] | --version\n"
    "\n"
    "commands:\n"
    "  info    library version, backends (available or not, and why), the selection in\n"
    "          force, the GEMM_* environment, the tune cache, the host CPU and CUDA devices\n"
    "  bench   verify, then time every backend on GEMM shapes against a baseline and a\n"
    "          roofline (gemm bench 1024 2048x2048x2048 16x4096x4096; --device 0 on a GPU)\n"
    "  tune    time every backend and variant on each problem and store the winners in the\n"
    "          tune cache, where the automatic choice finds them (gemm tune --suite default)\n"
    "\n"
    "`gemm <command> --help` (or `gemm --help <command>`) describes a command's options.\n"
    "Exit codes: 0 success; 1 when the command could not do what was asked: an invalid\n"
    "configuration, a wrong result, a named backend that cannot run here, a benchmark row or\n"
    "a problem that could not run, nothing measured or nothing to tune, output lost (a full\n"
    "disk); 2 bad command line.\n";

bool is_command(const std::string &name) { return name == "info" || name == "bench" || name == "tune"; }

int run_command(const std::string &command, int argc, char **argv) {
    if (command == "info") return gemm_cli::info_command(argc, argv, 2);
    if (command == "bench") return gemm_cli::bench_command(argc, argv, 2);
    if (command == "tune") return gemm_cli::tune_command(argc, argv, 2);
    throw gemm_cli::usage_error("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fputs(top_help, stderr);
        return gemm_cli::exit_usage;
    }
    std::string command = argv[1];
    const bool help = command == "--help" || command == "-h" || command == "help";
    if (help && argc == 2) {
        std::fputs(top_help, stdout);
        return gemm_cli::exit_ok;
    }
    if (command == "--version" && argc == 2) {
        std::printf("gemm %s (commit %s)\n", gemm_version(), gemm_cli_build_commit);
        return gemm_cli::exit_ok;
    }
    // `gemm --help bench` is `gemm bench --help`, run as that command line; anything else after
    // --help or --version is a mistake, not to be ignored.
    char help_flag[] = "--help";
    char *command_help[] = {argv[0], argv[argc - 1], help_flag, nullptr};
    if (help && argc == 3 && is_command(argv[2])) {
        command = argv[2];
        argc = 3;
        argv = command_help;
    } else if (help || command == "--version") {
        std::string rest;
        for (int i = 2; i < argc; ++i) rest += std::string(i > 2 ? " " : "") + argv[i];
        std::fprintf(stderr, "gemm: error: %s takes %s, not '%s'\nTry 'gemm --help'.\n", command.c_str(),
                     help ? "at most a command name (info, bench, tune)" : "no argument", rest.c_str());
        return gemm_cli::exit_usage;
    }
    try {
        const int code = run_command(command, argc, argv);
        gemm_cli::stdout_check();  // a report cut short by a full disk is a failure
        return code;
    } catch (const gemm_cli::usage_error &e) {
        bool has_command = is_command(command);
        std::fprintf(stderr, "gemm%s%s: error: %s\nTry 'gemm %s--help'.\n", has_command ? " " : "",
                     has_command ? command.c_str() : "", e.what(), has_command ? (command + " ").c_str() : "");
        return gemm_cli::exit_usage;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gemm: error: %s\n", e.what());
        return gemm_cli::exit_failure;
    }
}
