#!/usr/bin/env bash
# soak.sh: the long run of the seeded fuzz drivers (tests/fuzz/), CALLS API calls under each
# sanitizer, CPU only:
#   asan: AddressSanitizer + UBSan (build-sanitize, -DGEMM_SANITIZE=ON): fuzz_api single-threaded
#         for CALLS calls (a failure replays from its seed), fuzz_tune_cache for CALLS / 1000
#         files, fuzz_cache_processes with 8 processes x 200 stores;
#   tsan: ThreadSanitizer (build-tsan, -DGEMM_SANITIZE_THREAD=ON): fuzz_api with THREADS threads
#         (default 4) for CALLS calls in all, fuzz_cache_processes as above.
# Under TSan the threads that race are the fuzzer's own, each calling the library on its own
# stream, and cpu_omp's pool (std::thread, built with TSan like the rest of the library: libgomp
# is only asked for OMP_NUM_THREADS, it starts no thread here). OpenBLAS, which the cblas backend
# loads with dlopen, is not built with TSan: the ordering its pool's spin-waits give its threads
# is invisible to TSan, which would report every C it wrote as a race, so its pool is off
# (OPENBLAS_NUM_THREADS=1: it computes on the calling thread, which TSan sees).
# Each step prints its calls and wall time; docs/ARCHITECTURE.md records measured rates.
# usage: bash scripts/soak.sh [CALLS (default 10000000)] [SEED (default: the time)] [asan|tsan|both]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
calls=${1:-10000000}
seed=${2:-$(date +%s)}
which=${3:-both}
threads=${THREADS:-4}
case "$which" in asan | tsan | both) ;; *) echo "soak.sh: the third argument is asan, tsan or both" >&2; exit 2 ;; esac

timed() {
    local start=$SECONDS
    echo "soak.sh: $*"
    "$@"
    echo "soak.sh: $(($SECONDS - start)) s: $*"
}

if [ "$which" != tsan ]; then
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_SANITIZE=ON -DGEMM_WITH_CUDA=OFF >/dev/null
    cmake --build build-sanitize -j "$jobs" --target fuzz_api fuzz_tune_cache fuzz_cache_processes
    timed build-sanitize/tests/fuzz/fuzz_api --calls "$calls" --seed "$seed"
    timed build-sanitize/tests/fuzz/fuzz_tune_cache --calls $((calls / 1000)) --seed "$seed"
    timed build-sanitize/tests/fuzz/fuzz_cache_processes --processes 8 --stores 200 --seed "$seed"
fi
if [ "$which" != asan ]; then
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_SANITIZE_THREAD=ON -DGEMM_WITH_CUDA=OFF >/dev/null
    cmake --build build-tsan -j "$jobs" --target fuzz_api fuzz_cache_processes
    export OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
    timed build-tsan/tests/fuzz/fuzz_api --calls "$calls" --threads "$threads" --seed "$seed"
    timed build-tsan/tests/fuzz/fuzz_cache_processes --processes 8 --stores 200 --seed "$seed"
fi
echo "soak.sh: no failure (seed $seed)"
