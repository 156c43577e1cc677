// bench_command.cpp: `gemm bench`: for each case, verify every backend's result, then time
// it against the baseline and the roofline, and report rows as they complete; on host
// operands, or on device copies with --device.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "auto_against_best.hpp"
#include "bench_options.hpp"
#include "cli_args.hpp"
#include "commands.hpp"
#include "cpu_info.hpp"
#include "device_info.hpp"
#include "gemm/gemm.h"
#include "library_config.hpp"
#include "peak_probe.hpp"
#include "problem_args.hpp"
#include "progress_line.hpp"
#include "report.hpp"

namespace gemm_cli {
namespace {

struct roofline_peaks {
    double f32_gflops = 0, f64_gflops = 0, gbs = 0;
    std::string compute_source = "none", bandwidth_source = "none";

    // f16 and bf16 are computed in f32 on the CPU.
    double gflops_for(gemm_dtype_t t) const { return t == GEMM_F64 || t == GEMM_C64 ? f64_gflops : f32_gflops; }
};

bool contains(const std::vector<std::string> &list, const std::string &name) {
    return std::find(list.begin(), list.end(), name) != list.end();
}

// The default set: every available backend that serves the memory space, the reference
// excepted (only when named), then auto.
std::vector<std::string> default_backends(const backend_names &names, int device) {
    std::vector<std::string> chosen;
    gemm_desc_t d = tiny_desc(GEMM_F32, device);
    for (const std::string &name : names.timed)
        if (device < 0 || gemm_backend_supports(name.c_str(), &d) == GEMM_STATUS_SUCCESS) chosen.push_back(name);
    chosen.push_back("auto");
    return chosen;
}

// The library a caller would have used: the built-in rule's first choice of the memory
// space's kind (OpenBLAS through cblas on the host, cuBLAS on a device).
std::string default_baseline(const backend_names &names, bool on_device) {
    gemm_backend_kind_t kind = on_device ? GEMM_BACKEND_DEVICE : GEMM_BACKEND_HOST;
    for (std::size_t i = 0; i < names.timed.size(); ++i)
        if (names.timed_kinds[i] == kind) return names.timed[i];
    return "cpu_ref";
}

// The backends to time, baseline first; the baseline's name is returned in *baseline.
std::vector<std::string> choose_backends(const bench_options &o, std::string *baseline) {
    backend_names names = backend_names_read();
    for (const std::string &name : o.backends) backend_name_require(name, names, "--backends", true);
    *baseline = o.baseline.empty() ? default_baseline(names, o.device >= 0) : o.baseline;
    backend_name_require(*baseline, names, "--baseline", true);
    std::vector<std::string> chosen = o.backends.empty() ? default_backends(names, o.device) : o.backends;
    std::vector<std::string> ordered{*baseline};
    for (const std::string &name : chosen)
        if (!contains(ordered, name)) ordered.push_back(name);
    return ordered;
}

std::string describe_fma(const fma_peak &p) {
    return "measured: " + p.isa + " FMA loop, " + std::to_string(p.threads) + " threads";
}

std::string describe_triad(const bandwidth_peak &p) {
    return "measured: triad over 3 x " + std::to_string(p.bytes_per_array >> 20) + " MiB, " +
           std::to_string(p.threads) + " threads";
}

// The probes measure the host: on the device only given peaks count.
roofline_peaks establish_peaks(const bench_options &o, const cpu_info &cpu) {
    roofline_peaks peaks;
    bool measure = o.measure_peak && o.device < 0;
    // The probes take seconds before the first case: say so on stderr, where the progress goes.
    if (measure && !(o.peak_gflops > 0 && o.peak_gbs > 0))
        std::fprintf(stderr, "gemm bench: measuring this machine's peak compute and bandwidth for the roofline "
                             "(--no-measure-peak skips it)\n");
    if (o.peak_gflops > 0) {
        peaks.f32_gflops = peaks.f64_gflops = o.peak_gflops;
        peaks.compute_source = "given";
    } else if (measure) {
        fma_peak fma = peak_probe_fma();
        peaks.f32_gflops = fma.f32_gflops, peaks.f64_gflops = fma.f64_gflops;
        peaks.compute_source = describe_fma(fma);
    }
    if (o.peak_gbs > 0) {
        peaks.gbs = o.peak_gbs;
        peaks.bandwidth_source = "given";
    } else if (measure) {
        // Twice the last-level cache per array: the triad then streams from memory.
        bandwidth_peak bw = peak_probe_bandwidth(2 * cpu.last_level_cache_bytes);
        peaks.gbs = bw.gbs;
        peaks.bandwidth_source = describe_triad(bw);
    }
    return peaks;
}

std::string command_echo(int argc, char **argv) {
    std::string line = watched_variables_prefix();
    for (int i = 0; i < argc; ++i) line += (i ? " " : "") + shell_quote(argv[i]);
    return line;
}

double peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

struct bench_run {
    explicit bench_run(const bench_options &o) : options(o) {}

