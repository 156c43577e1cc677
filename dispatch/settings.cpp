// settings.cpp: parsing of GEMM_* variables and of backend selections.
#include "settings.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "error.hpp"
#include "registry.hpp"

namespace gemm {
namespace {

const char *env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

void record_first_error(env_settings &s, std::string message) {
    if (s.error != GEMM_STATUS_SUCCESS) return;
    s.error = GEMM_STATUS_INVALID_CONFIG;
    s.error_message = std::move(message);
}

void parse_verbose(env_settings &s) {
    std::string v = env("GEMM_VERBOSE");
    if (v.empty() || v == "0") s.verbose = 0;
    else if (v == "1") s.verbose = 1;
    else if (v == "2") s.verbose = 2;
    else record_first_error(s, "GEMM_VERBOSE='" + v + "' must be 0, 1 or 2");
}

void parse_log_level(env_settings &s) {
    static const std::pair<const char *, log_level> names[] = {
        {"trace", log_level::trace}, {"debug", log_level::debug}, {"info", log_level::info},
        {"warn", log_level::warn},   {"error", log_level::error}, {"off", log_level::off}};
    std::string v = env("GEMM_LOG_LEVEL");
    if (v.empty()) return;
    for (auto &[name, level] : names)
        if (v == name) {
            s.level = level;
            return;
        }
    record_first_error(s, "GEMM_LOG_LEVEL='" + v + "' must be off, error, warn, info, debug or trace");
}

void parse_allow_tf32(env_settings &s) {
    std::string v = env("GEMM_ALLOW_TF32");
    if (v.empty() || v == "0") s.allow_tf32 = false;
    else if (v == "1") s.allow_tf32 = true;
    else record_first_error(s, "GEMM_ALLOW_TF32='" + v + "' must be 0 or 1");
}

void parse_tune(env_settings &s) {
    std::string v = env("GEMM_TUNE");
    if (v.empty() || v == "use") s.tune = tune_mode::use;
    else if (v == "off") s.tune = tune_mode::off;
    else if (v == "online") s.tune = tune_mode::online;
    else record_first_error(s, "GEMM_TUNE='" + v + "' must be off, use or online");
}

env_settings read_env() {
    env_settings s;
    parse_verbose(s);
    parse_log_level(s);
    parse_allow_tf32(s);
    parse_tune(s);
    s.cblas_lib = env("GEMM_CBLAS_LIB");
    s.record_path = env("GEMM_RECORD");
    return s;
}

selection parse_selection(std::string spec, std::string source) {
    selection sel;
    sel.spec = spec;
    sel.source = std::move(source);
    if (spec.empty() || spec == "auto") {
        sel.spec = "auto";
        return sel;
    }
    std::string name = spec, variant;
    if (auto colon = spec.find(':'); colon != std::string::npos) {
        name = spec.substr(0, colon);
        variant = spec.substr(colon + 1);
    }
    backend *b = find_backend(name);
    std::string where = sel.source + "='" + spec + "'";
    if (!b) {
        std::string known;
        for (backend *r : registered_backends()) known += (known.empty() ? "" : ", ") + std::string(r->name());
        sel.error = GEMM_STATUS_UNKNOWN_BACKEND;
        sel.error_message = where + ": no backend named '" + name + "' in this build (auto, " + known + ")";
        return sel;
    }
    if (const verdict &v = b->available(); !v.ok) {
        sel.error = GEMM_STATUS_BACKEND_UNAVAILABLE;
        sel.error_message = where + ": backend '" + name + "' is unavailable: " + v.reason;
        return sel;
    }
    if (!b->knows_variant(variant)) {
        sel.error = GEMM_STATUS_INVALID_VALUE;
        sel.error_message = where + ": backend '" + name + "' has no variant '" + variant + "'";
        return sel;
    }
    sel.forced = b;
    sel.variant = variant;
    return sel;
}

// Selections are interned and never freed, so a reference handed to a running call stays
// valid while another thread switches backends.
std::mutex intern_mutex;
std::map<std::string, std::unique_ptr<selection>> interned;
std::atomic<const selection *> from_code{nullptr};

const selection *intern(selection sel) {
    std::lock_guard<std::mutex> lock(intern_mutex);
    std::string key = sel.source + "\n" + sel.spec;
    auto &slot = interned[key];
    if (!slot) slot = std::make_unique<selection>(std::move(sel));
    return slot.get();
}

const selection &from_env() {
    static const selection *sel = intern(parse_selection(env("GEMM_BACKEND"),
                                                         *env("GEMM_BACKEND") ? "GEMM_BACKEND" : "default"));
    return *sel;
}

}  // namespace

const env_settings &settings() {
    static const env_settings s = read_env();
    return s;
}

const selection &current_selection() {
    const selection *sel = from_code.load(std::memory_order_acquire);
    return sel ? *sel : from_env();
}

gemm_status_t select_backend(const char *spec) {
    if (!spec) {
        from_code.store(nullptr, std::memory_order_release);
        return GEMM_STATUS_SUCCESS;
    }
    selection sel = parse_selection(spec, "gemm_set_backend");
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message, 1);
    from_code.store(intern(std::move(sel)), std::memory_order_release);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
