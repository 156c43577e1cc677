"""gemm.matmul on FP8 operands (ml_dtypes' float8_e4m3fn and float8_e5m2): the result type,
per-tensor and block scales, the output scale and amax, against float64 of the decoded values;
and what is refused, with nothing written."""

import os
import subprocess
import sys

import numpy as np
import pytest

import gemm
from conftest import UNIT_ROUNDOFF, random, refused
from raw_cuda import HostDLPack

ml_dtypes = pytest.importorskip("ml_dtypes", reason="FP8 arrays need ml_dtypes (pip install ml_dtypes)")

FP8 = ["float8_e4m3fn", "float8_e5m2"]
RESULTS = ["bfloat16", "float16", "float32"]
HOST_BACKENDS = [None, "cpu_ref", "cpu_omp"]


def fp8(shape, name, rng, scale=1.0):
    """Values in [-scale, scale] stored in the FP8 type name."""
    return (rng.uniform(-1, 1, shape) * scale).astype(getattr(ml_dtypes, name))


def result_array(shape, name, value=0.0):
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    return np.full(shape, value, dtype)


def expected(a, b, alpha=1.0, beta=0.0, c0=None, a_scale=1.0, b_scale=1.0):
    """D before d_scale and its magnitude, in float64 of the decoded values."""
    a, b = a.astype(np.float64) * a_scale, b.astype(np.float64) * b_scale
    d = alpha * (a @ b)
    magnitude = abs(alpha) * (np.abs(a) @ np.abs(b))
    if c0 is not None and beta != 0:
        d = d + beta * c0.astype(np.float64)
        magnitude = magnitude + abs(beta) * np.abs(c0.astype(np.float64))
    return d, magnitude


def block_expected(a, b, a_scale, b_scale):
    """D and its magnitude with block scales, in float64: a[i, l] times a_scale[i, l // 128],
    b[l, j] times b_scale[l // 128, j // 128]."""
    (m, k), n = a.shape, b.shape[1]
    sa = np.repeat(a_scale.astype(np.float64), 128, axis=1)[:, :k]
    sb = np.repeat(np.repeat(b_scale.astype(np.float64), 128, axis=0), 128, axis=1)[:k, :n]
    a64, b64 = a.astype(np.float64) * sa, b.astype(np.float64) * sb
    return a64 @ b64, np.abs(a64) @ np.abs(b64)


def block_scales(shape, rng, order="C"):
    """float32 scales 2^u, u uniform in [-3, 3): each block's its own."""
    return np.asarray(2.0 ** rng.uniform(-3, 3, shape), dtype=np.float32, order=order)


def assert_close(got, d, magnitude, result, k, d_scale=1.0):
    """f32 sums of k products (4 (k + 2) u of slack, as conftest's rule), then one rounding to
    the result's type."""
    tolerance = (4 * (k + 2) * 2.0**-24 + 2 * UNIT_ROUNDOFF[result]) * magnitude * abs(d_scale)
    error = np.abs(got.astype(np.float64) - d * d_scale)
    assert np.all(error <= tolerance + np.finfo(np.float64).tiny), f"worst |error| {error.max()}"


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("name", FP8)
@pytest.mark.parametrize("result", RESULTS)
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 5, 13), (33, 17, 65)], ids=str)
def test_fp8_equals_the_decoded_product(backend, name, result, m, n, k, rng):
    a, b = fp8((m, k), name, rng), fp8((k, n), name, rng)
    c = gemm.matmul(a, b, dtype=result, backend=backend)
    assert c.dtype == result_array((1,), result).dtype and c.shape == (m, n)
    d, magnitude = expected(a, b)
    assert_close(c, d, magnitude, result, k)


@pytest.mark.parametrize("view", ["a.T", "b.T", "rows::2"])
def test_fp8_views(view, rng):
    m, n, k = 9, 7, 11
    if view == "a.T":
        a, b = fp8((k, m), "float8_e4m3fn", rng).T, fp8((k, n), "float8_e4m3fn", rng)
    elif view == "b.T":
        a, b = fp8((m, k), "float8_e4m3fn", rng), fp8((n, k), "float8_e4m3fn", rng).T
    else:  # a leading dimension larger than needed
        a, b = fp8((2 * m, k), "float8_e4m3fn", rng)[::2], fp8((k, n), "float8_e4m3fn", rng)
    c = gemm.matmul(a, b, dtype="float32")
    assert_close(c, *expected(a, b), "float32", k)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("form", ["numbers", "arrays"])
