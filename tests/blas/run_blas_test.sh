#!/usr/bin/env bash
# run_blas_test.sh: one scenario of the drop-in BLAS tests. Runs the callers against
# reference BLAS (netlib, from Debian's libblas3), under LD_PRELOAD=libgemm_blas.so, and
# linked to libgemm_blas in place of libblas, and compares what they print.
# usage: run_blas_test.sh SCENARIO BIN_DIR GEMM_BLAS_SO REFERENCE_BLAS_DIR [ALTERNATIVE_DIR]
set -euo pipefail
scenario=$1 bin=$2 gemm_blas=$3 reference=$4 alternative_dir=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

reference_run() { LD_LIBRARY_PATH="$reference" "$@"; }
preload_run() { LD_LIBRARY_PATH="$reference" LD_PRELOAD="$gemm_blas" "$@"; }

case $scenario in
values)
    reference_run "$bin/blas_caller" values >"$work/ref"
    preload_run env GEMM_VERBOSE=1 "$bin/blas_caller" values >"$work/preload" 2>"$work/trace"
    "$bin/blas_compare" "$work/ref" "$work/preload"
    # Every call but the quick returns (m or n = 0; alpha = 0 or k = 0 with beta = 1): 18 of
    # the real shapes, 19 of the complex ones, each through three entry points.
    for dtype in f32 f64 c32 c64; do
        routed=$(grep -c "backend=.* dtype=$dtype " "$work/trace" || true)
        echo "GEMM_VERBOSE=1 traced $routed $dtype calls routed through gemm"
        [ "$routed" -ge 54 ] || { echo "expected the $dtype GEMMs to be routed through gemm"; exit 1; }
    done
    # In front of the system BLAS (OpenBLAS by default) with the cblas backend forced: the
    # backend must reach the real library, not our interposed symbols (no recursion).
    LD_PRELOAD="$gemm_blas" GEMM_BACKEND=cblas "$bin/blas_caller" values >"$work/cblas"
    "$bin/blas_compare" "$work/ref" "$work/cblas"
    "$bin/blas_caller_linked" values >"$work/linked"
    "$bin/blas_compare" "$work/ref" "$work/linked"
    for backend in cpu_ref cpu_omp; do
        if LD_PRELOAD="$gemm_blas" GEMM_BACKEND=$backend "$bin/blas_caller" values >"$work/$backend" 2>"$work/err"; then
            "$bin/blas_compare" "$work/ref" "$work/$backend"
        else
            echo "backend $backend not usable here: $(head -1 "$work/err")"
        fi
    done
    ;;
reference_library)
    # The cblas backend on reference BLAS under the preload: reference cblas_sgemm calls
    # sgemm_ through the dynamic linker, which would find the preloaded one and recurse; the
    # backend must compute inside the library. Forced, and found by default as Debian finds it.
    LD_PRELOAD="$gemm_blas" GEMM_BACKEND=cblas GEMM_CBLAS_LIB="$reference/libblas.so.3" GEMM_VERBOSE=1 \
        "$bin/blas_caller" values >"$work/cblas_reference" 2>"$work/trace"
    reference_run "$bin/blas_caller" values >"$work/ref"
    "$bin/blas_compare" "$work/ref" "$work/cblas_reference"
    grep -q 'backend=cblas' "$work/trace"
    echo "cblas backend on $reference/libblas.so.3 under the preload: results match reference BLAS"
    ;;
default_handler)
    # No handler in the program: reference CBLAS's cblas_xerbla prints the parameter (mapped
    # back to the caller's numbering for row-major calls) and stops the program. Preloaded in
    # front of it, and linked alone, gemm prints the same itself and returns (as OpenBLAS's
    # GEMM does): a library's handler is never called, since it may stop the program. In a
    # program linked with OpenBLAS, whose exported cblas_xerbla exits, the same.
    cases=$(sed -n 's/^ *{"\([a-z_]*\)",.*/\1/p' "$(dirname "$0")/bad_cblas_calls.h")
    count=0
    for case in $cases; do
        for t in s d c z; do
            reference_run "$bin/cblas_default_handler" $t "$case" 2>"$work/ref" || true
            preload_run "$bin/cblas_default_handler" $t "$case" 2>"$work/preload" ||
                { echo "preloaded, $t $case stopped the program (exit $?)"; exit 1; }
            "$bin/cblas_default_handler_linked" $t "$case" 2>"$work/linked" ||
                { echo "linked, $t $case stopped the program (exit $?)"; exit 1; }
            diff -u "$work/ref" "$work/preload"
            diff -u "$work/ref" "$work/linked"
            if [ -x "$bin/cblas_default_handler_openblas" ]; then
                LD_PRELOAD="$gemm_blas" "$bin/cblas_default_handler_openblas" $t "$case" 2>"$work/openblas" ||
                    { echo "preloaded over OpenBLAS, $t $case stopped the program (exit $?)"; exit 1; }
                diff -u "$work/ref" "$work/openblas"
            fi
            count=$((count + 1))
        done
    done
    [ "$count" -ge 116 ] || { echo "expected the cases of bad_cblas_calls.h, ran $count"; exit 1; }
    echo "$count reports through the default handler identical to reference CBLAS, each call returning"
    if [ -x "$bin/cblas_default_handler_openblas" ]; then
        echo "and the same preloaded into a program linked with OpenBLAS"
    else
        echo "SKIP: OpenBLAS (libopenblas.so) not found: the program linked with it was not built"
    fi
    ;;
