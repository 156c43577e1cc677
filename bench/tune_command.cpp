// tune_command.cpp: `gemm tune`: tunes each problem through gemm_tune, shows progress on
// stderr and the table on stdout, and stores the winners in the tune cache.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "cpu_info.hpp"
#include "device_info.hpp"
#include "gemm/gemm.h"
#include "host_rates.hpp"
#include "library_config.hpp"
#include "problem_args.hpp"
#include "progress_line.hpp"
#include "timer.hpp"
#include "tune_options.hpp"
#include "tune_problems.hpp"
#include "tune_report.hpp"
#include "tune_verify.hpp"

namespace gemm_cli {
namespace {

// "1 problem", "6 problems".
std::string count_text(std::size_t n, const char *noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// Whether some backend other than the reference serves dtype t on host pointers.
bool host_dtype_served(gemm_dtype_t t, const backend_names &names) {
    gemm_desc_t d = tiny_desc(t, -1);
    for (const std::string &name : names.timed)
        if (gemm_backend_supports(name.c_str(), &d) == GEMM_STATUS_SUCCESS) return true;
    return false;
}

suite_scope suite_scope_probe(const tune_options &o, const backend_names &names, std::string *device_note) {
    suite_scope scope;
    for (gemm_dtype_t t : {GEMM_F32, GEMM_F64})
        if (host_dtype_served(t, names)) scope.host_dtypes.push_back(t);
    std::string why;
    if (o.device >= 0) scope.device = o.device;
    else if (device_count(&why) > 0) scope.device = 0;
    else *device_note = why;
    return scope;
}

std::vector<tune_problem> collect_problems(const tune_options &o, const backend_names &names, std::string *suite_note) {
    std::vector<tune_problem> list;
    tune_problems_merge(list, tune_problems_from_arguments(o));
    if (!o.shapes_file.empty())
        tune_problems_merge(list, tune_problems_from_file(o.shapes_file, std::max(o.device, 0)));
    if (!o.suite.empty()) {
        std::string device_note;
        suite_scope scope = suite_scope_probe(o, names, &device_note);
        std::string dtypes;
        for (gemm_dtype_t t : scope.host_dtypes)
            dtypes += (dtypes.empty() ? "" : ", ") + std::string(gemm_dtype_name(t));
        *suite_note = "suite " + o.suite + ": host problems in " + (dtypes.empty() ? "no dtype" : dtypes) +
                      (scope.device >= 0 ? "; device " + std::to_string(scope.device) + " problems in f32, bf16"
                                         : "; no device problems (" + device_note + ")");
        tune_problems_merge(list, tune_problems_suite(o.suite, scope));
    }
    return list;
}

std::string command_echo(const std::string &environment, int argc, char **argv) {
    std::string line = environment;
    for (int i = 0; i < argc; ++i) line += (i ? " " : "") + shell_quote(argv[i]);
    return line;
}

tune_row tune_one(const tune_problem &p, const tune_options &o) {
    gemm_tune_request_t request =
        tune_problem_request(p, o.budget_ms, o.backends.empty() ? nullptr : o.backends.c_str());
    gemm_tune_report_t report{};
    stopwatch clock;
    gemm_status_t s = p.key.empty() ? gemm_tune(&request, o.store ? 1 : 0, &report)
                                    : gemm_tune_key(p.key.c_str(), p.device, request.budget_ms, request.backends,
                                                    o.store ? 1 : 0, &report);
    // A report with candidates is filled even when storing failed afterwards.
    tune_row row = report.candidate_count > 0 ? tune_row_from_report(p, report) : tune_row{};
    row.problem = p;
    if (s != GEMM_STATUS_SUCCESS) {
        std::string status = gemm_status_string(s);
        row.tuned = false;
        row.error = status.substr(0, status.find(':')) + ": " + gemm_last_error();
    }
    row.seconds = clock.seconds();
    return row;
}

void print_summary(std::FILE *out, const std::vector<tune_row> &rows, const tune_summary &s, const tune_options &o) {
    std::fprintf(out, "# tuned %zu of %s in %s\n", s.tuned, count_text(s.problems, "problem").c_str(),
                 clock_text(s.seconds).c_str());
    if (o.store)
        std::fprintf(out, "# cache %s: %s stored\n", gemm_tune_cache_path(),
                     s.stored == 1 ? "1 entry" : (std::to_string(s.stored) + " entries").c_str());
    else std::fprintf(out, "# cache %s: nothing stored (--no-store)\n", gemm_tune_cache_path());
    if (s.compared > 0)
        std::fprintf(out, "# geometric-mean speed-up over the built-in default: %.3fx (%s)\n", s.geomean_speedup,
                     count_text(s.compared, "problem").c_str());
    if (s.disturbed > 0)
        std::fprintf(out,
                     "# warning: %s timed while something else had the machine (timings disagreeing by more "
                     "than 25 %%, also when taken again): their choice may be wrong, so it is not stored; tune "
                     "them again on a quiet machine\n",
                     count_text(s.disturbed, "problem").c_str());
    // The rates untuned host-memory calls are routed by (measured by the first such tune).
    std::string unread;
    for (const gemm_host_rates_t &r : host_rates_read(unread))
        std::fprintf(out, "# host-memory rates %s (untuned host calls go where they estimate faster): %s\n",
                     host_rates_type(r), host_rates_text(r).c_str());
    for (const tune_row &r : rows)
        if (!r.tuned)
            std::fprintf(out, "# FAILED: %s %s %s: %s\n", tune_problem_dtype_text(r.problem).c_str(),
                         tune_problem_class_text(r.problem).c_str(), tune_problem_shape_text(r.problem).c_str(),
                         r.error.c_str());
}

// A backend --backends names must be one the library can run here; else the tuner would
// time only the default and report it as the winner.
bool named_backends_usable(const tune_options &o) {
    bool usable = true;
    for (const std::string &name : split_list(o.backends)) {
        std::string refusal = backend_refusal(name);
        if (refusal.empty()) continue;
        std::fprintf(stderr, "gemm tune: ERROR: %s cannot run here: %s\n", name.c_str(), refusal.c_str());
        usable = false;
    }
    return usable;
}

// The backends --backends names that were a candidate for none of the problems (they serve
// none of them), each reported on stderr: the run did not tune what was asked.
std::vector<std::string> untried_backends(const std::vector<tune_row> &rows, const tune_options &o) {
    std::vector<std::string> untried;
    for (const std::string &name : split_list(o.backends)) {
        bool tried = false;
        for (const tune_row &r : rows)
            for (const tune_candidate_line &c : r.candidates) tried = tried || c.backend == name;
        if (tried) continue;
        std::fprintf(stderr, "gemm tune: ERROR: %s was a candidate for none of the problems (it serves none of them)\n",
                     name.c_str());
        untried.push_back(name);
    }
    return untried;
}

// Whether the tune cache can take the winners, said on stderr when not. Checked before any
// tuning, which would otherwise run to the end and then fail every store; the library makes
// the store's own checks and tries to create a file where the store would (the only test
// that holds for root, which access() lets write into /proc or onto a read-only mount).
bool cache_writable() {
    if (gemm_tune_cache_check() == GEMM_STATUS_SUCCESS) return true;
    std::string why = gemm_last_error();
    const std::string prefix = std::string("tune cache ") + gemm_tune_cache_path() + ": ";
    if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    std::fprintf(stderr, "gemm tune: ERROR: the tune cache %s cannot be written: %s (use --cache PATH, or --no-store)\n",
                 gemm_tune_cache_path(), why.c_str());
    return false;
}

// Why the problem sources given came to nothing: a --shapes file without a problem line, a
// suite with nothing this machine can run.
std::string empty_sources_text(const tune_options &o, const std::string &suite_note) {
    std::string text;
    if (!o.shapes_file.empty()) text = o.shapes_file + " lists no problem";
    if (!o.suite.empty()) text += (text.empty() ? "" : "; ") + suite_note;
    return text;
}

void print_preamble(std::FILE *out, const tune_run_facts &facts, std::size_t problem_count,
                    const tune_table_widths &widths) {
    const cpu_info &cpu = facts.cpu;
    std::fprintf(out, "# gemm tune: gemm %s; %s; budget %s per problem\n", gemm_version(),
                 count_text(problem_count, "problem").c_str(),
                 facts.budget_ms > 0 ? duration_text(facts.budget_ms * 1e3).c_str() : "2 s (the library's default)");
    std::fprintf(out, "# reproduce: %s\n", facts.command.c_str());
    std::fprintf(out, "# host: %s, %d logical cpus, %d OpenMP threads\n", cpu.model.c_str(), cpu.logical_cpus,
                 cpu.openmp_threads);
    if (cpu_info_busy(cpu))
        std::fprintf(out, "# warning: load average %.2f on %d logical cpus: other processes will disturb the timings\n",
                     cpu.load_average, cpu.logical_cpus);
    if (!facts.suite_note.empty()) std::fprintf(out, "# %s\n", facts.suite_note.c_str());
    std::fprintf(out, "# cache: %s%s\n", facts.cache_path.c_str(), facts.store ? "" : " (--no-store: not written)");
    std::fprintf(out, "# win_time, def_time = median of the timed runs of the winner and of the default (the built-in\n"
                      "#   rule's choice); speedup = def_time / win_time; tried = candidates timed, rej = rejected\n"
                      "#   (wrong result or failed)\n");
    tune_report_header(out, widths);
}

bool configuration_usable() {
    config_probe_result probe = library_config_probe();
    if (probe.valid || !is_configuration_error(probe.status)) return true;
    std::fprintf(stderr, "gemm tune: ERROR: %s\n  %s\n  (`gemm info` shows the configuration)\n",
                 gemm_status_string(probe.status), probe.message.c_str());
    return false;
}

// --device N must name a device this process can use.
bool device_usable(int ordinal) {
    if (ordinal < 0) return true;
    try {
        device_select(ordinal);
        return true;
    } catch (const device_error &e) {
        std::fprintf(stderr, "gemm tune: ERROR: %s\n", e.what());
        return false;
    }
}

// Tunes the problems in turn, with progress on stderr and each row on text (unless null) as
// it completes; *seconds receives the wall time. The progress bar is gone when it returns.
std::vector<tune_row> tune_all(const std::vector<tune_problem> &problems, const tune_options &o, std::FILE *text,
                               const tune_table_widths &widths, double *seconds) {
    std::vector<tune_row> rows;
    progress_line progress("gemm tune", problems.size());
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const tune_problem &p = problems[i];
        progress.begin(i, tune_problem_dtype_text(p) + " " + tune_problem_class_text(p) + " " +
                              tune_problem_shape_text(p));
        rows.push_back(tune_one(p, o));
        if (text) progress.print_between([&] { tune_report_row(text, rows.back(), widths, o.verbose); });
    }
    *seconds = progress.elapsed();
    return rows;
}

tune_run_facts run_facts(const std::string &command, const std::string &suite_note, const tune_options &o) {
    tune_run_facts facts;
    facts.command = command;
    facts.cache_path = gemm_tune_cache_path();
    facts.suite_note = suite_note;
    facts.store = o.store;
    facts.budget_ms = o.budget_ms;
    facts.cpu = cpu_info_read();
    return facts;
}

}  // namespace

int tune_command(int argc, char **argv, int first) {
    tune_options o = tune_options_parse(argc, argv, first);
    if (o.show_help) {
        std::fputs(tune_help, stdout);
        return exit_ok;
    }
    // The echo shows the environment as the user set it; --cache is among the arguments.
    const std::string command = command_echo(watched_variables_prefix(), argc, argv);
    // The library reads GEMM_TUNE_CACHE once, on its first use of the cache: set it first.
    if (!o.cache_path.empty() && setenv("GEMM_TUNE_CACHE", o.cache_path.c_str(), 1) != 0)
        throw usage_error("--cache: cannot set GEMM_TUNE_CACHE");
    if (o.verify) {
        if (!configuration_usable() || !device_usable(o.device)) return exit_failure;
        return tune_verify_command(o, command);
    }
    backend_names names = backend_names_read();
    for (const std::string &name : split_list(o.backends)) backend_name_require(name, names, "--backends", false);
    if (!configuration_usable() || !device_usable(o.device) || !named_backends_usable(o)) return exit_failure;
    if (o.store && !cache_writable()) return exit_failure;
    output_file json = output_open(o.json_path, "--json");
    std::FILE *text = json.get() == stdout ? nullptr : stdout;
    std::string suite_note;
    std::vector<tune_problem> problems = collect_problems(o, names, &suite_note);
    if (problems.empty()) {
        std::fprintf(stderr, "gemm tune: ERROR: nothing to tune: %s\n", empty_sources_text(o, suite_note).c_str());
        return exit_failure;
    }

    tune_run_facts facts = run_facts(command, suite_note, o);
    const tune_table_widths widths = tune_table_widths_for(problems, names.all);
    if (text) print_preamble(text, facts, problems.size(), widths);
    double seconds = 0;
    std::vector<tune_row> rows = tune_all(problems, o, text, widths, &seconds);
    tune_summary summary = tune_summary_of(rows, seconds);
    if (text) print_summary(text, rows, summary, o);
    facts.untried_backends = untried_backends(rows, o);
    if (json) tune_report_json(json.get(), facts, rows, summary);
    output_close(json, o.json_path, "--json");
    bool done = summary.tuned == summary.problems && facts.untried_backends.empty();
    return done ? exit_ok : exit_failure;
}

}  // namespace gemm_cli
