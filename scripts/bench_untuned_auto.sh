#!/usr/bin/env bash
# bench_untuned_auto.sh: whether untuned auto picks well. Runs `gemm bench` with auto against
# every backend forced, on a fresh tune cache, and prints last, per memory and dtype, auto's
# worst ratio (the fastest forced backend's median / auto's median; 1.00 = auto as fast) and
# the problem it came from. Builds nothing.
#
# usage: bash scripts/bench_untuned_auto.sh [GEMM]     (GEMM: the gemm command, default
#        build/bench/gemm, as scripts/main.sh builds it)
# environment:
#   LOG_DIR        where each run's table goes (default: a new temporary folder)
#   BENCH_ARGS     more `gemm bench` options for every run (e.g. "--budget-ms 300")
#   BENCH_TIMEOUT  seconds one `gemm bench` run may take (default: no limit); a run stopped
#                  keeps its rows and has no worst line
# exit code: 0; 1 when a gemm bench run failed (its exit code is in the closing table); 2 when
# GEMM is not an executable
#
# Runs, f32 and f64 each:
#   host     host memory: squares 64..2048 and skinny and odd shapes
#   pinned   the same shapes, page-locked host memory (with a CUDA device)
#   device   device pointers on device 0: squares 256..8192 and odd shapes (with a CUDA device)
# The backends are gemm bench's default set: every available backend that serves the memory
# (on host memory the GPU backends too, staging), then auto; cpu_ref, the reference, is left
# out: it is never the fastest, and forced on 2048^3 it takes seconds a call.
#
# One fresh cache for the whole script, shared by its runs: it is what a new user has, and
# what auto measures and stores there at its first need (the machine's rates) then serves the
# later runs, as it would serve that user's later programs; a cache per run would measure
# again in each. GEMM_TUNE and GEMM_BACKEND are unset, so that auto is the library's untuned
# choice. A run's first auto call may carry that measurement: it is the call gemm bench
# checks, never a timed one.
set -uo pipefail
gemm=${1:-build/bench/gemm}
if [ ! -x "$gemm" ]; then
    echo "bench_untuned_auto.sh: '$gemm' is not an executable gemm command (build it first, e.g." \
         "bash scripts/main.sh, or pass its path)" >&2
    exit 2
fi
logs=${LOG_DIR:-$(mktemp -d)}
mkdir -p "$logs" || exit 2
cache_dir=$(mktemp -d)
trap 'rm -rf "$cache_dir"' EXIT
unset GEMM_TUNE GEMM_BACKEND
export GEMM_TUNE_CACHE=$cache_dir/cache.txt

host_shapes="64 128 256 512 1024 2048 16x4096x4096 4096x4096x16 1x1024x1024 4096x8x64 127x257x509 1001x999x1003"
device_shapes="256 512 1024 2048 4096 8192 16x4096x4096 4096x4096x16 127x257x509 1001x999x1003"
limit=()
[ -n "${BENCH_TIMEOUT:-}" ] && limit=(timeout "$BENCH_TIMEOUT")
table=()
failed=0

# run_bench MEMORY DTYPE SHAPES: one gemm bench run, its table on stdout and in LOG_DIR, its
# worst line kept for the closing table.
run_bench() {
    local memory=$1 dtype=$2 shapes=$3 log="$logs/$1_$2.txt" rc worst status
    echo "== $memory memory, $dtype =="
    # shellcheck disable=SC2086  # the shape lists and BENCH_ARGS are word lists
    "${limit[@]}" "$gemm" bench $shapes --memory "$memory" --dtype "$dtype" --no-measure-peak ${BENCH_ARGS:-} |
        tee "$log"
    rc=${PIPESTATUS[0]}
    worst=$(sed -n 's/^worst: //p' "$log")
    status=""
    [ "$rc" -eq 0 ] || { failed=1; status=" [gemm bench exit code $rc]"; }
    table+=("$(printf '%-7s %-5s %s%s' "$memory" "$dtype" "${worst:-- (no worst line: see $log)}" "$status")")
}

has_device=$("$gemm" info 2>/dev/null | awk '/^cuda devices:/ { on = 1; next } on && /^  [0-9]+  / { print "yes"; exit }')
memories="host"
[ "$has_device" = yes ] && memories="host pinned device"
for memory in $memories; do
    shapes=$host_shapes
    [ "$memory" = device ] && shapes=$device_shapes
    for dtype in f32 f64; do run_bench "$memory" "$dtype" "$shapes"; done
done

echo
echo "== untuned auto: worst ratio, best forced median / auto median (1.00 = as fast; tables in $logs) =="
printf '%-7s %-5s %s\n' memory dtype "worst (problem: auto's median, the fastest forced backend's)"
for line in "${table[@]}"; do echo "$line"; done
exit $failed
