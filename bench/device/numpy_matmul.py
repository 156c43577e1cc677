"""numpy_matmul.py: what a NumPy program gets from the drop-in BLAS, unchanged: a @ b on n x n
matrices of float32 and float64 (host memory from NumPy's allocator), timed as the program sees
it. Run it under LD_PRELOAD=libgemm_blas.so (and GEMM_BACKEND, GEMM_TUNE_CACHE as wanted), or
without, for NumPy's own BLAS. NumPy must be one that links libblas.so.3 (Debian's
python3-numpy): PyPI's wheels carry their own renamed OpenBLAS, which preloading never reaches.

Prints one line per type: the median and fastest of the timed products, and the largest
relative error of 64 sampled entries against float64 dot products (the matmul's result is
checked, not assumed).

Usage: python3 numpy_matmul.py LABEL [N] [REPS]
"""
import statistics
import sys
import time

import numpy as np


def sampled_error(a, b, c, rng):
    """Largest |c[i,j] - (a[i,:] . b[:,j])| / (|a[i,:]| . |b[:,j]|) over 64 random entries."""
    worst = 0.0
    for _ in range(64):
        i, j = rng.integers(0, c.shape[0]), rng.integers(0, c.shape[1])
        row, col = a[i, :].astype(np.float64), b[:, j].astype(np.float64)
        exact = float(np.sum(row * col))
        scale = float(np.sum(np.abs(row) * np.abs(col))) or 1.0
        worst = max(worst, abs(float(c[i, j]) - exact) / scale)
    return worst


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "numpy"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        c = a @ b  # the first call: a GPU context, cuBLAS, the offload buffers
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            c = a @ b
            times.append(time.perf_counter() - start)
        error = sampled_error(a, b, c, rng)
        bound = 1e-5 if dtype == np.float32 else 1e-13
        verdict = "ok" if error <= bound else "WRONG"
        print(f"numpy {label}: {np.dtype(dtype).name} {n}x{n} @ {n}x{n}: median {statistics.median(times) * 1e3:.1f} ms, "
              f"fastest {min(times) * 1e3:.1f} ms over {reps}; sampled error {error:.2g} ({verdict})", flush=True)


if __name__ == "__main__":
    main()
