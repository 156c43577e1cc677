#!/usr/bin/env bash
# tune_cache_path.sh: where the tune cache is (GEMM_TUNE_CACHE, else $XDG_CACHE_HOME/gemm/,
# else ~/.cache/gemm/), as gemm info shows it and the help and the docs say it.
# usage: tune_cache_path.sh SCENARIO GEMM SOURCE_DIR
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2 source_dir=$3

case $scenario in
precedence)
    run_expect 0 env -u GEMM_TUNE_CACHE XDG_CACHE_HOME="$work/xdg" HOME="$work/home" "$gemm" info
    expect_line out "^tune cache: $work/xdg/gemm/tune-cache.txt$"
    expect_line out "^  XDG_CACHE_HOME +$work/xdg$"
    run_expect 0 env -u GEMM_TUNE_CACHE -u XDG_CACHE_HOME HOME="$work/home" "$gemm" info
    expect_line out "^tune cache: $work/home/.cache/gemm/tune-cache.txt$"
    run_expect 0 env GEMM_TUNE_CACHE="$work/mine.txt" XDG_CACHE_HOME="$work/xdg" "$gemm" info
    expect_line out "^tune cache: $work/mine.txt$"
    # It changes what auto finds, so the reproduce line carries it.
    run_expect 0 env -u GEMM_TUNE_CACHE XDG_CACHE_HOME="$work/xdg" "$gemm" tune 8 --no-store --budget-ms 10
    expect_line out "^# reproduce: XDG_CACHE_HOME=$work/xdg "
    ;;
documented)
    run_expect 0 "$gemm" tune --help
    expect_line out 'else \$XDG_CACHE_HOME/gemm/tune-cache.txt'
    for doc in README.md docs/CLI.md; do
        grep -q 'XDG_CACHE_HOME/gemm/tune-cache.txt' "$source_dir/$doc" || fail "$doc does not say where the tune cache is"
    done
    grep -q '^| `XDG_CACHE_HOME` |' "$source_dir/README.md" || fail "README.md's environment table lacks XDG_CACHE_HOME"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
