"""gemm.Plan: made from arrays or shapes, run on operands of that geometry only."""

import numpy as np
import pytest

import gemm
from conftest import DTYPES, assert_matmul_close, numpy_dtype, random


@pytest.mark.parametrize("dtype", DTYPES)
def test_plan_from_shapes_runs_like_matmul(dtype, rng):
    plan = gemm.Plan((6, 4), (4, 5), dtype=numpy_dtype(dtype))
    a, b = random((6, 4), dtype, rng), random((4, 5), dtype, rng)
    out = np.zeros((6, 5), numpy_dtype(dtype))
    c0 = random((6, 5), dtype, rng)
    out[...] = c0
    assert plan.run(a, b, out, alpha=2.0, beta=0.5) is out
    assert_matmul_close(out, a, b, dtype, alpha=2.0, beta=0.5, c0=c0)
    backend, variant, why = plan.backend
    assert backend and why


def test_plan_from_arrays_takes_their_views(rng):
    a = random((5, 7), "float32", rng).T  # op T
    b = random((9, 4), "float32", rng)[::2]  # a larger leading dimension
    batch_a = random((3, 7, 5), "float32", rng)
    out = np.empty((3, 7, 4), np.float32)
    plan = gemm.Plan(batch_a, b, out, beta_zero=True)
    plan.run(batch_a, b, out)
    assert_matmul_close(out, batch_a, b, "float32")
    single = gemm.Plan(a, b)
    out2 = np.empty((7, 4), np.float32)
    single.run(a, b, out2)
    assert_matmul_close(out2, a, b, "float32")


def test_plan_refuses_other_geometries(rng):
    a, b = random((4, 3), "float64", rng), random((3, 2), "float64", rng)
    plan = gemm.Plan(a, b)
    out = np.full((4, 2), 5.0)
    for args, argument in [
        ((np.asfortranarray(a), b, out), "a"),
        ((a, b.astype(np.float32), out), "b"),
        ((a, b, np.zeros((2, 4)).T), "out"),
    ]:
        with pytest.raises(gemm.Error) as info:
            plan.run(*args)
        assert info.value.argument == argument
    np.testing.assert_array_equal(out, np.full((4, 2), 5.0))


def test_plan_refuses_what_it_cannot_run_without_a_copy(rng):
    with pytest.raises(gemm.Error, match="no copies"):
        gemm.Plan(random((4, 6), "float32", rng)[:, ::2], random((3, 2), "float32", rng))
    with pytest.raises(gemm.Error, match="strided batch"):
        gemm.Plan((2, 1, 4, 3), (1, 3, 3, 2), dtype="float32")
    with pytest.raises(gemm.Error, match="dtype"):
        gemm.Plan((4, 3), (3, 2))
