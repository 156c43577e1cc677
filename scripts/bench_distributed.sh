#!/usr/bin/env bash
# bench_distributed.sh: ScaLAPACK's PDGEMM and PZGEMM (examples/distributed/pdgemm_check) on
# 1, 2 and 4 MPI ranks of this machine, each rank's local GEMMs by gemm (the drop-in BLAS
# preloaded, untuned auto) against the same with the system BLAS underneath, beside one
# process's cpu_omp dgemm of the same size (gemm bench). Each rank is bound to its share of
# the cores (mpirun --map-by slot:PE=cores/ranks --bind-to core), which is also how many
# threads cpu_omp and OpenBLAS take in it. The gemm rows are traced (GEMM_VERBOSE=1): "in GEMM"
# is the share of each product's time its busiest rank spent in its local GEMMs (the timed
# product's calls, the second half of the rank's trace lines of the type), the rest being
# PBLAS's and MPI's. Builds nothing.
#
# usage: bash scripts/bench_distributed.sh [BUILD]     (BUILD: the build folder, default build)
# environment: SIZES (default "2048"), RANKS (default "1 2 4"), NB (block size, default 256),
# OPS (PDGEMM's op(A) op(B): default "NN TN"), BLASES (default "gemm system": which rows run),
# BACKEND (GEMM_BACKEND for the gemm rows, e.g. cpu_omp to keep every rank on its cores;
# default unset: untuned auto), PBLAS_BLOCK (GEMM_PBLAS_BLOCK for the gemm rows: the depth of
# each rank's local GEMMs; default unset: the drop-in's 256; the system rows keep ScaLAPACK's 32)
set -uo pipefail
build=${1:-build}
program=$build/examples/pdgemm_check
gemm_blas=$build/api/libgemm_blas.so.0
gemm=$build/bench/gemm
for f in "$program" "$gemm_blas" "$gemm"; do
    [ -e "$f" ] || { echo "bench_distributed.sh: $f is missing (a build with MPI and ScaLAPACK: bash scripts/main.sh)" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
cache_dir=$(mktemp -d)
trap 'rm -rf "$cache_dir"' EXIT
export GEMM_TUNE_CACHE=$cache_dir/cache.txt  # fresh: untuned auto, as a new user's job runs
unset GEMM_BACKEND GEMM_TUNE OMP_NUM_THREADS OPENBLAS_NUM_THREADS

# run RANKS N BLAS OPS: the example's two lines' seconds, "pdgemm_s pzgemm_s", or "failed".
run() {
    local ranks=$1 n=$2 blas=$3 ops=$4 per=$((cores / $1)) bind preload=()
    if [ "$per" -ge 1 ]; then bind=(--map-by "slot:PE=$per" --bind-to core); else per=1 bind=(--bind-to none); fi
    [ "$blas" = gemm ] && preload=(LD_PRELOAD="$(readlink -f "$gemm_blas")" GEMM_VERBOSE=1
        ${BACKEND:+GEMM_BACKEND=$BACKEND} ${PBLAS_BLOCK:+GEMM_PBLAS_BLOCK=$PBLAS_BLOCK})
    mpirun --oversubscribe -np "$ranks" "${bind[@]}" env "${preload[@]}" OPENBLAS_NUM_THREADS=$per \
        "$program" "$n" "${NB:-256}" "$ops" >"$cache_dir/out" 2>"$cache_dir/err" || { echo failed; return; }
    awk '/: ok$/ { for (i = 1; i <= NF; ++i) if ($i == "s,") printf "%s ", $(i - 1) } END { print "" }' "$cache_dir/out"
}

# local_seconds TYPE: the seconds the busiest rank's local GEMMs of TYPE (f64, c64) took in the
# timed product (the second half of its trace lines of the type), or - without a trace.
local_seconds() {
    awk -v type="$1" '$1 == "[gemm]" && $2 ~ /^rank=/ && index($0, " dtype=" type " ") && match($0, / time=[0-9.]+us/) {
            rank = substr($2, 6); times[rank, ++count[rank]] = substr($0, RSTART + 6, RLENGTH - 8) }
        END {
            for (rank in count) {
                s = 0
                for (i = int(count[rank] / 2) + 1; i <= count[rank]; ++i) s += times[rank, i]
                if (s > most) most = s
            }
            if (most > 0) printf "%.6f", most / 1e6; else printf "-" }' "$cache_dir/err"
}

printf '%-6s %-4s %-6s %-20s %10s %10s %8s %10s %10s %8s\n' N ops ranks blas "pdgemm s" "GFLOP/s" "in GEMM" \
    "pzgemm s" "GFLOP/s" "in GEMM"
for n in ${SIZES:-2048}; do
    # The reference: the median of 5 timed calls (at 8192 each takes over a second, so the
    # budget is what lets it make them).
    "$gemm" bench "$n" --dtype f64 --layout col --backends cpu_omp --baseline cpu_omp --no-measure-peak --rounds 1 \
        --reps 5 --budget-ms 10000 2>/dev/null | awk -v n="$n" '$1 == "cpu_omp" { printf "one process, cpu_omp dgemm %sx%sx%s: %s ms median, %s GFLOP/s\n", n, n, n, $11, $13 }'
    for ops in ${OPS:-NN TN}; do
        for ranks in ${RANKS:-1 2 4}; do
            for blas in ${BLASES:-gemm system}; do
                label=$blas
                [ "$blas" = gemm ] && label=gemm${BACKEND:+:$BACKEND}${PBLAS_BLOCK:+,kb=$PBLAS_BLOCK}
                read -r d z <<<"$(run "$ranks" "$n" "$blas" "$ops")"
                if [ "$d" = failed ] || [ -z "${z:-}" ]; then
                    printf '%-6s %-4s %-6s %-20s %s\n' "$n" "$ops" "$ranks" "$label" \
                        "failed: $(grep -v '^\[gemm\] rank=' "$cache_dir/err" | head -c 200 | tr '\n' ' ')"
                    continue
                fi
                awk -v n="$n" -v o="$ops" -v r="$ranks" -v b="$label" -v d="$d" -v z="$z" \
                    -v ld="$(local_seconds f64)" -v lz="$(local_seconds c64)" 'BEGIN {
                    m = n; c = n + 10; k = n - 7
                    pd = ld == "-" ? "-" : sprintf("%.2f", ld / d); pz = lz == "-" ? "-" : sprintf("%.2f", lz / z)
                    printf "%-6s %-4s %-6s %-20s %10.4g %10.1f %8s %10.4g %10.1f %8s\n", n, o, r, b, d,
                        2 * m * c * k / d / 1e9, pd, z, 8 * m * c * k / z / 1e9, pz }'
            done
        done
    done
done
