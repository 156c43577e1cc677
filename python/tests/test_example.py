"""examples/python/matmul.py runs to its end (a user copies from it)."""

import os
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "matmul.py"


def test_example_runs():
    result = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=dict(os.environ), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "refused: INVALID_SIZE (b)" in result.stdout
