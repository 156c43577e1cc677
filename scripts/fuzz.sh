#!/usr/bin/env bash
# fuzz.sh: the long fuzz run of tests/fuzz/ under AddressSanitizer and UBSan: the C API, the
# drop-in BLAS and gemm_tune (fuzz_api) for COUNT calls, the tune-cache parser and its stores
# (fuzz_tune_cache) for COUNT / 10 files. With clang and its libFuzzer runtime the targets are
# coverage-guided (libFuzzer; COUNT inputs, each one or more calls), otherwise the seeded
# driver runs (the one CI runs, 10^5 calls). A failure stops with the call it saw.
# usage: bash scripts/fuzz.sh [COUNT (default 10000000)] [SEED (seeded driver only)]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
. scripts/env.sh
count=${1:-10000000}
seed=${2:-$(date +%s)}
files=$((count / 10))

if command -v clang++ >/dev/null && echo 'int main(){}' | clang++ -x c++ -fsanitize=fuzzer-no-link -fopenmp - -o /dev/null 2>/dev/null; then
    flags="-fsanitize=fuzzer-no-link"
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_WITH_CUDA=OFF \
        -DGEMM_SANITIZE=ON -DGEMM_FUZZ_LIBFUZZER=ON -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
    cmake --build build-fuzz -j "$jobs" --target fuzz_api_libfuzzer fuzz_tune_cache_libfuzzer
    mkdir -p build-fuzz/corpus/api build-fuzz/corpus/tune_cache
    build-fuzz/tests/fuzz/fuzz_api_libfuzzer -runs="$count" -max_len=1024 build-fuzz/corpus/api
    build-fuzz/tests/fuzz/fuzz_tune_cache_libfuzzer -runs="$files" -max_len=4096 build-fuzz/corpus/tune_cache
else
    echo "fuzz.sh: clang with libFuzzer not found: the seeded driver (seed $seed)"
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_SANITIZE=ON -DGEMM_WITH_CUDA=OFF
    cmake --build build-sanitize -j "$jobs" --target fuzz_api fuzz_tune_cache
    build-sanitize/tests/fuzz/fuzz_api --calls "$count" --seed "$seed"
    build-sanitize/tests/fuzz/fuzz_tune_cache --calls "$files" --seed "$seed"
fi
