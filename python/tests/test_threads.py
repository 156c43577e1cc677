"""The GIL is released while the library computes: Python threads run meanwhile."""

import threading
import time

import numpy as np

import gemm


def test_python_runs_while_a_matmul_computes():
    a = np.ones((1200, 1200))
    started = threading.Event()

    def compute():
        started.set()
        gemm.matmul(a, a)

    worker = threading.Thread(target=compute)
    worker.start()
    started.wait()
    ticks, begin = 0, time.perf_counter()
    while worker.is_alive():
        ticks += 1
    elapsed = time.perf_counter() - begin
    worker.join()
    # Holding the GIL for the call would leave this loop a few switch intervals (5 ms each)
    # of the call; released, it spins through the whole call.
    assert elapsed > 0.02, "the call was too short to tell"
    assert ticks > 20000, f"{ticks} iterations in {elapsed:.3f} s: the GIL was held"


def test_threads_compute_at_once(rng):
    a = [rng.uniform(-1, 1, (40, 40)) for _ in range(8)]
    results = [None] * 8

    def compute(i):
        for _ in range(20):
            results[i] = gemm.matmul(a[i], a[i], backend="cpu_omp" if i % 2 else None)

    threads = [threading.Thread(target=compute, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        np.testing.assert_allclose(results[i], a[i] @ a[i], rtol=1e-12, atol=1e-12)
