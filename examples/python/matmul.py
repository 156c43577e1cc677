#!/usr/bin/env python3
"""matmul.py: gemm from Python on NumPy arrays, and on CuPy or PyTorch device arrays where
they and a GPU are present. After `pip install .` at the repository root:
    python examples/python/matmul.py
"""

import numpy as np

import gemm


def host_example():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128), dtype=np.float32)
    b = rng.standard_normal((128, 64), dtype=np.float32)

    c = gemm.matmul(a, b)  # numpy.matmul's result, computed by the backend auto picks
    print("a @ b:", c.shape, c.dtype, "max |gemm - numpy| =", float(np.abs(c - a @ b).max()))

    # Transposed views are read in place (op T); out= is written in place with beta.
    out = np.ones((64, 256), np.float32)
    gemm.matmul(b.T, a.T, out, alpha=0.5, beta=2.0)  # out = 0.5 * b.T @ a.T + 2 * out

    # Stacked operands broadcast as in numpy.matmul: one strided-batched call.
    batch = rng.standard_normal((8, 256, 128), dtype=np.float32)
    print("batch @ b:", gemm.matmul(batch, b).shape)

    # A plan decides the backend once for operands of this geometry.
    plan = gemm.Plan(a, b, c, beta_zero=True)
    plan.run(a, b, c)
    print("plan runs on", plan.backend[0], "-", plan.backend[2])

    try:
        gemm.matmul(a, a)
    except gemm.Error as error:  # a ValueError with the status and the argument at fault
        print(f"refused: {error.status.name} ({error.argument}): {error}")


def device_example():
    device = [b for b in gemm.backends() if b.kind == "device" and b.available]
    if not device:
        print("no CUDA backend available here: the device example is skipped")
        return
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:
        a = cp.random.standard_normal((1024, 512), dtype=cp.float32)
        b = cp.random.standard_normal((512, 256), dtype=cp.float32)
        c = gemm.matmul(a, b)  # a CuPy array, computed on the GPU on the legacy default stream
        stream = cp.cuda.Stream()
        with stream:
            gemm.matmul(a, b, c, stream=stream)  # or on a stream of yours
        stream.synchronize()
        print("cupy:", type(c).__name__, "max error", float(cp.abs(c - a @ b).max()))
        return
    try:
        import torch
    except ImportError:
        print("neither CuPy nor PyTorch is installed: the device example is skipped")
        return
    a = torch.randn(1024, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    c = gemm.matmul(a, b)  # a torch.Tensor on the same device
    torch.cuda.synchronize()
    print("torch:", c.dtype, "max error", float((c.float() - (a.float() @ b.float())).abs().max()))


if __name__ == "__main__":
    host_example()
    device_example()
