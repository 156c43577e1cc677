// settings.hpp: the GEMM_* environment, read once, and the backend selection in force.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend.hpp"

namespace gemm {

enum class log_level : int { trace, debug, info, warn, error, off };

// GEMM_TUNE: off ignores the cache; use (default) reads it; online also tunes unseen shapes.
enum class tune_mode : int { off, use, online };

// One GEMM_* variable: the library's own and every registered backend's.
struct option_entry {
    backend_option option;
    std::string owner;                 // "library", "GPU offload", "drop-in BLAS", or the backend's name
    std::optional<std::string> value;  // as set in the environment
};

struct env_settings {
    int verbose = 0;                    // GEMM_VERBOSE: 0, 1 (a line per call), 2 (also skipped backends)
    log_level level = log_level::warn;  // GEMM_LOG_LEVEL
    bool allow_tf32 = false;            // GEMM_ALLOW_TF32
    bool check_pointers = false;        // GEMM_CHECK_POINTERS: plan runs classify their operands
    tune_mode tune = tune_mode::use;    // GEMM_TUNE
    std::string record_path;            // GEMM_RECORD: append untuned shapes here
    // Every variable, the library's first, then each backend's in registry order.
    std::vector<option_entry> options;
    // The first invalid GEMM_* value; every call reports it rather than guess.
    gemm_status_t error = GEMM_STATUS_SUCCESS;
    std::string error_message;

    // The value a backend's option is set to, "" when unset. Backends read theirs here, so
    // that what they use is what was checked.
    const std::string &option(std::string_view name) const;
};

// A variable's count of bytes: a positive number with an optional K, M or G (powers of 1024);
// 0 when unset (""). Nothing when not valid, with invalid_byte_count saying why.
std::optional<uint64_t> parse_byte_count(const std::string &v);
std::string invalid_byte_count(const std::string &v);

// A variable's list of CUDA devices: unset or "all" for every device (an empty list), else
// ordinals separated by commas ("0,1"), distinct unless `repeats`. Nothing when not valid,
// with invalid_devices (distinct) saying why.
std::optional<std::vector<int>> parse_devices(const std::string &v, bool repeats = false);
std::string invalid_devices(const std::string &v);

// Read from the environment on first use; constant afterwards.
const env_settings &settings();

// A parsed backend choice: "auto", "name" or "name:variant".
struct selection {
    std::string spec;
    std::string source;                         // "GEMM_BACKEND", "gemm_set_backend" or "default"
    std::string why;                            // "forced by " + source, for the trace
    backend *forced = nullptr;                  // nullptr means auto
    std::string variant;                        // "" = the backend's default
    gemm_status_t error = GEMM_STATUS_SUCCESS;  // unknown or unavailable backend
    std::string error_message;
};

// The selection a call on this thread uses: gemm_set_thread_backend's if set, else
// gemm_set_backend's, else GEMM_BACKEND's, else auto. The reference stays valid for the life
// of the process.
const selection &current_selection();

// Parses spec and, if it names something usable, makes it the process's selection. nullptr
// reverts to the environment's choice. On error the current selection is unchanged.
gemm_status_t select_backend(const char *spec);

// The same for the calling thread only; nullptr returns it to the process's selection.
gemm_status_t select_thread_backend(const char *spec);

}  // namespace gemm
