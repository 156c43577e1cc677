"""Device memory without an array library: cudaMalloc through ctypes, exported by DLPack alone,
so gemm sees a raw device pointer. Shared by test_device.py and bench/device/python_device.py."""

import ctypes
import ctypes.util

import numpy as np

try:
    import ml_dtypes
except ImportError:  # bfloat16 matrices unavailable
    ml_dtypes = None


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


def _dl_type(dtype):
    """DLPack's (code, bits) of a NumPy dtype: kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10,
    kDLFloat8_e5m2 12."""
    if ml_dtypes is not None:
        for name, code in (("bfloat16", 4), ("float8_e4m3fn", 10), ("float8_e5m2", 12)):
            if dtype == np.dtype(getattr(ml_dtypes, name)):
                return code, dtype.itemsize * 8
    if dtype in (np.float16, np.float32, np.float64):
        return 2, dtype.itemsize * 8
    raise ValueError(f"raw_cuda: no DLPack code for {dtype}")


def _capsule(tensor):
    """A "dltensor" capsule of tensor (a _DLManagedTensor its owner keeps alive)."""
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new_capsule(ctypes.addressof(tensor), b"dltensor", None)


class HostDLPack:
    """A host matrix exported by DLPack alone (kDLCPU), with its type's DLPack code: FP8 by the
    float8 codes, as PyTorch and JAX export theirs, not as NumPy's ml_dtypes array."""

    def __init__(self, array):
        self.array = np.ascontiguousarray(array)
        rows, cols = self.array.shape
        self.shape = (ctypes.c_int64 * 2)(rows, cols)
        self.strides = (ctypes.c_int64 * 2)(cols, 1)
        code, bits = _dl_type(self.array.dtype)
        self.tensor = _DLManagedTensor()
        self.tensor.dl_tensor = _DLTensor(
            self.array.ctypes.data, _DLDevice(1, 0), 2, _DLDataType(code, bits, 1), self.shape, self.strides, 0
        )

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return _capsule(self.tensor)


class CudaMatrix:
    """A matrix in device memory, a copy of host (a float32 array unless dtype says otherwise),
    that only DLPack exports (kDLCUDA, device 0)."""

    def __init__(self, cudart, host, transposed=False, dtype=np.float32):
        self.cudart, self.host = cudart, np.ascontiguousarray(host, dtype)
        self.dl_type = _dl_type(self.host.dtype)
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
        code, bits = self.dl_type
        tensor.dl_tensor = _DLTensor(self.pointer, _DLDevice(2, 0), 2, _DLDataType(code, bits, 1), self.shape, self.strides, 0)
        self.tensors.append(tensor)  # kept alive as long as this object: the deleter is NULL
        return _capsule(tensor)

    def to_host(self):
        self.cudart.cudaDeviceSynchronize()
        result = np.empty(self.host.shape, self.host.dtype)
        assert self.cudart.cudaMemcpy(result.ctypes.data, self.pointer, ctypes.c_size_t(result.nbytes), 2) == 0
        return result

    def free(self):
        self.cudart.cudaFree(self.pointer)


def loaded_library(stem):
    """The path of the library named stem (e.g. "libcudart.so") this process already mapped
    (libgemm's), so that test memory and the library's calls share one runtime; None where
    none is mapped."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/" + stem in path:
                    return path
    except OSError:
        pass
    return None


def open_cudart():
    """(the CUDA runtime through ctypes, None) where it loads and sees a device, else (None,
    the reason)."""
    names = (loaded_library("libcudart.so"), "libcudart.so", ctypes.util.find_library("cudart"), "libcudart.so.13",
             "libcudart.so.12")
    for name in names:
        if not name:
            continue
        try:
            cudart = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if cudart.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
            return None, "the CUDA runtime sees no device"
        cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        cudart.cudaFree.argtypes = [ctypes.c_void_p]
        return cudart, None
    return None, "libcudart not found"
