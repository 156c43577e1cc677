"""gemm.Error: status, parameter, argument and message; nothing written on an error."""

import numpy as np
import pytest

import gemm
from conftest import random, refused


def test_error_is_a_value_error():
    assert issubclass(gemm.Error, ValueError)


@pytest.mark.parametrize(
    "case,status,argument,text",
    [
        ("k", gemm.Status.INVALID_SIZE, "b", "a has k = 3 columns, b has 4 rows"),
        ("batch", gemm.Status.INVALID_SIZE, "b", "do not broadcast"),
        ("0-d", gemm.Status.INVALID_SIZE, "a", "0-d"),
        ("dtypes", gemm.Status.INVALID_DTYPE, "b", "float64 differs from a's, float32"),
        ("int", gemm.Status.INVALID_DTYPE, "a", "dtype int32 is not one gemm computes"),
        ("out shape", gemm.Status.INVALID_SIZE, "out", "shape (4, 4) differs from the result's, (2, 4)"),
        ("out dtype", gemm.Status.INVALID_DTYPE, "out", "dtype float64 differs from the result's, float32"),
        ("read-only", gemm.Status.INVALID_VALUE, "out", "read-only"),
        ("beta", gemm.Status.INVALID_VALUE, "beta", "needs out="),
        ("complex alpha", gemm.Status.INVALID_VALUE, "alpha", "complex value for float32"),
        ("text alpha", gemm.Status.INVALID_VALUE, "alpha", "must be a number"),
        ("stream", gemm.Status.INVALID_VALUE, "stream", "cudaStream_t"),
    ],
)
def test_binding_refusals_name_the_argument(case, status, argument, text, rng):
    a, b = random((2, 3), "float32", rng), random((3, 4), "float32", rng)
    out = np.full((2, 4), 7, np.float32)
    calls = {
        "k": lambda: gemm.matmul(a, random((4, 4), "float32", rng)),
        "batch": lambda: gemm.matmul(random((2, 2, 3), "float32", rng), random((3, 3, 4), "float32", rng)),
        "0-d": lambda: gemm.matmul(np.float32(1), b),
        "dtypes": lambda: gemm.matmul(a, b.astype(np.float64)),
        "int": lambda: gemm.matmul(a.astype(np.int32), b.astype(np.int32)),
        "out shape": lambda: gemm.matmul(a, b, np.zeros((4, 4), np.float32)),
        "out dtype": lambda: gemm.matmul(a, b, np.zeros((2, 4))),
        "read-only": lambda: gemm.matmul(a, b, np.broadcast_to(np.float32(0), (2, 4))),
        "beta": lambda: gemm.matmul(a, b, beta=1.0),
        "complex alpha": lambda: gemm.matmul(a, b, out, alpha=1j),
        "text alpha": lambda: gemm.matmul(a, b, out, alpha="2"),
        "stream": lambda: gemm.matmul(a, b, out, stream="default"),
    }
    error = refused(calls[case])
    assert error.status == status
    assert error.parameter == 0  # refused before the library was called
    assert error.argument == argument
    assert text in str(error)
    assert str(error).startswith(argument + ": ")
    np.testing.assert_array_equal(out, np.full((2, 4), 7, np.float32))


def test_library_refusal_carries_its_status_parameter_and_message(rng):
    a, b = random((2, 3), "float32", rng), random((3, 4), "float32", rng)
    out = np.full((2, 4), 7, np.float32)
    error = refused(lambda: gemm.matmul(a, b, out, backend="no_such_backend"))
    assert error.status == gemm.Status.UNKNOWN_BACKEND
    assert error.parameter == 1  # gemm_set_backend's name
    assert error.argument == "backend"
    assert "no_such_backend" in str(error)
    np.testing.assert_array_equal(out, np.full((2, 4), 7, np.float32))


def test_plan_run_refusal_is_the_library_message(rng):
    a, b = random((2, 3), "float64", rng), random((3, 4), "float64", rng)
    out = np.full((2, 4), 7.0)
    plan = gemm.Plan(a, b, out, beta_zero=True)
    error = refused(lambda: plan.run(a, b, out, beta=1.0))
    assert error.status == gemm.Status.INVALID_VALUE
    assert error.parameter == 5  # gemm_plan_run's beta
    assert "beta_zero" in str(error)
    np.testing.assert_array_equal(out, np.full((2, 4), 7.0))


def test_error_survives_pickling():
    import pickle

    error = pickle.loads(pickle.dumps(gemm.Error("m", 3, 4, "b")))
    assert (str(error), error.status, error.parameter, error.argument) == ("m", gemm.Status.INVALID_SIZE, 4, "b")
