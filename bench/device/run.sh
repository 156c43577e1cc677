#!/usr/bin/env bash
# run.sh: the GPU runs of docs/PERFORMANCE.md, on a CUDA host with one GPU (two for the
# second half of `xt`) that has the CUDA toolkit, CMake and Ninja but may lack the build's
# Debian packages: unpack the .deb files in .deps/ (doctest-dev, libspdlog-dev, libfmt,
# libopenblas-pthread; libgfortran5 from .deps/extra/ when the host lacks it) into /tmp/deps,
# build for sm_90 against them, then run the stages asked for and print a short summary last.
# Stages (default: tests sanitize direct bench):
#   tests     ctest -L gpu (every GPU backend against cpu_ref); GPU_TEST_JOBS (default 1; more
#             runs gpu.fp8, gpu.skinny and the other tests side by side, the two that watch the
#             device's free memory alone) and GPU_TEST_TIMEOUT (seconds per test, default 900)
#   sanitize  compute-sanitizer memcheck and racecheck on cuda_naive and cuda_tiled
#             (SANITIZE_BACKENDS narrows them, e.g. to cuda_tiled; SANITIZE_CASES names the
#             test cases, doctest's -tc, default the correctness matrix and cuda_tiled's ids)
#   direct    cuBLAS/cuBLASLt called directly vs through gemm, and the per-call host cost of a
#             plan run, a forced call and auto on a tune cache hit over a direct cuBLAS call
#             (and of a plan that checks its pointers), measured twice
#   short     short device calls back to back (direct, forced, plan) against what the
#             measurement engine times for them (short_calls.cpp)
#   bench     gemm bench --device 0: cuda_tiled, cublas, cublaslt against cuBLAS (f32)
#   transpose gemm_omatcopy of a 16384^2 f32 matrix on device memory (TRANSPOSE_N sets n):
#             cuda_tiled's tiled kernel and its copy kernel, cuBLAS's geam through gemm and
#             directly, against cudaMemcpyAsync device to device, in GB/s and as a share of the
#             copy's (transpose.cpp)
#   spmm      gemm_spmm_csr of a 16384^2 f32 CSR at 0.1, 1, 5, 10 and 25 % density times a
#             16384 x 64 row-major B, and SpMV at 1 % (SPMM_N and SPMM_COLS set the sizes):
#             cuda_tiled and cusparse through gemm against cuSPARSE called directly and cuBLAS's
#             dense GEMM on the same A stored dense, in GFLOP/s and as a share of cuSPARSE's
#             (spmm.cpp)
#   grouped   64 small GEMMs of different shapes: a loop of cuBLAS calls, cuBLAS's grouped
#             call, gemm_ex_grouped and a loop of gemm_ex (grouped_batch.cpp)
#   epilogue  bias + ReLU/GELU (+ aux) and GELU's backward form with the bias gradient, bf16:
#             cuBLASLt's fused epilogue against cuBLAS plus the library's pass (epilogue.cpp);
#             then examples/fc_layer --bench (its checks on the GPU, fused against unfused),
#             then gemm tune --shapes on four epilogue keys and gemm tune --verify on them
#   complex   gemm bench in c32 and c64: cublas and auto on device pointers, and cublas,
#             cblas and cpu_omp on host pointers
#   sweep     the largest cuda_tiled f32 configurations by id at 4096^3 and 8192^3, TN and NT
#   wgmma     cuda_tiled's Hopper kernels: HGMMA in their SASS (HMMA in the skinny kernels'),
#             compute-sanitizer memcheck and racecheck on their test cases, then gemm bench
#             against cuBLAS and cuBLASLt: bf16 and f16 with C in f32, every op pair at 4096^3
#             and 8192^3, bf16 (C bf16) NT and TN at 1024^3 and 2048^3, small bf16 shapes
#             against the wmma kernel, and bf16 NN and NT where C is most of the work
#             (4096x4096x64, x16) and at 1024^3 .. 8192^3
#   tf32      the Hopper kernels for f32 through TF32 (GEMM_ALLOW_TF32=1): compute-sanitizer
#             memcheck and racecheck on their test suite, then gemm bench row-major at 4096^3
#             and 8192^3, every op pair (NT reads both operands as stored, the others copy one
#             or both along k first), and NT on decode shapes, against cuBLAS and cuBLASLt with
#             TF32 allowed
#   fp8       cuda_tiled's FP8 kernels: HGMMA with E4M3 and E5M2 in their SASS, and no local
#             memory; compute-sanitizer memcheck and racecheck on their test case; gemm bench
#             --dtype e4m3 (C bf16) column-major TN (row-major X W^T) at 4096^3 and 8192^3, the
#             FP8 ids and cuda_tiled's default against cuBLASLt; the decode shapes (1 to 128 rows
#             of X, n and k 4096 and 14336, row-major X W^T) with the skinny FP8 ids, each one's
#             geometric mean against cuBLASLt; fp8_accuracy.cpp: the error of cuda_tiled's kernel
#             and cuBLASLt's against the exact sum at k = 1024, 4096, 16384
#   fp8block  block-scaled e4m3 (C bf16, --scale block: A 1x128, B 128x128) against cuBLASLt's
#             per-tensor form (cuBLASLt has no block-scaled kernel on sm_90): column-major TN at
#             4096^3 and 8192^3, cuda_tiled's default and its FP8 ids; then row-major X W^T on the
#             DeepSeek-V3 shapes (m = 64, 512, 4096 against n x k = 2112x7168, 24576x1536,
#             32768x512, 7168x16384, 4096x7168, 7168x2048), each row's TFLOP/s and GB/s
#   decode    bf16 decode shapes (m = 1..128 rows of X, n and k 4096 and 14336) in both weight
#             layouts, row-major X W^T (NT: W stored (out, in)) and X W (NN: W stored (in, out)),
#             DECODE_OPS narrows them: cuda_tiled's default against cuBLAS and cuBLASLt, and for
#             NT the Hopper kernels that split k (256x16, 128x16, 256x64, 128x64, 64x128 and
#             128x128 tiles) and the skinny kernels (16x8 and 32x8 for m up to 8, 16x32 up to 32),
#             for NN the skinny kernels that read W along its rows (_nn, 16 to 64 rows of C^T a
#             block, for m up to 8 and up to 32); DECODE_DTYPE=f16 times f16; DECODE_LAYOUT=col
#             times the column-major mirrors of those layouts instead (the same shapes with C of m
#             rows: TN for NT, TT for NN, which the skinny kernels compute as C^T): cuda_tiled's
#             default against cuBLAS and cuBLASLt, and every skinny id that reads the mirror
#             forced by id (16x8, 32x8, 16x16 and 16x32 for TN; the NN run's _nn ids for TT), summary
#             lines "decode col TN, ..."; DECODE_OPS="TN TT" times X stored along its short side
#             (X stored k x m, row-major: TN with W (in, out) by the _nn ids, TT with W (out, in)
#             by the ids without a suffix), with DECODE_LAYOUT=col their mirrors NT and NN (the
#             column-major framework's X W with X stored m x k: NN), the same ids
#   kernels   where a call's device time goes: ncu (--clock-control none) times every kernel that
#             cuBLAS and cuda_tiled's default launch for each of KERNEL_SHAPES (bf16 row-major NT,
#             default the decode shapes 1x4096x4096 1x14336x4096 32x14336x4096 128x4096x4096
#             128x14336x14336; KERNEL_BACKENDS), with its grid (ncu_kernels.awk)
#   host_rule untuned auto on host memory (f32 squares 64..8192) against cpu_omp, cblas and
#             cublas staged, after a gemm tune that stores the machine's rates
#   untuned_auto  scripts/bench_untuned_auto.sh: untuned auto on a fresh tune cache against
#             every backend forced, f32 and f64, on pageable and page-locked host memory and on
#             device pointers; each (memory, dtype)'s worst ratio (best forced / auto) joins the
#             summary. UNTUNED_AUTO_ARGS (default "--budget-ms 300 --rounds 2", so that the
#             stage and the build fit one 10-minute call) and UNTUNED_AUTO_TIMEOUT (seconds per
#             gemm bench run, default 150) trade time for steadier figures
#   wgmma_tune  gemm tune on the default suite's bf16 device problems (the Hopper kernels among
#             the candidates), then auto against cuBLAS, cuBLASLt and cuda_tiled on that cache
#   tune      gemm tune --suite default (host and device; the machine's host-memory rates, in
#             the summary), then auto against cuBLAS
#   recorded  the documented workflow on shapes outside the suite: GEMM_RECORD while gemm
#             bench calls them through auto, gemm tune --shapes on the recorded file, then
#             auto against the cuBLAS default (odd squares NN; LLM decode and prefill NT),
#             then gemm tune --verify on the entries it stored
#   cpu       the CPU goal of the tuner on this machine's host: gemm tune with cpu_omp and cblas
#             only, then auto against the better of the two (CPU_SHAPES, CPU_DTYPES narrow it)
#   tune_host gemm tune --verbose on host-pointer f32 2048^3 and 8192^3 (every candidate)
#   measure   the measurement engine's device paths: gemm tune on device pointers (f32, bf16),
#             gemm bench with page-locked host memory, gemm_measure's own test
#   offload   host-pointer GEMMs through the offload engine on one GPU: compute-sanitizer memcheck
#             on host memory in many tiles (GEMM_OFFLOAD_MAX_DEVICE_BYTES=256K), then gemm bench
#             1024..8192 (OFFLOAD_SHAPES), f32 and f64, pageable and page-locked memory, cublas
#             (offloaded) and cpu_omp against cublasxt (OFFLOAD_BACKENDS), and cuBLAS on device
#             memory at 4096^3 and 8192^3 (the compute floor); OFFLOAD_TILES="2048x2048 ..." also
#             times those tile sizes (GEMM_OFFLOAD_TILE) at 4096^3 and 8192^3
#   offload2  host-pointer GEMMs spread over two GPUs (needs two): cublas offloaded to GPU 0
#             alone (GEMM_OFFLOAD_DEVICES=0) and to GPUs 0 and 1 (the default, every device),
#             against cublasxt on both (GEMM_XT_DEVICES=0,1), f32 pageable and page-locked,
#             4096, 8192 and 16384 (OFFLOAD2_SHAPES)
#   xt        cublasxt on host memory, f32: against cublas offloaded to one GPU, and GPU 0 alone
#             against GPUs 0 and 1 (xt_scaling.cpp); with XT_FOOTPRINT=1 also the device
#             memory it holds per block dimension (xt_footprint.cpp)
#   numpy     the drop-in BLAS under an unchanged NumPy program: Debian 12's python3.11 and
#             python3-numpy (linked to libblas.so.3, here the carried OpenBLAS), unpacked from
#             .deps/python/ (`apt-get download python3.11-minimal libpython3.11-minimal
#             libpython3.11-stdlib python3-numpy`); 4096 f32 and f64 a @ b (numpy_matmul.py)
#             under LD_PRELOAD=libgemm_blas.so with untuned auto after a gemm tune that stores
#             the machine's rates, with cpu_omp forced, and without the preload (OpenBLAS)
#   python    the Python package on the GPU: `pip install .` into a venv of its own
#             (/tmp/gemm-venv), from PIP_FIND_LINKS (a folder of wheels: pip, numpy, pytest,
#             nanobind, scikit-build-core, ml_dtypes, for a host that reaches no index; `pip
#             download --only-binary=:all: --python-version 3.12 ...`) or PyPI; pytest
#             python/tests (the device tests included; CuPy and PyTorch tests skip where those
#             are not installed), then bench/device/python_device.py: gemm.matmul on bf16
#             device arrays against cublasGemmEx called directly, 4096^3 (PYTHON_N)
#   distributed  ScaLAPACK's PDGEMM over Open MPI on this host (docs/DISTRIBUTED.md): Debian 12's
#             Open MPI and ScaLAPACK unpacked from .deps/mpi/ (`apt-get download openmpi-bin
#             openmpi-common libopenmpi3 libopenmpi-dev libscalapack-openmpi2.2
#             libscalapack-openmpi-dev` and the libraries they need that the host lacks: libevent,
#             libfabric, libhwloc, libibverbs, libmunge2, libnl, libnuma1, libpciaccess0, libpmix2,
#             libpsm, librdmacm1, libucx0, libxnvctrl0), examples/distributed/pdgemm_check built
#             with its mpicc, then scripts/bench_distributed.sh at DIST_SIZES (default 8192), NN:
#             gemm with cpu_omp forced on 1, 2 and 4 ranks (beside one process's cpu_omp dgemm),
#             on 4 ranks with panels of 32 (ScaLAPACK's own), 512 and 1024 (GEMM_PBLAS_BLOCK), each
#             beside a one-process dgemm measured right before it, the system
#             OpenBLAS on 4 ranks (DIST_SYSTEM=0 leaves it out: it takes 100 s), and untuned auto
#             (which may offload to the GPU) on 1 and 2 ranks with blocks and panels of 4096
# Logs go to one archive, $OUT/logs.tgz (/tmp/logs.tgz without OUT).
# Usage: bash bench/device/run.sh [stage...]
set -uo pipefail
cd "$(dirname "$0")/../.."
stages=${*:-tests sanitize direct bench}
out=/tmp/gemm-device-logs
archive=${OUT:-/tmp}/logs.tgz
rm -rf "$out" && mkdir -p "$out"
# After every stage, so that a run stopped by a time limit still leaves what it did.
save_logs() { tar czf "$archive" -C "$out" . 2>/dev/null; }
trap save_logs EXIT
has_stage() { [[ " $stages " == *" $1 "* ]]; }
# The default suite's device problems (bench/tune_problems.cpp): row-major NN squares, odd and
# K-heavy shapes; NT skinny LLM shapes.
suite_nn="256 512 1024 2048 4096 8192 127x257x509 1000 1001x999x1003 64x64x65536 256x256x16384 4096x4096x64 4096x4096x16"
suite_nt=""
for m in 1 2 4 8 16; do suite_nt+=" ${m}x4096x4096 ${m}x11008x4096 ${m}x4096x11008"; done
# auto's ratio to the baseline (cuBLAS time / auto time, column 21) over the gemm bench CSV
# files named: "N shapes, geomean G, min M at SHAPE OPS".
auto_ratios() {
    cat "$@" 2>/dev/null |
        awk -F, '$1 == "auto" && $21 > 0 { n++; s += log($21); if (min == "" || $21 < min) { min = $21; at = $5 "x" $6 "x" $7 " " $4 } }
                 END { if (n) printf "%d shapes, geomean %.3f, min %.3f at %s", n, exp(s / n), min, at; else print "no rows" }'
}

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
export GEMM_TUNE_CACHE=$out/tune-cache.txt

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
build=build-device
start=$(date +%s)
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build $build -j $(nproc) --target gemm test_gpu test_gpu_omatcopy test_gpu_spmm test_loading >"$out/build.log" 2>&1 ||
    { grep -E 'error|Error' "$out/build.log" | head -40; exit 1; }
