// report.cpp: the bench table, CSV and JSON writers.
#include "report.hpp"

#include <cmath>

#include "auto_against_best.hpp"
#include "json_writer.hpp"

namespace gemm_cli {

const char *check_verdict_name(check_verdict v) {
    switch (v) {
    case check_verdict::ok: return "ok";
    case check_verdict::wrong: return "WRONG";
    case check_verdict::skipped: return "skipped";
    }
    return "?";
}

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

double roofline_percent(const bench_row &r) { return 100.0 * r.gflops() / r.roofline_gflops; }

}  // namespace

void report_table_header(std::FILE *out) {
    std::fprintf(out, "%-10s %-4s %-3s %-2s %6s %6s %6s %5s %-7s %4s %10s %10s %9s %6s %6s %9s %6s %7s  %s\n",
                 "backend", "type", "lay", "op", "m", "n", "k", "batch", "check", "reps", "median_ms", "best_ms",
                 "GFLOP/s", "ratio", "AI", "roof_GF/s", "%roof", "spread%", "note");
}

void report_table_row(std::FILE *out, const bench_row &r) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    std::string check = r.status == "GEMM_STATUS_SUCCESS" ? check_verdict_name(r.check.verdict) : "-";
    std::fprintf(out, "%-10s %-4s %-3s %-2s %6lld %6lld %6lld %5lld %-7s %4s %10s %10s %9s %6s %6s %9s %6s %7s  %s\n",
                 r.backend.c_str(), dtype_pair_name(c.dtype).c_str(), layout_name(c.layout), ops_name(c).c_str(),
                 static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n), static_cast<long long>(c.shape.k),
                 static_cast<long long>(c.batch), check.c_str(), number(double(r.reps), "%.0f", r.timed).c_str(),
                 number(r.median_s * 1e3, "%.4g", r.timed).c_str(), number(r.best_s * 1e3, "%.4g", r.timed).c_str(),
                 number(r.gflops(), "%.1f", r.timed).c_str(), number(r.ratio, "%.2f", r.ratio > 0).c_str(),
                 number(r.intensity(), "%.1f", true).c_str(), number(r.roofline_gflops, "%.1f", roof).c_str(),
                 number(roofline_percent(r), "%.1f", roof && r.timed).c_str(),
                 number(100 * r.round_spread, "%.1f", r.round_spread >= 0).c_str(), r.note.c_str());
    std::fflush(out);
}

void report_csv_header(std::FILE *out) {
    std::fprintf(out, "backend,dtype,layout,ops,m,n,k,batch,alpha,beta,check,check_method,check_worst_ratio,"
                      "reps,calls_per_rep,median_ms,best_ms,gflops,gflops_best,baseline,ratio,"
                      "arithmetic_intensity,roofline_gflops,roofline_percent,status,note,round_spread_percent,"
                      "best_forced,best_over_auto,scale\n");
}

void report_csv_row(std::FILE *out, const bench_row &r, const std::string &baseline) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    std::fprintf(
        out, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%g,%g,%s,%s,%s,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
        csv_field(r.backend).c_str(), dtype_pair_name(c.dtype).c_str(), layout_name(c.layout), ops_name(c).c_str(),
        static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n), static_cast<long long>(c.shape.k),
        static_cast<long long>(c.batch), c.alpha, c.beta, check_verdict_name(r.check.verdict), r.check.method.c_str(),
        number(r.check.worst_ratio, "%.3g", true).c_str(), static_cast<long long>(r.reps),
        static_cast<long long>(r.calls_per_rep), number(r.median_s * 1e3, "%.6g", r.timed).c_str(),
        number(r.best_s * 1e3, "%.6g", r.timed).c_str(), number(r.gflops(), "%.6g", r.timed).c_str(),
        number(r.gflops_best(), "%.6g", r.timed).c_str(), csv_field(baseline).c_str(),
        number(r.ratio, "%.4g", r.ratio > 0).c_str(), number(r.intensity(), "%.4g", true).c_str(),
        number(r.roofline_gflops, "%.6g", roof).c_str(), number(roofline_percent(r), "%.4g", roof && r.timed).c_str(),
        r.status.c_str(), csv_field(r.note).c_str(), number(100 * r.round_spread, "%.4g", r.round_spread >= 0).c_str(),
        csv_field(r.best_forced).c_str(), number(r.best_over_auto, "%.4g", r.best_over_auto > 0).c_str(),
        scale_name(c.scale));
    std::fflush(out);
}

