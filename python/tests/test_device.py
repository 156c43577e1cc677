"""Device arrays through DLPack (CuPy, PyTorch): computed on the device, never copied to
the host. Skipped, with the reason, where no CUDA device, CUDA build or array library is."""

import warnings

import numpy as np
import pytest

import gemm
from raw_cuda import CudaMatrix, open_cudart


def cuda_backends():
    return [b for b in gemm.backends() if b.kind == "device" and b.available]


def require_device():
    if not any(b.kind == "device" for b in gemm.backends()):
        pytest.skip("this build of gemm has no CUDA backend (built with GEMM_WITH_CUDA=OFF or without nvcc)")
    if not cuda_backends():
        reasons = "; ".join(f"{b.name}: {b.reason}" for b in gemm.backends() if b.kind == "device")
        pytest.skip(f"no CUDA backend can run here ({reasons})")


def array_library(name):
    require_device()
    return pytest.importorskip(name, reason=f"{name} is not installed")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
def test_cupy_arrays_stay_on_the_device(dtype):
    cp = array_library("cupy")
    rng = np.random.default_rng(1)
    a = cp.asarray(rng.uniform(-1, 1, (3, 64, 48)).astype(dtype))
    b = cp.asarray(rng.uniform(-1, 1, (48, 80)).astype(dtype))
    c = gemm.matmul(a, b)
    assert isinstance(c, cp.ndarray)
    expected = cp.matmul(a.astype(cp.complex128), b.astype(cp.complex128))
    tolerance = {"float16": 3e-2, "float32": 1e-4, "complex64": 1e-4, "float64": 1e-12}[dtype]
    assert float(cp.abs(c - expected).max()) < tolerance * 48
    out = cp.ones((3, 64, 80), dtype=dtype)
    stream = cp.cuda.Stream()
    with stream:
        gemm.matmul(a, b.T.copy().T, out, beta=1.0, stream=stream)
    stream.synchronize()
    assert float(cp.abs(out - (expected + 1)).max()) < tolerance * 48


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_torch_tensors_stay_on_the_device(dtype):
    torch = array_library("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    t = getattr(torch, dtype)
    a = torch.rand(2, 32, 16, device="cuda", dtype=t)
    b = torch.rand(16, 24, device="cuda", dtype=t)
    c = gemm.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.device == a.device and c.dtype == t
    torch.cuda.synchronize()
    expected = torch.matmul(a.double(), b.double())
    assert float((c.double() - expected).abs().max()) < (0.1 if dtype == "bfloat16" else 1e-4)


def test_host_and_device_operands_are_refused():
    cp = array_library("cupy")
    with pytest.raises(gemm.Error) as info:
        gemm.matmul(cp.ones((2, 2), cp.float32), np.ones((2, 2), np.float32))
    assert info.value.status == gemm.Status.MIXED_MEMORY_SPACES


def load_cudart():
    require_device()
    cudart, reason = open_cudart()
    if cudart is None:
        pytest.skip(reason)
    return cudart


def test_raw_dlpack_device_memory_is_computed_in_place():
    cudart = load_cudart()
    rng = np.random.default_rng(2)
    a_host, b_host = rng.uniform(-1, 1, (40, 24)), rng.uniform(-1, 1, (24, 56))
    c_host = rng.uniform(-1, 1, (40, 56))
    a = CudaMatrix(cudart, a_host)
    b = CudaMatrix(cudart, b_host.T, transposed=True)  # op T on the device
    c = CudaMatrix(cudart, c_host)
    try:
        assert gemm.matmul(a, b, c, alpha=2.0, beta=-1.0) is c
        expected = 2.0 * a_host @ b_host - c_host
        np.testing.assert_allclose(c.to_host(), expected, rtol=1e-4, atol=1e-4 * 24)
        with pytest.raises(gemm.Error) as info:  # no producer library to allocate the result
            gemm.matmul(a, b)
        assert info.value.argument == "out" and "pass out=" in str(info.value)
    finally:
        for x in (a, b, c):
            x.free()


def matmul_or_decline(declined, *arrays, backend, **options):
    """gemm.matmul forced onto backend (None: auto), or False with the reason added to declined
    where a forced backend declines, saying why; auto may not."""
    try:
        gemm.matmul(*arrays, backend=backend, **options)
    except gemm.Error as refusal:
        if backend is None or refusal.status != gemm.Status.NOT_SUPPORTED:
            raise
        declined.append(f"{backend}: {refusal}")
        return False
    return True


def test_raw_dlpack_fp8_on_the_device():
    """x @ w.T with w stored (out, in), FP8 by DLPack's float8 codes, scales and amax in device
    memory; each FP8 device backend, auto and a plan, within the FP8 rule of docs/FP8.md."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="FP8 arrays need ml_dtypes")
    cudart = load_cudart()
    e4m3 = np.dtype(ml_dtypes.float8_e4m3fn)
    rng = np.random.default_rng(3)
    m, n, k = 40, 48, 64  # leading dimensions of 16-byte multiples, as the FP8 kernels read them
    x_host = (rng.uniform(-1, 1, (m, k)) * 8).astype(e4m3)
    w_host = rng.uniform(-1, 1, (n, k)).astype(e4m3)
    c_host = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    products = (x_host.astype(np.float64) * 0.5) @ (w_host.astype(np.float64) * 2.0).T
    magnitude = np.abs(x_host.astype(np.float64) * 0.5) @ np.abs(w_host.astype(np.float64) * 2.0).T
    d = products + 0.5 * c_host
    # the f32 rule with slack, and the tensor cores' 2^-7 of the sum of |products|
    tolerance = (4 * (k + 2) * 2.0**-24 + 2.0**-7) * (magnitude + 0.5 * np.abs(c_host))
    x = CudaMatrix(cudart, x_host, dtype=e4m3)
    w = CudaMatrix(cudart, w_host, transposed=True, dtype=e4m3)
    scales = [CudaMatrix(cudart, np.full((1, 1), v)) for v in (0.5, 2.0, -1.0)]
    names = [b.name for b in cuda_backends() if b.name in ("cuda_tiled", "cublaslt")] + [None]
    declined = []
    try:
        for backend in names:
            c = CudaMatrix(cudart, c_host)
            amax = {} if backend == "cublaslt" else {"amax": scales[2]}  # cuBLASLt refuses amax for a D not FP8
            try:
                if not matmul_or_decline(declined, x, w, c, beta=0.5, backend=backend, a_scale=scales[0],
                                         b_scale=scales[1], **amax):
                    continue
                error = np.abs(c.to_host().astype(np.float64) - d)
                assert np.all(error <= tolerance), f"{backend}: worst |error| {error.max()}"
                if amax:
                    got = float(scales[2].to_host()[0, 0])
                    assert abs(got - np.abs(d).max()) <= tolerance.max(), f"{backend}: amax {got}"
            finally:
                c.free()
        # The same through a plan with per-tensor scales, routed by auto.
        c = CudaMatrix(cudart, c_host)
        try:
            gemm.Plan(x, w, c, scale_mode="tensor").run(x, w, c, beta=0.5, a_scale=scales[0], b_scale=scales[1])
            error = np.abs(c.to_host().astype(np.float64) - d)
            assert np.all(error <= tolerance), f"plan: worst |error| {error.max()}"
        finally:
            c.free()
    finally:
        for y in [x, w] + scales:
            y.free()
    if declined:
        warnings.warn("FP8 on raw device memory, declined: " + "; ".join(declined))
    forced = len(names) - 1
    assert forced == 0 or len(declined) < forced, "every forced FP8 device backend declined"



def test_raw_dlpack_fp8_block_scales_on_the_device():
    """x @ w.T with block scales in device memory, as checkpoints keep them: x's per row and 128
    of k (column-major), w's per 128 x 128, a row-major (out / 128, in / 128) array passed
    transposed; each FP8 device backend and auto, within the FP8 rule of docs/FP8.md."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="FP8 arrays need ml_dtypes")
    cudart = load_cudart()
    e4m3 = np.dtype(ml_dtypes.float8_e4m3fn)
    rng = np.random.default_rng(4)
    m, n, k = 48, 160, 256  # 2 blocks of k, 2 of 128 columns (the second ragged)
    x_host = (rng.uniform(-1, 1, (m, k)) * 8).astype(e4m3)
    w_host = rng.uniform(-1, 1, (n, k)).astype(e4m3)
    x_scale = (2.0 ** rng.uniform(-2, 2, (m, 2))).astype(np.float32)
    w_scale = (2.0 ** rng.uniform(-2, 2, (2, 2))).astype(np.float32)  # (out / 128, in / 128)
    xs = x_host.astype(np.float64) * np.repeat(x_scale, 128, axis=1)
    ws = w_host.astype(np.float64) * np.repeat(np.repeat(w_scale, 128, axis=0), 128, axis=1)[:n]
    d, magnitude = xs @ ws.T, np.abs(xs) @ np.abs(ws).T
    tolerance = (4 * (k + 2) * 2.0**-24 + 2.0**-7) * magnitude
    x = CudaMatrix(cudart, x_host, dtype=e4m3)
    w = CudaMatrix(cudart, w_host, transposed=True, dtype=e4m3)
    a_scale = CudaMatrix(cudart, x_scale.T, transposed=True)  # (m, 2), rows adjacent
    b_scale = CudaMatrix(cudart, w_scale, transposed=True)  # w_scale.T: (2, 2), blocks of k adjacent
    names = [b.name for b in cuda_backends() if b.name in ("cuda_tiled", "cublaslt")] + [None]
    declined = []
    try:
        for backend in names:
            c = CudaMatrix(cudart, np.zeros((m, n), np.float32))
            try:
                if not matmul_or_decline(declined, x, w, c, backend=backend, a_scale=a_scale, b_scale=b_scale):
                    continue
                error = np.abs(c.to_host().astype(np.float64) - d)
                assert np.all(error <= tolerance), f"{backend}: worst |error| {error.max()}"
            finally:
                c.free()
    finally:
        for y in (x, w, a_scale, b_scale):
            y.free()
    if declined:
        warnings.warn("FP8 block scales on raw device memory, declined: " + "; ".join(declined))
    forced = len(names) - 1
    assert forced == 0 or len(declined) < forced, "every forced FP8 device backend declined"