cmake --build $build -j $(nproc) --target gemm_cli >>"$out/build.log" 2>&1 || echo "gemm_cli did not build"
echo "build ok ($(( $(date +%s) - start )) s)"
gemm=$build/bench/gemm
summary=()
# program NAME [LIBS...]: builds bench/device/NAME.cpp against the library (and the CUDA
# libraries named) into $build/NAME. The programs take their samples the same way, by
# bench/device/sampling.hpp (a header beside them).
program() {
    local name=$1
    shift
    g++ -std=c++17 -O2 -Iapi/include -I/usr/local/cuda/include bench/device/$name.cpp \
        -L$build/api -lgemm -Wl,-rpath,$PWD/$build/api -L/usr/local/cuda/lib64 "$@" -lcudart -o $build/$name
}

if has_stage offload; then
    log="$out/sanitize_memcheck_offload.log"
    GEMM_OFFLOAD_MAX_DEVICE_BYTES=256K GEMM_TEST_BACKENDS=cublas,cuda_tiled timeout 300 compute-sanitizer \
        --tool memcheck --error-exitcode 9 $build/tests/gpu/test_gpu --no-skip -tc="gpu_offload: host memory*" >"$log" 2>&1
    summary+=("compute-sanitizer memcheck offload: rc=$?, $(grep -E 'ERROR SUMMARY' "$log" | tail -1), $(grep -E 'assertions' "$log" | tail -1)")
    save_logs
    timeout 120 $gemm bench 4096 8192 --device 0 --dtype f32,f64 --backends cublas --baseline cublas \
        --no-measure-peak >"$out/offload_device.txt" 2>&1
    summary+=("gemm bench --device 0 (the compute floor): rc=$?")
    for memory in host pinned; do
        timeout 240 $gemm bench ${OFFLOAD_SHAPES:-1024 2048 4096 8192} --memory $memory --dtype f32,f64 --layout col \
            --backends ${OFFLOAD_BACKENDS:-cublas,cpu_omp,cublasxt} --baseline cublasxt --no-measure-peak --budget-ms 1000 \
            --csv "$out/offload_$memory.csv" >"$out/offload_$memory.txt" 2>&1
        summary+=("gemm bench --memory $memory (offload): rc=$?")
        save_logs
    done
    # Other tile sizes (GEMM_OFFLOAD_TILE) at 4096^3 and 8192^3, cublas alone.
    for tile in ${OFFLOAD_TILES:-}; do
        for memory in pinned host; do
            GEMM_OFFLOAD_TILE=$tile timeout 120 $gemm bench 4096 8192 --memory $memory --dtype f32,f64 --layout col \
                --backends cublas --baseline cublas --no-measure-peak --budget-ms 600 \
                | sed "s/^cublas /cublas $tile $memory /" >>"$out/offload_tiles.txt" 2>&1
        done
    done
