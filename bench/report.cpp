// report.cpp: the bench table, CSV and JSON writers.
#include "report.hpp"

#include <cmath>

namespace gemm_cli {
namespace {

// "-" for a figure that is not known, so columns stay aligned and nothing reads as zero.
std::string number(double v, const char *format, bool known) {
    if (!known || !std::isfinite(v)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, v);
    return text;
}

std::string csv_field(const std::string &s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string quoted = "\"";
    for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') out += '\\', out += char(c);
        else if (c == '\n') out += "\\n";
        else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else out += char(c);
    }
    return out + "\"";
}

// JSON has no NaN or infinity: unknown figures are null.
std::string json_number(double v, bool known) {
    if (!known || !std::isfinite(v)) return "null";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

double roofline_percent(const bench_row &r) { return 100.0 * r.gflops() / r.roofline_gflops; }

}  // namespace

void report_table_header(std::FILE *out) {
    std::fprintf(out, "%-10s %-4s %-3s %-2s %6s %6s %6s %5s %-7s %4s %10s %10s %9s %6s %6s %9s %6s %7s  %s\n",
                 "backend", "type", "lay", "op", "m", "n", "k", "batch", "check", "reps", "median_ms",
                 "best_ms", "GFLOP/s", "ratio", "AI", "roof_GF/s", "%roof", "spread%", "note");
}

void report_table_row(std::FILE *out, const bench_row &r) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    std::string check = r.status == "GEMM_STATUS_SUCCESS" ? check_verdict_name(r.check.verdict) : "-";
    std::fprintf(out, "%-10s %-4s %-3s %-2s %6lld %6lld %6lld %5lld %-7s %4s %10s %10s %9s %6s %6s %9s %6s %7s  %s\n",
                 r.backend.c_str(), dtype_name(c.dtype), layout_name(c.layout), ops_name(c).c_str(),
                 static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n),
                 static_cast<long long>(c.shape.k), static_cast<long long>(c.batch), check.c_str(),
                 number(double(r.reps), "%.0f", r.timed).c_str(), number(r.median_s * 1e3, "%.4g", r.timed).c_str(),
                 number(r.best_s * 1e3, "%.4g", r.timed).c_str(), number(r.gflops(), "%.1f", r.timed).c_str(),
                 number(r.ratio, "%.2f", r.ratio > 0).c_str(), number(r.intensity(), "%.1f", true).c_str(),
                 number(r.roofline_gflops, "%.1f", roof).c_str(),
                 number(roofline_percent(r), "%.1f", roof && r.timed).c_str(),
                 number(100 * r.round_spread, "%.1f", r.round_spread >= 0).c_str(), r.note.c_str());
    std::fflush(out);
}

void report_csv_header(std::FILE *out) {
    std::fprintf(out, "backend,dtype,layout,ops,m,n,k,batch,alpha,beta,check,check_method,check_worst_ratio,"
                      "reps,calls_per_rep,median_ms,best_ms,gflops,gflops_best,baseline,ratio,"
                      "arithmetic_intensity,roofline_gflops,roofline_percent,status,note,round_spread_percent\n");
}

void report_csv_row(std::FILE *out, const bench_row &r, const std::string &baseline) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    std::fprintf(out, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%g,%g,%s,%s,%s,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
                 csv_field(r.backend).c_str(), dtype_name(c.dtype), layout_name(c.layout), ops_name(c).c_str(),
                 static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n),
                 static_cast<long long>(c.shape.k), static_cast<long long>(c.batch), c.alpha, c.beta,
                 check_verdict_name(r.check.verdict), r.check.method.c_str(),
                 number(r.check.worst_ratio, "%.3g", true).c_str(), static_cast<long long>(r.reps),
                 static_cast<long long>(r.calls_per_rep), number(r.median_s * 1e3, "%.6g", r.timed).c_str(),
                 number(r.best_s * 1e3, "%.6g", r.timed).c_str(), number(r.gflops(), "%.6g", r.timed).c_str(),
                 number(r.gflops_best(), "%.6g", r.timed).c_str(), csv_field(baseline).c_str(),
                 number(r.ratio, "%.4g", r.ratio > 0).c_str(), number(r.intensity(), "%.4g", true).c_str(),
                 number(r.roofline_gflops, "%.6g", roof).c_str(),
                 number(roofline_percent(r), "%.4g", roof && r.timed).c_str(), r.status.c_str(),
                 csv_field(r.note + (r.check.detail.empty() ? "" : " " + r.check.detail)).c_str(),
                 number(100 * r.round_spread, "%.4g", r.round_spread >= 0).c_str());
    std::fflush(out);
}

