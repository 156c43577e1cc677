#!/usr/bin/env python3
"""python_device.py: gemm.matmul on device arrays against cuBLAS called directly from the same
process, bf16 (C bf16, f32 compute) row-major n x n x n.

The arrays are raw cudaMalloc memory exported by DLPack alone (python/tests/raw_cuda.py), so no
array library is needed. The peer is cublasGemmEx with CUBLAS_COMPUTE_32F through ctypes, the
call torch.matmul and cupy.matmul make for bf16 matrices, on the same memory. Each round times
CALLS back-to-back calls of one, then of the other, up to a device synchronization; the medians
of ROUNDS rounds are compared. gemm runs untuned auto unless GEMM_BACKEND says otherwise.

Usage: python python_device.py [--n 4096] [--calls 50] [--rounds 7]   (in the venv with gemm)
"""

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))
import gemm  # noqa: E402
from raw_cuda import CudaMatrix, loaded_library, ml_dtypes, open_cudart  # noqa: E402

CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, CUBLAS_OP_N = 14, 68, -1, 0


def open_cublas():
    for name in (loaded_library("libcublas.so"), "libcublas.so", "libcublas.so.13", "libcublas.so.12"):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit("python_device.py: libcublas not found")


def timed(function, calls, cudart):
    cudart.cudaDeviceSynchronize()
    start = time.perf_counter()
    for _ in range(calls):
        function()
    cudart.cudaDeviceSynchronize()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if ml_dtypes is None:
        sys.exit("python_device.py: needs ml_dtypes for bfloat16")
    gemm.info()  # loads libgemm and its CUDA runtime first, so ctypes finds the same one
    cudart, reason = open_cudart()
    if cudart is None:
        sys.exit(f"python_device.py: {reason}")
    cublas = open_cublas()
    n = args.n
    rng = np.random.default_rng(1)
    bf16 = ml_dtypes.bfloat16
    a_host, b_host = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))
    a, b = CudaMatrix(cudart, a_host, dtype=bf16), CudaMatrix(cudart, b_host, dtype=bf16)
    c_gemm, c_cublas = CudaMatrix(cudart, np.zeros((n, n)), dtype=bf16), CudaMatrix(cudart, np.zeros((n, n)), dtype=bf16)

    handle = ctypes.c_void_p()
    assert cublas.cublasCreate_v2(ctypes.byref(handle)) == 0
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    gemm_ex = cublas.cublasGemmEx
    gemm_ex.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                        ctypes.c_int]

    def direct():
        # row-major C = A B as column-major C^T = B^T A^T: B first
        status = gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, ctypes.byref(one), b.pointer, CUDA_R_16BF, n,
                         a.pointer, CUDA_R_16BF, n, ctypes.byref(zero), c_cublas.pointer, CUDA_R_16BF, n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
        assert status == 0, f"cublasGemmEx: status {status}"

    def through_gemm():
        gemm.matmul(a, b, c_gemm)

    for f in (direct, through_gemm):  # warm up: handles, tune cache, first launches
        timed(f, 3, cudart)
    expected = a.host.astype(np.float64) @ b.host.astype(np.float64)
    for name, c in (("cublasGemmEx", c_cublas), ("gemm.matmul", c_gemm)):
        error = float(np.max(np.abs(c.to_host().astype(np.float64) - expected)) / np.max(np.abs(expected)))
        if error > 2.0**-6:
            sys.exit(f"python_device.py: {name}'s result is off by {error:.3g} of the largest entry")
    rounds = {"direct": [], "gemm": []}
    for _ in range(args.rounds):
        rounds["direct"].append(timed(direct, args.calls, cudart))
        rounds["gemm"].append(timed(through_gemm, args.calls, cudart))
    d, g = statistics.median(rounds["direct"]), statistics.median(rounds["gemm"])
    flops = 2.0 * n * n * n
    print(f"bf16 {n}x{n}x{n} row-major, device arrays by DLPack, {args.calls} calls x {args.rounds} rounds")
    print(f"cublasGemmEx direct: {d * 1e6:9.1f} us a call, {flops / d / 1e12:7.1f} TFLOP/s")
    print(f"gemm.matmul:         {g * 1e6:9.1f} us a call, {flops / g / 1e12:7.1f} TFLOP/s")
    print(f"python device: gemm.matmul / cublasGemmEx time {g / d:.3f} (goal <= 1.03)")
    cublas.cublasDestroy_v2(handle)
    for x in (a, b, c_gemm, c_cublas):
        x.free()


if __name__ == "__main__":
    main()