fi
if has_stage offload2; then
    gpus=$(nvidia-smi -L | wc -l)
    if [ "$gpus" -lt 2 ]; then
        summary+=("offload2: skipped, $gpus GPU")
    else
        for memory in host pinned; do
            for devices in 0 0,1; do
                GEMM_OFFLOAD_DEVICES=$devices GEMM_XT_DEVICES=0,1 timeout 280 $gemm bench ${OFFLOAD2_SHAPES:-4096 8192 16384} \
                    --memory $memory --dtype f32 --layout col --backends cublas,cublasxt --baseline cublasxt \
                    --no-measure-peak --budget-ms 1500 2>&1 | sed "s/^cublas /cublas[$devices] /" >>"$out/offload2_$memory.txt"
                summary+=("gemm bench --memory $memory, GEMM_OFFLOAD_DEVICES=$devices: rc=$?")
            done
            save_logs
        done
    fi
fi
if has_stage tests; then
    ctest --test-dir $build -L gpu -V --timeout ${GPU_TEST_TIMEOUT:-900} -j ${GPU_TEST_JOBS:-1} >"$out/ctest_gpu.log" 2>&1
    rc=$?
    grep -E 'test cases|assertions|tests passed|tests failed|SKIPPED' "$out/ctest_gpu.log" | tail -6
    [ $rc -eq 0 ] || grep -B2 -A12 'ERROR' "$out/ctest_gpu.log" | head -60
    summary+=("gpu tests: rc=$rc; $(grep -E 'test cases:|assertions:' "$out/ctest_gpu.log" | head -2 | tr -s ' ' | tr '\n' ' ')")
    save_logs
fi
if has_stage sanitize; then
    for tool in memcheck racecheck; do
        for b in ${SANITIZE_BACKENDS:-cuda_naive cuda_tiled}; do
            log="$out/sanitize_${tool}_$b.log"
            GEMM_TEST_BACKENDS=$b timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
                $build/tests/gpu/test_gpu -tc="${SANITIZE_CASES:-gpu: correctness matrix*,gpu: cuda_tiled every variant*}" >"$log" 2>&1
            rc=$?
            summary+=("compute-sanitizer $tool $b: rc=$rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1), $(grep -E 'assertions' "$log" | tail -1)")
            save_logs
        done
    done
fi
if has_stage direct; then
    # The host cost twice: a host's speed drifts between runs by as much as the costs measured.
    program direct_vs_gemm -lcublas -lcublasLt && timeout 120 $build/direct_vs_gemm | tee "$out/direct_vs_gemm.txt" &&
        timeout 60 $build/direct_vs_gemm --host-only | tee -a "$out/direct_vs_gemm.txt"
    while read -r line; do
        summary+=("host cost: $(sed -E 's/.*direct cublasSgemm ([0-9.]+) us; through gemm: plan run ([-+0-9.]+) us, forced cublas ([-+0-9.]+) us, auto on a tune cache hit \(([a-z_]+)\) ([-+0-9.]+) us.*check_pointers ([-+0-9.]+) us/direct \1 us: plan \2, forced \3, auto hit (\4) \5, checked plan \6/' <<<"$line")")
    done < <(grep '^host cost per call' "$out/direct_vs_gemm.txt")
    cmake --build $build --target gemm_dispatch_cost >>"$out/build.log" 2>&1 &&
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $build/bench/gemm_dispatch_cost | tee -a "$out/direct_vs_gemm.txt"
fi
if has_stage transpose; then
    program transpose -lcublas && timeout 300 $build/transpose ${TRANSPOSE_N:-16384} | tee "$out/transpose.txt"
    summary+=("transpose: rc=$?; $(grep -E '^cuda_tiled T' "$out/transpose.txt" | tr -s ' ')")
    save_logs
fi
if has_stage spmm; then
    program spmm -lcusparse && timeout 600 $build/spmm ${SPMM_N:-16384} ${SPMM_COLS:-64} | tee "$out/spmm.txt"
    summary+=("spmm: rc=$?; $(grep -E '^summary:' "$out/spmm.txt" | sed 's/^summary: //')")
    save_logs
fi
if has_stage short; then
    program short_calls -lcublas && timeout 300 $build/short_calls | tee "$out/short_calls.txt"
    summary+=("short_calls: rc=$?")
fi
if has_stage bench; then
    $gemm bench 1024 2048 4096 8192 --device 0 --dtype f32 --layout col --ops NN,NT,TN,TT \
        --backends cublas,cublaslt,cuda_tiled --baseline cublas --csv "$out/bench_f32.csv" \
        >"$out/bench_f32.txt" 2>&1
    summary+=("gemm bench --device 0 f32: rc=$?")
fi
if has_stage grouped; then
    program grouped_batch -lcublas && timeout 120 $build/grouped_batch | tee "$out/grouped_batch.txt"
    summary+=("grouped batch: rc=$?")
fi
if has_stage epilogue; then
    program epilogue && timeout 180 $build/epilogue | tee "$out/epilogue.txt"
    summary+=("epilogue: rc=$?")
    cmake --build $build --target fc_layer >>"$out/build.log" 2>&1 &&
        timeout 300 $build/examples/fc_layer --bench | tee "$out/fc_layer.txt"
    summary+=("examples/fc_layer --bench: rc=$?")
    # Epilogue classes tuned as GEMM_RECORD writes them (the canonical problem of a row-major
    # layer: bias per column is bias(rows)), then checked again with --verify.
    keys="$out/epilogue_keys.txt"
    for e in "TN 4096 4096 4096 relu+bias(rows)" "TN 14336 4096 4096 gelu+bias(rows)+aux" \
             "NN 14336 4096 4096 gelu_backward" "NN 14336 4096 4096 gelu_backward+bias_grad(rows)"; do
        set -- $e
        echo "bf16 bf16 $1 $2 $3 $4 batch=1 ld=tight align=16 space=device beta=0 epilogue=$5"
    done >"$keys"
    timeout 300 $gemm tune --shapes "$keys" --device 0 --budget-ms ${GEMM_DEVICE_TUNE_BUDGET_MS:-400} \
        --cache "$out/epilogue-cache.txt" >"$out/epilogue_tune.txt" 2>&1
    summary+=("gemm tune epilogue keys: rc=$?")
    timeout 300 $gemm tune --verify --device 0 --budget-ms ${GEMM_DEVICE_TUNE_BUDGET_MS:-400} \
        --cache "$out/epilogue-cache.txt" >"$out/epilogue_verify.txt" 2>&1
    summary+=("gemm tune --verify epilogue keys: rc=$?")
    grep -E "^[0-9]+x|^#.*(tuned|speed-up)" "$out/epilogue_tune.txt"
    tail -6 "$out/epilogue_verify.txt"
