#!/usr/bin/env bash
# run_one_line_test.sh: the gemm command against the library built with one more registration
# line, one_line_backend.cpp being the whole backend: it must show up everywhere a backend does.
# usage: run_one_line_test.sh GEMM LIB_DIR REGISTRY REGISTRY_WITH_ONE_LINE
set -euo pipefail
gemm=$1 lib=$2 registry=$3 registry_one_line=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/out" "$work/err" 2>/dev/null; exit 1; }
run() { echo "+ $*"; LD_LIBRARY_PATH="$lib" GEMM_TUNE_CACHE="$work/cache.txt" "$@" >"$work/out" 2>"$work/err" || fail "exit $?"; }
has() { grep -Eq -- "$2" "$work/$1" || fail "std$1 has no line matching /$2/"; }

# The registry differs by the backend's include and its one registration line.
added=$(diff "$registry" "$registry_one_line" | grep -c '^>' || true)
removed=$(diff "$registry" "$registry_one_line" | grep -c '^<' || true)
[ "$added" -eq 2 ] && [ "$removed" -eq 0 ] || fail "the registry differs by +$added -$removed lines, not +2"
grep -q '^    all.push_back(make_one_line_backend());$' "$registry_one_line" || fail "no registration line"

run "$gemm" info
has out '^  one_line +yes +a loop in the element type$'
run "$gemm" info --variants 24 --dtype f64
has out '^  one_line +forward_k$'
has out '^ +reversed_k$'
run "$gemm" bench 33x17x9 --dtype f32,f64 --backends one_line,one_line:reversed_k --baseline cpu_ref \
    --no-measure-peak --budget-ms 20 --reps 2 --rounds 1 --warmup 0
has out '^one_line +f64 .* ok '
has out '^one_line:reversed_k +f32 .* ok '
run "$gemm" tune 24 --backends one_line --no-store --verbose --budget-ms 50
has out '^    one_line:forward_k '
has out '^    one_line:reversed_k '
# First of the host kind in the registry: the built-in rule's choice for an untuned call where
# no measured rates decide (with them, the rates rank it with the others).
run env GEMM_VERBOSE=1 GEMM_TUNE=off "$gemm" bench 40 --backends auto --baseline cpu_ref --no-measure-peak --budget-ms 20 --reps 1 --rounds 1 --warmup 0
has err 'backend=one_line .* m=40 n=40 k=40 .*why="auto: built-in rule'
echo "one_line: registered in one line, found by gemm info, info --variants, bench, tune and auto"
