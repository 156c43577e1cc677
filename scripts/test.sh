#!/usr/bin/env bash
# test.sh: sets up, builds and runs the test suites: the full build (CUDA too when nvcc is
# present; GPU tests skip visibly without a device), then the CPU tests again under
# AddressSanitizer and UBSan, then clang-tidy's checks and clang-format's (scripts/lint.sh),
# then the Python package's tests (python/tests).
# Both builds treat warnings as errors (GEMM_WERROR). Each build's output goes to a log (printed when the
# build fails); each stage ends with one summary line, and the script with one verdict over
# all, exit 0 only when no test or check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
. scripts/env.sh

summaries=()
passed=0 failed=0 skipped=0

# build DIR CMAKE_ARGS...: configures and builds into DIR, its output in DIR/build.log.
build() {
    local dir=$1
    shift
    mkdir -p "$dir"
    echo "== build $dir: cmake $* (log: $dir/build.log)"
    if ! { cmake -S . -B "$dir" "$@" && cmake --build "$dir" -j "$jobs"; } >"$dir/build.log" 2>&1; then
        tail -n 60 "$dir/build.log"
        echo "test.sh: the build in $dir failed (the whole log: $dir/build.log)"
        exit 1
    fi
}

# run_stage NAME DIR CTEST_ARGS...: runs ctest in DIR and adds its counts to the totals.
run_stage() {
    local name=$1 dir=$2 log
    shift 2
    log="$dir/ctest.log"
    echo "== test $name"
    local rc=0
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$log" || rc=$?
    local p f s
    p=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed ' "$log" || true)
    f=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Exception|Timeout|Not Run)' "$log" || true)
    s=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
    # A ctest that failed without a failed test line (no tests found, a crash) still fails.
    [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    summaries+=("$name: $p passed, $f failed, $s skipped")
}

# run_check NAME COMMAND...: runs a check that is not a CTest suite, one test passed or failed.
run_check() {
    local name=$1
    shift
    echo "== check $name"
    if "$@"; then
        passed=$((passed + 1))
        summaries+=("$name: 1 passed, 0 failed, 0 skipped")
    else
        failed=$((failed + 1))
        summaries+=("$name: 0 passed, 1 failed, 0 skipped")
    fi
}

build build-test -DCMAKE_BUILD_TYPE=Release -DGEMM_WERROR=ON
run_stage "stage 1 (Release build, every test)" build-test

build build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGEMM_SANITIZE=ON -DGEMM_WITH_CUDA=OFF -DGEMM_WERROR=ON
run_stage "stage 2 (ASan + UBSan build, CPU tests)" build-sanitize -L cpu

run_check "stage 3 (clang-tidy, scripts/lint.sh --tidy)" bash scripts/lint.sh --tidy build-tidy
run_check "stage 4 (clang-format, scripts/lint.sh --format)" bash scripts/lint.sh --format

# pytest_count WORD: the count pytest's summary (build-python/pytest.log) gives for WORD, or 0.
pytest_count() {
    tail -n 1 build-python/pytest.log | grep -oE "[0-9]+ $1( |,|$)" | grep -oE '^[0-9]+' || echo 0
}

# run_python_stage NAME: builds the Python package into a venv of its own (build-python/venv)
# and runs its pytest suite. Skipped, saying why, where python3 cannot make a venv or pip cannot
# reach PyPI; a build or test failure fails. CUDA is off: CI has nvcc but no GPU, and the CUDA
# backends would add many minutes of a 2-core machine to a build whose device tests skip. The
# build and test requirements are installed into the venv first (the check that PyPI can be
# reached) and the package built without build isolation,
# so that the build folder (build-python/<wheel tag>) stays valid between runs and rebuilds are
# incremental.
run_python_stage() {
    local name=$1 venv=build-python/venv log=build-python/pip.log python=python3
    [ -x /usr/bin/python3 ] && python=/usr/bin/python3
    echo "== test $name (log: $log)"
    mkdir -p build-python
    local skip=""
    if ! { [ -x "$venv/bin/pip" ] || "$python" -m venv "$venv"; } >"$log" 2>&1; then
        skip="$python -m venv failed (Debian: apt-get install python3-venv)"
    elif ! "$venv/bin/pip" install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy pytest ml_dtypes \
        >>"$log" 2>&1; then
        skip="pip could not install the build and test requirements (no network to PyPI?)"
    fi
    if [ -n "$skip" ]; then
        tail -n 5 "$log"
        echo "test.sh: $name skipped: $skip"
        skipped=$((skipped + 1))
        summaries+=("$name: 0 passed, 0 failed, 1 skipped ($skip)")
        return
    fi
    if ! CMAKE_ARGS="-DGEMM_WITH_CUDA=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
        "$venv/bin/pip" install --no-build-isolation "./[test]" >>"$log" 2>&1; then
        tail -n 60 "$log"
        echo "test.sh: the Python package's build failed (the whole log: $log)"
        failed=$((failed + 1))
        summaries+=("$name: 0 passed, 1 failed, 0 skipped")
        return
    fi
    local rc=0 p f s
    "$venv/bin/python" -m pytest -q -rs python/tests 2>&1 | tee build-python/pytest.log || rc=$?
    # pytest's last line: "170 passed, 7 skipped in 2.1s" (or "... 1 failed, 2 errors ...").
    p=$(pytest_count passed) s=$(pytest_count skipped)
    f=$(($(pytest_count failed) + $(pytest_count 'errors?')))
    # A pytest that failed without a failed test (a collection error, a crash) still fails.
    [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    summaries+=("$name: $p passed, $f failed, $s skipped")
    # clang-tidy over the module's sources, as this build compiled them (its compile commands).
    local built
    built=$(find build-python -maxdepth 2 -name compile_commands.json -printf '%h\n' 2>/dev/null | head -n 1)
    [ -n "$built" ] || built=build-python/none
    run_check "stage 5b (clang-tidy on python/, scripts/lint.sh --tidy-python)" bash scripts/lint.sh --tidy-python "$built"
}

run_python_stage "stage 5 (Python package, pytest python/tests)"

echo
for line in "${summaries[@]}"; do echo "$line"; done
verdict=PASSED
[ "$failed" -eq 0 ] || verdict=FAILED
echo "test.sh: $verdict"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
