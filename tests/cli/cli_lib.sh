# cli_lib.sh: sourced by the CLI test scripts: a scratch directory, running a command with
# its exit code checked, and checks on what it printed.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Small, fast settings for gemm bench: the figures do not matter, the outcome does.
quick_bench=(--no-measure-peak --budget-ms 20 --reps 2 --rounds 1 --warmup 0)

fail() {
    echo "FAIL: $*"
    for stream in out err; do
        [ -f "$work/$stream" ] && { echo "--- std$stream:"; cat "$work/$stream"; }
    done
    exit 1
}

# run_expect CODE COMMAND...: runs COMMAND (stdout to $work/out, stderr to $work/err) and
# fails unless it exits with CODE.
run_expect() {
    local want=$1 got=0
    shift
    echo "+ $*"
    "$@" >"$work/out" 2>"$work/err" || got=$?
    [ "$got" -eq "$want" ] || fail "exit code $got, expected $want"
}

# skip REASON: the scenario needs what this machine lacks; exit 77, which CTest reports as
# skipped. CTest shows nothing of it: the reason also goes to the file it names in
# GEMM_TEST_SKIP_REASON_FILE, printed after ctest's summary (tests/CMakeLists.txt).
skip() {
    echo "SKIPPED: $1"
    [ -z "${GEMM_TEST_SKIP_REASON_FILE:-}" ] || echo "$1" >"$GEMM_TEST_SKIP_REASON_FILE"
    exit 77
}

# expect_line out|err REGEX: the command's stdout or stderr has a line matching REGEX (ERE).
expect_line() {
    grep -Eq -- "$2" "$work/$1" || fail "std$1 has no line matching /$2/"
}

# copy_for_nobody PROGRAM: a path user nobody (65534) can run PROGRAM from, on stdout: PROGRAM
# itself where nobody reaches it, else a copy in $work (made searchable), beside copies of the
# libraries it loads that nobody cannot read, found through a wrapper setting LD_LIBRARY_PATH.
# A checkout under /root or in a 0700 folder hides the build from nobody. Skips when even the
# copy cannot run.
copy_for_nobody() {
    local program=$1 as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    if "${as_nobody[@]}" "$program" --version >/dev/null 2>&1; then
        echo "$program"
        return
    fi
    local copies=$work/for-nobody lib
    mkdir -p "$copies/lib"
    chmod 755 "$work" "$copies" "$copies/lib"
    cp "$program" "$copies/"
    for lib in $(ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
        "${as_nobody[@]}" test -r "$lib" || cp "$lib" "$copies/lib/"
    done
    chmod -R a+rX "$copies"
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
        "$copies/lib" "$copies/$(basename "$program")" >"$copies/run"
    chmod 755 "$copies/run"
    "${as_nobody[@]}" "$copies/run" --version >/dev/null 2>&1 ||
        skip "user 65534 can run neither $program nor a copy of it in $copies"
    echo "$copies/run"
}
