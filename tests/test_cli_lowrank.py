"""``sparsekernel train --model lowrank``: the file is streamed, the model saved and reloaded."""

import re

import numpy as np
from sklearn.datasets import dump_svmlight_file

from sparsekernel import LowRankSVC
from sparsekernel.cli import main
from sparsekernel.datasets import load_svmlight_path, make_checkerboard
from sparsekernel.io import load


def test_cli_fit_lowrank_streams_and_predicts(tmp_path, capsys):
    X, y = make_checkerboard(1500, noise=0.05, cells=2, random_state=0)
    train, test = str(tmp_path / "train.svm"), str(tmp_path / "test.svm")
    dump_svmlight_file(X[:1000], y[:1000], train, zero_based=False)
    dump_svmlight_file(X[1000:], y[1000:], test, zero_based=False)
    model_file = str(tmp_path / "m.skm")
    status = main(["train", "--model", "lowrank", "-g", "2", "-c", "4", "--n-basis", "30",
                   "--chunk-size", "250", "--n-passes", "2", "--float32",
                   "--random-state", "0", train, model_file])
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.match(r"LowRankSVC: training accuracy [0-9.]+% \(\d+/1000\), 30 basis functions,"
                    r" .*streamed in chunks of 250 rows", out)
    model = load(model_file)
    assert type(model) is LowRankSVC and model.n_passes == 2 and model.n_rows_seen_ == 1000
    assert model.basis_.dtype == np.float32
    assert main(["predict", test, model_file]) == 0
    Xt, yt = load_svmlight_path(test, n_features=2)
    assert f"({int(np.sum(model.predict(Xt) == yt))}/500)" in capsys.readouterr().out
    assert model.score(Xt, yt) > 0.85


def test_cli_lowrank_rejects_regression(tmp_path, capsys):
    X, y = make_checkerboard(50, random_state=0)
    train = str(tmp_path / "t.svm")
    dump_svmlight_file(X, y, train, zero_based=False)
    assert main(["train", "--model", "lowrank", "-s", "3", train, "m.skm"]) == 2
    assert "classification" in capsys.readouterr().err


def test_cli_lowrank_cross_validation_loads_the_file(tmp_path, capsys):
    X, y = make_checkerboard(300, noise=0.05, cells=2, random_state=0)
    train = str(tmp_path / "t.svm")
    dump_svmlight_file(X, y, train, zero_based=False)
    assert main(["train", "--model", "lowrank", "-g", "2", "-c", "4", "--n-basis", "20",
                 "-v", "3", train]) == 0
    assert re.fullmatch(r"Cross Validation Accuracy = [0-9.]+%\n", capsys.readouterr().out)


def test_cli_lowrank_reads_the_width_and_the_classes_of_the_whole_file(tmp_path, capsys):
    # Sorted by label (as 'sort -k1,1' leaves a file), with feature 3 used only by the +1
    # rows: the first chunk holds one class and not the largest index.
    X, y = make_checkerboard(400, noise=0.05, cells=2, random_state=0)
    X = np.hstack([X, np.where(y[:, None] > 0, 0.5, 0.0)])
    order = np.argsort(y, kind="stable")
    train = str(tmp_path / "sorted.svm")
    dump_svmlight_file(X[order], y[order], train, zero_based=False)
    model_file = str(tmp_path / "m.skm")
    for chunk_size, n_basis in (("100", "20"), ("3", "3")):  # the basis: from chunk 1
        status = main(["train", "--model", "lowrank", "-g", "2", "--n-basis", n_basis,
                       "--chunk-size", chunk_size, "--random-state", "0", train, model_file])
        out, err = capsys.readouterr()
        assert status == 0, err
        assert f"streamed in chunks of {chunk_size} rows" in out
        model = load(model_file)
        assert model.n_features_in_ == 3 and model.classes_.tolist() == [-1.0, 1.0]
        assert model.n_rows_seen_ == 400