namespace {

void json_row(std::FILE *out, const bench_row &r) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    std::fprintf(out,
                 "    {\"backend\": %s, \"dtype\": \"%s\", \"layout\": \"%s\", \"ops\": \"%s\", "
                 "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"batch\": %lld, \"alpha\": %s, \"beta\": %s, "
                 "\"check\": \"%s\", \"check_method\": %s, \"check_worst_ratio\": %s, \"check_detail\": %s, "
                 "\"reps\": %lld, \"calls_per_rep\": %lld, \"median_ms\": %s, \"best_ms\": %s, "
                 "\"gflops\": %s, \"gflops_best\": %s, \"ratio\": %s, \"arithmetic_intensity\": %s, "
                 "\"roofline_gflops\": %s, \"roofline_percent\": %s, \"round_spread_percent\": %s, "
                 "\"status\": \"%s\", \"note\": %s}",
                 json_string(r.backend).c_str(), dtype_name(c.dtype), layout_name(c.layout), ops_name(c).c_str(),
                 static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n),
                 static_cast<long long>(c.shape.k), static_cast<long long>(c.batch),
                 json_number(c.alpha, true).c_str(), json_number(c.beta, true).c_str(),
                 check_verdict_name(r.check.verdict), json_string(r.check.method).c_str(),
                 json_number(r.check.worst_ratio, true).c_str(), json_string(r.check.detail).c_str(),
                 static_cast<long long>(r.reps), static_cast<long long>(r.calls_per_rep),
                 json_number(r.median_s * 1e3, r.timed).c_str(), json_number(r.best_s * 1e3, r.timed).c_str(),
                 json_number(r.gflops(), r.timed).c_str(), json_number(r.gflops_best(), r.timed).c_str(),
                 json_number(r.ratio, r.ratio > 0).c_str(), json_number(r.intensity(), true).c_str(),
                 json_number(r.roofline_gflops, roof).c_str(), json_number(roofline_percent(r), roof && r.timed).c_str(),
                 json_number(100 * r.round_spread, r.round_spread >= 0).c_str(), r.status.c_str(),
                 json_string(r.note).c_str());
}

}  // namespace

void report_json(std::FILE *out, const run_summary &s, const std::vector<bench_row> &rows) {
    std::fprintf(out, "{\n  \"command\": %s,\n  \"library_version\": %s,\n", json_string(s.command).c_str(),
                 json_string(s.library_version).c_str());
    std::fprintf(out, "  \"cpu\": {\"model\": %s, \"openmp_threads\": %d},\n", json_string(s.cpu_model).c_str(),
                 s.openmp_threads);
    std::fprintf(out, "  \"baseline\": %s,\n", json_string(s.baseline).c_str());
    std::fprintf(out,
                 "  \"peak\": {\"f32_gflops\": %s, \"f64_gflops\": %s, \"compute_source\": %s, "
                 "\"bandwidth_gbs\": %s, \"bandwidth_source\": %s},\n",
                 json_number(s.peak_f32_gflops, s.peak_f32_gflops > 0).c_str(),
                 json_number(s.peak_f64_gflops, s.peak_f64_gflops > 0).c_str(),
                 json_string(s.peak_compute_source).c_str(), json_number(s.peak_gbs, s.peak_gbs > 0).c_str(),
                 json_string(s.peak_bandwidth_source).c_str());
    std::fprintf(out, "  \"peak_rss_mib\": %.1f,\n  \"rows\": [\n", s.peak_rss_mib);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        json_row(out, rows[i]);
        std::fputs(i + 1 < rows.size() ? ",\n" : "\n", out);
    }
    std::fputs("  ]\n}\n", out);
}

}  // namespace gemm_cli
