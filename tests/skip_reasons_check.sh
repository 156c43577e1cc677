#!/usr/bin/env bash
# skip_reasons_check.sh: why a GPU test skipped reaches ctest's output: the suite writes its
# reason to the file GEMM_TEST_SKIP_REASON_FILE names, skip_reasons.cmake prints it, ctest runs
# that after its summary, and every GPU test has its file.
# usage: skip_reasons_check.sh TEST_GPU GEMM SKIP_REASONS_CMAKE BUILD_DIR
set -euo pipefail
test_gpu=$1 gemm=$2 script=$3 build=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# gemm info lists "none: <why>" under its devices when there is no CUDA device. Its output is
# taken whole first: a gemm info that fails is a failure, not a device.
info=$("$gemm" info) || fail "gemm info exited with an error: $info"
if ! grep -q '^  none: ' <<<"$info"; then
    echo "SKIPPED: a CUDA device is here, so the GPU suite does not skip"
    [ -z "${GEMM_TEST_SKIP_REASON_FILE:-}" ] || echo "a CUDA device is here, so the GPU suite does not skip" >"$GEMM_TEST_SKIP_REASON_FILE"
    exit 77
fi

cmake -DDIR="$work/reasons" -DMODE=clear -P "$script"
[ -d "$work/reasons" ] || fail "MODE=clear did not make the folder"
rc=0
GEMM_TEST_SKIP_REASON_FILE=$work/reasons/gpu.txt "$test_gpu" >"$work/out" || rc=$?
[ "$rc" -eq 77 ] || fail "test_gpu exited $rc, not 77 (skipped)"
reason=$(sed -n 's/^SKIPPED: //p' "$work/out")
[ -n "$reason" ] && [ "$(cat "$work/reasons/gpu.txt")" = "$reason" ] || fail "the reason file does not hold '$reason'"

cmake -DDIR="$work/reasons" -DMODE=print -P "$script" >"$work/printed"
cat "$work/printed"
grep -qxF "  gpu: $reason" "$work/printed" || fail "MODE=print does not show the reason"

grep -q 'MODE=clear' "$build/CTestCustom.cmake" && grep -q 'MODE=print' "$build/CTestCustom.cmake" ||
    fail "$build/CTestCustom.cmake does not run skip_reasons.cmake before and after the tests"
for test in gpu gpu.cublasxt_out_of_core gpu.cublasxt_missing_device gpu.epilogue_trace; do
    grep -q "GEMM_TEST_SKIP_REASON_FILE=set:[^;\"]*/$test.txt" "$build/tests/gpu/CTestTestfile.cmake" ||
        fail "the CTest test $test has no skip-reason file"
done
echo "passed"
