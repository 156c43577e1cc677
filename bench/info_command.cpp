// info_command.cpp: `gemm info`: version, backends, active selection, environment, CPU.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_args.hpp"
#include "commands.hpp"
#include "cpu_info.hpp"
#include "gemm/gemm.h"
#include "library_config.hpp"

namespace gemm_cli {
namespace {

constexpr const char *info_help =
    "usage: gemm info [--help]\n"
    "\n"
    "Prints the library version, every backend compiled into this build (available or not,\n"
    "with the reason), the backend selection in force and whether it is valid, the\n"
    "environment variables the library reads, and the host CPU.\n"
    "\n"
    "Exit code: 0 when the configuration is valid, 1 when the selection or a GEMM_*\n"
    "variable is invalid (the ERROR line says why), 2 for a bad command line.\n";

void print_version() {
    std::printf("gemm %s (header %d.%d.%d)\n", gemm_version(), GEMM_VERSION_MAJOR,
                GEMM_VERSION_MINOR, GEMM_VERSION_PATCH);
}

void print_backends() {
    int64_t count = gemm_backend_count();
    std::printf("\nbackends (%lld):\n", static_cast<long long>(count));
    for (int64_t i = 0; i < count; ++i) {
        gemm_backend_info_t info{};
        gemm_status_t s = gemm_backend_get_info(i, &info);
        if (s != GEMM_STATUS_SUCCESS) {
            std::printf("  #%lld  %s: %s\n", static_cast<long long>(i), gemm_status_string(s),
                        gemm_last_error());
            continue;
        }
        const char *why = info.available ? info.detail : info.reason;
        std::printf("  %-12s %-4s %s\n", info.name, info.available ? "yes" : "no",
                    why && *why ? why : "");
    }
}

bool print_selection() {
    std::printf("\nselection: %s\n", gemm_get_backend());
    config_probe_result probe = library_config_probe();
    if (probe.valid) {
        std::printf("  valid: yes (a 1x1x1 sgemm succeeded)\n");
        return true;
    }
    std::printf("  ERROR: %s%s\n", gemm_status_string(probe.status),
                is_configuration_error(probe.status) ? "" : " (on a 1x1x1 sgemm)");
    std::printf("         %s\n", probe.message.c_str());
    return false;
}

void print_environment() {
    std::printf("\nenvironment:\n");
    for (const char *name : watched_variables) {
        const char *value = std::getenv(name);
        std::printf("  %-24s %s\n", name, value ? shell_quote(value).c_str() : "(unset)");
    }
}

void print_cpu() {
    cpu_info cpu = cpu_info_read();
    std::printf("\ncpu:\n");
    std::printf("  model                 %s\n", cpu.model.c_str());
    std::printf("  logical cpus          %d\n", cpu.logical_cpus);
    std::printf("  openmp threads        %d\n", cpu.openmp_threads);
    std::printf("  isa                   %s\n", cpu_info_isa_list(cpu).c_str());
    std::printf("  last-level cache      %lld KiB%s\n",
                static_cast<long long>(cpu.last_level_cache_bytes >> 10),
                cpu.cache_size_known ? "" : " (not readable; assumed)");
    if (cpu.load_average >= 0)
        std::printf("  load average (1 min)  %.2f%s\n", cpu.load_average,
                    cpu_info_busy(cpu) ? " (busy: benchmarks will be disturbed)" : "");
}

}  // namespace

int info_command(int argc, char **argv, int first) {
    arg_reader args(argc, argv, first);
    while (!args.done()) {
        std::string arg = args.take();
        args.reject_value(arg);
        if (arg == "--help" || arg == "-h") {
            std::fputs(info_help, stdout);
            return exit_ok;
        }
        throw usage_error("gemm info takes no argument '" + arg + "'");
    }
    print_version();
    print_backends();
    bool valid = print_selection();
    print_environment();
    print_cpu();
    return valid ? exit_ok : exit_failure;
}

}  // namespace gemm_cli
