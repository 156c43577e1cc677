"""Device arrays through DLPack (CuPy, PyTorch): computed on the device, never copied to
the host. Skipped, with the reason, where no CUDA device, CUDA build or array library is."""

import ctypes
import ctypes.util

import numpy as np
import pytest

import gemm


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


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class CudaMatrix:
    """A float32 matrix in device memory (cudaMalloc through ctypes) that only DLPack exports:
    no CuPy or PyTorch, so gemm sees a raw device pointer and cannot allocate like it."""

    def __init__(self, cudart, host, transposed=False):
        self.cudart, self.host = cudart, np.ascontiguousarray(host, np.float32)
        self.pointer = ctypes.c_void_p()
        assert cudart.cudaMalloc(ctypes.byref(self.pointer), ctypes.c_size_t(self.host.nbytes)) == 0
        assert cudart.cudaMemcpy(self.pointer, self.host.ctypes.data, ctypes.c_size_t(self.host.nbytes), 1) == 0
        rows, cols = self.host.shape
        # transposed: the same memory read as its transpose (a column-major view)
        self.shape = (ctypes.c_int64 * 2)(*((cols, rows) if transposed else (rows, cols)))
        self.strides = (ctypes.c_int64 * 2)(*((1, cols) if transposed else (cols, 1)))
        self.tensors = []

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        tensor = _DLManagedTensor()
        tensor.dl_tensor = _DLTensor(self.pointer, _DLDevice(2, 0), 2, _DLDataType(2, 32, 1), self.shape, self.strides, 0)
        self.tensors.append(tensor)  # kept alive as long as this object: the deleter is NULL
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new_capsule(ctypes.addressof(tensor), b"dltensor", None)

    def to_host(self):
        self.cudart.cudaDeviceSynchronize()
        result = np.empty(self.host.shape, np.float32)
        assert self.cudart.cudaMemcpy(result.ctypes.data, self.pointer, ctypes.c_size_t(result.nbytes), 2) == 0
        return result

    def free(self):
        self.cudart.cudaFree(self.pointer)


def loaded_cudart():
    """The CUDA runtime this process already loaded (libgemm's), so that the test's memory
    and the library's calls share one runtime; None where none is mapped."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/libcudart.so" in path:
                    return path
    except OSError:
        pass
    return None


def load_cudart():
    require_device()
    names = (loaded_cudart(), "libcudart.so", ctypes.util.find_library("cudart"), "libcudart.so.13", "libcudart.so.12")
    for name in names:
        if not name:
            continue
        try:
            cudart = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if cudart.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
            pytest.skip("the CUDA runtime sees no device")
        cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        cudart.cudaFree.argtypes = [ctypes.c_void_p]
        return cudart
    pytest.skip("libcudart not found")


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
