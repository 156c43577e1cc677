"""gemm: one BLAS-style GEMM call routed to the fastest backend, for NumPy, CuPy, PyTorch
and JAX arrays. See docs/PYTHON.md."""

from typing import NamedTuple

from . import _arrays
from ._error import Error, Status
from . import _gemm

_gemm._set_error_type(Error)
_gemm._set_helpers(_arrays.contiguous, _arrays.empty, _arrays.assign, _arrays.as_bits)

matmul = _gemm.matmul
Plan = _gemm.Plan
set_backend = _gemm.set_backend
tune = _gemm.tune
tune_key = _gemm.tune_key


class Backend(NamedTuple):
    """A backend of this build: kind is "host", "device" or "multi_device"; reason says
    why it is not available ("" when it is); detail what it runs on."""

    name: str
    kind: str
    available: bool
    reason: str
    detail: str


def backends():
    """Every backend compiled into this build, available on this machine or not."""
    return [Backend(*b) for b in _gemm.backends()]


def info():
    """The library's version, the backend selection and its source, the tune cache's
    path, the GEMM_* options, and the backends."""
    d = _gemm.info()
    d["backends"] = backends()
    return d


__version__ = _gemm.info()["version"]

__all__ = [
    "Backend",
    "Error",
    "Plan",
    "Status",
    "backends",
    "info",
    "matmul",
    "set_backend",
    "tune",
    "tune_key",
]
