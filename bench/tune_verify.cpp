// tune_verify.cpp: `gemm tune --verify`: every entry of the tune cache measured again against
// the built-in rule's choice through gemm_tune_verify, a line each, and with --drop the
// entries that do not hold removed.
#include "tune_verify.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "json_writer.hpp"
#include "tune_report.hpp"

namespace gemm_cli {
namespace {

// One entry and what became of it, copied out of the library's strings.
struct verify_row {
    std::string key, choice, default_backend, note, error;
    bool verified = false;  // gemm_tune_verify succeeded
    bool measured = false, holds = true, disturbed = false, removed = false;
    double median_us = 0, default_us = 0;

    // default time / stored choice's time; 0 when either is unknown.
    double speedup() const { return measured && median_us > 0 && default_us > 0 ? default_us / median_us : 0; }
    const char *verdict() const {
        if (!verified) return "FAILED";
        if (holds) return "holds";
        return removed ? "dropped" : "does not hold";
    }
};

std::vector<verify_row> entries_read() {
    const gemm_tune_entry_t *entries = nullptr;
    int64_t count = 0;
    if (gemm_status_t s = gemm_tune_cache_entries(&entries, &count); s != GEMM_STATUS_SUCCESS)
        throw std::runtime_error(std::string("gemm_tune_cache_entries: ") + gemm_last_error());
    std::vector<verify_row> rows;
    for (int64_t i = 0; i < count; ++i) {
        verify_row r;
        r.key = entries[i].key;
        r.choice = backend_variant_text(entries[i].backend, entries[i].variant);
        rows.push_back(r);
    }
    return rows;
}

void verify_one(verify_row &r, const tune_options &o) {
    gemm_tune_verdict_t v{};
    gemm_status_t s = gemm_tune_verify(r.key.c_str(), o.device < 0 ? 0 : o.device, o.budget_ms, o.drop ? 1 : 0, &v);
    if (s != GEMM_STATUS_SUCCESS) {
        r.error = std::string(gemm_status_string(s)) + ": " + gemm_last_error();
        return;
    }
    r.verified = true;
    r.default_backend = v.default_backend;
    r.measured = v.measured != 0;
    r.median_us = v.median_us;
    r.default_us = v.default_median_us;
    r.holds = v.holds != 0;
    r.disturbed = v.disturbed != 0;
    r.removed = v.removed != 0;
    r.note = v.note;
}

std::size_t key_width(const std::vector<verify_row> &rows) {
    std::size_t w = 3;
    for (const verify_row &r : rows) w = std::max(w, r.key.size());
    return w;
}

std::size_t choice_width(const std::vector<verify_row> &rows) {
    std::size_t w = 6;
    for (const verify_row &r : rows) w = std::max(w, r.choice.size());
    return w;
}

void print_row(std::FILE *out, const verify_row &r, int kw, int cw) {
    char speed[32] = "-";
    if (r.speedup() > 0) std::snprintf(speed, sizeof speed, "%.3fx", r.speedup());
    std::fprintf(out, "%-*s  %-*s  %10s  %-10s  %10s  %7s  %s%s%s\n", kw, r.key.c_str(), cw, r.choice.c_str(),
                 duration_text(r.median_us).c_str(), r.default_backend.empty() ? "-" : r.default_backend.c_str(),
                 duration_text(r.default_us).c_str(), speed, r.verdict(), r.disturbed ? " (disturbed)" : "",
                 !r.error.empty()  ? (": " + r.error).c_str()
                 : !r.note.empty() ? (": " + r.note).c_str()
                                   : "");
}

struct verify_counts {
    std::size_t entries = 0, hold = 0, builtin = 0, fail = 0, dropped = 0, errors = 0, disturbed = 0;
};

verify_counts counts_of(const std::vector<verify_row> &rows) {
    verify_counts c;
    c.entries = rows.size();
    for (const verify_row &r : rows) {
        if (!r.verified) ++c.errors;
        else if (r.holds) ++c.hold, c.builtin += r.measured ? 0 : 1;
        else ++c.fail, c.dropped += r.removed ? 1 : 0;
        c.disturbed += r.disturbed ? 1 : 0;
    }
    return c;
}

void print_summary(std::FILE *out, const verify_counts &c, const tune_options &o) {
    std::fprintf(out, "# %zu %s: %zu hold (%zu store the built-in choice), %zu do not hold", c.entries,
                 c.entries == 1 ? "entry" : "entries", c.hold, c.builtin, c.fail);
    if (c.fail > 0) std::fprintf(out, o.drop ? " (%zu dropped)" : " (kept: --drop removes them)", c.dropped);
    std::fprintf(out, ", %zu could not be measured\n", c.errors);
    if (c.disturbed > 0)
        std::fprintf(out,
                     "# warning: %zu measured while something else had the machine (timings disagreeing by "
                     "more than 25 %%): verify them again on a quiet machine\n",
                     c.disturbed);
}

void write_json(std::FILE *out, const std::vector<verify_row> &rows, const verify_counts &c) {
    json_writer j(out);
    j.begin_object().key("cache").string(gemm_tune_cache_path()).key("entries").begin_array();
    for (const verify_row &r : rows) {
        j.begin_object(json_writer::layout::line).key("key").string(r.key).key("choice").string(r.choice);
        j.key("verified").boolean(r.verified).key("error").string(r.error);
        j.key("default").string(r.default_backend).key("measured").boolean(r.measured);
        j.key("median_us").number(r.median_us, r.measured).key("default_median_us").number(r.default_us, r.measured);
        j.key("holds").boolean(r.verified && r.holds).key("removed").boolean(r.removed);
        j.key("disturbed").boolean(r.disturbed).key("note").string(r.note).end_object();
    }
    j.end_array().key("summary").begin_object(json_writer::layout::line);
    j.key("entries").integer(int64_t(c.entries)).key("hold").integer(int64_t(c.hold));
    j.key("do_not_hold").integer(int64_t(c.fail)).key("dropped").integer(int64_t(c.dropped));
    j.key("not_measured").integer(int64_t(c.errors)).key("disturbed").integer(int64_t(c.disturbed));
    j.end_object().end_object();
}

}  // namespace

int tune_verify_command(const tune_options &o, const std::string &command) {
    output_file json = output_open(o.json_path, "--json");
    std::FILE *text = json.get() == stdout ? nullptr : stdout;
    std::vector<verify_row> rows = entries_read();
    const int kw = int(key_width(rows)), cw = int(choice_width(rows));
    if (text) {
        std::fprintf(text, "# gemm tune --verify: %zu %s of %s\n# reproduce: %s\n", rows.size(),
                     rows.size() == 1 ? "entry" : "entries", gemm_tune_cache_path(), command.c_str());
        std::fprintf(text,
                     "# time = the stored choice's median, head to head with the default (the built-in rule's\n"
                     "#   choice now); speed = default time / time; holds = correct and at most 2%% slower\n"
                     "# keys are column-major, the one form a row-major call and its transpose share: row-major\n"
                     "#   m x n x k with ops XY is the key n m k with ops YX (1x4096x4096 row NT: TN 4096 1 4096)\n");
        std::fprintf(text, "%-*s  %-*s  %10s  %-10s  %10s  %7s  %s\n", kw, "key", cw, "choice", "time", "default",
                     "def_time", "speed", "verdict");
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::fprintf(stderr, "gemm tune --verify: [%zu/%zu] %s\n", i + 1, rows.size(), rows[i].key.c_str());
        verify_one(rows[i], o);
        if (text) {
            print_row(text, rows[i], kw, cw);
            std::fflush(text);
        }
    }
    verify_counts c = counts_of(rows);
    if (text) print_summary(text, c, o);
    if (json) write_json(json.get(), rows, c);
    output_close(json, o.json_path, "--json");
    bool kept_failures = c.fail > c.dropped;
    return kept_failures || c.errors > 0 ? exit_failure : exit_ok;
}

}  // namespace gemm_cli