    const bench_options &options;
    std::vector<std::string> backends;  // baseline first
    std::string baseline;
    roofline_peaks peaks;
    cpu_info cpu;
    device_properties device;  // device runs only
    bool on_device = false;
    output_file csv, json;
    std::FILE *text = stdout;  // the table and its comments; null when stdout takes CSV or JSON
    std::vector<bench_row> rows;
    bool any_wrong = false;
    bool any_above_roofline = false;
    progress_line *progress = nullptr;  // while the cases run: rows are printed with the bar cleared
};

double roofline_for(const roofline_peaks &peaks, const gemm_case &c) {
    double compute = peaks.gflops_for(c.dtype.ab);
    double memory = peaks.gbs * gemm_case_flops(c) / gemm_case_bytes(c);
    if (compute > 0 && memory > 0) return std::min(compute, memory);
    return std::max(compute, memory);
}

void emit_row(bench_run &run, bench_row row, const bench_row &baseline_row) {
    if (row.timed && baseline_row.timed) row.ratio = baseline_row.median_s / row.median_s;
    row.roofline_gflops = roofline_for(run.peaks, row.problem);
    if (row.check.verdict == check_verdict::wrong) run.any_wrong = true;
    if (row.timed && row.roofline_gflops > 0 && row.gflops() > row.roofline_gflops) run.any_above_roofline = true;
    auto print = [&] {
        if (run.text) report_table_row(run.text, row);
        if (run.csv) report_csv_row(run.csv.get(), row, run.baseline);
    };
    if (run.progress) run.progress->print_between(print);
    else print();
    run.rows.push_back(std::move(row));
}

gemm_desc_t desc_of(const gemm_case &c, int device) {
    gemm_desc_t d;
    gemm_desc_init(&d, c.dtype.ab, c.layout, c.op_a, c.op_b, c.shape.m, c.shape.n, c.shape.k);
    d.c_type = c.dtype.c;
    d.batch_count = c.batch;
    d.device = device;
    d.beta_zero = c.beta == 0.0;
    d.scale_mode = c.scale;
    return d;
}

gemm_measure_options_t measure_options(const bench_options &o, const gemm_case &c) {
    gemm_measure_options_t m;
    gemm_measure_options_init(&m);
    m.budget_ms = o.budget_ms;
    m.min_samples = 1;  // the budget decides, the first round takes one at least
    m.max_samples = int(std::min<int64_t>(o.reps, 1 << 30));
    m.rounds = int(std::min<int64_t>(o.rounds, 1 << 30));
    m.warmup_samples = int(std::min<int64_t>(o.warmup, 1 << 30));
    m.pinned = o.pinned ? 1 : 0;
    m.alpha = c.alpha;
    m.beta = c.beta;
    return m;
}

bench_row row_of(const gemm_case &c, const gemm_measurement_t &r) {
    bench_row row;
    row.backend = r.backend;
    row.problem = c;
    row.status = status_name(r.status);
    if (r.status != GEMM_STATUS_SUCCESS) row.note = row.status + ": " + r.error;
    row.check.verdict = !r.checked ? check_verdict::skipped : r.correct ? check_verdict::ok : check_verdict::wrong;
    row.check.method = r.check_method;
    row.check.worst_ratio = r.check_ratio;
    if (row.check.verdict == check_verdict::wrong || *r.note) row.note = r.note;
    row.timed = r.timed != 0;
    row.reps = r.samples;
    row.calls_per_rep = r.runs_per_sample;
    row.median_s = r.median_us * 1e-6;
    row.best_s = r.best_us * 1e-6;
    row.round_spread = r.round_spread;
    return row;
}

// Every backend of the case through the library's measurement engine (gemm_measure): each
// checked, then timed in rounds, taking turns. The rows come in run.backends' order.
std::vector<bench_row> measure_case(const bench_run &run, const gemm_case &c) {
    gemm_desc_t d = desc_of(c, run.on_device ? run.options.device : -1);
    gemm_measure_options_t options = measure_options(run.options, c);
    std::vector<const char *> names;
    for (const std::string &b : run.backends) names.push_back(b.c_str());
    std::vector<gemm_measurement_t> found(names.size());
    gemm_status_t s = gemm_measure(&d, names.data(), int64_t(names.size()), &options, found.data());
    std::string error = s == GEMM_STATUS_SUCCESS ? "" : gemm_last_error();
    std::vector<bench_row> rows;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (s == GEMM_STATUS_SUCCESS) {
            rows.push_back(row_of(c, found[i]));
            continue;
        }
        bench_row row;  // no operands, or the case itself refused: every row says why
        row.backend = names[i];
        row.problem = c;
        row.status = status_name(s);
        row.note = row.status + ": " + error;
        rows.push_back(std::move(row));
    }
    return rows;
}

// A case's rows are emitted once all are measured: auto's row names the fastest of the others.
void bench_case(bench_run &run, const gemm_case &c) {
    std::vector<bench_row> rows = measure_case(run, c);
    auto_against_best_fill(rows);
    const bench_row baseline_row = rows.front();  // run.backends starts with the baseline
    for (bench_row &row : rows) emit_row(run, std::move(row), baseline_row);
}

// "f32 row NT 1x4096x4096 (batch 8)", "e4m3>bf16 col TN 4096x4096x4096 (scale block)".
std::string case_text(const gemm_case &c) {
    std::string text = dtype_pair_name(c.dtype) + " " + layout_name(c.layout) + " " + ops_name(c) + " " +
                       std::to_string(c.shape.m) + "x" + std::to_string(c.shape.n) + "x" + std::to_string(c.shape.k);
    if (c.batch > 1) text += " (batch " + std::to_string(c.batch) + ")";
    return c.scale != GEMM_SCALE_NONE ? text + " (scale " + scale_name(c.scale) + ")" : text;
}

// Each case in turn, with progress on stderr: a case of several backends takes seconds.
void bench_all_cases(bench_run &run) {
    const bench_options &o = run.options;
    std::vector<gemm_case> cases;
    for (dtype_pair dtype : o.dtypes)
        for (gemm_layout_t layout : o.layouts)
            for (const auto &ops : o.ops)
                for (const gemm_shape &shape : o.shapes)
                    cases.push_back(
                        gemm_case{dtype, layout, ops.first, ops.second, shape, o.batch, o.alpha, o.beta, o.scale});
    progress_line progress("gemm bench", cases.size());
    run.progress = &progress;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        progress.begin(i, case_text(cases[i]));
        bench_case(run, cases[i]);
    }
    run.progress = nullptr;
}

