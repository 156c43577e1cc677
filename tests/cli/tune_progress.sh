#!/usr/bin/env bash
# tune_progress.sh: the progress of gemm tune and gemm bench on stderr gives the time elapsed
# and, once a problem is done, an estimate of the time left.
# usage: tune_progress.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

case $scenario in
time_left)
    run_expect 0 "$gemm" tune 8 16 24 --no-store --budget-ms 10
    expect_line err '^gemm tune: \[1/3\] f32 row NN 8x8x8 \(elapsed [0-9]+:[0-9]{2}\)$'
    expect_line err '^gemm tune: \[2/3\] f32 row NN 16x16x16 \(elapsed [0-9]+:[0-9]{2}, about [0-9]+:[0-9]{2} left\)$'
    expect_line err '^gemm tune: \[3/3\] f32 row NN 24x24x24 \(elapsed [0-9]+:[0-9]{2}, about [0-9]+:[0-9]{2} left\)$'
    ;;
bench_lines)
    # gemm bench says what it is doing while it measures, a line per case; the table stays on
    # stdout.
    run_expect 0 "$gemm" bench 8 16 --layout row,col --backends cpu_ref --baseline cpu_ref --budget-ms 5 \
        --no-measure-peak
    expect_line err '^gemm bench: \[1/4\] f32 row NN 8x8x8 \(elapsed [0-9]+:[0-9]{2}\)$'
    expect_line err '^gemm bench: \[4/4\] f32 col NN 16x16x16 \(elapsed [0-9]+:[0-9]{2}, about [0-9]+:[0-9]{2} left\)$'
    if grep -q '^gemm bench: \[' "$work/out"; then fail "progress reached stdout"; fi
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
