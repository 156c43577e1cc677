#!/usr/bin/env bash
# main.sh: sets up, builds (Release) and runs the main job: `gemm bench` on the default
# shape set over every backend this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGEMM_BUILD_TESTS=OFF
cmake --build build -j "$jobs"
./build/bench/gemm info
./build/bench/gemm bench "$@"