void print_preamble(std::FILE *out, const bench_run &run, const std::string &command) {
    const roofline_peaks &p = run.peaks;
    std::fprintf(out, "# gemm bench: gemm %s on %s: %d logical cpus, %d OpenMP threads, %s, last-level cache %lld KiB\n",
                 gemm_version(), run.cpu.model.c_str(), run.cpu.logical_cpus, run.cpu.openmp_threads,
                 cpu_info_isa_list(run.cpu).c_str(), static_cast<long long>(run.cpu.last_level_cache_bytes >> 10));
    std::fprintf(out, "# reproduce: %s\n", command.c_str());
    if (run.on_device) {
        const device_properties &d = run.device;
        std::fprintf(out,
                     "# device %d: %s, compute capability %d.%d, %d SMs, L2 %lld KiB, %.1f GiB; device pointers,\n"
                     "#   calls enqueued on a stream of the library's measurement and timed with CUDA events\n",
                     d.ordinal, d.name.c_str(), d.major, d.minor, d.sm_count, static_cast<long long>(d.l2_bytes >> 10),
                     double(d.memory_bytes) / double(int64_t(1) << 30));
    }
    if (cpu_info_busy(run.cpu))
        std::fprintf(out, "# warning: load average %.2f on %d logical cpus: other processes will disturb the timings\n",
                     run.cpu.load_average, run.cpu.logical_cpus);
    if (p.f32_gflops > 0)
        std::fprintf(out, "# peak compute: f32/f16/bf16 %.1f GFLOP/s, f64 %.1f GFLOP/s (%s)\n", p.f32_gflops,
                     p.f64_gflops, p.compute_source.c_str());
    else
        std::fprintf(out, "# peak compute: unknown (not measured%s, no --peak-gflops)\n",
                     run.on_device ? ": the probes measure the host" : "");
    if (p.gbs > 0) std::fprintf(out, "# peak bandwidth: %.1f GB/s (%s)\n", p.gbs, p.bandwidth_source.c_str());
    else std::fprintf(out, "# peak bandwidth: unknown (not measured, no --peak-gbs)\n");
    std::fprintf(out, "# baseline: %s (ratio = median time of %s / median time of the row's backend)\n",
                 run.baseline.c_str(), run.baseline.c_str());
    std::fprintf(out,
                 "# check: every element against a double-precision loop when m*n*k*batch <= 2^27, else\n"
                 "#   C·t vs alpha·A·(B·t) + beta·C0·t (gemm_measure)%s\n",
                 run.on_device ? "; on the host, of C copied back from the device" : "");
    if (run.options.scale == GEMM_SCALE_TENSOR)
        std::fprintf(out, "# FP8 scales: tensor, one f32 each for A and B, 2^u for u uniform in [-1, 1)\n");
    else if (run.options.scale == GEMM_SCALE_BLOCK)
        std::fprintf(out, "# FP8 scales: block, A one f32 per row and 128 of k, B one per 128 x 128, each 2^u for u\n"
                          "#   uniform in [-1, 1); at the least leading dimensions (docs/FP8.md)\n");
    std::fprintf(out, "# AI = flops / bytes of A and B read and C written%s%s; roof = min(peak, AI x bandwidth)\n",
                 run.options.beta != 0.0 ? " and read" : "",
                 run.options.scale != GEMM_SCALE_NONE ? ", scales read" : "");
    report_table_header(out);
}