def test_scales_output_scale_and_amax(backend, form, rng):
    m, n, k = 12, 10, 40
    a, b = fp8((m, k), "float8_e4m3fn", rng, 400.0), fp8((k, n), "float8_e4m3fn", rng, 3.0)
    c0 = random((m, n), "float32", rng)
    out = c0.copy()
    sa, sb, sd = 0.25, 3.0, 0.5
    if form == "numbers":
        scales = {"a_scale": sa, "b_scale": sb, "d_scale": sd}
    else:  # a 0-d and 1-element float32 arrays
        scales = {"a_scale": np.float32(sa), "b_scale": np.array([sb], np.float32), "d_scale": np.array(sd, np.float32)}
    amax = np.full(1, -1.0, np.float32)
    got = gemm.matmul(a, b, out, alpha=1.5, beta=-0.75, backend=backend, amax=amax, **scales)
    assert got is out
    d, magnitude = expected(a, b, 1.5, -0.75, c0, sa, sb)
    assert_close(out, d, magnitude, "float32", k, sd)
    # amax is max |D| before the output scale.
    assert abs(float(amax[0]) - np.abs(d).max()) <= 4 * (k + 2) * 2.0**-24 * magnitude.max()


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("a_order", ["F", "C"])  # x's scales read in place, or copied
@pytest.mark.parametrize("out_order", ["C", "F"])  # a row-major call, a column-major one
def test_block_scales(backend, a_order, out_order, rng):
    # x @ w.T with w stored (out, in) and its scales as DeepSeek-V3 keeps them, a row-major
    # (ceil(out / 128), ceil(in / 128)) array: b_scale is its transpose, read in place.
    m, n, k = 5, 260, 300
    x, w = fp8((m, k), "float8_e4m3fn", rng, 300.0), fp8((n, k), "float8_e4m3fn", rng, 2.0)
    x_scale, w_scale = block_scales((m, 3), rng, a_order), block_scales((3, 3), rng)
    out = np.full((m, n), np.nan, np.float32, order=out_order)
    amax = np.full(1, -1.0, np.float32)
    assert gemm.matmul(x, w.T, out, a_scale=x_scale, b_scale=w_scale.T, amax=amax, backend=backend) is out
    d, magnitude = block_expected(x, w.T, x_scale, w_scale.T)
    assert_close(out, d, magnitude, "float32", k)
    assert abs(float(amax[0]) - np.abs(d).max()) <= 4 * (k + 2) * 2.0**-24 * magnitude.max()
    # Each block's scale applies to its own 128 x 128 of w: one changed, the reference with it.
    changed = w_scale.copy()
    changed[1, 2] *= 4
    again = gemm.matmul(x, w.T, a_scale=x_scale, b_scale=changed.T, dtype="float32", backend=backend)
    assert_close(again, *block_expected(x, w.T, x_scale, changed.T), "float32", k)
    assert np.any(again[:, 128:256] != out[:, 128:256])


def test_block_scales_in_a_plan(rng):
    m, n, k = 6, 130, 257
    a, b = fp8((m, k), "float8_e4m3fn", rng, 100.0), fp8((k, n), "float8_e4m3fn", rng)
    a_scale, b_scale = block_scales((m, 3), rng, "F"), block_scales((3, 2), rng, "F")
    out = result_array((m, n), "bfloat16", np.nan)
    plan = gemm.Plan(a, b, out, scale_mode="block")
    plan.run(a, b, out, a_scale=a_scale, b_scale=b_scale, d_scale=0.5)
    d, magnitude = block_expected(a, b, a_scale, b_scale)
    assert_close(out, d, magnitude, "bfloat16", k, 0.5)


def test_verbose_says_when_block_scales_are_copied():
    program = (
        "import numpy as np, ml_dtypes, gemm\n"
        "a = np.ones((4, 300), ml_dtypes.float8_e4m3fn); b = np.ones((300, 5), ml_dtypes.float8_e4m3fn)\n"
        "sb = np.ones((3, 1), np.float32)\n"
        "gemm.matmul(a, b, dtype='float32', a_scale=np.ones((4, 3), np.float32, order='F'), b_scale=sb)\n"
        "gemm.matmul(a, b, dtype='float32', a_scale=np.ones((4, 3), np.float32), b_scale=sb)\n"
    )
    env = dict(os.environ, GEMM_VERBOSE="1")
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    copies = [line for line in result.stderr.splitlines() if "copied" in line]
    assert len(copies) == 1, result.stderr
    assert "a_scale (shape (4, 3), strides (3, 1) elements) is not stored as block scales are read" in copies[0]


