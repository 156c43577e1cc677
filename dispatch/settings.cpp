// settings.cpp: parsing of GEMM_* variables and of backend selections.
#include "settings.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "api/src/blas/blas_on_failure_option.hpp"
#include "api/src/blas/pblas_block_option.hpp"
#include "error.hpp"
#include "memory.hpp"
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

std::string one_of(const std::string &v, std::initializer_list<const char *> allowed, const char *text) {
    for (const char *a : allowed)
        if (v == a) return "";
    return std::string("must be ") + text;
}

std::string invalid_verbose(const std::string &v) { return one_of(v, {"0", "1", "2"}, "0, 1 or 2"); }
std::string invalid_level(const std::string &v) {
    return one_of(v, {"trace", "debug", "info", "warn", "error", "off"}, "off, error, warn, info, debug or trace");
}
std::string invalid_flag(const std::string &v) { return one_of(v, {"0", "1"}, "0 or 1"); }
std::string invalid_tune(const std::string &v) { return one_of(v, {"off", "use", "online"}, "off, use or online"); }

}  // namespace

std::optional<uint64_t> parse_byte_count(const std::string &v) {
    if (v.empty()) return uint64_t(0);
    std::string digits = v;
    int shift = 0;
    if (char last = v.back(); last == 'K' || last == 'M' || last == 'G') {
        shift = last == 'K' ? 10 : last == 'M' ? 20 : 30;
        digits.pop_back();
    }
    bool ok = !digits.empty() && digits.size() <= std::size_t(shift ? 9 : 18) &&  // no overflow
              digits.find_first_not_of("0123456789") == std::string::npos;
    uint64_t bytes = ok ? uint64_t(std::stoull(digits)) << shift : 0;
    if (bytes == 0) return std::nullopt;
    return bytes;
}

std::string invalid_byte_count(const std::string &v) {
    return parse_byte_count(v) ? "" : "must be a positive number of bytes, optionally with K, M or G";
}

std::optional<std::vector<int>> parse_devices(const std::string &v, bool repeats) {
    std::vector<int> list;
    if (v.empty() || v == "all") return list;
    std::size_t start = 0;
    while (start <= v.size()) {
        const std::size_t end = std::min(v.find(',', start), v.size());
        const std::string item = v.substr(start, end - start);
        const bool digits =
            !item.empty() && item.size() <= 4 && item.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return std::nullopt;
        const int ordinal = std::stoi(item);
        if (!repeats && std::find(list.begin(), list.end(), ordinal) != list.end()) return std::nullopt;
        list.push_back(ordinal);
        start = end + 1;
    }
    return list;
}

std::string invalid_devices(const std::string &v) {
    return parse_devices(v) ? "" : "must be all or distinct device ordinals separated by commas (0,1)";
}

