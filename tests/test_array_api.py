"""The estimators on an array-API namespace: ``array_api_strict`` on the CPU stands for a GPU's.

scikit-learn's ``array_api_dispatch`` needs ``SCIPY_ARRAY_API=1`` before SciPy is imported,
which changes SciPy for the whole process; the rest of the suite runs without it. So the
cases live in ``tests/array_api_cases.py`` (not collected with the suite) and run in a child
process with the variable set. Known answers: the same estimator on the same data in NumPy.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).with_name("array_api_cases.py")


def test_the_estimators_on_array_api_strict_equal_numpys():
    pytest.importorskip("array_api_strict")
    pytest.importorskip("array_api_compat")
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs", str(CASES)],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary, proc.stdout[-2000:]
