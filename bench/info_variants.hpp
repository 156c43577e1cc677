// info_variants.hpp: `gemm info --variants`: each backend's variant ids, all it knows or those
// worth timing for one problem, from the library's capability queries.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "json_writer.hpp"

namespace gemm_cli {

struct backend_variants {
    std::string backend;
    bool serves = false;           // the backend can serve the problem (always, without one)
    std::string why_not;           // the library's reason when it cannot
    std::vector<std::string> ids;  // "" is the backend's default
};

struct variant_listing {
    std::optional<gemm_desc_t> problem;  // none: every id each backend knows
    std::string problem_text;            // "f32 row NN 1024x1024x1024 host"
    std::vector<backend_variants> backends;
};

variant_listing variants_read(const std::optional<gemm_desc_t> &problem, const std::string &problem_text);
void variants_print(std::FILE *out, const variant_listing &listing);
void variants_json(json_writer &w, const variant_listing &listing);

}  // namespace gemm_cli
