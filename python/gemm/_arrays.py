"""Copies and allocations through the array's own library (NumPy, CuPy, PyTorch).

gemm._gemm calls these where it needs an array it cannot make itself: a contiguous copy
of an operand BLAS cannot read in place, the result of matmul(out=None), and the copy of a
result computed apart back into out.
"""

import numpy as np

from ._error import Error, Status


def _namespace(x):
    """The array-API namespace of x, or None."""
    get = getattr(x, "__array_namespace__", None)
    if get is None:
        return None
    try:
        return get()
    except Exception:  # a producer whose namespace is not importable here
        return None


def contiguous(x):
    """A C-contiguous copy of x, in x's memory."""
    if isinstance(x, np.ndarray):
        return np.array(x, order="C", copy=True)
    copy = empty(x, tuple(x.shape))
    assign(copy, x)
    return copy


def _numpy_dtype(name):
    """The NumPy dtype of a gemm type name; bfloat16 and FP8 through ml_dtypes."""
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def empty(like, shape, dtype=None):
    """An uninitialized array of shape in like's memory, of like's dtype or of the type dtype
    names ("float32", "bfloat16", ...)."""
    if isinstance(like, np.ndarray):
        return np.empty(shape, like.dtype if dtype is None else _numpy_dtype(dtype))
    if hasattr(like, "new_empty"):  # PyTorch: same dtype and device
        if dtype is None:
            return like.new_empty(shape)
        import torch

        return like.new_empty(shape, dtype=getattr(torch, dtype))
    if type(like).__module__.split(".")[0] == "cupy":
        import cupy

        with like.device:  # CuPy allocates on the current device
            return cupy.empty(shape, dtype=like.dtype if dtype is None else dtype)
    xp = _namespace(like)
    if xp is not None:
        return xp.empty(shape, dtype=like.dtype if dtype is None else getattr(xp, dtype), device=like.device)
    raise Error(
        f"out: cannot allocate the result like a {type(like).__name__}: pass out= "
        "(gemm allocates through NumPy, CuPy, PyTorch or an array-API namespace)",
        Status.INVALID_VALUE,
        argument="out",
    )


def assign(target, source):
    """Copies source into target, element by element, in place."""
    target[...] = source


def as_bits(x):
    """The bits of a bfloat16 or FP8 array (ml_dtypes, PyTorch) as unsigned integers of its
    size, sharing its memory."""
    if type(x).__module__.split(".")[0] == "torch":
        import torch

        return x.view(torch.uint8 if x.element_size() == 1 else torch.int16)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)
