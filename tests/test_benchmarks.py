"""Smoke-run the benchmarks on their quick profile so they cannot rot (no timing asserts)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sparsekernel.datasets import find_shared_data

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.skipif(find_shared_data("ijcnn1") is None, reason="ijcnn1 data not available")
def test_ijcnn1_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_ijcnn1.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "ijcnn1_quick.json").read_text())
    rows = result["rows"]
    names = [r["method"].split()[1] for r in rows]
    assert names == ["ReducedSVC", "ReducedSVC", "SVC", "Nystroem"]
    for row in rows:
        assert "error" not in row, row
        assert 0.0 <= row["test_error_pct"] <= 100.0 and row["fit_s"] > 0
    assert "| test error % |" in (tmp_path / "ijcnn1_quick.md").read_text()


@pytest.mark.skipif(find_shared_data("raetsch_banana") is None, reason="IDA data not available")
def test_slmc_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_slmc.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "slmc_quick.json").read_text())
    assert [r["data"] for r in result["rows"]] == ["banana", "heart"]
    for row in result["rows"]:
        for key in ("SVM", "RS@10%", "MRS@10%", "RSVM@10%", "MRSVM@10%", "SLMC@10%"):
            assert 0.0 <= row[key] <= 100.0, (key, row)
    assert "| SLMC 10% |" in (tmp_path / "slmc_quick.md").read_text()