def test_beta_zero_does_not_read_out(rng):
    a, b = fp8((5, 6), "float8_e4m3fn", rng), fp8((6, 4), "float8_e4m3fn", rng)
    out = result_array((5, 4), "bfloat16", np.nan)
    gemm.matmul(a, b, out)
    assert np.all(np.isfinite(out.astype(np.float32)))
    assert_close(out, *expected(a, b), "bfloat16", 6)


def test_result_type_from_dtype_objects(rng):
    a, b = fp8((3, 4), "float8_e5m2", rng), fp8((4, 2), "float8_e5m2", rng)
    for dtype, name in [(np.float32, "float32"), (np.dtype("float16"), "float16"), (ml_dtypes.bfloat16, "bfloat16")]:
        c = gemm.matmul(a, b, dtype=dtype)
        assert c.dtype == result_array((1,), name).dtype
    # dtype= equal to a's is accepted for the other types too
    x = random((3, 4), "float32", rng)
    assert gemm.matmul(x, x.T, dtype="float32").dtype == np.float32


@pytest.mark.parametrize("name", FP8)
def test_dlpack_float8_codes(name, rng):
    a, b = fp8((6, 9), name, rng), fp8((9, 5), name, rng)
    out = result_array((6, 5), "float32")
    gemm.matmul(HostDLPack(a), HostDLPack(b), out, a_scale=2.0, b_scale=0.5)
    assert_close(out, *expected(a, b, a_scale=2.0, b_scale=0.5), "float32", 9)


def refusal_operands(rng):
    """FP8 a (2 x 3) and b (3 x 4), a float32 out of 7s and an amax of -1, which a refused call
    leaves as they are, and a float32 x (2 x 3)."""
    a, b = fp8((2, 3), "float8_e4m3fn", rng), fp8((3, 4), "float8_e4m3fn", rng)
    return a, b, np.full((2, 4), 7, np.float32), np.full(1, -1.0, np.float32), random((2, 3), "float32", rng)


def assert_refused_writing_nothing(call, status, argument, text, out, amax):
    error = refused(call)
    assert error.status == status
    assert error.argument == argument
    assert text in str(error), str(error)
    assert np.all(out == 7)
    assert amax[0] == -1.0


