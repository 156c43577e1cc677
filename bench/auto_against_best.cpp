// auto_against_best.cpp: auto's median against the fastest backend forced, per problem and
// at worst, for the table's closing block, CSV and JSON.
#include "auto_against_best.hpp"

#include <algorithm>

namespace gemm_cli {

namespace {

bool is_auto(const bench_row &row) { return row.backend == "auto"; }

bool has_median(const bench_row &row) { return row.timed && row.median_s > 0; }

// Why an auto row has no ratio, for its line in the block.
std::string missing_reason(const bench_row &row) {
    if (has_median(row)) return "no backend forced was timed";
    if (row.status != "GEMM_STATUS_SUCCESS") return "auto did not run: " + row.status;
    if (row.check.verdict == check_verdict::wrong) return "auto's result is WRONG";
    return "auto was not timed";
}

std::string milliseconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
    return text;
}

}  // namespace

void auto_against_best_fill(std::vector<bench_row> &case_rows) {
    const bench_row *best = nullptr;
    for (const bench_row &row : case_rows)
        if (!is_auto(row) && has_median(row) && (!best || row.median_s < best->median_s)) best = &row;
    if (!best) return;
    for (bench_row &row : case_rows) {
        if (!is_auto(row) || !has_median(row)) continue;
        row.best_forced = best->backend;
        row.best_forced_median_s = best->median_s;
        row.best_over_auto = best->median_s / row.median_s;
    }
}

const bench_row *auto_against_best_worst(const std::vector<bench_row> &rows) {
    const bench_row *worst = nullptr;
    for (const bench_row &row : rows)
        if (row.best_over_auto > 0 && (!worst || row.best_over_auto < worst->best_over_auto)) worst = &row;
    return worst;
}

void auto_against_best_print(std::FILE *out, const std::vector<bench_row> &rows) {
    std::vector<const bench_row *> autos;
    bool any_forced = false;
    std::size_t problem_width = 0, backend_width = 1;
    for (const bench_row &row : rows) {
        if (!is_auto(row)) {
            any_forced = true;
            backend_width = std::max(backend_width, row.backend.size());
            continue;
        }
        autos.push_back(&row);
        problem_width = std::max(problem_width, gemm_case_text(row.problem).size());
    }
    if (autos.empty() || !any_forced) return;
    std::fprintf(out, "auto against the best backend forced (median; 1.00 = as fast):\n");
    for (const bench_row *row : autos) {
        std::string problem = gemm_case_text(row->problem);
        if (row->best_over_auto > 0)
            std::fprintf(out, "  %-*s   %-*s   %.2f\n", int(problem_width), problem.c_str(), int(backend_width),
                         row->best_forced.c_str(), row->best_over_auto);
        else
            std::fprintf(out, "  %-*s   %-*s   -     (%s)\n", int(problem_width), problem.c_str(), int(backend_width),
                         "-", missing_reason(*row).c_str());
    }
    const bench_row *worst = auto_against_best_worst(rows);
    if (worst)
        std::fprintf(out, "worst: %.2f (%s: auto %s, %s %s)\n", worst->best_over_auto,
                     gemm_case_text(worst->problem).c_str(), milliseconds(worst->median_s).c_str(),
                     worst->best_forced.c_str(), milliseconds(worst->best_forced_median_s).c_str());
    else std::fprintf(out, "worst: - (auto and a backend forced were not both timed on any problem)\n");
    std::fflush(out);
}

}  // namespace gemm_cli
