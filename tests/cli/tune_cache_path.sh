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
    # A relative XDG_CACHE_HOME is ignored, as the XDG Base Directory rules say.
    run_expect 0 env -u GEMM_TUNE_CACHE XDG_CACHE_HOME=relative/dir HOME="$work/home" "$gemm" info
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
unwritable)
    # A cache that cannot be written is found before any tuning, which would be thrown away.
    mkdir -p "$work/ro" && chmod 755 "$work" && chmod 555 "$work/ro"
    as_user=()
    if [ "$(id -u)" -eq 0 ]; then  # root writes anywhere: run as nobody
        command -v setpriv >/dev/null || skip "running as root without setpriv"
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        "${as_user[@]}" "$gemm" --version >/dev/null 2>&1 || skip "gemm cannot run as user 65534 from here"
    fi
    GEMM_TUNE_CACHE="$work/ro/sub/cache.txt" run_expect 1 "${as_user[@]}" "$gemm" tune 9 --backends cpu_ref --budget-ms 10
    expect_line err "ERROR: the tune cache $work/ro/sub/cache.txt cannot be written: $work/ro: Permission denied"
    grep -q "1/1" "$work/err" && fail "it tuned before finding the cache unwritable"
    run_expect 0 "${as_user[@]}" env GEMM_TUNE_CACHE="$work/ro/sub/cache.txt" "$gemm" tune 9 --backends cpu_ref \
        --budget-ms 10 --no-store
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
