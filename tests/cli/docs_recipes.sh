#!/usr/bin/env bash
# docs_recipes.sh: the recipes of docs/CLI.md show what they claim when run as written.
# usage: docs_recipes.sh SCENARIO GEMM SOURCE_DIR
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2 source_dir=$3

# The recipes call `gemm`: this build's.
mkdir "$work/bin"
ln -s "$gemm" "$work/bin/gemm"
export PATH="$work/bin:$PATH"

case $scenario in
auto_uses_cache)
    # "Tune, then let auto use it": tune the recipe's shape, then run its check as written.
    recipe=$(grep -m1 '^GEMM_VERBOSE=1 gemm bench 1024 ' "$source_dir/docs/CLI.md") || fail "no recipe in docs/CLI.md"
    export GEMM_TUNE_CACHE=$work/tune-cache.txt
    run_expect 0 gemm tune 1024 --budget-ms 100
    run_expect 0 bash -c "$recipe"
    expect_line out 'layout=row ops=NN m=1024 n=1024 k=1024 .*why="auto: tune cache hit"'
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
