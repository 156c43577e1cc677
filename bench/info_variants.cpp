// info_variants.cpp: `gemm info --variants`, read through gemm_backend_supports and
// gemm_backend_variants.
#include "info_variants.hpp"

namespace gemm_cli {
namespace {

backend_variants read_one(const std::string &name, const std::optional<gemm_desc_t> &problem) {
    backend_variants b;
    b.backend = name;
    const char *const *ids = nullptr;
    int64_t count = 0;
    gemm_status_t s = gemm_backend_variants(name.c_str(), problem ? &*problem : nullptr, &ids, &count);
    if (s != GEMM_STATUS_SUCCESS) {
        std::string status = gemm_status_string(s);
        b.why_not = status.substr(0, status.find(':')) + ": " + gemm_last_error();
        return b;
    }
    b.serves = true;
    b.ids.assign(ids, ids + count);
    return b;
}

}  // namespace

variant_listing variants_read(const std::optional<gemm_desc_t> &problem, const std::string &problem_text) {
    variant_listing listing;
    listing.problem = problem;
    listing.problem_text = problem_text;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS)
            listing.backends.push_back(read_one(info.name, problem));
    }
    return listing;
}

void variants_print(std::FILE *out, const variant_listing &listing) {
    if (listing.problem)
        std::fprintf(out, "\nvariants worth timing for %s (force one with GEMM_BACKEND=backend:variant):\n",
                     listing.problem_text.c_str());
    else std::fprintf(out, "\nvariants (every id of this build; give a SHAPE for those worth timing on a problem):\n");
    for (const backend_variants &b : listing.backends) {
        if (!b.serves) {
            std::fprintf(out, "  %-12s %s\n", b.backend.c_str(), b.why_not.c_str());
            continue;
        }
        if (b.ids.empty()) std::fprintf(out, "  %-12s %s\n", b.backend.c_str(), "(its default only)");
        for (std::size_t i = 0; i < b.ids.size(); ++i)
            std::fprintf(out, "  %-12s %s\n", i == 0 ? b.backend.c_str() : "",
                         b.ids[i].empty() ? "(default)" : b.ids[i].c_str());
    }
}

void variants_json(json_writer &w, const variant_listing &listing) {
    w.key("variants").begin_object();
    w.key("problem");
    if (listing.problem) w.string(listing.problem_text);
    else w.null();
    w.key("backends").begin_array();
    for (const backend_variants &b : listing.backends) {
        w.begin_object(json_writer::layout::line);
        w.key("backend").string(b.backend).key("serves").boolean(b.serves);
        w.key("reason").string(b.why_not);
        w.key("ids").begin_array(json_writer::layout::line);
        for (const std::string &id : b.ids) w.string(id);
        w.end_array();
        w.end_object();
    }
    w.end_array();
    w.end_object();
}

}  // namespace gemm_cli
