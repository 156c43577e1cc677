#!/usr/bin/env bash
# test.sh: sets up, builds and runs the test suites: the full build (CUDA too when nvcc is
# present; GPU tests skip visibly without a device), then the CPU tests again under
# AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
. scripts/env.sh

cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release
cmake --build build-test -j "$jobs"
ctest --test-dir build-test --output-on-failure -j "$jobs"

cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_SANITIZE=ON -DGEMM_WITH_CUDA=OFF
cmake --build build-sanitize -j "$jobs"
ctest --test-dir build-sanitize --output-on-failure -L cpu -j "$jobs"
