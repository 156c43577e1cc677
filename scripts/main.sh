#!/usr/bin/env bash
# main.sh: sets up, builds (Release) and runs the main job: `gemm tune --suite default`, which
# times every backend and variant this machine has on the default problems and stores the
# winners in the tune cache that `auto` reads (a few minutes on a 2-core CPU). A problem whose
# timings disagree is timed again; one that stays disturbed is reported and not stored.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGEMM_BUILD_TESTS=OFF
cmake --build build -j "$jobs"
./build/bench/gemm info
./build/bench/gemm tune --suite default "$@"