void print_epilogue(std::FILE *out, const bench_run &run, const run_summary &summary) {
    const bench_options &o = run.options;
    std::fprintf(out, "# peak memory (ru_maxrss): %.1f MiB%s\n", summary.peak_rss_mib,
                 o.measure_peak && o.peak_gbs <= 0 && !run.on_device ? ", including the bandwidth probe's arrays" : "");
    if (run.any_above_roofline)
        std::fprintf(out,
                     "# note: some rows exceed 100%% of the roofline: the peaks are too low (measured on a busy\n"
                     "#       machine, or with fewer threads than the backends use); give --peak-gflops/--peak-gbs\n");
    if (run.any_wrong) std::fprintf(out, "# ERROR: some results are WRONG (see the check column)\n");
}

run_summary summarize(const bench_run &run, const std::string &command) {
    run_summary s;
    s.command = command;
    s.library_version = gemm_version();
    s.cpu_model = run.cpu.model;
    s.openmp_threads = run.cpu.openmp_threads;
    s.baseline = run.baseline;
    s.peak_f32_gflops = run.peaks.f32_gflops;
    s.peak_f64_gflops = run.peaks.f64_gflops;
    s.peak_gbs = run.peaks.gbs;
    s.peak_compute_source = run.peaks.compute_source;
    s.peak_bandwidth_source = run.peaks.bandwidth_source;
    s.peak_rss_mib = peak_rss_mib();
    return s;
}

