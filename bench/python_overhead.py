#!/usr/bin/env python3
"""python_overhead.py: what a gemm.matmul call costs over the C call it makes, on host
float32 matrices.

The C reference is gemm._gemm._time_sgemm: gemm_sgemm called in a C loop on the very arrays
gemm.matmul is given, from the same libgemm. Each size is timed in rounds that alternate the
two (the machine may be shared), and the medians are compared:
  64x64x64: the binding's per-call cost (goal <= 3 us), with out= and without (allocating);
  2048x2048x2048: the relative cost on a large call (goal within 5 %).
Run: python bench/python_overhead.py [--rounds 7]   (in the venv that has gemm installed)
"""

import argparse
import statistics
import sys
import time

import numpy as np

import gemm
from gemm import _gemm


def per_call(function, calls):
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def measure(n, calls, rounds):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    out = np.empty((n, n), np.float32)
    matmul = gemm.matmul
    gemm.matmul(a, b, out)  # the first call decides the backend (and measures rates once)
    _gemm._time_sgemm(a, b, out, calls)
    c_times, out_times, alloc_times = [], [], []
    for _ in range(rounds):
        c_times.append(_gemm._time_sgemm(a, b, out, calls) / calls)
        out_times.append(per_call(lambda: matmul(a, b, out), calls))
        alloc_times.append(per_call(lambda: matmul(a, b), calls))
    return statistics.median(c_times), statistics.median(out_times), statistics.median(alloc_times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"# {' '.join(sys.argv)}  (gemm {gemm.__version__}, numpy {np.__version__})")
    print(f"# backend selection: {gemm.info()['backend']}; medians of {args.rounds} rounds")
    print(f"{'size':>16} {'C call':>12} {'matmul(out=)':>14} {'matmul()':>12} {'overhead out=':>14} {'overhead':>10}")
    for n, calls in ((64, 20000), (2048, 1)):
        c, with_out, allocating = measure(n, calls, args.rounds)
        if n < 1000:
            cost = f"{(with_out - c) * 1e6:+.2f} us", f"{(allocating - c) * 1e6:+.2f} us"
        else:
            cost = f"{(with_out / c - 1) * 100:+.1f} %", f"{(allocating / c - 1) * 100:+.1f} %"
        print(
            f"{f'{n}x{n}x{n} f32':>16} {c * 1e6:>9.2f} us {with_out * 1e6:>11.2f} us"
            f" {allocating * 1e6:>9.2f} us {cost[0]:>14} {cost[1]:>10}"
        )


if __name__ == "__main__":
    main()
