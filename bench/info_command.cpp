// info_command.cpp: `gemm info`: version, backends, the selection in force, the environment,
// the tune cache, the host CPU and the CUDA devices; as text, or as JSON with --json FILE.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "cpu_info.hpp"
#include "device_info.hpp"
#include "gemm/gemm.h"
#include "host_rates.hpp"
#include "info_variants.hpp"
#include "json_writer.hpp"
#include "library_config.hpp"
#include "problem_args.hpp"

namespace gemm_cli {
namespace {

constexpr const char *info_help =
    "usage: gemm info [--variants [SHAPE] [--dtype T] [--layout L] [--ops OPS] [--device N]]\n"
    "                 [--json FILE] [--help]\n"
    "\n"
    "Prints the library version, every backend compiled into this build (available or not,\n"
    "with the reason), the backend selection in force, where it comes from and whether it is\n"
    "valid, the environment variables the library reads, the tune cache's path, the host CPU\n"
    "and the CUDA devices.\n"
    "\n"
    "  --variants    also each backend's variant ids (what GEMM_BACKEND=backend:variant\n"
    "                and gemm tune --verbose name): every id of this build, or with a SHAPE\n"
    "                (N or MxNxK) those worth timing for that problem, or why a backend\n"
    "                cannot serve it\n"
    "  --dtype T, --layout L, --ops OPS, --device N\n"
    "                the problem of --variants SHAPE: f32 (default), f64, f16, bf16; row\n"
    "                (default) or col; NN (default), NT, TN, TT; device memory of CUDA\n"
    "                device N (default: host memory)\n"
    "  --json FILE   the same as JSON in FILE; FILE '-' writes it to stdout in place of\n"
    "                the text\n"
    "\n"
    "Exit code: 0 when the configuration is valid, 1 when the selection or a GEMM_*\n"
    "variable is invalid (the ERROR line says why), 2 for a bad command line.\n";

struct backend_facts {
    std::string name;
    bool available = false;
    std::string reason, detail;
    std::string error;  // gemm_backend_get_info failed: the status and message; name is empty
};

struct device_facts {
    std::string none_reason;  // why there is no device, when there is none
    std::vector<device_properties> devices;
    std::vector<std::string> errors;  // devices whose properties could not be read
};

// Everything `gemm info` reports, read once and rendered as text or JSON.
struct info_facts {
    std::vector<backend_facts> backends;
    std::string selection, selection_source;
    config_probe_result probe;
    std::vector<std::pair<std::string, const char *>> environment;  // value null when unset
    std::string tune_cache;
    std::vector<gemm_host_rates_t> rates;  // this machine's host-memory rates in the tune cache
    std::string rates_error;
    cpu_info cpu;
    device_facts devices;
};

std::vector<backend_facts> backends_read() {
    std::vector<backend_facts> list;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        backend_facts b;
        if (gemm_status_t s = gemm_backend_get_info(i, &info); s != GEMM_STATUS_SUCCESS) {
            b.error = "#" + std::to_string(i) + ": " + gemm_status_string(s) + ": " + gemm_last_error();
        } else {
            b.name = info.name;
            b.available = info.available != 0;
            b.reason = info.reason ? info.reason : "";
            b.detail = info.detail ? info.detail : "";
        }
        list.push_back(b);
    }
    return list;
}

device_facts devices_read() {
    device_facts d;
    int count = device_count(&d.none_reason);
    for (int i = 0; i < count; ++i) {
        try {
            d.devices.push_back(device_describe(i));
        } catch (const device_error &e) {
            d.errors.push_back("device " + std::to_string(i) + ": " + e.what());
        }
    }
    return d;
}

info_facts info_facts_read() {
    info_facts f;
    f.backends = backends_read();
    f.selection = gemm_get_backend();
    f.selection_source = gemm_get_backend_source();
    f.probe = library_config_probe();
    for (const std::string &name : watched_variables()) f.environment.emplace_back(name, std::getenv(name.c_str()));
    f.tune_cache = gemm_tune_cache_path();
    f.rates = host_rates_read(f.rates_error);
    f.cpu = cpu_info_read();
    f.devices = devices_read();
    return f;
}

// ---- text ----------------------------------------------------------------------------------

void print_backends(std::FILE *out, const std::vector<backend_facts> &backends) {
    std::fprintf(out, "\nbackends (%zu):\n", backends.size());
    for (const backend_facts &b : backends) {
        if (!b.error.empty()) {
            std::fprintf(out, "  %s\n", b.error.c_str());
            continue;
        }
        std::fprintf(out, "  %-12s %-4s %s\n", b.name.c_str(), b.available ? "yes" : "no",
                     (b.available ? b.detail : b.reason).c_str());
    }
}

void print_selection(std::FILE *out, const info_facts &f) {
    std::fprintf(out, "\nselection: %s (from %s)\n", f.selection.c_str(), f.selection_source.c_str());
    if (f.probe.valid) {
        std::fprintf(out, "  valid: yes (it serves an f32 call on host memory)\n");
        return;
    }
    std::fprintf(out, "  ERROR: %s%s\n", gemm_status_string(f.probe.status),
                 is_configuration_error(f.probe.status) ? "" : " (for an f32 call on host memory)");
    std::fprintf(out, "         %s\n", f.probe.message.c_str());
}

bool tune_off(const info_facts &f) {
    for (const auto &[name, value] : f.environment)
        if (name == "GEMM_TUNE") return value && std::string(value) == "off";
    return false;
}

void print_environment(std::FILE *out, const info_facts &f) {
    std::fprintf(out, "\nenvironment:\n");
    for (const auto &[name, value] : f.environment)
        std::fprintf(out, "  %-24s %s\n", name.c_str(), value ? shell_quote(value).c_str() : "(unset)");
    std::fprintf(out, "\ntune cache: %s\n", f.tune_cache.c_str());
    if (!f.rates_error.empty()) std::fprintf(out, "  host-memory rates: ERROR: %s\n", f.rates_error.c_str());
    else if (f.rates.empty())
        std::fprintf(out, "  host-memory rates: none yet (%s)\n",
                     tune_off(f) ? "GEMM_TUNE=off: never measured; auto takes cpu_omp first for host memory"
                                 : "the first host-memory call that needs them measures them, within 0.5 s, "
                                   "and stores them here");
    for (const gemm_host_rates_t &r : f.rates)
        std::fprintf(out, "  host-memory rates %s: %s\n", host_rates_type(r), host_rates_text(r).c_str());
}

void print_cpu(std::FILE *out, const cpu_info &cpu) {
    std::fprintf(out, "\ncpu:\n");
    std::fprintf(out, "  model                 %s\n", cpu.model.c_str());
    std::fprintf(out, "  logical cpus          %d\n", cpu.logical_cpus);
    std::fprintf(out, "  openmp threads        %d\n", cpu.openmp_threads);
    std::fprintf(out, "  isa                   %s\n", cpu_info_isa_list(cpu).c_str());
    std::fprintf(out, "  last-level cache      %lld KiB%s\n", static_cast<long long>(cpu.last_level_cache_bytes >> 10),
                 cpu.cache_size_known ? "" : " (not readable; assumed)");
    if (cpu.load_average >= 0)
        std::fprintf(out, "  load average (1 min)  %.2f%s\n", cpu.load_average,
                     cpu_info_busy(cpu) ? " (busy: benchmarks will be disturbed)" : "");
}

double gib(int64_t bytes) { return double(bytes) / double(int64_t(1) << 30); }

void print_devices(std::FILE *out, const device_facts &d) {
    std::fprintf(out, "\ncuda devices:\n");
    if (d.devices.empty() && d.errors.empty()) std::fprintf(out, "  none: %s\n", d.none_reason.c_str());
    for (const device_properties &p : d.devices)
        std::fprintf(out, "  %d  %s, sm_%d%d, %d SMs, L2 %lld KiB, %.1f GiB\n", p.ordinal, p.name.c_str(), p.major,
                     p.minor, p.sm_count, static_cast<long long>(p.l2_bytes >> 10), gib(p.memory_bytes));
    for (const std::string &e : d.errors) std::fprintf(out, "  %s\n", e.c_str());
}

void print_text(std::FILE *out, const info_facts &f) {
    std::fprintf(out, "gemm %s (header %d.%d.%d; gemm command built from commit %s)\n", gemm_version(),
                 GEMM_VERSION_MAJOR, GEMM_VERSION_MINOR, GEMM_VERSION_PATCH, gemm_cli_build_commit);
    print_backends(out, f.backends);
    print_selection(out, f);
    print_environment(out, f);
    print_cpu(out, f.cpu);
    print_devices(out, f.devices);
}

// ---- JSON ----------------------------------------------------------------------------------

void json_string_or_null(json_writer &w, const std::string &text, bool known) {
    if (known) w.string(text);
    else w.null();
}

void json_backends(json_writer &w, const std::vector<backend_facts> &backends) {
    w.key("backends").begin_array();
    for (const backend_facts &b : backends) {
        w.begin_object(json_writer::layout::line);
        w.key("name");
        json_string_or_null(w, b.name, b.error.empty());
        w.key("available").boolean(b.available).key("reason").string(b.reason).key("detail").string(b.detail);
        w.key("error");
        json_string_or_null(w, b.error, !b.error.empty());
        w.end_object();
    }
    w.end_array();
}

void json_selection(json_writer &w, const info_facts &f) {
    w.key("selection").begin_object();
    w.key("backend").string(f.selection).key("source").string(f.selection_source);
    w.key("valid").boolean(f.probe.valid);
    w.key("status").string(status_name(f.probe.status));
    w.key("message").string(f.probe.message);
    w.end_object();
}

void json_environment(json_writer &w, const info_facts &f) {
    w.key("environment").begin_object();
    for (const auto &[name, value] : f.environment) {
        w.key(name);
        json_string_or_null(w, value ? value : "", value != nullptr);
    }
    w.end_object();
    // What each GEMM_* variable means, from the library (its own and each backend's).
    w.key("options").begin_array();
    for (int64_t i = 0; i < gemm_option_count(); ++i) {
        gemm_option_info_t o{};
        if (gemm_option_get_info(i, &o) != GEMM_STATUS_SUCCESS) continue;
        w.begin_object(json_writer::layout::line);
        w.key("name").string(o.name).key("owner").string(o.owner).key("value");
        json_string_or_null(w, o.value ? o.value : "", o.value != nullptr);
        w.key("values").string(o.values).key("default").string(o.fallback).key("meaning").string(o.meaning);
        w.end_object();
    }
    w.end_array();
    w.key("tune_cache").string(f.tune_cache);
    host_rates_json(w, f.rates);
}

void json_cpu(json_writer &w, const cpu_info &cpu) {
    w.key("cpu").begin_object();
    w.key("model").string(cpu.model).key("logical_cpus").integer(cpu.logical_cpus);
    w.key("openmp_threads").integer(cpu.openmp_threads);
    w.key("isa").begin_array(json_writer::layout::line);
    if (cpu.avx2) w.string("avx2");
    if (cpu.fma) w.string("fma");
    if (cpu.avx512f) w.string("avx512f");
    w.end_array();
    w.key("last_level_cache_bytes").integer(cpu.last_level_cache_bytes);
    w.key("cache_size_known").boolean(cpu.cache_size_known);
    w.key("load_average").number(cpu.load_average, cpu.load_average >= 0);
    w.key("busy").boolean(cpu_info_busy(cpu));
    w.end_object();
}

void json_devices(json_writer &w, const device_facts &d) {
    w.key("cuda_devices").begin_object();
    w.key("none_reason");
    json_string_or_null(w, d.none_reason, d.devices.empty() && d.errors.empty());
    w.key("devices").begin_array();
    for (const device_properties &p : d.devices) {
        w.begin_object(json_writer::layout::line);
        w.key("ordinal").integer(p.ordinal).key("name").string(p.name);
        w.key("compute_capability").string(std::to_string(p.major) + "." + std::to_string(p.minor));
        w.key("sm_count").integer(p.sm_count).key("l2_bytes").integer(p.l2_bytes);
        w.key("memory_bytes").integer(p.memory_bytes);
        w.end_object();
    }
    w.end_array();
    w.key("errors").begin_array(json_writer::layout::line);
    for (const std::string &e : d.errors) w.string(e);
    w.end_array();
    w.end_object();
}

void write_json(std::FILE *out, const info_facts &f, const variant_listing *variants) {
    json_writer w(out);
    w.begin_object();
    w.key("version").string(gemm_version());
    w.key("header_version")
        .string(std::to_string(GEMM_VERSION_MAJOR) + "." + std::to_string(GEMM_VERSION_MINOR) + "." +
                std::to_string(GEMM_VERSION_PATCH));
    w.key("commit").string(gemm_cli_build_commit);
    json_backends(w, f.backends);
    json_selection(w, f);
    json_environment(w, f);
    json_cpu(w, f.cpu);
    json_devices(w, f.devices);
    if (variants) variants_json(w, *variants);
    w.end_object();
}

// What `gemm info` was asked besides its report: --variants and the problem it names.
struct info_options {
    std::string json_path;
    bool variants = false;
    std::optional<gemm_shape> shape;
    gemm_dtype_t dtype = GEMM_F32;
    gemm_layout_t layout = GEMM_ROW_MAJOR;
    op_pair ops{GEMM_OP_N, GEMM_OP_N};
    int device = -1;
    bool show_help = false;
};

info_options info_options_parse(int argc, char **argv, int first) {
    info_options o;
    arg_reader args(argc, argv, first);
    bool problem_option = false;
    while (!args.done()) {
        std::string arg = args.take();
        if (arg == "--json") o.json_path = args.value(arg);
        else if (arg == "--dtype") o.dtype = dtype_parse(args.value(arg), arg), problem_option = true;
        else if (arg == "--layout") o.layout = layout_parse(args.value(arg), arg), problem_option = true;
        else if (arg == "--ops") o.ops = ops_parse(args.value(arg), arg), problem_option = true;
        else if (arg == "--device") o.device = int(parse_int(args.value(arg), arg, 0)), problem_option = true;
        else if (args.reject_value(arg), arg == "--help" || arg == "-h") o.show_help = true;
        else if (arg == "--variants") o.variants = true;
        else if (o.variants && !o.shape && !arg.empty() && arg[0] != '-') o.shape = shape_parse(arg);
        else throw usage_error("gemm info takes no argument '" + arg + "'");
    }
    if ((problem_option || o.shape) && !o.variants) throw usage_error("a problem is only for --variants");
    if (problem_option && !o.shape) throw usage_error("--variants: give the SHAPE of the problem too");
    return o;
}

std::optional<gemm_desc_t> described_problem(const info_options &o, std::string &text) {
    if (!o.shape) return std::nullopt;
    gemm_desc_t d;
    gemm_desc_init(&d, o.dtype, o.layout, o.ops.first, o.ops.second, o.shape->m, o.shape->n, o.shape->k);
    d.device = o.device;
    text = std::string(gemm_dtype_name(o.dtype)) + " " + layout_name(o.layout) + " " +
           (o.ops.first == GEMM_OP_N ? "N" : "T") + (o.ops.second == GEMM_OP_N ? "N" : "T") + " " +
           std::to_string(o.shape->m) + "x" + std::to_string(o.shape->n) + "x" + std::to_string(o.shape->k) +
           (o.device < 0 ? " host" : " device " + std::to_string(o.device));
    return d;
}

}  // namespace

int info_command(int argc, char **argv, int first) {
    info_options o = info_options_parse(argc, argv, first);
    if (o.show_help) {
        std::fputs(info_help, stdout);
        return exit_ok;
    }
    output_file json = output_open(o.json_path, "--json");
    info_facts facts = info_facts_read();
    std::optional<variant_listing> variants;
    if (o.variants) {
        std::string text;
        std::optional<gemm_desc_t> problem = described_problem(o, text);
        variants = variants_read(problem, text);
    }
    if (json.get() != stdout) {
        print_text(stdout, facts);
        if (variants) variants_print(stdout, *variants);
    }
    if (json) write_json(json.get(), facts, variants ? &*variants : nullptr);
    output_close(json, o.json_path, "--json");
    return facts.probe.valid ? exit_ok : exit_failure;
}

}  // namespace gemm_cli
