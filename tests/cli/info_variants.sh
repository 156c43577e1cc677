#!/usr/bin/env bash
# info_variants.sh: gemm info --variants: every variant id of the build, or those worth timing
# for one problem, each of which the library then accepts as GEMM_BACKEND=backend:variant.
# usage: info_variants.sh SCENARIO GEMM [PYTHON3] (PYTHON3: for the json scenario)
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2 python=${3:-}

case $scenario in
all)
    run_expect 0 "$gemm" info --variants
    expect_line out '^variants \(every id of this build'
    expect_line out '^  cpu_omp +[a-z0-9_]+_f32_'
    expect_line out '^ +generic_f64_4x4$'
    expect_line out '^  cpu_ref +\(its default only\)$'
    ;;
problem)
    run_expect 0 "$gemm" info --variants 64x48x32 --dtype f64 --layout col --ops TN
    expect_line out '^variants worth timing for f64 col TN 64x48x32 host'
    expect_line out '^  cpu_ref +\(default\)$'
    ids=$(sed -n '/^variants worth timing/,$p' "$work/out" | awk '$1 == "cpu_omp" {print $2}')
    [ -n "$ids" ] || fail "no cpu_omp variant listed for f64"
    case $ids in *_f32_*) fail "an f32 kernel listed for an f64 problem: $ids" ;; esac
    # What is listed is what backend:variant takes: each computes the problem, checked.
    for id in $ids; do
        run_expect 0 "$gemm" bench 64x48x32 --dtype f64 --layout col --ops TN --backends "cpu_omp:$id" "${quick_bench[@]}"
        expect_line out "^cpu_omp:$id +f64 +col TN +64 +48 +32 +1 ok "
    done
    # f16 runs the f32 kernels under ids of its own.
    run_expect 0 "$gemm" info --variants 64 --dtype f16
    expect_line out '^  cpu_omp +[a-z0-9]+_f16_[0-9]+x[0-9]+'
    ;;
json)
    [ -n "$python" ] || fail "the json scenario needs PYTHON3 (the interpreter CMake found)"
    run_expect 0 "$gemm" info --variants 64 --json "$work/info.json"
    "$python" -m json.tool "$work/info.json" >/dev/null || fail "not valid JSON"
    "$python" - "$work/info.json" <<'PY' || fail "no variants in the JSON"
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert v["problem"].startswith("f32 row NN 64x64x64"), v["problem"]
omp = [b for b in v["backends"] if b["backend"] == "cpu_omp"][0]
assert omp["serves"] and omp["ids"] and all("_f32_" in i for i in omp["ids"]), omp
PY
    ;;
usage)
    run_expect 2 "$gemm" info --dtype f64
    expect_line err 'only for --variants'
    run_expect 2 "$gemm" info --variants --dtype f64
    expect_line err 'give the SHAPE'
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
