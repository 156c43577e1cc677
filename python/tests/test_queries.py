"""gemm.backends, gemm.info, gemm.set_backend and gemm.tune."""

import numpy as np
import pytest

import gemm
from conftest import assert_matmul_close, random


def test_backends_list_the_reference_available():
    backends = {b.name: b for b in gemm.backends()}
    assert backends["cpu_ref"].available and backends["cpu_ref"].kind == "host"
    for b in backends.values():
        assert b.kind in ("host", "device", "multi_device")
        assert b.available == (b.reason == "")  # an unavailable backend says why


def test_info_holds_version_selection_and_cache():
    info = gemm.info()
    assert info["version"] == gemm.__version__ == "0.1.0"
    assert info["backend"] == "auto" and info["backend_source"] == "default"
    assert info["tune_cache"].endswith("tune-cache.txt")
    assert any(o["name"] == "GEMM_BACKEND" for o in info["options"])
    assert [b.name for b in info["backends"]] == [b.name for b in gemm.backends()]


def test_set_backend_forces_and_returns(rng):
    a, b = random((5, 5), "float64", rng), random((5, 5), "float64", rng)
    try:
        gemm.set_backend("cpu_ref")
        assert (gemm.info()["backend"], gemm.info()["backend_source"]) == ("cpu_ref", "gemm_set_backend")
        assert_matmul_close(gemm.matmul(a, b), a, b, "float64")
        with pytest.raises(gemm.Error) as info:
            gemm.set_backend("no_such_backend")
        assert info.value.status == gemm.Status.UNKNOWN_BACKEND and info.value.argument == "name"
        assert gemm.info()["backend"] == "cpu_ref"  # a refused name leaves the choice
        plan = gemm.Plan(a, b)
        assert plan.backend[0] == "cpu_ref"
    finally:
        gemm.set_backend(None)
    assert gemm.info()["backend_source"] == "default"


def test_tune_reports_candidates_without_storing():
    # The built-in rule's choice is always a candidate (gemm_tune): where this machine's rates
    # send 24^3 to cblas, cblas runs beside the two named and may win.
    report = gemm.tune(24, 24, 24, dtype="float32", budget_ms=20, backends="cpu_ref,cpu_omp", store=False)
    assert report["backend"] in ("cpu_ref", "cpu_omp", report["default_backend"])
    assert not report["stored"]
    names = {c["backend"] for c in report["candidates"]}
    assert names >= {"cpu_omp", report["default_backend"]}
    assert names <= {"cpu_ref", "cpu_omp", report["default_backend"]}
    assert all(c["correct"] for c in report["candidates"])


def test_tune_of_a_float32_result_of_half_operands():
    report = gemm.tune(20, 12, 28, dtype="float16", c_dtype="float32", budget_ms=20, backends="cpu_ref,cpu_omp",
                       store=False)
    assert {c["backend"] for c in report["candidates"]} >= {"cpu_ref", "cpu_omp"}
    assert all(c["correct"] for c in report["candidates"])


def test_tune_refuses_a_bad_request():
    with pytest.raises(gemm.Error) as info:
        gemm.tune(-1, 4, 4, store=False)
    assert info.value.status == gemm.Status.INVALID_SIZE
    with pytest.raises(gemm.Error) as info:
        gemm.tune(4, 4, 4, transa="X", store=False)
    assert info.value.argument == "transa"
    # A result type the operands do not have is the Python argument's fault, named as such.
    for dtype, c_dtype in [("float32", "float16"), ("float16", "bfloat16"), ("float64", "float32"),
                           ("float8_e4m3fn", "float8_e4m3fn")]:
        with pytest.raises(gemm.Error) as info:
            gemm.tune(4, 4, 4, dtype=dtype, c_dtype=c_dtype, store=False)
        assert info.value.status == gemm.Status.INVALID_DTYPE
        assert info.value.argument == "c_dtype"
        assert "no result type of " + dtype in str(info.value)
