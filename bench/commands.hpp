// commands.hpp: the subcommands of the gemm program; each returns the process exit code.
#pragma once

namespace gemm_cli {

// Exit codes shared by every subcommand.
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;  // a configuration error, or a backend computed a wrong result
constexpr int exit_usage = 2;    // a mistake in the command line

// argv[first] is the first argument after the subcommand's name.
int info_command(int argc, char **argv, int first);
int bench_command(int argc, char **argv, int first);
int tune_command(int argc, char **argv, int first);

}  // namespace gemm_cli
