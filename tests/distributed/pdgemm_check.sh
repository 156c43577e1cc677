#!/usr/bin/env bash
# pdgemm_check.sh: examples/distributed/pdgemm_check (ScaLAPACK's PDGEMM and PZGEMM) on 4 MPI
# ranks, with gemm's drop-in BLAS preloaded in each rank: the products must be right, and
# every rank's local GEMMs must be gemm's, traced with the rank's number.
# usage: pdgemm_check.sh SCENARIO PROGRAM LIBGEMM_BLAS MPIEXEC SANITIZE
#   auto     untuned auto, PDGEMM TN then NN; each rank's trace lines carry rank=0..3 and cover
#            f64 and c64
#   forced   GEMM_BACKEND=cpu_omp, then cpu_ref: every local GEMM on that backend
#   panels   PBLAS's panel width, which the drop-in gives (GEMM_PBLAS_BLOCK): by default every
#            rank's local GEMMs are up to 256 deep, with 32 (ScaLAPACK's own) up to 32, and a
#            width that is not a number stops the ranks, naming the variable
# PROGRAM is empty where the example is not built, SANITIZE the build's GEMM_SANITIZE.
# The scratch directory, skip and fail of the command line's tests.
. "$(dirname "$0")/../cli/cli_lib.sh"
scenario=$1 program=$2 gemm_blas=$3 mpiexec=$4 sanitize=$5

[ -n "$program" ] || skip "examples/distributed is not built: MPI or ScaLAPACK was not found when configured (Debian: libopenmpi-dev, libscalapack-openmpi-dev, openmpi-bin)"
case "$sanitize" in
ON | on | TRUE | true | 1) skip "not run under the sanitizers: the ranks load Open MPI and ScaLAPACK, not built with them (the Release stage runs it)" ;;
esac
[ -n "$mpiexec" ] && [ -x "$mpiexec" ] || skip "no mpiexec found when configured (Debian: openmpi-bin)"
# Open MPI refuses to run as root unless told; oversubscribed, 4 ranks run on fewer cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch=("$mpiexec" --oversubscribe -np 4)
if ! "${launch[@]}" true >"$work/probe" 2>&1; then
    skip "MPI cannot start 4 processes here: $(tr '\n' ' ' <"$work/probe" | cut -c1-300)"
fi

# run_ranks OPS VAR=VALUE...: the example on 4 ranks (PDGEMM's ops TN or NN), the drop-in
# preloaded in each, traced.
run_ranks() {
    local ops=$1 rc=0
    shift
    echo "+ ${launch[*]} env LD_PRELOAD=$gemm_blas GEMM_VERBOSE=1 $* $program 301 32 $ops"
    "${launch[@]}" env LD_PRELOAD="$gemm_blas" GEMM_VERBOSE=1 OMP_NUM_THREADS=1 "$@" "$program" 301 32 "$ops" \
        >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" -eq 0 ] || fail "exit code $rc"
    for product in "pdgemm ${ops:0:1} ${ops:1:1}" "pzgemm N C"; do
        grep -Eq "^$product 301x311x294, blocks of 32, on a 2x2 grid: .*: ok$" "$work/out" ||
            fail "no line saying $product was right"
    done
}

# traced_ranks BACKEND_REGEX: every rank traced f64 and c64 GEMMs on a backend matching it, and
# no trace line lacks its rank.
traced_ranks() {
    for rank in 0 1 2 3; do
        for type in f64 c64; do
            grep -Eq "^\[gemm\] rank=$rank backend=$1 .* dtype=$type " "$work/err" ||
                fail "rank $rank traced no $type GEMM on $1"
        done
    done
    ! grep -Eq '^\[gemm\] backend=' "$work/err" || fail "a trace line names no rank"
}

case $scenario in
auto)
    for ops in TN NN; do
        run_ranks $ops
        traced_ranks '(cpu_omp|cblas)'
    done
    ;;
forced)
    for backend in cpu_omp cpu_ref; do
        run_ranks TN GEMM_BACKEND=$backend
        traced_ranks "$backend"
        if grep -E '^\[gemm\] rank=[0-9]+ backend=' "$work/err" | grep -vq " backend=$backend "; then
            fail "a local GEMM ran elsewhere than on $backend"
        fi
    done
    ;;
panels)
    # ks: the depths of the rank's f64 local GEMMs traced, one a line.
    ks() {
        grep -E "^\[gemm\] rank=$1 .* dtype=f64 " "$work/err" | grep -Eo ' k=[0-9]+' | cut -d= -f2 | sort -n | uniq
    }
    for width in default 32; do
        if [ $width = default ]; then
            run_ranks NN GEMM_BACKEND=cpu_omp
            deepest=256
        else
            run_ranks NN GEMM_BACKEND=cpu_omp GEMM_PBLAS_BLOCK=32
            deepest=32
        fi
        traced_ranks cpu_omp
        for rank in 0 1 2 3; do
            # K = 294: panels of 256 and 38, or nine of 32 and one of 6.
            [ "$(ks $rank | tail -1)" = $deepest ] ||
                fail "rank $rank: local GEMMs $(ks $rank | tr '\n' ' ')deep, the deepest not $deepest ($width width)"
        done
    done
    if "${launch[@]}" env LD_PRELOAD="$gemm_blas" GEMM_PBLAS_BLOCK=32x "$program" 301 32 NN >"$work/out" 2>"$work/err"; then
        fail "GEMM_PBLAS_BLOCK=32x: the ranks ran"
    fi
    grep -q "GEMM_PBLAS_BLOCK='32x' must be a whole number from 1 to 65536" "$work/err" ||
        fail "GEMM_PBLAS_BLOCK=32x: no message naming it: $(head -c 300 "$work/err")"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "pdgemm_check.sh $scenario: passed"