@pytest.mark.parametrize(
    "case,status,argument,text",
    [
        ("no result type", gemm.Status.INVALID_DTYPE, "dtype", "need dtype="),
        ("float64 result", gemm.Status.INVALID_DTYPE, "dtype", "float64 is no result type of FP8 operands"),
        ("float64 out", gemm.Status.INVALID_DTYPE, "out", "float64 is no result type of FP8 operands"),
        ("out and dtype differ", gemm.Status.INVALID_DTYPE, "out", "float16 differs from the result's, float32"),
        ("mixed FP8", gemm.Status.INVALID_DTYPE, "b", "float8_e5m2 differs from a's, float8_e4m3fn"),
        ("a_scale alone", gemm.Status.INVALID_VALUE, "b_scale", "a_scale and b_scale come together"),
        ("float64 scale", gemm.Status.INVALID_VALUE, "a_scale", "not float64 of shape ()"),
        ("two scales", gemm.Status.INVALID_VALUE, "a_scale", "block scales come together"),
        ("block shape", gemm.Status.INVALID_SIZE, "a_scale", "(m, ceil(k / 128)) = (2, 1)"),
        ("b block shape", gemm.Status.INVALID_SIZE, "b_scale", "(ceil(k / 128), ceil(n / 128)) = (1, 1)"),
        ("float64 blocks", gemm.Status.INVALID_VALUE, "a_scale", "not float64 of shape (2, 1)"),
        ("blocks not copyable", gemm.Status.INVALID_STRIDE, "a_scale", "has no .T to copy it by"),
        ("amax float64", gemm.Status.INVALID_VALUE, "amax", "not float64 of shape (1,)"),
        ("text scale", gemm.Status.INVALID_DTYPE, "d_scale", "not one gemm computes"),
        ("batch", gemm.Status.NOT_SUPPORTED, "a", "one matrix a call"),
        ("scales on float32", gemm.Status.INVALID_VALUE, "a_scale", "scales apply to FP8 operands"),
        ("dtype on float32", gemm.Status.INVALID_DTYPE, "dtype", "float16 differs from a's and b's, float32"),
    ],
)
def test_refusals_name_the_argument_and_write_nothing(case, status, argument, text, rng):
    a, b, out, amax, x = refusal_operands(rng)
    calls = {
        "no result type": lambda: gemm.matmul(a, b),
        "float64 result": lambda: gemm.matmul(a, b, dtype="float64"),
        "float64 out": lambda: gemm.matmul(a, b, np.zeros((2, 4), np.float64)),
        "out and dtype differ": lambda: gemm.matmul(a, b, out.astype(np.float16), dtype=np.float32),
        "mixed FP8": lambda: gemm.matmul(a, b.astype(ml_dtypes.float8_e5m2), out),
        "a_scale alone": lambda: gemm.matmul(a, b, out, a_scale=2.0, amax=amax),
        "float64 scale": lambda: gemm.matmul(a, b, out, a_scale=np.array(2.0), b_scale=1.0, amax=amax),
        "two scales": lambda: gemm.matmul(a, b, out, a_scale=1.0, b_scale=np.ones(2, np.float32), amax=amax),
        "block shape": lambda: gemm.matmul(
            a, b, out, a_scale=np.ones((2, 2), np.float32), b_scale=np.ones((1, 1), np.float32), amax=amax
        ),
        "b block shape": lambda: gemm.matmul(
            a, b, out, a_scale=np.ones((2, 1), np.float32), b_scale=np.ones((1, 4), np.float32), amax=amax
        ),
        "float64 blocks": lambda: gemm.matmul(
            a, b, out, a_scale=np.ones((2, 1)), b_scale=np.ones((1, 1), np.float32), amax=amax
        ),
        # a_scale exported by DLPack alone, its rows 3 apart: not read in place, and no .T to copy by
        "blocks not copyable": lambda: gemm.matmul(
            np.ones((2, 300), ml_dtypes.float8_e4m3fn), np.ones((300, 4), ml_dtypes.float8_e4m3fn), out,
            a_scale=HostDLPack(np.ones((2, 3), np.float32)), b_scale=np.ones((3, 1), np.float32), amax=amax
        ),
        "amax float64": lambda: gemm.matmul(a, b, out, amax=np.zeros(1)),
        "text scale": lambda: gemm.matmul(a, b, out, d_scale="2", amax=amax),
        "batch": lambda: gemm.matmul(np.stack([a, a]), b, np.zeros((2, 2, 4), np.float32), amax=amax),
        "scales on float32": lambda: gemm.matmul(x, x.T, a_scale=1.0, b_scale=1.0),
        "dtype on float32": lambda: gemm.matmul(x, x.T, dtype="float16"),
    }
    assert_refused_writing_nothing(calls[case], status, argument, text, out, amax)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("mode", [None, "tensor"])
def test_plans_of_fp8_operands(backend, mode, rng):
    m, n, k = 13, 9, 70
    a, b = fp8((m, k), "float8_e4m3fn", rng, 300.0), fp8((k, n), "float8_e4m3fn", rng, 2.0)
    out = result_array((m, n), "bfloat16", np.nan)
    plan = gemm.Plan(a, b, out, beta_zero=True, scale_mode=mode)
    assert plan.dtype == "bfloat16"
    if backend:
        gemm.set_backend(backend)
    try:
        scales = {"a_scale": 0.5, "b_scale": np.float32(4.0)} if mode else {}
        amax = np.full(1, -1.0, np.float32)
        assert plan.run(a, b, out, d_scale=0.25, amax=amax, **scales) is out
    finally:
        gemm.set_backend(None)
    d, magnitude = expected(a, b, a_scale=0.5 if mode else 1.0, b_scale=4.0 if mode else 1.0)
    assert_close(out, d, magnitude, "bfloat16", k, 0.25)
    assert abs(float(amax[0]) - np.abs(d).max()) <= 4 * (k + 2) * 2.0**-24 * magnitude.max()
    # Made from shapes: a or b an array gives the FP8 type, dtype= the result's; alpha and beta.
    shaped = gemm.Plan((m, k), b, dtype="float32")
    c0 = random((m, n), "float32", rng)
    c = c0.copy()
    shaped.run(a, b, c, alpha=-2.0, beta=0.5)
    assert_close(c, *expected(a, b, -2.0, 0.5, c0), "float32", k)


