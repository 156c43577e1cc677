// settings.cpp: parsing of GEMM_* variables and of backend selections.
#include "settings.hpp"

#include <algorithm>
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

// "all" (or unset): every device. Otherwise distinct ordinals, comma-separated: "0,1".
void parse_xt_devices(env_settings &s) {
    std::string v = env("GEMM_XT_DEVICES");
    if (v.empty() || v == "all") return;
    std::string bad = "GEMM_XT_DEVICES='" + v + "' must be all or distinct device ordinals separated by commas (0,1)";
    std::size_t start = 0;
    while (start <= v.size()) {
        std::size_t end = std::min(v.find(',', start), v.size());
        std::string item = v.substr(start, end - start);
        bool digits = !item.empty() && item.size() <= 4 &&
                      item.find_first_not_of("0123456789") == std::string::npos;
        int ordinal = digits ? std::stoi(item) : -1;
        if (!digits || std::find(s.xt_devices.begin(), s.xt_devices.end(), ordinal) != s.xt_devices.end()) {
            s.xt_devices.clear();
            return record_first_error(s, bad);
        }
        s.xt_devices.push_back(ordinal);
        start = end + 1;
    }
}

// Bytes, with an optional K, M or G suffix (powers of 1024): "512M".
void parse_xt_max_device_bytes(env_settings &s) {
    std::string v = env("GEMM_XT_MAX_DEVICE_BYTES");
    if (v.empty()) return;
    std::string digits = v;
    int shift = 0;
    if (char last = v.back(); last == 'K' || last == 'M' || last == 'G') {
        shift = last == 'K' ? 10 : last == 'M' ? 20 : 30;
        digits.pop_back();
    }
    bool ok = !digits.empty() && digits.size() <= std::size_t(shift ? 9 : 18) &&  // no overflow
              digits.find_first_not_of("0123456789") == std::string::npos;
    uint64_t bytes = ok ? uint64_t(std::stoull(digits)) << shift : 0;
    if (bytes == 0) return record_first_error(s, "GEMM_XT_MAX_DEVICE_BYTES='" + v +
                                                     "' must be a positive number of bytes, optionally with K, M or G");
    s.xt_max_device_bytes = bytes;
}

// Read by the drop-in BLAS (api/src/blas/failure_policy.cpp); checked here with the others so
// that a typo is reported on the first call, not at the first failure it was meant for.
void check_blas_on_failure(env_settings &s) {
    std::string v = env("GEMM_BLAS_ON_FAILURE");
    if (!v.empty() && v != "system" && v != "stop")
        record_first_error(s, "GEMM_BLAS_ON_FAILURE='" + v + "' must be system or stop");
}

env_settings read_env() {
    env_settings s;
    parse_verbose(s);
    parse_log_level(s);
    parse_allow_tf32(s);
    parse_tune(s);
    parse_xt_devices(s);
    parse_xt_max_device_bytes(s);
    check_blas_on_failure(s);
    s.cblas_lib = env("GEMM_CBLAS_LIB");
    s.record_path = env("GEMM_RECORD");
    return s;
}

std::string variant_list(const backend &b) {
    std::string list;
    for (const std::string &id : b.variant_ids()) list += (list.empty() ? "" : ", ") + id;
    return list.empty() ? "none but its default" : list;
}

selection parse_selection(std::string spec, std::string source) {
    selection sel;
    sel.spec = spec;
    sel.source = std::move(source);
    sel.why = "forced by " + sel.source;
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
        // From the environment it is a configuration error, as every invalid GEMM_* value is;
        // from code, an invalid argument.
        sel.error = sel.source == "GEMM_BACKEND" ? GEMM_STATUS_INVALID_CONFIG : GEMM_STATUS_INVALID_VALUE;
        sel.error_message = where + ": backend '" + name + "' has no variant '" + variant + "' (its variants: " +
                            variant_list(*b) + "; `gemm info --variants SHAPE` shows those worth timing)";
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