fi
if has_stage complex; then
    # Complex GEMM: cublas (Cgemm/Zgemm), cublaslt and auto on device pointers, and on host pointers
    # against the CPU backends.
    $gemm bench 1024 4096 --device 0 --dtype c32,c64 --layout col --ops NN,CN --backends cublas,cublaslt,auto \
        --baseline cublas --csv "$out/bench_complex_device.csv" >"$out/bench_complex_device.txt" 2>&1
    summary+=("gemm bench --device 0 c32,c64: rc=$?")
    summary+=("$(awk -F, 'NR > 1 { printf "%s %s %s %sx%sx%s %.0f GFLOP/s x%s; ", $1, $2, $4, $5, $6, $7, $18, $21 }' \
        "$out/bench_complex_device.csv" 2>/dev/null)")
    $gemm bench 2048 --dtype c32,c64 --layout col --backends cublas,cblas,cpu_omp --baseline cblas \
        --csv "$out/bench_complex_host.csv" >"$out/bench_complex_host.txt" 2>&1
    summary+=("gemm bench host c32,c64: rc=$?")
    save_logs
fi
if has_stage sweep; then
    ids=""
    for t in 128x128x16_8x8_s3 128x128x8_8x8_s3 128x64x16_8x8_s3; do ids+=",cuda_tiled:tiled_f32_${t}_a4"; done
    timeout 200 $gemm bench 4096 8192 --device 0 --dtype f32 --layout col --ops TN,NT \
        --backends cublas$ids --baseline cublas --csv "$out/sweep_f32.csv" >"$out/sweep_f32.txt" 2>&1
    summary+=("cuda_tiled sweep: rc=$?")
    save_logs
