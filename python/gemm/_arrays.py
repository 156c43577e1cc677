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


def empty(like, shape):
    """An uninitialized array of shape, like's dtype, in like's memory."""
    if isinstance(like, np.ndarray):
        return np.empty(shape, like.dtype)
    if hasattr(like, "new_empty"):  # PyTorch: same dtype and device
        return like.new_empty(shape)
    if type(like).__module__.split(".")[0] == "cupy":
        import cupy

        with like.device:  # CuPy allocates on the current device
            return cupy.empty(shape, dtype=like.dtype)
    xp = _namespace(like)
    if xp is not None:
        return xp.empty(shape, dtype=like.dtype, device=like.device)
    raise Error(
        f"out: cannot allocate the result like a {type(like).__name__}: pass out= "
        "(gemm allocates through NumPy, CuPy, PyTorch or an array-API namespace)",
        Status.INVALID_VALUE,
        argument="out",
    )


def assign(target, source):
    """Copies source into target, element by element, in place."""
    target[...] = source


def as_uint16(x):
    """The bits of a bfloat16 array (ml_dtypes) as uint16, sharing its memory."""
    return x.view(np.uint16)
