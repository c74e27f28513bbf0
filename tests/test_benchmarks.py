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


def test_llsvm_benchmark_quick_stream_and_checkerboard(tmp_path):
    for experiment in ("stream", "checkerboard"):
        subprocess.run([sys.executable, str(BENCH / "bench_llsvm.py"), "--quick",
                        "--experiment", experiment, "--out", str(tmp_path)],
                       check=True, capture_output=True, timeout=600)
    stream = json.loads((tmp_path / "llsvm_stream_quick.json").read_text())["rows"][0]
    assert "error" not in stream, stream
    assert stream["rows_streamed"] == 200_000 and stream["peak_rss_mib"] > 0
    board = json.loads((tmp_path / "llsvm_checkerboard_quick.json").read_text())["rows"]
    assert [r["method"].split()[1] for r in board] == ["LowRankSVC", "LowRankSVC", "Nystroem"]
    assert all(0.0 <= r["test_error_pct"] <= 50.0 for r in board)
