"""Shared by the tests: a tune cache of their own, operands and the tolerance rule."""

import os
import tempfile

# Before gemm loads: the tests' untuned calls store this machine's rates in a cache of their
# own, never in the user's.
os.environ["GEMM_TUNE_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="gemm-pytest-"), "tune-cache.txt")
for name in ("GEMM_BACKEND", "GEMM_VERBOSE", "GEMM_TUNE", "GEMM_LOG_LEVEL"):
    os.environ.pop(name, None)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # bfloat16 tests skip
    ml_dtypes = None

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]

# Unit roundoff of each type's storage: f16 and bf16 accumulate in f32, but their result is
# rounded to 11 and 8 bits.
UNIT_ROUNDOFF = {
    "float32": 2.0**-24,
    "float64": 2.0**-53,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "complex64": 2.0**-24,
    "complex128": 2.0**-53,
}


def numpy_dtype(name):
    if name == "bfloat16":
        if ml_dtypes is None:
            pytest.skip("bfloat16 needs ml_dtypes (pip install ml_dtypes)")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def random(shape, dtype, rng):
    """Values in [-1, 1] of dtype (never all zero: a result that was not written shows)."""
    dtype = numpy_dtype(dtype) if isinstance(dtype, str) else dtype
    x = rng.uniform(-1, 1, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype)


def wide(x):
    """x in float64 or complex128, as the reference computes."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def assert_matmul_close(got, a, b, dtype, alpha=1.0, beta=0.0, c0=None):
    """got equals alpha * numpy.matmul(a, b) + beta * c0 within k * u of the magnitudes.

    The bound is the classical one for a dot product of length k in a type of unit roundoff
    u, |error| <= (k + 2) u (|alpha| |A| |B| + |beta| |C0|), with a factor 4 of slack for
    the order the backend sums in and the rounding of alpha and beta.
    """
    a, b = wide(a), wide(b)
    k = a.shape[-1]
    reference = alpha * np.matmul(a, b)
    magnitude = abs(alpha) * np.matmul(np.abs(a), np.abs(b))
    if c0 is not None and beta != 0:
        reference = reference + beta * wide(c0)
        magnitude = magnitude + abs(beta) * np.abs(wide(c0))
    tolerance = 4 * (k + 2) * UNIT_ROUNDOFF[dtype] * magnitude + np.finfo(np.float64).tiny
    got = wide(got)
    assert got.shape == reference.shape
    error = np.abs(got - reference)
    worst = np.unravel_index(np.argmax(error - tolerance), error.shape) if error.size else ()
    assert np.all(error <= tolerance), (
        f"{dtype}: |error| {error[worst]} > tolerance {tolerance[worst]} at {worst} (k = {k})"
    )


@pytest.fixture
def rng():
    return np.random.default_rng(63)


def refused(call):
    """The gemm.Error call raises (the test fails where it raises none)."""
    import gemm

    with pytest.raises(gemm.Error) as info:
        call()
    return info.value