namespace {

// The library's own variables. GEMM_BACKEND is judged by the selection (an unknown backend is
// its own status).
const backend_option library_options[] = {
    {"GEMM_BACKEND", "auto, a backend name, or name:variant", "auto",
     "the backend of every call (an unknown or unavailable one is an error, never a fallback)", nullptr},
    {"GEMM_VERBOSE", "0, 1, 2", "0", "1: a line per call on stderr; 2: also why each other backend was not used",
     invalid_verbose},
    {"GEMM_LOG_LEVEL", "off, error, warn, info, debug, trace", "warn", "library messages on stderr", invalid_level},
    {"GEMM_ALLOW_TF32", "0, 1", "0", "allow TF32 tensor-core math for f32 on the GPU", invalid_flag},
    {"GEMM_CHECK_POINTERS", "0, 1", "0",
     "1: every plan run asks the driver where its operands lie, as desc->check_pointers = 1 does", invalid_flag},
    {"GEMM_TUNE", "use, off, online", "use", "read the tune cache; ignore it; also tune unseen shapes on first sight",
     invalid_tune},
    {"GEMM_TUNE_CACHE", "a path", "$XDG_CACHE_HOME/gemm/tune-cache.txt, else ~/.cache/gemm/tune-cache.txt",
     "the tune cache", nullptr},
    {"GEMM_RECORD", "a path", "(none)", "append each untuned shape auto meets, for gemm tune --shapes", nullptr},
};

// Every variable, each declared once beside the code that reads it: the library's own (above),
// those of the code a device runtime's backends share (the GPU offload engine's, through the
// runtime's table: memory.hpp), the drop-in BLAS's (api/src/blas/), then each backend's in
// registry order.
std::vector<option_entry> every_option() {
    std::vector<option_entry> all;
    for (const backend_option &o : library_options) all.push_back({o, "library", std::nullopt});
    if (const device_services *runtime = installed_device_services(); runtime && runtime->options)
        for (const backend_option &o : runtime->options()) all.push_back({o, runtime->options_owner, std::nullopt});
    all.push_back({blas_on_failure_option(), "drop-in BLAS", std::nullopt});
    all.push_back({pblas_block_option(), "drop-in BLAS", std::nullopt});
    for (backend *b : registered_backends())
        for (const backend_option &o : b->options()) all.push_back({o, std::string(b->name()), std::nullopt});
    return all;
}

env_settings read_env() {
    env_settings s;
    s.options = every_option();
    for (option_entry &e : s.options) {
        const char *v = std::getenv(std::string(e.option.name).c_str());
        if (!v || !*v) continue;
        e.value = v;
        if (std::string why = e.option.invalid ? e.option.invalid(v) : ""; !why.empty())
            record_first_error(s, std::string(e.option.name) + "='" + v + "' " + why);
    }
    std::string verbose = s.option("GEMM_VERBOSE"), level = s.option("GEMM_LOG_LEVEL"), tune = s.option("GEMM_TUNE");
    s.verbose = verbose == "1" ? 1 : verbose == "2" ? 2 : 0;
    static const std::pair<const char *, log_level> levels[] = {
        {"trace", log_level::trace}, {"debug", log_level::debug}, {"info", log_level::info},
        {"warn", log_level::warn},   {"error", log_level::error}, {"off", log_level::off}};
    for (auto &[name, l] : levels)
        if (level == name) s.level = l;
    s.allow_tf32 = s.option("GEMM_ALLOW_TF32") == "1";
    s.check_pointers = s.option("GEMM_CHECK_POINTERS") == "1";
    s.tune = tune == "off" ? tune_mode::off : tune == "online" ? tune_mode::online : tune_mode::use;
    s.record_path = s.option("GEMM_RECORD");
    return s;
}

std::string variant_list(const backend &b) {
    std::string list;
    for (const std::string &id : b.variant_ids()) list += (list.empty() ? "" : ", ") + id;
    return list.empty() ? "none but its default" : list;
}

selection parse_selection(const std::string &spec, std::string source) {
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
    std::string where = sel.source + "='" + spec + "'";
    // auto chooses the variant with the backend; "auto:" is auto, as "name:" is "name".
    if (name == "auto") {
        if (variant.empty()) {
            sel.spec = "auto";
            return sel;
        }
        sel.error = sel.source == "GEMM_BACKEND" ? GEMM_STATUS_INVALID_CONFIG : GEMM_STATUS_INVALID_VALUE;
        sel.error_message = where + ": auto takes no variant (it chooses the backend and its variant); write "
                                    "'auto', or 'name:variant' to force both";
        return sel;
    }
    backend *b = find_backend(name);
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
        sel.error_message = where + ": backend '" + name + "' has no variant '" + variant +
                            "' (its variants: " + variant_list(*b) +
                            "; `gemm info --variants SHAPE` shows those worth timing)";
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
    static const selection *sel =
        intern(parse_selection(env("GEMM_BACKEND"), *env("GEMM_BACKEND") ? "GEMM_BACKEND" : "default"));
    return *sel;
}

}  // namespace

const std::string &env_settings::option(std::string_view name) const {
    static const std::string unset;
    for (const option_entry &e : options)
        if (e.option.name == name) return e.value ? *e.value : unset;
    return unset;
}

const env_settings &settings() {
    static const env_settings s = read_env();
    return s;
}

// gemm_set_thread_backend's, over the process's.
thread_local const selection *from_thread = nullptr;

const selection &current_selection() {
    if (from_thread) return *from_thread;
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

gemm_status_t select_thread_backend(const char *spec) {
    if (!spec) {
        from_thread = nullptr;
        return GEMM_STATUS_SUCCESS;
    }
    selection sel = parse_selection(spec, "gemm_set_thread_backend");
    if (sel.error != GEMM_STATUS_SUCCESS) return set_error(sel.error, sel.error_message, 1);
    from_thread = intern(std::move(sel));
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm
