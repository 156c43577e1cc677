"""The GIL is released while the library computes: Python threads run meanwhile."""

import sys
import threading
import time

import numpy as np

import gemm


def test_python_runs_while_a_matmul_computes():
    a = np.ones((1200, 1200))
    call = []

    def compute():
        begin = time.perf_counter()
        gemm.matmul(a, a)
        call.extend((begin, time.perf_counter()))

    worker = threading.Thread(target=compute)
    seen = []
    worker.start()
    while worker.is_alive():
        seen.append(time.perf_counter())
    worker.join()
    begin, end = call
    # A call holding the GIL would leave this thread nothing to run between its start and
    # end but what it ran before the call took the GIL, one switch interval at most: its
    # middle, a margin of two intervals in from each end, would see no iteration.
    margin = 2 * sys.getswitchinterval()
    assert end - begin > 3 * margin, f"the call ({end - begin:.3f} s) was too short to tell"
    inside = [t for t in seen if begin + margin < t < end - margin]
    assert inside, f"no Python ran in the middle of a {end - begin:.3f} s call: the GIL was held"


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


def test_backend_keyword_is_the_calling_threads_alone(rng):
    # backend= sets the calling thread's selection (gemm_set_thread_backend) for the call:
    # other threads read the process's while it runs, and the process's survives it.
    a = rng.uniform(-1, 1, (160, 160))
    gemm.set_backend("cpu_omp")
    try:
        seen = []
        worker = threading.Thread(target=lambda: [gemm.matmul(a, a, backend="cpu_ref") for _ in range(5)])
        worker.start()
        while worker.is_alive():
            seen.append(gemm.info()["backend"])
        worker.join()
        assert seen, "the forced calls ended before the main thread looked"
        assert set(seen) == {"cpu_omp"}
        assert gemm.info()["backend_source"] == "gemm_set_backend"
    finally:
        gemm.set_backend(None)