errors)
    for program in blas_caller cblas_errors cblas_errors_xerbla; do
        mode=""; [ $program = blas_caller ] && mode=fortran
        reference_run "$bin/$program" $mode >"$work/ref"
        preload_run "$bin/$program" $mode >"$work/preload"
        "$bin/${program}_linked" $mode >"$work/linked"
        diff -u "$work/ref" "$work/preload"
        diff -u "$work/ref" "$work/linked"
        echo "$program: $(wc -l <"$work/ref") error reports identical to reference BLAS"
        if grep CHANGED "$work/ref" | grep -v conj_ok | grep -q .; then
            echo "C changed by an invalid call"
            exit 1
        fi
    done
    ;;
other_routines)
    # Only GEMM is ours: other routines still come from the system BLAS, preloaded or linked
    # in front of it, or with gemm's libblas.so.3 in place of the system's (alternatives).
    reference_run "$bin/blas_caller" other >"$work/ref"
    preload_run "$bin/blas_caller" other >"$work/preload"
    "$bin/blas_caller_linked" other >"$work/linked"
    diff -u "$work/ref" "$work/preload"
    echo "preloaded: $(cat "$work/preload"), reference: $(cat "$work/ref"), linked: $(cat "$work/linked")"
    if [ -n "$alternative_dir" ]; then
        # The loader finds gemm's libblas.so.3 first, as it would after update-alternatives.
        LD_LIBRARY_PATH="$alternative_dir" "$bin/blas_caller" other >"$work/alt"
        reference_run "$bin/blas_caller" values >"$work/ref_values"
        LD_LIBRARY_PATH="$alternative_dir" GEMM_VERBOSE=1 "$bin/blas_caller" values >"$work/alt_values" 2>"$work/trace"
        "$bin/blas_compare" "$work/ref_values" "$work/alt_values"
        grep -q 'backend=' "$work/trace"
        echo "as libblas.so.3: $(cat "$work/alt"); its GEMMs were routed through gemm"
    fi
    ;;
threads)
    preload_run "$bin/blas_caller" threads
    "$bin/blas_caller_linked" threads
    ;;
failing_backend)
    # A valid call the chosen backend cannot serve: a BLAS caller has no status to read, so C
    # is never left unwritten. By default the system BLAS computes it, said once per routine;
    # with GEMM_BLAS_ON_FAILURE=stop the program stops with the reason.
    reference_run "$bin/blas_caller" values >"$work/ref"
    for forced in "cblas GEMM_CBLAS_LIB=$gemm_blas" "cuda_tiled" "nosuch"; do
        env LD_LIBRARY_PATH="$reference" LD_PRELOAD="$gemm_blas" GEMM_BACKEND=$forced \
            "$bin/blas_caller" values >"$work/fallback" 2>"$work/err"
        "$bin/blas_compare" "$work/ref" "$work/fallback"
        for routine in sgemm_ dgemm_ cgemm_ zgemm_ cblas_sgemm cblas_dgemm cblas_cgemm cblas_zgemm; do
            said=$(grep -c "^gemm_blas: $routine: .*computed by .*libblas.so.3 instead" "$work/err" || true)
            [ "$said" -eq 1 ] || { echo "GEMM_BACKEND=$forced: $routine said $said times"; cat "$work/err"; exit 1; }
        done
        echo "GEMM_BACKEND=$forced: every result computed by the system BLAS, said once per routine"
    done
    # The system BLAS the loader finds (OpenBLAS, where installed, reads A and B with alpha = 0,
    # so their NaN would come through): still reference BLAS's results.
    LD_PRELOAD="$gemm_blas" GEMM_BACKEND=nosuch "$bin/blas_caller" values >"$work/fallback" 2>"$work/err"
    "$bin/blas_compare" "$work/ref" "$work/fallback"
    echo "GEMM_BACKEND=nosuch, computed by $(sed -n 's/.* computed by \([^ ]*\) instead.*/\1/p' "$work/err" | head -1): reference BLAS's results"
    status=0
    LD_PRELOAD="$gemm_blas" GEMM_BACKEND=nosuch GEMM_BLAS_ON_FAILURE=stop \
        "$bin/blas_caller" unchanged >"$work/out" 2>"$work/err" || status=$?
    cat "$work/err"
    [ "$status" -eq 1 ] || { echo "expected exit status 1, got $status"; exit 1; }
    grep -q "^gemm_blas: sgemm_: GEMM_STATUS_UNKNOWN_BACKEND: .*nosuch.*stopping the program" "$work/err"
    ! grep -q "unchanged: C" "$work/out" || { echo "the program went on after the stop"; exit 1; }
    status=0
    LD_PRELOAD="$gemm_blas" GEMM_BACKEND=nosuch GEMM_BLAS_ON_FAILURE=sometimes \
        "$bin/blas_caller" unchanged >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 1 ] && grep -q "GEMM_BLAS_ON_FAILURE='sometimes' must be system or stop" "$work/err"
    echo "GEMM_BLAS_ON_FAILURE=stop stops the program at the first call, naming the reason"
    ;;
*) echo "unknown scenario $scenario"; exit 2 ;;
esac