namespace {

void json_row(json_writer &w, const bench_row &r) {
    const gemm_case &c = r.problem;
    bool roof = r.roofline_gflops > 0;
    w.begin_object(json_writer::layout::line);
    w.key("backend").string(r.backend).key("dtype").string(dtype_pair_name(c.dtype));
    w.key("layout").string(layout_name(c.layout)).key("ops").string(ops_name(c));
    w.key("m").integer(c.shape.m).key("n").integer(c.shape.n).key("k").integer(c.shape.k);
    w.key("batch").integer(c.batch).key("alpha").number(c.alpha).key("beta").number(c.beta);
    w.key("scale").string(scale_name(c.scale));
    w.key("check").string(check_verdict_name(r.check.verdict)).key("check_method").string(r.check.method);
    w.key("check_worst_ratio").number(r.check.worst_ratio);
    w.key("reps").integer(r.reps).key("calls_per_rep").integer(r.calls_per_rep);
    w.key("median_ms").number(r.median_s * 1e3, r.timed).key("best_ms").number(r.best_s * 1e3, r.timed);
    w.key("gflops").number(r.gflops(), r.timed).key("gflops_best").number(r.gflops_best(), r.timed);
    w.key("ratio").number(r.ratio, r.ratio > 0).key("arithmetic_intensity").number(r.intensity());
    w.key("roofline_gflops").number(r.roofline_gflops, roof);
    w.key("roofline_percent").number(roofline_percent(r), roof && r.timed);
    w.key("round_spread_percent").number(100 * r.round_spread, r.round_spread >= 0);
    w.key("status").string(r.status).key("note").string(r.note);
    w.key("best_forced");
    if (r.best_forced.empty()) w.null();
    else w.string(r.best_forced);
    w.key("best_over_auto").number(r.best_over_auto, r.best_over_auto > 0);
    w.end_object();
}

// The auto row with the lowest best / auto, or null.
void json_auto_worst(json_writer &w, const std::vector<bench_row> &rows) {
    const bench_row *worst = auto_against_best_worst(rows);
    if (!worst) {
        w.null();
        return;
    }
    const gemm_case &c = worst->problem;
    w.begin_object(json_writer::layout::line);
    w.key("dtype").string(dtype_pair_name(c.dtype)).key("layout").string(layout_name(c.layout));
    w.key("ops").string(ops_name(c)).key("m").integer(c.shape.m).key("n").integer(c.shape.n);
    w.key("k").integer(c.shape.k).key("batch").integer(c.batch);
    w.key("auto_median_ms").number(worst->median_s * 1e3).key("best_forced").string(worst->best_forced);
    w.key("best_forced_median_ms").number(worst->best_forced_median_s * 1e3);
    w.key("best_over_auto").number(worst->best_over_auto);
    w.end_object();
}

}  // namespace

void report_json(std::FILE *out, const run_summary &s, const std::vector<bench_row> &rows) {
    json_writer w(out);
    w.begin_object();
    w.key("command").string(s.command).key("library_version").string(s.library_version);
    w.key("cpu").begin_object(json_writer::layout::line);
    w.key("model").string(s.cpu_model).key("openmp_threads").integer(s.openmp_threads);
    w.end_object();
    w.key("baseline").string(s.baseline);
    w.key("peak").begin_object(json_writer::layout::line);
    w.key("f32_gflops").number(s.peak_f32_gflops, s.peak_f32_gflops > 0);
    w.key("f64_gflops").number(s.peak_f64_gflops, s.peak_f64_gflops > 0);
    w.key("compute_source").string(s.peak_compute_source);
    w.key("bandwidth_gbs").number(s.peak_gbs, s.peak_gbs > 0);
    w.key("bandwidth_source").string(s.peak_bandwidth_source);
    w.end_object();
    w.key("peak_rss_mib").number(s.peak_rss_mib);
    w.key("rows").begin_array();
    for (const bench_row &r : rows) json_row(w, r);
    w.end_array();
    w.key("auto_worst");
    json_auto_worst(w, rows);
    w.end_object();
}

}  // namespace gemm_cli
