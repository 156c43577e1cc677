"""gemm.Error and the library's statuses (gemm_status_t in gemm/gemm.h)."""

import enum


class Status(enum.IntEnum):
    """gemm_status_t: 1-19 the caller's argument, 20-29 what cannot be served, 30- failures."""

    SUCCESS = 0
    INVALID_LAYOUT = 1
    INVALID_OP = 2
    INVALID_SIZE = 3
    INVALID_LEADING_DIM = 4
    INVALID_STRIDE = 5
    INVALID_POINTER = 6
    INVALID_DTYPE = 7
    INVALID_VALUE = 8
    MIXED_MEMORY_SPACES = 9
    NOT_SUPPORTED = 20
    UNKNOWN_BACKEND = 21
    BACKEND_UNAVAILABLE = 22
    INVALID_CONFIG = 23
    ALLOC_FAILED = 30
    EXECUTION_FAILED = 31
    INTERNAL_ERROR = 99


class Error(ValueError):
    """A call gemm refused or could not complete; nothing was written.

    status: the gemm_status_t (a Status, or the int for a code this version does not name);
    parameter: the C parameter's position (gemm_last_error_parameter), 0 when the Python
    binding refused before calling the library; argument: the Python argument at fault
    ("a", "out", "beta", ...) where known, else None; the message is the library's
    (gemm_last_error) or the binding's, naming the parameter.
    """

    def __init__(self, message, status, parameter=0, argument=None):
        super().__init__(message)
        try:
            self.status = Status(status)
        except ValueError:
            self.status = int(status)
        self.parameter = parameter
        self.argument = argument

    def __reduce__(self):
        return (type(self), (str(self), int(self.status), self.parameter, self.argument))
