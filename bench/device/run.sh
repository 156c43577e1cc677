#!/usr/bin/env bash
# run.sh: one device call on the GPU machine: unpack the carried Debian packages, build for
# sm_90, run the GPU tests, compute-sanitizer on the hand-written kernels, the benchmarks,
# and print a short table last. Usage (through the device tool, carrying .deps):
#   bash bench/device/run.sh [quick|tests|bench|sanitize|all]   (default all)
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
out=${OUT:-/tmp/gemm-device-out}
mkdir -p "$out"

deps=/tmp/deps
if [ ! -d $deps/usr ]; then
    for f in .deps/*.deb; do dpkg -x "$f" $deps; done
    # Debian's OpenBLAS needs libgfortran5; use the carried one only if the machine lacks it.
    if ! ldconfig -p | grep -q 'libgfortran.so.5'; then
        for f in .deps/extra/*.deb; do dpkg -x "$f" $deps; done
    fi
fi
export CMAKE_PREFIX_PATH=$deps/usr
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:$deps/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GEMM_CBLAS_LIB=$deps/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
build=build-device
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build $build -j 16 >"$out/build.log" 2>&1 || { grep -E 'error|Error' "$out/build.log" | head -40; exit 1; }
echo "build ok"
gemm=$build/bench/gemm
$gemm info

summary=()
if [ "$what" = all ] || [ "$what" = tests ] || [ "$what" = quick ]; then
    ctest --test-dir $build --output-on-failure -j 4 >"$out/ctest.log" 2>&1
    rc=$?
    grep -E 'tests passed|tests failed|Failed|\*\*\*' "$out/ctest.log" | tail -15
    summary+=("ctest (all labels): rc=$rc, $(grep -E 'tests passed' "$out/ctest.log")")
fi
if [ "$what" = all ] || [ "$what" = sanitize ]; then
    gpu_test=$build/tests/gpu/test_gpu
    for tool in memcheck racecheck; do
        for b in cuda_naive cuda_tiled; do
            GEMM_TEST_BACKENDS=$b compute-sanitizer --tool $tool --error-exitcode 9 \
                $gpu_test -tc="*small*" >"$out/sanitize_${tool}_$b.log" 2>&1
            rc=$?
            summary+=("compute-sanitizer $tool $b: rc=$rc $(grep -E 'ERROR SUMMARY' "$out/sanitize_${tool}_$b.log" | tail -1)")
        done
    done
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
    $gemm bench 1024 2048 4096 8192 --dtype f32 --ops NN,NT,TN --backends cublas,cublaslt,cuda_tiled \
        --baseline cublas --csv "$out/bench_f32.csv" | tee "$out/bench_f32.txt"
fi
echo
echo "== summary =="
for s in "${summary[@]}"; do echo "$s"; done
[ -f "$out/bench_f32.txt" ] && tail -n 40 "$out/bench_f32.txt"
exit 0
