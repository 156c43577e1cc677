// tune_report.cpp: rows of the `gemm tune` table and their candidates.
#include "tune_report.hpp"

#include <algorithm>
#include <cmath>

#include "host_rates.hpp"
#include "json_writer.hpp"

namespace gemm_cli {

int64_t tune_row::rejected() const {
    int64_t n = 0;
    for (const tune_candidate_line &c : candidates) n += c.correct ? 0 : 1;
    return n;
}

double tune_row::speedup() const { return tuned && winner_us > 0 && default_us > 0 ? default_us / winner_us : 0; }

tune_row tune_row_from_report(const tune_problem &p, const gemm_tune_report_t &report) {
    tune_row row;
    row.problem = p;
    row.tuned = true;
    row.winner = report.backend ? report.backend : "";
    row.winner_variant = report.variant ? report.variant : "";
    row.winner_us = report.median_us;
    row.default_backend = report.default_backend ? report.default_backend : "";
    row.default_us = report.default_median_us;
    row.stored = report.stored != 0;
    row.disturbed = report.disturbed != 0;
    for (int64_t i = 0; i < report.candidate_count; ++i) {
        const gemm_tune_candidate_t &c = report.candidates[i];
        row.candidates.push_back({c.backend ? c.backend : "", c.variant ? c.variant : "", c.median_us, c.correct != 0,
                                  c.note ? c.note : "", c.spread});
    }
    return row;
}

std::string backend_variant_text(const std::string &backend, const std::string &variant) {
    return variant.empty() ? backend : backend + ":" + variant;
}

std::string duration_text(double us) {
    if (!(us > 0) || !std::isfinite(us)) return "-";
    char text[32];
    if (us < 1e3) std::snprintf(text, sizeof text, "%.1f us", us);
    else if (us < 1e6) std::snprintf(text, sizeof text, "%.3g ms", us * 1e-3);
    else std::snprintf(text, sizeof text, "%.3g s", us * 1e-6);
    return text;
}

namespace {

std::string speedup_text(double s) {
    if (!(s > 0)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", s);
    return text;
}

// The candidates' names are known once the problem is tuned: their column fits the longest.
void candidate_lines(std::FILE *out, const tune_row &row) {
    int width = 40;
    for (const tune_candidate_line &c : row.candidates)
        width = std::max(width, int(backend_variant_text(c.backend, c.variant).size()));
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
        const tune_candidate_line &c = row.candidates[i];
        std::string name = backend_variant_text(c.backend, c.variant);
        // The tuner lists the built-in default first.
        std::string remark = i == 0 ? "default" : "";
        if (c.backend == row.winner && c.variant == row.winner_variant)
            remark += remark.empty() ? "winner" : ", winner";
        if (c.correct)
            std::fprintf(out, "    %-*s %10s  spread %3.0f %%%s%s\n", width, name.c_str(),
                         duration_text(c.median_us).c_str(), 100 * c.spread, remark.empty() ? "" : "  ", remark.c_str());
        else
            std::fprintf(out, "    %-*s %10s  %s%s%s\n", width, name.c_str(), "rejected", c.note.c_str(),
                         remark.empty() ? "" : "; ", remark.c_str());
    }
}

int widest(int at_least, const std::string &text) { return std::max(at_least, int(text.size())); }

// shape dtype class win_time default def_time speedup tried rej winner
void print_columns(std::FILE *out, const tune_table_widths &w, const std::string (&text)[10]) {
    std::fprintf(out, "%-*s %-*s %-*s %9s  %-*s %9s %8s %5s %4s  %s\n", w.shape, text[0].c_str(), w.dtype,
                 text[1].c_str(), w.klass, text[2].c_str(), text[3].c_str(), w.backend, text[4].c_str(),
                 text[5].c_str(), text[6].c_str(), text[7].c_str(), text[8].c_str(), text[9].c_str());
}

}  // namespace

tune_table_widths tune_table_widths_for(const std::vector<tune_problem> &problems,
                                        const std::vector<std::string> &backend_names) {
    // At least as wide as the headers.
    tune_table_widths w{widest(0, "shape"), widest(0, "dtype"), widest(0, "class"), widest(0, "default")};
    for (const tune_problem &p : problems) {
        w.shape = widest(w.shape, tune_problem_shape_text(p));
        w.dtype = widest(w.dtype, tune_problem_dtype_text(p));
        w.klass = widest(w.klass, tune_problem_class_text(p));
    }
    for (const std::string &name : backend_names) w.backend = widest(w.backend, name);
    return w;
}

void tune_report_header(std::FILE *out, const tune_table_widths &w) {
    print_columns(out, w,
                  {"shape", "dtype", "class", "win_time", "default", "def_time", "speedup", "tried", "rej", "winner"});
    std::fflush(out);
}

void tune_report_row(std::FILE *out, const tune_row &row, const tune_table_widths &w, bool verbose) {
    const tune_problem &p = row.problem;
    std::string shape = tune_problem_shape_text(p), dtype = tune_problem_dtype_text(p);
    std::string klass = tune_problem_class_text(p);
    if (!row.tuned) {
        std::fprintf(out, "%-*s %-*s %-*s FAILED: %s\n", w.shape, shape.c_str(), w.dtype, dtype.c_str(), w.klass,
                     klass.c_str(), row.error.c_str());
    } else {
        print_columns(out, w,
                      {shape, dtype, klass, duration_text(row.winner_us), row.default_backend,
                       duration_text(row.default_us), speedup_text(row.speedup()), std::to_string(row.candidates.size()),
                       std::to_string(row.rejected()), backend_variant_text(row.winner, row.winner_variant)});
        if (row.disturbed)
            std::fprintf(out, "    disturbed: the winner's or the default's timings disagreed by more than 25 %% "
                              "each time they were taken (something else had the machine), so the winner is not "
                              "stored; tune this problem again on a quiet one\n");
        if (verbose) {
            candidate_lines(out, row);
            std::fprintf(out, "    (tuned in %s%s)\n", duration_text(row.seconds * 1e6).c_str(),
                         row.stored ? ", stored" : "");
        }
    }
    std::fflush(out);
}

tune_summary tune_summary_of(const std::vector<tune_row> &rows, double seconds) {
    tune_summary s;
    s.problems = rows.size();
    s.seconds = seconds;
    double log_sum = 0;
    for (const tune_row &r : rows) {
        s.tuned += r.tuned ? 1 : 0;
        s.stored += r.stored ? 1 : 0;
        s.disturbed += r.disturbed ? 1 : 0;
        if (r.speedup() > 0) {
            log_sum += std::log(r.speedup());
            ++s.compared;
        }
    }
    if (s.compared > 0) s.geomean_speedup = std::exp(log_sum / double(s.compared));
    return s;
}

namespace {

void json_problem(json_writer &w, const tune_problem &p) {
    w.key("call").string(p.call.empty() ? "gemm" : p.call);
    if (!p.key.empty()) w.key("key").string(p.key);
    if (p.call == "spmm_csr" || p.call == "spmm_coo") w.key("density").number(std::pow(10.0, p.density), true);
    w.key("dtype").string(gemm_dtype_name(p.ab_type)).key("c_dtype").string(gemm_dtype_name(p.c_type));
    w.key("layout").string(layout_name(p.layout));
    w.key("ops").string(std::string(op_letter(p.op_a)) + op_letter(p.op_b));
    w.key("m").integer(p.shape.m).key("n").integer(p.shape.n).key("k").integer(p.shape.k);
    w.key("batch").integer(p.batch).key("ld_padding").integer(p.ld_padding);
    w.key("misaligned").boolean(p.misaligned).key("beta_zero").boolean(p.beta_zero);
    w.key("device");
    if (p.device >= 0) w.integer(p.device);
    else w.null();
}

void json_candidates(json_writer &w, const tune_row &row) {
    w.key("candidates").begin_array();
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
        const tune_candidate_line &c = row.candidates[i];
        w.begin_object(json_writer::layout::line);
        w.key("backend").string(c.backend).key("variant").string(c.variant);
        w.key("median_us").number(c.median_us, c.correct && c.median_us > 0);
        w.key("correct").boolean(c.correct).key("note").string(c.note);
        w.key("spread").number(c.spread, c.correct);
        // The tuner lists the built-in default first.
        w.key("default").boolean(i == 0);
        w.key("winner").boolean(!row.winner.empty() && c.backend == row.winner && c.variant == row.winner_variant);
        w.end_object();
    }
    w.end_array();
}

void json_row(json_writer &w, const tune_row &row) {
    w.begin_object();
    json_problem(w, row.problem);
    w.key("tuned").boolean(row.tuned).key("error");
    if (row.tuned) w.null();
    else w.string(row.error);
    // A problem that failed only at storing still has a winner.
    w.key("winner");
    if (!row.winner.empty()) {
        w.begin_object(json_writer::layout::line);
        w.key("backend").string(row.winner).key("variant").string(row.winner_variant);
        w.key("median_us").number(row.winner_us, row.winner_us > 0);
        w.end_object();
    } else {
        w.null();
    }
    w.key("default").begin_object(json_writer::layout::line);
    w.key("backend").string(row.default_backend).key("median_us").number(row.default_us, row.default_us > 0);
    w.end_object();
    w.key("speedup").number(row.speedup(), row.speedup() > 0);
    w.key("stored").boolean(row.stored).key("disturbed").boolean(row.disturbed);
    w.key("seconds").number(row.seconds);
    json_candidates(w, row);
    w.end_object();
}

void json_summary(json_writer &w, const tune_run_facts &run, const tune_summary &s) {
    w.key("summary").begin_object();
    w.key("problems").integer(int64_t(s.problems)).key("tuned").integer(int64_t(s.tuned));
    w.key("failed").integer(int64_t(s.problems - s.tuned)).key("stored").integer(int64_t(s.stored));
    w.key("disturbed").integer(int64_t(s.disturbed));
    w.key("seconds").number(s.seconds);
    w.key("geomean_speedup").number(s.geomean_speedup, s.compared > 0);
    w.key("speedup_problems").integer(int64_t(s.compared));
    w.key("untried_backends").begin_array(json_writer::layout::line);
    for (const std::string &name : run.untried_backends) w.string(name);
    w.end_array();
    w.end_object();
}

}  // namespace

void tune_report_json(std::FILE *out, const tune_run_facts &run, const std::vector<tune_row> &rows,
                      const tune_summary &summary) {
    json_writer w(out);
    w.begin_object();
    w.key("command").string(run.command).key("library_version").string(gemm_version());
    w.key("host").begin_object(json_writer::layout::line);
    w.key("model").string(run.cpu.model).key("logical_cpus").integer(run.cpu.logical_cpus);
    w.key("openmp_threads").integer(run.cpu.openmp_threads);
    w.end_object();
    w.key("budget_ms").number(run.budget_ms, run.budget_ms > 0);
    w.key("cache").string(run.cache_path).key("store").boolean(run.store);
    w.key("suite_note").string(run.suite_note);
    w.key("problems").begin_array();
    for (const tune_row &r : rows) json_row(w, r);
    w.end_array();
    json_summary(w, run, summary);
    // The rates untuned host-memory calls are routed by, as the cache holds them after the run.
    std::string unread;
    host_rates_json(w, host_rates_read(unread));
    w.end_object();
}

}  // namespace gemm_cli