@pytest.mark.parametrize(
    "case,status,argument,text",
    [
        ("no result type", gemm.Status.INVALID_DTYPE, "dtype", "need dtype= or out"),
        ("float64 result", gemm.Status.INVALID_DTYPE, "dtype", "float64 is no result type of FP8 operands"),
        ("out and dtype differ", gemm.Status.INVALID_DTYPE, "out", "float16 differs from the result's, float32"),
        ("mixed FP8", gemm.Status.INVALID_DTYPE, "b", "float8_e5m2 differs from a's, float8_e4m3fn"),
        ("FP8 from shapes", gemm.Status.INVALID_DTYPE, "dtype", "takes a or b as an array"),
        ("unknown mode", gemm.Status.INVALID_VALUE, "scale_mode", "not 'blocks'"),
        ("mode on float32", gemm.Status.INVALID_VALUE, "scale_mode", "scales apply to FP8 operands"),
        ("dtype on float32", gemm.Status.INVALID_DTYPE, "dtype", "float16 differs from a's and b's, float32"),
        ("scales missing", gemm.Status.INVALID_VALUE, "a_scale", "scale_mode=\"tensor\" are needed, not none"),
        ("tensor scales for blocks", gemm.Status.INVALID_VALUE, "a_scale", "=\"block\" are needed, not \"tensor\""),
        ("scales unasked", gemm.Status.INVALID_VALUE, "a_scale", "this one takes none"),
        ("run of another FP8", gemm.Status.INVALID_DTYPE, "a", "float8_e5m2 differs from the plan's, float8_e4m3fn"),
        ("out of another type", gemm.Status.INVALID_DTYPE, "out", "float16 differs from the plan's, float32"),
        ("scales on a float32 run", gemm.Status.INVALID_VALUE, "d_scale", "scales apply to FP8 operands"),
    ],
)
def test_fp8_plan_refusals_name_the_argument_and_write_nothing(case, status, argument, text, rng):
    a, b, out, amax, x = refusal_operands(rng)
    calls = {
        "no result type": lambda: gemm.Plan(a, b),
        "float64 result": lambda: gemm.Plan(a, b, dtype="float64"),
        "out and dtype differ": lambda: gemm.Plan(a, b, out.astype(np.float16), dtype=np.float32),
        "mixed FP8": lambda: gemm.Plan(a, b.astype(ml_dtypes.float8_e5m2), out),
        "FP8 from shapes": lambda: gemm.Plan((2, 3), (3, 4), dtype="float8_e5m2"),
        "unknown mode": lambda: gemm.Plan(a, b, out, scale_mode="blocks"),
        "mode on float32": lambda: gemm.Plan(x, x.T, scale_mode="tensor"),
        "dtype on float32": lambda: gemm.Plan(x, x.T, dtype="float16"),
        "scales missing": lambda: gemm.Plan(a, b, out, scale_mode="tensor").run(a, b, out, amax=amax),
        "tensor scales for blocks": lambda: gemm.Plan(a, b, out, scale_mode="block").run(
            a, b, out, a_scale=1.0, b_scale=1.0, amax=amax
        ),
        "scales unasked": lambda: gemm.Plan(a, b, out).run(a, b, out, a_scale=1.0, b_scale=1.0, amax=amax),
        "run of another FP8": lambda: gemm.Plan(a, b, out).run(a.astype(ml_dtypes.float8_e5m2), b, out),
        "out of another type": lambda: gemm.Plan(a, b, out).run(a, b, out.astype(np.float16)),
        "scales on a float32 run": lambda: gemm.Plan(x, x.T).run(x, x.T, np.zeros((2, 2), np.float32), d_scale=1.0),
    }
    assert_refused_writing_nothing(calls[case], status, argument, text, out, amax)


def test_tune_of_fp8_classes():
    # c_dtype names the result's type; the class is measured with scales of 1.
    report = gemm.tune(16, 24, 40, dtype="float8_e4m3fn", c_dtype="bfloat16", transb="T", budget_ms=20,
                       backends="cpu_ref,cpu_omp", store=False)
    names = {c["backend"] for c in report["candidates"]}
    assert names >= {"cpu_ref", "cpu_omp"}
    assert all(c["correct"] for c in report["candidates"])
    error = refused(lambda: gemm.tune(8, 8, 8, dtype="float8_e5m2", store=False))
    assert error.status == gemm.Status.INVALID_DTYPE and error.argument == "c_dtype"
    error = refused(lambda: gemm.tune(8, 8, 8, dtype="float8_e4m3fn", c_dtype="float64", store=False))
    assert error.argument == "c_dtype" and "no result type of float8_e4m3fn" in str(error)