fi
if has_stage wgmma; then
    obj=$(find $build -name wgmma_launch.cu.o | head -1)
    cuobjdump -sass "$obj" >"$out/wgmma_sass.txt" 2>&1
    summary+=("wgmma SASS: $(grep -c HGMMA "$out/wgmma_sass.txt") HGMMA, $(grep -c UTMALDG "$out/wgmma_sass.txt") UTMALDG, $(grep -cE 'LDL|STL' "$out/wgmma_sass.txt") LDL/STL")
    obj=$(find $build -name skinny_launch.cu.o | head -1)
    cuobjdump -sass "$obj" >"$out/skinny_sass.txt" 2>&1
    summary+=("skinny SASS: $(grep -c 'HMMA.16816' "$out/skinny_sass.txt") HMMA, $(grep -c 'LDG.E.128' "$out/skinny_sass.txt") LDG.128, $(grep -cE 'LDL|STL' "$out/skinny_sass.txt") LDL/STL")
    for tool in memcheck racecheck; do
        log="$out/sanitize_${tool}_wgmma.log"
        GEMM_TEST_BACKENDS=cuda_tiled timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
            $build/tests/gpu/test_gpu -tc="gpu: cuda_tiled wgmma*,gpu: cuda_tiled skinny*" >"$log" 2>&1
        summary+=("compute-sanitizer $tool wgmma: rc=$?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1), $(grep -E 'assertions' "$log" | tail -1)")
    done
    wg="cuda_tiled:wgmma_bf16_128x128x64_s6,cuda_tiled:wgmma_bf16_256x128x64_s4"
    timeout 240 $gemm bench 4096 8192 --device 0 --dtype 'bf16>f32' --layout row --ops NN,NT,TN,TT \
        --backends cublas,cublaslt,$wg --baseline cublas --no-measure-peak >>"$out/wgmma_bench.txt" 2>&1
    summary+=("gemm bench bf16>f32 wgmma: rc=$?")
    timeout 240 $gemm bench 4096 8192 --device 0 --dtype 'f16>f32' --layout row --ops NN,NT,TN,TT --backends \
        cublas,cublaslt,${wg//bf16/f16} --baseline cublas --no-measure-peak >>"$out/wgmma_bench.txt" 2>&1
    summary+=("gemm bench f16>f32 wgmma: rc=$?")
    timeout 120 $gemm bench 1024 2048 --device 0 --dtype bf16 --layout row --ops NT,TN \
        --backends cublas,cublaslt,$wg --baseline cublas --no-measure-peak >>"$out/wgmma_bench.txt" 2>&1
    summary+=("gemm bench bf16 wgmma: rc=$?")
    # Small shapes: the Hopper kernel against the wmma one (cuda_tiled's default chooses).
    timeout 120 $gemm bench 64 128 256 512 --device 0 --dtype bf16 --layout row --ops NT --backends \
        cublas,cuda_tiled:mma_bf16_64x64,$wg --baseline cublas --no-measure-peak >>"$out/wgmma_bench.txt" 2>&1
    summary+=("gemm bench bf16 small wgmma: rc=$?")
    # Where C is most of the work (k of one stage or less), then squares: C's stores, and the
    # split count cuda_tiled's default takes (1024^3: unsplit).
    timeout 120 $gemm bench 4096x4096x64 4096x4096x16 1024 4096 8192 --device 0 --dtype bf16 --layout row \
        --ops NN,NT --backends cublas,cuda_tiled,$wg --baseline cublas --no-measure-peak --rounds 2 \
        >>"$out/wgmma_bench.txt" 2>&1
    summary+=("gemm bench bf16 C-heavy and squares: rc=$?")
    save_logs
fi
if has_stage tf32; then
    for tool in memcheck racecheck; do
        log="$out/sanitize_${tool}_tf32.log"
        GEMM_ALLOW_TF32=1 GEMM_VERBOSE=1 GEMM_TEST_BACKENDS=cuda_tiled timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
            $build/tests/gpu/test_gpu --no-skip --test-suite=gpu_tf32 >"$log" 2>&1
        summary+=("compute-sanitizer $tool tf32: rc=$?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1), $(grep -E 'assertions' "$log" | tail -1)")
    done
    tf="cuda_tiled:wgmma_tf32_128x128x32_s6,cuda_tiled:wgmma_tf32_256x128x32_s4"
    GEMM_ALLOW_TF32=1 timeout 300 $gemm bench 4096 8192 --device 0 --dtype f32 --layout row --ops NN,NT,TN,TT \
        --backends cublas,cublaslt,cuda_tiled,$tf --baseline cublas --no-measure-peak >"$out/tf32_bench.txt" 2>&1
    summary+=("gemm bench tf32: rc=$?")
    GEMM_ALLOW_TF32=1 timeout 240 $gemm bench 1x4096x4096 8x14336x4096 32x4096x14336 128x14336x14336 --device 0 \
        --dtype f32 --layout row --ops NT --backends cublas,cublaslt,cuda_tiled --baseline cublas \
        --no-measure-peak >>"$out/tf32_bench.txt" 2>&1
    summary+=("gemm bench tf32 decode: rc=$?")
    save_logs
fi
if has_stage fp8; then
    obj=$(find $build -name wgmma_launch.cu.o | head -1)
    cuobjdump -sass "$obj" >"$out/wgmma_sass.txt" 2>&1
    # The FP8 kernels are the functions whose (mangled) names hold __nv_fp8.
    summary+=("$(awk '/Function :/ { fp8 = /__nv_fp8/; kernels += fp8 }
                      fp8 && /HGMMA/ { h++ } fp8 && /HGMMA.*E4M3/ { e4++ } fp8 && /HGMMA.*E5M2/ { e5++ }
                      fp8 && /LDL|STL/ { local++ }
                      END { printf "fp8 SASS: %d kernels, %d HGMMA (%d E4M3, %d E5M2), %d LDL/STL",
                                   kernels, h, e4, e5, local }' "$out/wgmma_sass.txt")")
    for tool in memcheck racecheck; do
        log="$out/sanitize_${tool}_fp8.log"
        GEMM_TEST_BACKENDS=cuda_tiled timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
            $build/tests/gpu/test_gpu -tc="gpu: cuda_tiled FP8*" >"$log" 2>&1
        summary+=("compute-sanitizer $tool fp8: rc=$?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1), $(grep -E 'assertions' "$log" | tail -1)")
    done
    f8="cuda_tiled:wgmma_e4m3_128x128x128_s6,cuda_tiled:wgmma_e4m3_256x64x128_s5"
    timeout 300 $gemm bench 4096 8192 --device 0 --dtype e4m3 --layout col --ops TN \
        --backends cublaslt,cuda_tiled,$f8 --baseline cublaslt --no-measure-peak >"$out/fp8_bench.txt" 2>&1
    summary+=("gemm bench e4m3 TN: rc=$?")
    # FP8 decode: row-major X W^T (NT, the TN form) of 1 to 128 rows against cuBLASLt, the
    # default and each skinny id (those that take the shape).
    shapes=""
    for m in 1 8 32 128; do for n in 4096 14336; do for k in 4096 14336; do shapes+=" ${m}x${n}x${k}"; done; done; done
    skinny=""
    for t in 16x8 32x8 16x16 16x32; do skinny+=",cuda_tiled:skinny_e4m3_$t"; done
    timeout 300 $gemm bench $shapes --device 0 --dtype e4m3 --layout row --ops NT \
        --backends cublaslt,cuda_tiled$skinny --baseline cublaslt --no-measure-peak >"$out/fp8_decode.txt" 2>&1
    summary+=("gemm bench e4m3 decode NT: rc=$?")
    summary+=("$(awk '!/^#/ && $1 ~ /^cuda_tiled/ && $11 + 0 > 0 { r[$1] += log($14); c[$1]++ }
                      END { for (b in r) printf "%s %.3f (%d)  ", b, exp(r[b] / c[b]), c[b] }' "$out/fp8_decode.txt")")
    program fp8_accuracy && timeout 240 $build/fp8_accuracy 1024 4096 16384 >"$out/fp8_accuracy.txt" 2>&1
    summary+=("fp8_accuracy: rc=$?")
    while read -r line; do summary+=("  $line"); done <"$out/fp8_accuracy.txt"
    save_logs
fi
if has_stage fp8block; then
    f8="cuda_tiled:wgmma_e4m3_128x128x128_s6,cuda_tiled:wgmma_e4m3_256x64x128_s5"
    timeout 200 $gemm bench 4096 8192 --device 0 --dtype e4m3 --layout col --ops TN --scale tensor \
        --backends cublaslt,cuda_tiled --baseline cublaslt --no-measure-peak >"$out/fp8block_bench.txt" 2>&1
    summary+=("gemm bench e4m3 TN --scale tensor: rc=$?")
    timeout 200 $gemm bench 4096 8192 --device 0 --dtype e4m3 --layout col --ops TN --scale block \
        --backends cuda_tiled,$f8 --baseline cuda_tiled --no-measure-peak >>"$out/fp8block_bench.txt" 2>&1
    summary+=("gemm bench e4m3 TN --scale block: rc=$?")
    shapes=""
    for m in 64 512 4096; do
        for nk in 2112x7168 24576x1536 32768x512 7168x16384 4096x7168 7168x2048; do shapes+=" ${m}x$nk"; done
    done
    timeout 300 $gemm bench $shapes --device 0 --dtype e4m3 --layout row --ops NT --scale tensor \
        --backends cublaslt --baseline cublaslt --no-measure-peak >"$out/fp8block_deepseek.txt" 2>&1
    summary+=("gemm bench e4m3 DeepSeek-V3 shapes --scale tensor (cublaslt): rc=$?")
    timeout 300 $gemm bench $shapes --device 0 --dtype e4m3 --layout row --ops NT --scale block \
        --backends cuda_tiled --baseline cuda_tiled --no-measure-peak >>"$out/fp8block_deepseek.txt" 2>&1
    summary+=("gemm bench e4m3 DeepSeek-V3 shapes --scale block (cuda_tiled): rc=$?")
    save_logs
fi
if has_stage decode; then
    # Decode shapes in bf16, or DECODE_DTYPE, in both weight layouts (DECODE_OPS, row-major):
    # NT is X W^T with W stored (out, in), NN is X W with W stored (in, out). NT times the Hopper
    # kernels that split k, 256x16, 128x16, 256x64, 128x64, 64x128 and 128x128 tiles, and the
    # skinny kernels (up to 8 and up to 32 rows of X) too; NN the skinny kernels that read W
    # along its rows (_nn: blocks of 16, 32 and 64 rows of C^T) and the same tiles; each layout
    # against cuBLAS, then the geometric mean of the ratios of cuda_tiled's default and of each
    # id over the shapes it computes.
    shapes=""
    for m in 1 8 32 128; do for n in 4096 14336; do for k in 4096 14336; do shapes+=" ${m}x${n}x${k}"; done; done; done
    dt=${DECODE_DTYPE:-bf16}
    wgmma=""
    for t in 256x16x64_s6 128x16x64_s11 256x64x64_s5 128x64x64_s8 64x128x64_s8 128x128x64_s6; do wgmma+=",cuda_tiled:wgmma_${dt}_${t}_splitk"; done
    tiles="$wgmma,cuda_tiled:skinny_${dt}_16x8,cuda_tiled:skinny_${dt}_32x8,cuda_tiled:skinny_${dt}_16x32"
    along_m=""
    for t in 16x8 32x8 64x8 16x32 32x32 64x32; do along_m+=",cuda_tiled:skinny_${dt}_${t}_nn"; done
    # DECODE_LAYOUT=col: each layout's column-major mirror, C of m rows (C^T = op(B)^T op(A)^T
    # of the row-major call's canonical form: both ops flipped), with the skinny ids that compute
    # it. TN and TT: X stored along its short side (k x m row-major; m x k column-major, NT and
    # NN), read by the _nn ids (W (in, out)) and the ids without a suffix (W (out, in)). Every op
    # pair times the tiles that split k as well.
    layout=${DECODE_LAYOUT:-row}
    along_k=""
    for t in 16x8 32x8 16x16 16x32; do along_k+=",cuda_tiled:skinny_${dt}_${t}"; done
    for ops in ${DECODE_OPS:-NT NN}; do
        case $ops in
        NT) ids=$tiles mirror=TN ;;
        NN) ids=$along_m mirror=TT ;;
        TN) ids=$along_m mirror=NT ;;
        TT) ids=$along_k mirror=NN ;;
        *) summary+=("decode: DECODE_OPS $ops is none of NT NN TN TT"); continue ;;
        esac
        run_ops=$ops tag=$ops
        if [ "$layout" = col ]; then
            [ "$ops" = NT ] && ids=$along_k
            run_ops=$mirror tag="col $mirror"
        fi
        # The tiles on every other op pair too: where they beat the skinny ids sets the rule.
        [ "$ids" = "$tiles" ] || ids+=$wgmma
        file=decode_${tag// /_}
        timeout 300 $gemm bench $shapes --device 0 --dtype $dt --layout $layout --ops $run_ops \
            --backends cublas,cublaslt,cuda_tiled$ids --baseline cublas --no-measure-peak \
            --csv "$out/$file.csv" >"$out/${file/decode_/decode_bench_}.txt" 2>&1
        summary+=("gemm bench decode $dt $tag: rc=$?")
        for backend in cuda_tiled ${ids//,/ }; do
            summary+=("$(awk -F, -v b=$backend -v o="$tag" '$1 == b && $21 > 0 { s += log($21); n++; if (!lo || $21 < lo) lo = $21 }
                END { if (n) printf "decode %s, %s against cuBLAS: geometric mean %.3f, lowest %.3f over %d shapes", o, b, exp(s / n), lo, n }' \
                "$out/$file.csv" 2>/dev/null)")
        done
        save_logs
    done
fi
if has_stage kernels; then
    for shape in ${KERNEL_SHAPES:-1x4096x4096 1x14336x4096 32x14336x4096 128x4096x4096 128x14336x14336}; do
        timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --csv \
            $gemm bench $shape --device 0 --dtype bf16 --layout row --ops NT --backends ${KERNEL_BACKENDS:-cublas,cuda_tiled} \
            --baseline cublas --no-measure-peak --warmup 1 --reps 2 --rounds 1 \
            >"$out/kernels_$shape.csv" 2>"$out/kernels_$shape.err"
        summary+=("ncu kernels of $shape: rc=$?")
        while read -r line; do summary+=("$line"); done < <(awk -f bench/device/ncu_kernels.awk "$out/kernels_$shape.csv")
        save_logs
    done
fi
if has_stage host_rule; then
    # Untuned auto on host memory: tune one shape far from the squares (storing the machine's
    # rates), then auto on squares from 64 to 8192 against cpu_omp, cblas and cublas (offloaded),
    # then one traced call of auto per square (what it ran; the bench itself untraced).
    cache="$out/tune-cache-host-rule.txt"
    timeout 120 $gemm tune 2000x5x2000 --dtype f32 --layout col --cache "$cache" >"$out/host_rule_tune.txt" 2>&1
    summary+=("gemm tune 2000x5x2000 (the host-memory rates): rc=$?")
    while read -r line; do summary+=("$line"); done < <(grep '^rates ' "$cache")
    GEMM_TUNE_CACHE="$cache" timeout 400 $gemm bench 64 128 256 512 1024 2048 4096 8192 --dtype f32 \
        --layout col --backends auto,cpu_omp,cblas,cublas --baseline auto --reps 20 --budget-ms 500 \
        --no-measure-peak >"$out/host_rule_bench.txt" 2>&1
    summary+=("gemm bench host memory, untuned auto: rc=$?")
    GEMM_TUNE_CACHE="$cache" GEMM_VERBOSE=1 timeout 60 $gemm bench 64 128 256 512 1024 2048 4096 8192 --dtype f32 \
        --layout col --backends auto --baseline auto --warmup 0 --reps 1 --rounds 1 --no-measure-peak \
        2>&1 >/dev/null | grep 'backend=' | sed 's/ time=.*//' | uniq >"$out/host_rule_trace.txt"
    save_logs
fi
if has_stage untuned_auto; then
    # The script makes its own fresh cache (GEMM_TUNE_CACHE above is not used) and prints its
    # table of worst ratios last, after the "== untuned auto" line.
    LOG_DIR="$out/untuned_auto" BENCH_ARGS=${UNTUNED_AUTO_ARGS:---budget-ms 300 --rounds 2} \
        BENCH_TIMEOUT=${UNTUNED_AUTO_TIMEOUT:-150} bash scripts/bench_untuned_auto.sh $gemm \
        >"$out/untuned_auto.txt" 2>"$out/untuned_auto_progress.txt"
    summary+=("scripts/bench_untuned_auto.sh (untuned auto against the best backend forced): rc=$?")
    while read -r line; do summary+=("  $line"); done < <(sed -n '/^== untuned auto/,$p' "$out/untuned_auto.txt")
    save_logs
fi
if has_stage wgmma_tune; then
    # Whether auto takes the Hopper kernels where they win: the default suite's bf16 device
    # problems (bench/tune_problems.cpp: row-major NN squares, odd and K-heavy shapes, NT skinny
    # LLM shapes) tuned into a cache of their own, then auto against cuBLAS, cuBLASLt's and
    # cuda_tiled's defaults on that cache; the summary names the problems cuda_tiled won.
    cache="$out/tune-cache-wgmma.txt"
    rm -f "$cache"
    : >"$out/wgmma_tune.txt"
    for ops in NN NT; do
        [ $ops = NN ] && shapes=$suite_nn || shapes=$suite_nt
        timeout 250 $gemm tune $shapes --device 0 --dtype bf16 --layout row --ops $ops --budget-ms 400 \
            --cache "$cache" >>"$out/wgmma_tune.txt" 2>&1
        summary+=("gemm tune bf16 $ops (the suite's device problems): rc=$?")
        GEMM_TUNE_CACHE="$cache" timeout 120 $gemm bench $shapes --device 0 --dtype bf16 --layout row --ops $ops \
            --backends auto,cublas,cublaslt,cuda_tiled --baseline cublas --no-measure-peak \
            --csv "$out/wgmma_auto_$ops.csv" >"$out/wgmma_auto_$ops.txt" 2>&1
        summary+=("auto vs cublas after the tune, $ops: rc=$?")
    done
    while read -r line; do summary+=("cuda_tiled won: $line"); done < <(grep ' | cuda_tiled ' "$cache" | cut -d'|' -f1-3)
    summary+=("auto vs cublas bf16: $(auto_ratios "$out"/wgmma_auto_N?.csv)")
    save_logs
fi
if has_stage tune; then
    $gemm tune --suite default --budget-ms ${GEMM_DEVICE_TUNE_BUDGET_MS:-1000} >"$out/tune.txt" 2>"$out/tune_progress.txt"
    summary+=("gemm tune --suite default: rc=$? ($(grep -c '' "$GEMM_TUNE_CACHE") cache lines)")
    while read -r line; do summary+=("$line"); done < <(grep '^rates ' "$GEMM_TUNE_CACHE")
    save_logs
    # auto (from the cache just written) against the cuBLAS default, on device pointers, on
    # every device shape of the suite (bench/tune_problems.cpp).
    for dtype in f32 bf16; do
        timeout 120 $gemm bench $suite_nn --device 0 --dtype $dtype \
            --ops NN --backends auto,cublas --baseline cublas --csv "$out/auto_${dtype}_nn.csv" \
            >"$out/auto_${dtype}_nn.txt" 2>&1
        timeout 120 $gemm bench $suite_nt --device 0 --dtype $dtype \
            --ops NT --backends auto,cublas --baseline cublas --csv "$out/auto_${dtype}_nt.csv" \
            >"$out/auto_${dtype}_nt.txt" 2>&1
        summary+=("auto vs cublas $dtype: $(auto_ratios "$out/auto_${dtype}_nn.csv" "$out/auto_${dtype}_nt.csv")")
        # What auto ran where it fell under 0.98, and why: one traced call of each such shape
        # (the bench's reference check is traced too, forced onto cpu_ref: skip it).
        while read -r ops m n k ratio; do
            ran=$(GEMM_VERBOSE=1 timeout 30 $gemm bench ${m}x${n}x${k} --device 0 --dtype $dtype --ops $ops \
                --backends auto --baseline auto --reps 1 --rounds 1 2>&1 |
                grep -m1 " ops=$ops m=$m n=$n k=$k .*why=\"auto:" | grep -o 'backend=[^ ]* variant=[^ ]*\|why="[^"]*"' |
                tr '\n' ' ')
            summary+=("  under 0.98: $dtype $ops ${m}x${n}x${k} $ratio, auto ran ${ran:-?}")
        done < <(cat "$out/auto_${dtype}_nn.csv" "$out/auto_${dtype}_nt.csv" 2>/dev/null |
                 awk -F, '$1 == "auto" && $21 > 0 && $21 < 0.98 { print $4, $5, $6, $7, $21 }')
        save_logs
    done
fi

if has_stage recorded; then
    odd="100 300 777 1500 3000"
    llm="1x4096x4096 8x14336x4096 32x4096x14336 512x4096x4096 2048x14336x4096"
    record=$out/recorded_shapes.txt
    for dtype in f32 bf16; do
        GEMM_RECORD=$record timeout 120 $gemm bench $odd --device 0 --dtype $dtype --ops NN --backends auto \
            --reps 1 --rounds 1 --no-measure-peak >/dev/null 2>&1
        GEMM_RECORD=$record timeout 120 $gemm bench $llm --device 0 --dtype $dtype --ops NT --backends auto \
            --reps 1 --rounds 1 --no-measure-peak >/dev/null 2>&1
    done
    summary+=("recorded: $(grep -c 'space=device' "$record" 2>/dev/null) device shapes")
    $gemm tune --shapes "$record" --budget-ms ${GEMM_DEVICE_TUNE_BUDGET_MS:-400} >"$out/recorded_tune.txt" 2>&1
    summary+=("gemm tune --shapes (recorded): rc=$?")
    for dtype in f32 bf16; do
        timeout 120 $gemm bench $odd --device 0 --dtype $dtype --ops NN --backends auto,cublas --baseline cublas \
            --csv "$out/recorded_${dtype}_nn.csv" >"$out/recorded_${dtype}_nn.txt" 2>&1
        timeout 120 $gemm bench $llm --device 0 --dtype $dtype --ops NT --backends auto,cublas --baseline cublas \
            --csv "$out/recorded_${dtype}_nt.csv" >"$out/recorded_${dtype}_nt.txt" 2>&1
        summary+=("recorded, auto vs cublas $dtype: $(cat "$out/recorded_${dtype}_nn.csv" "$out/recorded_${dtype}_nt.csv" 2>/dev/null |
            awk -F, '$1 == "auto" && $21 > 0 { n++; s += log($21); if (min == "" || $21 < min) { min = $21; at = $5 "x" $6 "x" $7 " " $4 }
                                               printf "%s %s %sx%sx%s %.3f; ", $2, $4, $5, $6, $7, $21 > "/dev/stderr" }
                     END { if (n) printf "%d shapes, geomean %.3f, min %.3f at %s", n, exp(s / n), min, at; else print "no rows" }' 2>>"$out/recorded_ratios.txt")")
    done
    summary+=("  ratios: $(cat "$out/recorded_ratios.txt" 2>/dev/null)")
    # The winners stored for them, measured again against the cuBLAS default.
    $gemm tune --verify --budget-ms ${GEMM_DEVICE_TUNE_BUDGET_MS:-400} >"$out/recorded_verify.txt" 2>&1
    summary+=("gemm tune --verify (recorded): rc=$?; $(grep '^# [0-9]* entr' "$out/recorded_verify.txt")")
    save_logs
fi
if has_stage cpu; then
    # Its own cache, so that the device stages' host entries (GPU winners) do not mix in.
    cpu_cache=$out/tune-cache-cpu.txt
    cpu_shapes=${CPU_SHAPES:-256 512 1024 2048 4096 16x4096x4096 127x257x509 1x4096x11008}
    $gemm tune $cpu_shapes --dtype ${CPU_DTYPES:-f32,f64} --layout col --backends cpu_omp,cblas \
        --cache "$cpu_cache" >"$out/cpu_tune.txt" 2>"$out/cpu_tune_progress.txt"
    summary+=("gemm tune (host, cpu_omp and cblas): rc=$?")
    GEMM_TUNE_CACHE=$cpu_cache timeout 300 $gemm bench $cpu_shapes --dtype ${CPU_DTYPES:-f32,f64} \
        --layout col --backends auto,cpu_omp,cblas --baseline cblas --no-measure-peak --rounds 6 \
        --reps 24 --budget-ms 3000 --csv "$out/cpu_auto.csv" >"$out/cpu_auto.txt" 2>&1
    # auto's median (column 16) against the faster of cpu_omp's and cblas's, per problem.
    summary+=("auto vs better of cpu_omp, cblas: $(awk -F, 'NR > 1 && $16 > 0 { key = $2 " " $5 "x" $6 "x" $7; t[key, $1] = $16; keys[key] = 1 }
        END { for (key in keys) { best = t[key, "cpu_omp"]; if (t[key, "cblas"] && (!best || t[key, "cblas"] < best)) best = t[key, "cblas"]
                  if (!t[key, "auto"] || !best) continue; r = best / t[key, "auto"]; n++; s += log(r); if (r >= 0.95) ok++
                  if (min == "" || r < min) { min = r; at = key } }
              if (n) printf "within 5%% on %d of %d, geomean %.3f, min %.3f at %s", ok, n, exp(s / n), min, at; else print "no rows" }' "$out/cpu_auto.csv")")
    save_logs
fi
if has_stage tune_host; then
    # Host-pointer problems: every CPU and GPU candidate, cublasxt's block dimensions among them.
    timeout 150 $gemm tune 2048 8192 --dtype f32 --layout col --budget-ms 3000 --no-store --verbose \
        >"$out/tune_host.txt" 2>"$out/tune_host_progress.txt"
    summary+=("gemm tune (host f32 2048, 8192): rc=$?")
    save_logs
fi
if has_stage measure; then
    $gemm tune 256 4x4096x4096 --device 0 --dtype f32,bf16 --ops NT --budget-ms 400 --no-store --verbose \
        >"$out/measure_tune.txt" 2>&1
    summary+=("gemm tune --device 0 (engine): rc=$?; $(grep -c 'FAILED' "$out/measure_tune.txt") failed")
    $gemm bench 4096 --memory pinned --dtype f32 --backends cublas,cublaslt,cublasxt --baseline cublas \
        --no-measure-peak --budget-ms 500 >"$out/measure_pinned.txt" 2>&1
    summary+=("gemm bench --memory pinned: rc=$?")
    cmake --build $build --target test_measure >>"$out/build.log" 2>&1 && $build/tests/test_measure >"$out/test_measure.txt" 2>&1
    summary+=("test_measure: rc=$?")
    save_logs
fi
if has_stage xt; then
    for tool in xt_footprint xt_scaling; do
        program $tool
    done
    if [ -n "${XT_FOOTPRINT:-}" ]; then
        timeout 120 $build/xt_footprint 8192 >"$out/xt_footprint.txt" 2>&1
        summary+=("xt_footprint 8192: rc=$?")
    fi
    GEMM_XT_DEVICES=0 timeout 150 $build/xt_scaling 8192 16384 32768 \
        --backends cublas,cublasxt,cublasxt:b8192 >"$out/xt_scaling_0.txt" 2>&1
    summary+=("xt_scaling GEMM_XT_DEVICES=0: rc=$?")
    save_logs
    GEMM_XT_DEVICES=0,1 timeout 100 $build/xt_scaling 16384 32768 \
        --backends cublasxt,cublasxt:b8192 >"$out/xt_scaling_01.txt" 2>&1
    summary+=("xt_scaling GEMM_XT_DEVICES=0,1: rc=$?")
    save_logs
fi
if has_stage python; then
    venv=/tmp/gemm-venv links=${PIP_FIND_LINKS:-}
    pip_wheel=$(ls -d "${links:-/nonexistent}"/pip-*.whl 2>/dev/null | head -1)
    pip_of_venv=("$venv/bin/python" -m pip)
    [ -n "$pip_wheel" ] && pip_of_venv=("$venv/bin/python" "$pip_wheel/pip")
    index=()
    [ -n "$links" ] && index=(--no-index --find-links "$links")
    {
        { [ -x "$venv/bin/python" ] || python3 -m venv --without-pip "$venv"; } &&
            "${pip_of_venv[@]}" install -q "${index[@]}" numpy pytest nanobind scikit-build-core ml_dtypes &&
            CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$deps/usr" \
                "${pip_of_venv[@]}" install "${index[@]}" --no-build-isolation "./[test]"
    } >"$out/python_pip.log" 2>&1
    rc=$?
    summary+=("python: pip install . rc=$rc ($(tail -1 "$out/python_pip.log" | cut -c1-100))")
    if [ $rc -eq 0 ]; then
        repo=$PWD
        (cd /tmp && timeout 300 "$venv/bin/python" -m pytest -q -rs "$repo/python/tests") >"$out/python_pytest.log" 2>&1
        summary+=("python: pytest rc=$?: $(tail -1 "$out/python_pytest.log")")
        grep -E "^SKIPPED" "$out/python_pytest.log" | cut -c1-150 | while read -r line; do echo "  $line"; done
        (cd /tmp && timeout 120 "$venv/bin/python" "$repo/bench/device/python_device.py" --n "${PYTHON_N:-4096}") \
            >"$out/python_device.txt" 2>&1
        summary+=("$(grep -E '^python device:' "$out/python_device.txt" || tail -1 "$out/python_device.txt")")
        cat "$out/python_device.txt"
    fi
    save_logs
fi

if has_stage distributed; then
    cmake --build $build --target gemm_blas >>"$out/build.log" 2>&1 || echo "gemm_blas did not build"
    for f in .deps/mpi/*.deb; do dpkg -x "$f" $deps; done
    ln -sf mpicc.openmpi $deps/usr/bin/mpicc
    ln -sf mpirun.openmpi $deps/usr/bin/mpirun
    lib=$deps/usr/lib/x86_64-linux-gnu
    mkdir -p $build/examples
    (
        # Open MPI finds its files under OPAL_PREFIX when unpacked away from /usr.
        export OPAL_PREFIX=$deps/usr PATH=$deps/usr/bin:$PATH LD_LIBRARY_PATH=$lib/openmpi/lib:$LD_LIBRARY_PATH
        export OMPI_MCA_btl=self,vader
        mpicc -O2 examples/distributed/pdgemm_check.c -o $build/examples/pdgemm_check -L$lib -lscalapack-openmpi \
            -L$lib/openblas-pthread -lblas -lm || exit 1
        n=${DIST_SIZES:-8192}
        SIZES=$n RANKS="1 2 4" OPS=NN BLASES=gemm BACKEND=cpu_omp timeout 240 bash scripts/bench_distributed.sh $build
        for width in 32 512 1024; do
            SIZES=$n RANKS=4 OPS=NN BLASES=gemm BACKEND=cpu_omp PBLAS_BLOCK=$width timeout 120 \
                bash scripts/bench_distributed.sh $build | tail -2
        done
        if [ "${DIST_SYSTEM:-1}" != 0 ]; then
            SIZES=$n RANKS=4 OPS=NN BLASES=system timeout 150 bash scripts/bench_distributed.sh $build | tail -1
        fi
        SIZES=$n RANKS="1 2" OPS=NN NB=4096 PBLAS_BLOCK=4096 BLASES=gemm timeout 120 \
            bash scripts/bench_distributed.sh $build | tail -2 | sed "s/^/NB 4096: /"
    ) >"$out/distributed.txt" 2>&1
    summary+=("distributed: rc=$?")
    while read -r line; do summary+=("$line"); done <"$out/distributed.txt"
    save_logs
fi

if has_stage numpy; then
    py=/tmp/py
    if [ ! -x $py/usr/bin/python3.11 ]; then
        for f in .deps/python/*.deb; do dpkg -x "$f" $py; done
    fi
    cmake --build $build --target gemm_blas >>"$out/build.log" 2>&1 || echo "gemm_blas did not build"
    cache="$out/tune-cache-numpy.txt"
    timeout 120 $gemm tune 2000x5x2000 --dtype f32,f64 --layout col --cache "$cache" >"$out/numpy_tune.txt" 2>&1
    summary+=("gemm tune 2000x5x2000 f32,f64 (the host-memory rates): rc=$?")
    while read -r line; do summary+=("$line"); done < <(grep '^rates ' "$cache")
    python=(env PYTHONHOME=$py/usr PYTHONPATH=$py/usr/lib/python3/dist-packages $py/usr/bin/python3.11
            bench/device/numpy_matmul.py)
    preload=$PWD/$build/api/libgemm_blas.so
    GEMM_TUNE_CACHE="$cache" LD_PRELOAD=$preload timeout 120 "${python[@]}" "auto (drop-in)" >>"$out/numpy.txt" 2>&1
    # What auto ran: the trace of the first product of each type.
    GEMM_TUNE_CACHE="$cache" GEMM_VERBOSE=1 LD_PRELOAD=$preload timeout 60 "${python[@]}" traced 4096 1 \
        >"$out/numpy_trace.txt" 2>&1
    for t in f32 f64; do grep -m1 "dtype=$t .*m=4096" "$out/numpy_trace.txt" | cut -c1-240 >>"$out/numpy.txt"; done
    GEMM_BACKEND=cpu_omp LD_PRELOAD=$preload timeout 120 "${python[@]}" "cpu_omp (drop-in)" >>"$out/numpy.txt" 2>&1
    timeout 180 "${python[@]}" "OpenBLAS (no preload)" >>"$out/numpy.txt" 2>&1
    while read -r line; do summary+=("$line"); done <"$out/numpy.txt"
    save_logs
fi

echo
echo "== summary ($(( $(date +%s) - start )) s) =="
for s in "${summary[@]}"; do echo "$s"; done
[ -f "$out/bench_f32.txt" ] && grep -vE '^#' "$out/bench_f32.txt" | cut -c1-150
[ -f "$out/measure_tune.txt" ] && grep -vE '^#' "$out/measure_tune.txt" | cut -c1-150
[ -f "$out/measure_pinned.txt" ] && grep -vE '^#' "$out/measure_pinned.txt" | cut -c1-150
[ -f "$out/sweep_f32.txt" ] && grep -vE '^#' "$out/sweep_f32.txt" | cut -c1-150
[ -f "$out/wgmma_bench.txt" ] && grep -vE '^#' "$out/wgmma_bench.txt" | cut -c1-150
[ -f "$out/tf32_bench.txt" ] && grep -vE '^#' "$out/tf32_bench.txt" | cut -c1-150
[ -f "$out/fp8_bench.txt" ] && grep -vE '^#' "$out/fp8_bench.txt" | cut -c1-150
[ -f "$out/fp8block_bench.txt" ] && grep -vE '^#' "$out/fp8block_bench.txt" | cut -c1-150
# DeepSeek-V3 shapes: TFLOP/s and GB/s (GFLOP/s over AI: bytes of A, B, C and the scales).
[ -f "$out/fp8block_deepseek.txt" ] &&
    awk '!/^#/ && $9 == "ok" { printf "%-10s %5s x %5s x %5s  %7.2f TFLOP/s  %7.1f GB/s\n", $1, $5, $6, $7, $13 / 1000, $13 / $15 }' \
        "$out/fp8block_deepseek.txt"
for f in "$out"/decode_bench_*.txt; do [ -f "$f" ] && grep -vE '^#' "$f" | cut -c1-120; done
[ -f "$out/host_rule_bench.txt" ] && grep -vE '^#' "$out/host_rule_bench.txt" | cut -c1-150
[ -f "$out/wgmma_tune.txt" ] && grep -vE '^#' "$out/wgmma_tune.txt" | cut -c1-150
for f in "$out"/wgmma_auto_N?.txt; do [ -f "$f" ] && grep -E '^(auto|backend) ' "$f" | cut -c1-150; done
[ -f "$out/tune.txt" ] && grep -E 'geometric|tuned .* problems|FAILED' "$out/tune.txt"
for f in "$out"/auto_*.txt; do [ -f "$f" ] && grep -E '^(backend|auto) ' "$f" | cut -c1-150; done
if [ -f "$out/xt_footprint.txt" ]; then cat "$out/xt_footprint.txt"; fi
for f in "$out"/xt_scaling_*.txt; do [ -f "$f" ] && cat "$f"; done
[ -f "$out/tune_host.txt" ] && cut -c1-150 "$out/tune_host.txt"
[ -f "$out/offload_device.txt" ] && grep -vE '^#' "$out/offload_device.txt" | cut -c1-150
for f in "$out"/offload_host.txt "$out"/offload_pinned.txt "$out"/offload_tiles.txt "$out"/offload2_host.txt \
    "$out"/offload2_pinned.txt; do [ -f "$f" ] && echo "$f" && grep -vE '^#' "$f" | cut -c1-150; done
[ -f "$out/cpu_auto.txt" ] && grep -vE '^#' "$out/cpu_auto.txt" | cut -c1-150
exit 0
