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


@pytest.mark.skipif(find_shared_data("raetsch_banana") is None
                    or find_shared_data("raetsch_ringnorm") is None,
                    reason="IDA banana/ringnorm data not available")
def test_basis_ablation_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_basis_ablation.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "basis_ablation_quick.json").read_text())
    schemes = {r["scheme"] for r in result["rows"]}
    assert {"random", "kmeans", "incremental", "systematic", "clustering"} <= schemes
    for row in result["rows"]:
        assert 0.0 <= row["test_error_pct"] <= 100.0 and row["select_s"] >= 0
    assert len(result["summary"]) == 10
    assert "m needed" in (tmp_path / "basis_ablation_quick.md").read_text()


@pytest.mark.skipif(find_shared_data("a9a") is None, reason="a9a data not available")
def test_ud_search_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_ud_search.py"), "--quick",
                    "--datasets", "a9a", "--out", str(tmp_path)], check=True,
                   capture_output=True, timeout=600)
    result = json.loads((tmp_path / "ud_search_quick.json").read_text())
    fits = [r["fits"] for r in result["rows"]]
    assert fits == [25, 13, 21]
    for row in result["rows"]:
        assert 0.0 <= row["test_accuracy_pct"] <= 100.0 and row["wall_s"] > 0
    assert (tmp_path / "ud_search_a9a_quick.png").stat().st_size > 0
