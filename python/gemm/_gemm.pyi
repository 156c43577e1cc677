"""Types of gemm._gemm, the nanobind module the package gemm wraps (docs/PYTHON.md)."""

from typing import Any, Optional, Sequence, Tuple, TypeVar, Union

ArrayT = TypeVar("ArrayT")
# An array gemm reads: a NumPy array, or any object with __dlpack__ (CuPy, PyTorch, JAX).
Array = Any
# A CUDA stream: None (the legacy default stream), a cudaStream_t as int, or an object with
# cuda_stream (torch.cuda.Stream) or ptr (cupy.cuda.Stream).
Stream = Any
Number = Union[int, float, complex]
Shape = Sequence[int]

# A scale of FP8 operands, in the operands' memory: per tensor, a number (host operands) or a
# float32 array of one element; block scales, a float32 array (a_scale (m, ceil(k / 128)),
# b_scale (ceil(k / 128), ceil(n / 128))).
Scale = Union[float, Array, None]

def matmul(
    a: Array,
    b: Array,
    out: Optional[ArrayT] = None,
    *,
    alpha: Number = 1.0,
    beta: Number = 0.0,
    backend: Optional[str] = None,
    stream: Stream = None,
    dtype: Any = None,
    a_scale: Scale = None,
    b_scale: Scale = None,
    d_scale: Scale = None,
    amax: Optional[Array] = None,
) -> Any: ...

class Plan:
    def __init__(
        self,
        a: Union[Array, Shape],
        b: Union[Array, Shape],
        out: Union[Array, Shape, None] = None,
        *,
        dtype: Any = None,
        device: int = -1,
        beta_zero: bool = False,
        scale_mode: Optional[str] = None,
    ) -> None: ...
    def run(
        self,
        a: Array,
        b: Array,
        out: ArrayT,
        *,
        alpha: Number = 1.0,
        beta: Number = 0.0,
        stream: Stream = None,
        a_scale: Scale = None,
        b_scale: Scale = None,
        d_scale: Scale = None,
        amax: Optional[Array] = None,
    ) -> ArrayT: ...
    @property
    def backend(self) -> Tuple[str, str, str]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def device(self) -> int: ...

def backends() -> list: ...
def info() -> dict: ...
def set_backend(name: Optional[str]) -> None: ...
def tune(
    m: int,
    n: int,
    k: int,
    *,
    dtype: str = "float32",
    c_dtype: Optional[str] = None,
    transa: str = "N",
    transb: str = "N",
    layout: str = "row",
    batch: int = 1,
    beta_zero: bool = True,
    device: int = -1,
    budget_ms: float = 0.0,
    backends: str = "",
    store: bool = True,
) -> dict: ...
def tune_key(key: str, *, device: int = 0, budget_ms: float = 0.0, backends: str = "", store: bool = True) -> dict: ...
def _set_error_type(type: type) -> None: ...
def _set_helpers(contiguous: Any, empty: Any, assign: Any, as_bits: Any) -> None: ...
def _time_sgemm(a: Array, b: Array, out: Array, calls: int) -> float: ...
