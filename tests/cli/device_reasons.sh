#!/usr/bin/env bash
# device_reasons.sh: on a machine without any NVIDIA driver, every place that reports why
# there is no CUDA device says so, not the CUDA runtime's "driver version is insufficient".
# usage: device_reasons.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

case $scenario in
no_driver)
    [ -e /proc/driver/nvidia ] && skip "an NVIDIA driver is loaded here"
    run_expect 0 "$gemm" info
    expect_line out "^  cuda_naive +no +no CUDA device: no NVIDIA driver / no GPU \("
    expect_line out "^  none: no CUDA device: no NVIDIA driver / no GPU \("
    run_expect 1 "$gemm" bench 64 --device 0 --no-measure-peak
    expect_line err "--device 0: no CUDA device: no NVIDIA driver / no GPU \("
    run_expect 1 "$gemm" tune 64 --device 0 --no-store
    expect_line err "--device 0: no CUDA device: no NVIDIA driver / no GPU \("
    for stream in out err; do
        ! grep -q "insufficient" "$work/$stream" || fail "std$stream still blames the driver's version"
    done
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
