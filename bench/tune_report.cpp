// tune_report.cpp: rows of the `gemm tune` table and their candidates.
#include "tune_report.hpp"

#include <cmath>

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
    for (int64_t i = 0; i < report.candidate_count; ++i) {
        const gemm_tune_candidate_t &c = report.candidates[i];
        row.candidates.push_back({c.backend ? c.backend : "", c.variant ? c.variant : "", c.median_us,
                                  c.correct != 0, c.note ? c.note : ""});
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

constexpr const char *row_format = "%-18s %-8s %-10s %-28s %9s  %-10s %9s %8s %5s %4s\n";

std::string speedup_text(double s) {
    if (!(s > 0)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", s);
    return text;
}

void candidate_lines(std::FILE *out, const tune_row &row) {
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
        const tune_candidate_line &c = row.candidates[i];
        std::string name = backend_variant_text(c.backend, c.variant);
        // The tuner lists the built-in default first.
        std::string remark = i == 0 ? "default" : "";
        if (c.backend == row.winner && c.variant == row.winner_variant) remark += remark.empty() ? "winner" : ", winner";
        if (c.correct)
            std::fprintf(out, "    %-40s %10s%s%s\n", name.c_str(), duration_text(c.median_us).c_str(),
                         remark.empty() ? "" : "  ", remark.c_str());
        else
            std::fprintf(out, "    %-40s %10s  %s%s%s\n", name.c_str(), "rejected", c.note.c_str(),
                         remark.empty() ? "" : "; ", remark.c_str());
    }
}

}  // namespace

void tune_report_header(std::FILE *out) {
    std::fprintf(out, row_format, "shape", "dtype", "class", "winner", "time", "default", "time", "speedup",
                 "tried", "rej");
    std::fflush(out);
}

void tune_report_row(std::FILE *out, const tune_row &row, bool verbose) {
    const tune_problem &p = row.problem;
    std::string shape = tune_problem_shape_text(p), dtype = tune_problem_dtype_text(p);
    std::string klass = tune_problem_class_text(p);
    if (!row.tuned) {
        std::fprintf(out, "%-18s %-8s %-10s FAILED: %s\n", shape.c_str(), dtype.c_str(), klass.c_str(),
                     row.error.c_str());
    } else {
        std::fprintf(out, row_format, shape.c_str(), dtype.c_str(), klass.c_str(),
                     backend_variant_text(row.winner, row.winner_variant).c_str(),
                     duration_text(row.winner_us).c_str(), row.default_backend.c_str(),
                     duration_text(row.default_us).c_str(), speedup_text(row.speedup()).c_str(),
                     std::to_string(row.candidates.size()).c_str(), std::to_string(row.rejected()).c_str());
        if (verbose) {
            candidate_lines(out, row);
            std::fprintf(out, "    (tuned in %s%s)\n", duration_text(row.seconds * 1e6).c_str(),
                         row.stored ? ", stored" : "");
        }
    }
    std::fflush(out);
}

}  // namespace gemm_cli
