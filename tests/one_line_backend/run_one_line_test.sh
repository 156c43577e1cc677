#!/usr/bin/env bash
# run_one_line_test.sh: builds the library and the gemm command with one more backend folder
# (CMAKE_ARGS name it through GEMM_EXTRA_BACKENDS, the one_line/ folder beside this script
# being the whole backend), then checks that the registry's list gained exactly that backend,
# first, and that the backend shows up everywhere a backend does.
# usage: run_one_line_test.sh CMAKE SOURCE_DIR BUILD_DIR FACTORIES CUDA_ON CMAKE_ARGS...
#   FACTORIES: the backend_factories.hpp of the build that runs the test; CUDA_ON: whether
#   that build has the CUDA backends (the build made here has not).
set -euo pipefail
cmake=$1 source=$2 build=$3 factories=$4 cuda_on=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/out" "$work/err" 2>/dev/null; exit 1; }

mkdir -p "$build"
echo "+ cmake -S $source -B $build $*"
"$cmake" -S "$source" -B "$build" "$@" >"$build/configure.log" 2>&1 || { tail -n 40 "$build/configure.log"; fail "configure"; }
echo "+ cmake --build $build --target gemm_cli"
"$cmake" --build "$build" --target gemm_cli -j "$(nproc 2>/dev/null || echo 2)" >"$build/build.log" 2>&1 ||
    { tail -n 60 "$build/build.log"; fail "build"; }

# The registry's list: one_line first, then the other build's backends in their order (those
# a CPU build has, where that build has CUDA's too).
entries() { grep -oE '^    make_[a-z0-9_]+_backend' "$1" | tr -d ' '; }
entries "$build/generated/backend_factories.hpp" >"$work/with_one_line"
entries "$factories" >"$work/theirs"
[ "$(head -n 1 "$work/with_one_line")" = make_one_line_backend ] || fail "one_line is not first in the list: $(cat "$work/with_one_line")"
tail -n +2 "$work/with_one_line" >"$work/rest"
if [ "$cuda_on" = ON ]; then grep -xF -f "$work/rest" "$work/theirs" >"$work/expected" || true; else cp "$work/theirs" "$work/expected"; fi
cmp -s "$work/rest" "$work/expected" || fail "the lists differ by more than one_line: $(diff "$work/expected" "$work/rest")"

gemm=$build/bench/gemm
run() { echo "+ $*"; GEMM_TUNE_CACHE="$work/cache.txt" "$@" >"$work/out" 2>"$work/err" || fail "exit $?"; }
has() { grep -Eq -- "$2" "$work/$1" || fail "std$1 has no line matching /$2/"; }

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
echo "one_line: registered by one gemm_backend() line, found by gemm info, info --variants, bench, tune and auto"
