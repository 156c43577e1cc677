#!/usr/bin/env bash
# info_rates.sh: gemm info shows this machine's host-memory rates from the tune cache (in text
# and in its JSON), or says there are none; gemm tune's summary and JSON show them when there
# are.
# usage: info_rates.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

cache=$work/cache.txt
# A cache with this machine's section (a tune stores one), and a rates line added to it.
make_cache() {
    run_expect 0 "$gemm" tune 8 --budget-ms 10 --cache "$cache"
    grep -q '^\[machine\] ' "$cache" || fail "the tune stored no [machine] section"
    sed -i '/^\[machine\] /a rates f64 | host cpu_omp 61.5 GFLOP/s 0 us 12.5 GB/s | gpu cpu_ref 1234 GFLOP/s 7.25 GB/s 80 us | page-locked 21.5 GB/s 30 us' "$cache"
}

case $scenario in
text)
    run_expect 0 env GEMM_TUNE_CACHE="$work/none.txt" "$gemm" info
    expect_line out "^  host-memory rates: none yet \(the first host-memory call that needs them measures them, within 0.5 s, and stores them here\)$"
    run_expect 0 env GEMM_TUNE=off GEMM_TUNE_CACHE="$work/none.txt" "$gemm" info
    expect_line out "^  host-memory rates: none yet \(GEMM_TUNE=off: never measured; auto takes cpu_omp first for host memory\)$"
    make_cache
    run_expect 0 env GEMM_TUNE_CACHE="$cache" "$gemm" info
    expect_line out "^  host-memory rates f64: host cpu_omp 61.5 GFLOP/s \+ 0 us a call, at most 12.5 GB/s; gpu cpu_ref 1234 GFLOP/s, 7.25 GB/s, 80 us a call; page-locked 21.5 GB/s, 30 us a call$"
    run_expect 0 "$gemm" tune 8 --budget-ms 10 --cache "$cache"
    expect_line out "^# host-memory rates f64 \(untuned host calls go where they estimate faster\): host cpu_omp 61.5 GFLOP/s \+ 0 us a call, at most 12.5 GB/s; gpu cpu_ref 1234 GFLOP/s, 7.25 GB/s, 80 us a call; page-locked 21.5 GB/s, 30 us a call$"
    run_expect 0 "$gemm" tune 8 --budget-ms 10 --no-store --cache "$work/none.txt"
    ! grep -q "host-memory rates" "$work/out" || fail "gemm tune reported rates from a cache without any"
    ;;
json)
    make_cache
    run_expect 0 env GEMM_TUNE_CACHE="$cache" "$gemm" info --json "$work/info.json"
    run_expect 0 "$gemm" tune 8 --budget-ms 10 --cache "$cache" --json "$work/tune.json"
    python3 - "$work/info.json" "$work/tune.json" <<'PY' || fail "the JSON does not hold the rates"
import json, sys
want = {"type": "f64", "host_backend": "cpu_omp", "host_gflops": 61.5, "gpu_backend": "cpu_ref",
        "gpu_gflops": 1234, "link_gbs": 7.25, "gpu_fixed_us": 80, "locked_link_gbs": 21.5, "locked_fixed_us": 30,
        "hosts": [{"backend": "cpu_omp", "gflops": 61.5, "fixed_us": 0, "gbs": 12.5}], "measured_ms": 0}
for path in sys.argv[1:]:
    rates = json.load(open(path))["host_rates"]
    # The tune measured this machine's f32 rates (a host class); f64's are the line added.
    assert [r["type"] for r in rates] == ["f32", "f64"], (path, rates)
    assert rates[1] == want, (path, rates)
    assert rates[0]["measured_ms"] > 0 and rates[0]["hosts"][0]["backend"] == rates[0]["host_backend"], (path, rates)
PY
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
