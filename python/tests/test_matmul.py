"""gemm.matmul against numpy.matmul: dtypes, views, batches, out= and beta."""

import subprocess
import sys

import numpy as np
import pytest

import gemm
from conftest import DTYPES, assert_matmul_close, numpy_dtype, random

SHAPES = [(1, 1, 1), (2, 3, 4), (7, 5, 13), (17, 31, 9), (64, 64, 64), (33, 1, 65)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_matrices_equal_numpy(dtype, m, n, k, rng):
    a, b = random((m, k), dtype, rng), random((k, n), dtype, rng)
    c = gemm.matmul(a, b)
    assert c.dtype == a.dtype
    assert_matmul_close(c, a, b, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", ["a.T", "b.T", "both.T", "rows::2", "cols::2", "reversed", "sliced"])
def test_views_equal_numpy(dtype, view, rng):
    m, n, k = 9, 7, 11
    if view == "a.T":
        a, b = random((k, m), dtype, rng).T, random((k, n), dtype, rng)
    elif view == "b.T":
        a, b = random((m, k), dtype, rng), random((n, k), dtype, rng).T
    elif view == "both.T":
        a, b = random((k, m), dtype, rng).T, random((n, k), dtype, rng).T
    elif view == "rows::2":  # a leading dimension larger than needed
        a, b = random((2 * m, k), dtype, rng)[::2], random((2 * k, n), dtype, rng)[::2]
    elif view == "cols::2":  # no unit stride: copied
        a, b = random((m, 2 * k), dtype, rng)[:, ::2], random((k, 2 * n), dtype, rng)[:, ::2]
    elif view == "reversed":  # negative strides: copied
        a, b = random((m, k), dtype, rng)[::-1], random((k, n), dtype, rng)[:, ::-1]
    else:  # a window of a larger matrix
        a, b = random((m + 3, k + 5), dtype, rng)[2 : 2 + m, 1 : 1 + k], random((k, n), dtype, rng)
    assert_matmul_close(gemm.matmul(a, b), a, b, dtype)


BATCHES = [
    ((3, 4, 5), (3, 5, 2)),  # strided batch
    ((3, 4, 5), (5, 2)),  # b shared: stride 0
    ((4, 5), (3, 5, 2)),  # a shared
    ((2, 1, 4, 5), (3, 5, 2)),  # broadcast both ways
    ((2, 3, 4, 5), (2, 3, 5, 2)),  # two batch dimensions that merge
    ((2, 1, 4, 5), (1, 3, 5, 2)),  # no uniform stride: pointer arrays
    ((0, 4, 5), (5, 2)),  # empty batch
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape,b_shape", BATCHES, ids=lambda v: str(v))
def test_batches_broadcast_as_numpy(dtype, a_shape, b_shape, rng):
    a, b = random(a_shape, dtype, rng), random(b_shape, dtype, rng)
    c = gemm.matmul(a, b)
    assert c.shape == np.matmul(a.astype(np.complex128), b.astype(np.complex128)).shape
    assert_matmul_close(c, a, b, dtype)


def test_batch_views_equal_numpy(rng):
    a = random((4, 6, 5, 3), "float64", rng)[::-1, ::2]  # negative and skipping batch strides
    b = random((3, 3, 2), "float64", rng)
    bt = random((3, 2, 3), "float64", rng).transpose(0, 2, 1)  # transposed matrices in a batch
    assert_matmul_close(gemm.matmul(a, b), a, b, "float64")
    assert_matmul_close(gemm.matmul(a, bt), a, bt, "float64")
    assert_matmul_close(gemm.matmul(a, b[:1]), a, b[:1], "float64")


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_vectors_as_numpy(dtype, rng):
    a, b, v, w = random((4, 3), dtype, rng), random((3, 5), dtype, rng), random(3, dtype, rng), random(3, dtype, rng)
    assert gemm.matmul(a, v).shape == (4,)
    assert_matmul_close(gemm.matmul(a, v), a, v, dtype)
    assert_matmul_close(gemm.matmul(v, b), v, b, dtype)
    batch = random((2, 4, 3), dtype, rng)
    assert_matmul_close(gemm.matmul(batch, v), batch, v, dtype)
    dot = gemm.matmul(v, w)
    assert np.ndim(dot) == 0
    assert_matmul_close(np.asarray(dot), v, w, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_out_with_alpha_and_beta(dtype, rng):
    a, b = random((6, 4), dtype, rng), random((4, 5), dtype, rng)
    c0 = random((6, 5), dtype, rng)
    out = c0.copy()
    alpha, beta = (0.5 - 0.25j, 2 + 1j) if "complex" in dtype else (0.5, -2.0)
    result = gemm.matmul(a, b, out, alpha=alpha, beta=beta)
    assert result is out
    assert_matmul_close(out, a, b, dtype, alpha=alpha, beta=beta, c0=c0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta_zero_never_reads_out(dtype, rng):
    a, b = random((6, 4), dtype, rng), random((4, 5), dtype, rng)
    out = np.full((6, 5), np.nan, dtype=numpy_dtype(dtype))
    gemm.matmul(a, b, out)
    assert not np.isnan(out.astype(np.complex128)).any()
    assert_matmul_close(out, a, b, dtype)


@pytest.mark.parametrize("layout", ["transposed", "strided", "batch"])
def test_out_views_written_in_place(layout, rng):
    a, b = random((3, 6, 4), "float32", rng), random((4, 5), "float32", rng)
    if layout == "transposed":  # C column-major: op T of the whole call
        a = a[0]
        out = np.full((5, 6), np.nan, np.float32).T
    elif layout == "strided":  # no unit stride: computed apart and copied in
        a = a[0]
        out = np.full((6, 10), np.nan, np.float32)[:, ::2]
    else:  # a batch of C with a gap between matrices
        out = np.full((3, 8, 5), np.nan, np.float32)[:, 1:7]
    base = out.base
    assert gemm.matmul(a, b, out) is out
    assert out.base is base
    assert_matmul_close(out, a, b, "float32")


def test_out_sharing_memory_with_an_operand(rng):
    a = random((5, 5), "float64", rng)
    expected = np.matmul(a, a)
    gemm.matmul(a, a, a)
    np.testing.assert_allclose(a, expected, rtol=1e-13, atol=1e-13)


def test_k_zero_scales_out(rng):
    out = random((3, 4), "float64", rng)
    c0 = out.copy()
    gemm.matmul(np.zeros((3, 0)), np.zeros((0, 4)), out, beta=3.0)
    np.testing.assert_array_equal(out, 3.0 * c0)
    assert np.array_equal(gemm.matmul(np.ones((3, 0)), np.ones((0, 4))), np.zeros((3, 4)))


def test_lists_are_taken_as_numpy_does():
    assert gemm.matmul([[1.0, 2.0]], [[3.0], [4.0]]).tolist() == [[11.0]]


def test_backend_keyword_forces_it_for_the_call(rng):
    a, b = random((8, 8), "float64", rng), random((8, 8), "float64", rng)
    before = gemm.info()["backend"]
    assert_matmul_close(gemm.matmul(a, b, backend="cpu_ref"), a, b, "float64")
    assert gemm.info()["backend"] == before


def test_verbose_says_when_an_operand_is_copied():
    program = (
        "import numpy as np, gemm\n"
        "a = np.ones((4, 8))[:, ::2]\n"
        "gemm.matmul(a, np.ones((4, 3)))\n"
        "gemm.matmul(np.ones((4, 4)), np.ones((4, 3)))\n"
        "gemm.matmul(np.ones((4, 4)), np.ones((4, 3)), np.ones((4, 6))[:, ::2])\n"
    )
    env = dict(__import__("os").environ, GEMM_VERBOSE="1")
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    copies = [line for line in result.stderr.splitlines() if line.startswith("gemm.matmul:")]
    assert len(copies) == 2, result.stderr
    assert "a (shape (4, 4), strides (8, 2) elements)" in copies[0] and "copied" in copies[0]
    assert "out (shape (4, 3), strides (6, 2) elements) is no matrix BLAS writes in place" in copies[1]
