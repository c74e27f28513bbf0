"""Smoke-run the benchmarks on their quick profile so they cannot rot (no timing asserts)."""

import json
import math
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


def test_lssvm_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_lssvm.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "lssvm_quick.json").read_text())
    full, kr = result["sine"][0], result["sine"][1]
    assert full["n_support_mean"] == 1000
    # The LS-SVM and kernel ridge on centred targets fit nearly the same function.
    assert abs(full["mse_vs_f_mean"] - kr["mse_vs_f_mean"]) < 0.2 * full["mse_vs_f_mean"]
    online = [r for r in result["sine"] if r["method"].startswith("online pruning after")]
    assert [r["n_support_mean"] for r in online] == [200, 200]
    sweep = [r["n_support_mean"] for r in result["sine"] if "N_w =" in r["method"]]
    assert sweep == [300, 400, 500]
    assert all(0 <= r["test_error_pct"] <= 100 for r in result["ripley"])
    assert result["throughput"]["n_points"] == 5000 and "error" not in result["throughput"]
    assert (tmp_path / "lssvm_sine_figure2_quick.png").stat().st_size > 0
    assert "## 2. LR-LSSVM on Ripley" in (tmp_path / "lssvm_quick.md").read_text()
@pytest.mark.skipif(find_shared_data("shuttle") is None, reason="shuttle data not available")
def test_mapreduce_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_mapreduce.py"), "--quick", "--datasets",
                    "shuttle 1 vs 4", "--out", str(tmp_path)], check=True, capture_output=True,
                   timeout=600)
    table = json.loads((tmp_path / "mapreduce_quick.json").read_text())["rows"]
    names = [r["method"].replace(",", " ").split()[0] for r in table]
    assert names == ["linear", "nonlinear", "ReducedSVC", "MapReduceSVC", "MapReduceSVC"]
    scale = json.loads((tmp_path / "mapreduce_scale_quick.json").read_text())["rows"]
    assert len(scale) == 2
    for row in table + scale:
        assert "error" not in row, row
        assert 0.0 <= row["accuracy_pct"] <= 100.0 and row["fit_s"] > 0
    # Same data, same random_state: threads and processes give the same model.
    assert scale[0]["accuracy_pct"] == scale[1]["accuracy_pct"]
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
    # grid 5 x 5; UD 9 + 4 new stage-2 points (+ 1 when the stage-2 box is shifted inside
    # the search box, its centre then not among its points); the 21-point UD design
    assert fits[0] == 25 and fits[1] in (13, 14) and fits[2] == 21
    for row in result["rows"]:
        assert 0.0 <= row["test_accuracy_pct"] <= 100.0 and row["wall_s"] > 0
    assert (tmp_path / "ud_search_a9a_quick.png").stat().st_size > 0
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


@pytest.mark.skipif(find_shared_data("dna") is None, reason="dna data not available")
def test_suite_benchmark_smoke_run(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_suite.py"), "--sets", "dna",
                    "--max-rows", "300", "--no-search", "--methods", "SVC,LowRankSVC",
                    "--params", "LowRankSVC:n_basis=50,memory_budget=1GB",
                    "--out", str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "suite_nosearch_max300_params.json").read_text())
    rows = result["rows"]
    assert [(r["data"], r["method"]) for r in rows] == [("dna", "SVC"), ("dna", "LowRankSVC")]
    for row in rows:
        assert "error" not in row and "skipped" not in row, row
        assert row["n_train"] == 300 and row["best_C"] == 10.0
        assert math.isfinite(row["fit_s"]) and row["fit_s"] > 0
        assert 0.0 <= row["error_pct"] <= 100.0
    assert rows[0]["fit_ratio"] == 1.0 and math.isfinite(rows[1]["gap_points"])
    assert rows[1]["params"] == {"n_basis": 50, "memory_budget": "1GB"}
    assert rows[1]["model_size"] == 50  # the parameters reached the estimator
    md = (tmp_path / "suite_nosearch_max300_params.md").read_text()
    assert "| dna | 300 | 3 | LowRankSVC(n_basis=50, memory_budget='1GB') |" in md
    assert (tmp_path / "suite_nosearch_max300_params.png").stat().st_size > 0


def test_memory_benchmark_runs_every_estimator_within_each_budget(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_memory.py"), "--rows", "20000",
                    "--n-basis", "100", "--budgets", "16MB", "--max-iter", "2", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "memory_budget.json").read_text())
    rows = result["rows"]
    assert [r["estimator"] for r in rows] == ["ReducedSVC", "LowRankSVC"]
    assert all("error" not in r and r["n_basis"] == 100 for r in rows)
    assert "extra RSS MiB" in (tmp_path / "memory_budget.md").read_text()


def test_suite_times_prediction_as_its_fastest_call(monkeypatch):
    """A few-ms prediction is timed as the fastest of three calls; a slow one runs once."""
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_suite

    seconds = iter([0.5, 0.1, 0.3])
    monkeypatch.setattr(bench_suite, "timed", lambda fn, *a: (fn(*a), next(seconds)))
    assert bench_suite.fastest(lambda x: 2 * x, 3) == (6, 0.1)
    seconds = iter([2.5, 0.1])
    assert bench_suite.fastest(lambda x: x, 1) == (1, 2.5)
    assert next(seconds) == 0.1  # the second call never happened


def test_cholesky_benchmark_quick_profile_runs(tmp_path):
    subprocess.run([sys.executable, str(BENCH / "bench_cholesky.py"), "--quick", "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=300)
    rows = json.loads((tmp_path / "cholesky_quick.json").read_text())["rows"]
    assert [(r["routine"], r["size"]) for r in rows] == [
        (name, size) for size in (100, 300) for name in ("numpy", "scipy", "sparsekernel")]
    assert all(r["alone_ms"] > 0 and r["side_by_side_ms"] > 0 for r in rows)
