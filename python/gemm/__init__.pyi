"""Types of the package gemm (docs/PYTHON.md)."""

from typing import Any, Dict, List, NamedTuple, Optional, Union

from ._error import Error as Error, Status as Status
from ._gemm import Plan as Plan, matmul as matmul, set_backend as set_backend, tune as tune, tune_key as tune_key

__version__: str

class Backend(NamedTuple):
    name: str
    kind: str
    available: bool
    reason: str
    detail: str

def backends() -> List[Backend]: ...
def info() -> Dict[str, Any]: ...
