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


@pytest.mark.skipif(find_shared_data("pendigits") is None or find_shared_data("mnist_5k") is None,
                    reason="pendigits / mnist_5k data not available")
def test_decomposition_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_decomposition.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    parts = json.loads((tmp_path / "decomposition_quick.json").read_text())["parts"]
    assert len(parts) == 5
    for rows in parts.values():
        assert rows and all("error" not in row for row in rows), rows
    clf = next(rows for title, rows in parts.items() if "classification" in title)
    assert all(50.0 <= row["test_accuracy_pct"] <= 100.0 for row in clf)
    for name in ("decomposition_quick.md", "decomposition_embeddings_quick.png",
                 "decomposition_scaling_quick.png"):
        assert (tmp_path / name).stat().st_size > 0
