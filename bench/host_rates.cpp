// host_rates.cpp: reading and showing the machine's host-memory rates.
#include "host_rates.hpp"

#include <cstdio>
#include <string>

namespace gemm_cli {

std::vector<gemm_host_rates_t> host_rates_read(std::string &error) {
    const gemm_host_rates_t *rates = nullptr;
    int64_t count = 0;
    if (gemm_tune_cache_rates(&rates, &count) != GEMM_STATUS_SUCCESS) {
        error = gemm_last_error();
        return {};
    }
    return std::vector<gemm_host_rates_t>(rates, rates + count);
}

const char *host_rates_type(const gemm_host_rates_t &r) { return r.type == GEMM_F64 ? "f64" : "f32"; }

std::string host_rates_text(const gemm_host_rates_t &r) {
    std::string text = "host";
    char part[256];
    for (int64_t i = 0; i < r.host_count; ++i) {
        const gemm_host_backend_rate_t &h = r.hosts[i];
        std::snprintf(part, sizeof part, "%s %s %.5g GFLOP/s + %.3g us a call", i ? "," : "", h.backend, h.gflops,
                      h.fixed_us);
        text += part;
        if (h.gbs > 0) {
            std::snprintf(part, sizeof part, ", at most %.4g GB/s", h.gbs);
            text += part;
        }
    }
    if (*r.gpu_backend) {
        std::snprintf(part, sizeof part, "; gpu %s %.5g GFLOP/s, %.4g GB/s, %.4g us a call", r.gpu_backend,
                      r.gpu_gflops, r.link_gbs, r.gpu_fixed_us);
        text += part;
    }
    if (r.locked_link_gbs > 0) {
        std::snprintf(part, sizeof part, "; page-locked %.4g GB/s, %.4g us a call", r.locked_link_gbs,
                      r.locked_fixed_us);
        text += part;
    }
    if (r.measured_ms > 0) {
        std::snprintf(part, sizeof part, "; measured in %.0f ms", r.measured_ms);
        text += part;
    }
    return text;
}

void host_rates_json(json_writer &w, const std::vector<gemm_host_rates_t> &rates) {
    w.key("host_rates").begin_array();
    for (const gemm_host_rates_t &r : rates) {
        w.begin_object(json_writer::layout::line);
        w.key("type").string(host_rates_type(r)).key("host_backend").string(r.host_backend);
        w.key("host_gflops").number(r.host_gflops).key("gpu_backend").string(r.gpu_backend);
        w.key("gpu_gflops").number(r.gpu_gflops).key("link_gbs").number(r.link_gbs);
        w.key("gpu_fixed_us").number(r.gpu_fixed_us).key("locked_link_gbs").number(r.locked_link_gbs);
        w.key("locked_fixed_us").number(r.locked_fixed_us).key("hosts").begin_array();
        for (int64_t i = 0; i < r.host_count; ++i) {
            w.begin_object(json_writer::layout::line);
            w.key("backend").string(r.hosts[i].backend).key("gflops").number(r.hosts[i].gflops);
            w.key("fixed_us").number(r.hosts[i].fixed_us).key("gbs").number(r.hosts[i].gbs).end_object();
        }
        w.end_array().key("measured_ms").number(r.measured_ms);
        w.end_object();
    }
    w.end_array();
}

}  // namespace gemm_cli
