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
        gemm=$(copy_for_nobody "$gemm")
    fi
    GEMM_TUNE_CACHE="$work/ro/sub/cache.txt" run_expect 1 "${as_user[@]}" "$gemm" tune 9 --backends cpu_ref --budget-ms 10
    expect_line err "ERROR: the tune cache $work/ro/sub/cache.txt cannot be written: cannot create a folder in $work/ro: Permission denied"
    grep -q "1/1" "$work/err" && fail "it tuned before finding the cache unwritable"
    run_expect 0 "${as_user[@]}" env GEMM_TUNE_CACHE="$work/ro/sub/cache.txt" "$gemm" tune 9 --backends cpu_ref \
        --budget-ms 10 --no-store
    ;;
refused)
    # Whatever a store would refuse is refused before any tuning, with the reason, and changes
    # nothing: a file that is not a tune cache, a read-only cache, a FIFO, a folder, a path
    # ending in '/', a folder that cannot be created (for root too: /proc takes no folder).
    printf 'my notes\n' >"$work/notes.txt"
    printf '' >"$work/read-only.txt" && chmod 444 "$work/read-only.txt"
    mkfifo "$work/fifo" && mkdir "$work/folder"
    for case in "notes.txt|not a tune cache (line 1" "read-only.txt|(mode 0444" "fifo|a FIFO, not a regular file" \
        "folder|a folder, not a regular file" "new/|ends in '/'" "/proc/nope/c.txt|cannot create a folder in /proc"; do
        path=${case%%|*} why=${case#*|}
        [ "${path#/}" != "$path" ] || path=$work/$path
        run_expect 1 "$gemm" tune 9 --cache "$path" --backends cpu_ref --budget-ms 10
        grep -qF "ERROR: the tune cache $path cannot be written: " "$work/err" || fail "$path: no error naming it"
        grep -qF "$why" "$work/err" || fail "$path: the error does not say '$why'"
        grep -q "1/1" "$work/err" && fail "$path: it tuned before refusing the cache"
    done
    [ "$(cat "$work/notes.txt")" = "my notes" ] || fail "notes.txt changed"
    [ ! -e "$work/new" ] || fail "a folder was made for a path ending in '/'"
    [ ! -e /proc/nope ] || fail "/proc/nope exists"
    for made in notes.txt.lock read-only.txt.lock fifo.lock folder.lock; do
        [ ! -e "$work/$made" ] || fail "$made was created"
    done
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