// A backend the command line names must be one the library can force here: one it refuses
// (unavailable, no such variant) would give rows that measure nothing, so the run stops
// before anything is timed.
bool named_backends_usable(const bench_options &o) {
    std::vector<std::string> named = o.backends;
    if (!o.baseline.empty() && !contains(named, o.baseline)) named.push_back(o.baseline);
    bool usable = true;
    for (const std::string &name : named) {
        if (name == "auto") continue;
        std::string refusal = backend_refusal(name);
        if (refusal.empty()) continue;
        std::fprintf(stderr, "gemm bench: ERROR: %s cannot run here: %s\n", name.c_str(), refusal.c_str());
        usable = false;
    }
    return usable;
}

// A row whose calls failed measured nothing. That is an error for a backend the user named,
// and for any failure but "not supported": the default set holds every available backend
// whatever the dtype, and not every backend serves every dtype.
bool row_failed(const bench_row &row, const bench_options &o) {
    if (row.status == "GEMM_STATUS_SUCCESS") return false;
    bool named = contains(o.backends, row.backend) || row.backend == o.baseline;
    return named || row.status != "GEMM_STATUS_NOT_SUPPORTED";
}

// Reports on stderr what kept the run from measuring what was asked; true when something did.
bool report_unmeasured(const bench_run &run) {
    bool failed = false, any_measured = false;
    for (const bench_row &row : run.rows) {
        any_measured = any_measured || (row.timed && row.check.verdict == check_verdict::ok);
        if (!row_failed(row, run.options)) continue;
        std::fprintf(stderr, "gemm bench: ERROR: %s on %s did not run: %s\n", row.backend.c_str(),
                     gemm_case_text(row.problem).c_str(), row.note.c_str());
        failed = true;
    }
    if (!any_measured)
        std::fprintf(stderr, "gemm bench: ERROR: nothing was measured: no row was both checked and timed\n");
    return failed || !any_measured;
}

bool configuration_usable() {
    // Only the configuration matters here: each backend is forced and checked on its own.
    config_probe_result probe = library_config_probe();
    if (probe.valid || !is_configuration_error(probe.status)) return true;
    std::fprintf(stderr, "gemm bench: ERROR: %s\n  %s\n  (`gemm info` shows the configuration)\n",
                 gemm_status_string(probe.status), probe.message.c_str());
    return false;
}

// The device the run measures on; false (with the reason on stderr) when the build or the
// machine has no usable CUDA device.
bool open_device(bench_run &run) {
    try {
        run.device = device_select(run.options.device);
        run.on_device = true;
        return true;
    } catch (const device_error &e) {
        std::fprintf(stderr, "gemm bench: ERROR: %s\n", e.what());
        return false;
    }
}

int bench_measure_all(bench_run &run, int argc, char **argv) {
    const bench_options &options = run.options;
    run.backends = choose_backends(options, &run.baseline);
    if (!configuration_usable() || !named_backends_usable(options)) return exit_failure;
    const std::string command = command_echo(argc, argv);
    run.peaks = establish_peaks(options, run.cpu);
    if (run.text) print_preamble(run.text, run, command);
    if (run.csv) report_csv_header(run.csv.get());
    bench_all_cases(run);
    if (run.text) auto_against_best_print(run.text, run.rows);
    run_summary summary = summarize(run, command);
    if (run.json) report_json(run.json.get(), summary, run.rows);
    if (run.text) print_epilogue(run.text, run, summary);
    bool unmeasured = report_unmeasured(run);
    output_close(run.csv, options.csv_path, "--csv");
    output_close(run.json, options.json_path, "--json");
    return run.any_wrong || unmeasured ? exit_failure : exit_ok;
}

}  // namespace

int bench_command(int argc, char **argv, int first) {
    bench_options options = bench_options_parse(argc, argv, first);
    if (options.show_help) {
        std::fputs(bench_help, stdout);
        return exit_ok;
    }
    bench_run run{options};
    run.cpu = cpu_info_read();
    run.csv = output_open(options.csv_path, "--csv");
    run.json = output_open(options.json_path, "--json");
    if (run.csv.get() == stdout || run.json.get() == stdout) run.text = nullptr;
    if (options.device >= 0 && !open_device(run)) return exit_failure;
    return bench_measure_all(run, argc, argv);
}

}  // namespace gemm_cli
