// settings.hpp: the GEMM_* environment, read once, and the backend selection in force.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"

namespace gemm {

enum class log_level : int { trace, debug, info, warn, error, off };

// GEMM_TUNE: off ignores the cache; use (default) reads it; online also tunes unseen shapes.
enum class tune_mode : int { off, use, online };

struct env_settings {
    int verbose = 0;  // GEMM_VERBOSE: 0, 1 (a line per call), 2 (also skipped backends)
    log_level level = log_level::warn;  // GEMM_LOG_LEVEL
    bool allow_tf32 = false;            // GEMM_ALLOW_TF32
    std::string cblas_lib;              // GEMM_CBLAS_LIB, "" = search the usual names
    tune_mode tune = tune_mode::use;    // GEMM_TUNE
    std::string record_path;            // GEMM_RECORD: append untuned shapes here
    std::vector<int> xt_devices;        // GEMM_XT_DEVICES: cublasxt's GPUs; empty = all
    uint64_t xt_max_device_bytes = 0;   // GEMM_XT_MAX_DEVICE_BYTES: cublasxt's cap; 0 = none
    // The first invalid GEMM_* value; every call reports it rather than guess.
    gemm_status_t error = GEMM_STATUS_SUCCESS;
    std::string error_message;
};

// Read from the environment on first use; constant afterwards.
const env_settings &settings();

// A parsed backend choice: "auto", "name" or "name:variant".
struct selection {
    std::string spec;
    std::string source;         // "GEMM_BACKEND", "gemm_set_backend" or "default"
    std::string why;            // "forced by " + source, for the trace
    backend *forced = nullptr;  // nullptr means auto
    std::string variant;        // "" = the backend's default
    gemm_status_t error = GEMM_STATUS_SUCCESS;  // unknown or unavailable backend
    std::string error_message;
};

// The selection every call uses: gemm_set_backend's if set, else GEMM_BACKEND's, else auto.
// The reference stays valid for the life of the process.
const selection &current_selection();

// Parses spec and, if it names something usable, makes it current. nullptr reverts to the
// environment's choice. On error the current selection is unchanged.
gemm_status_t select_backend(const char *spec);

}  // namespace gemm
