"""``sparsekernel fit --model lowrank``: the file is streamed, the model saved and reloaded."""

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
    dump_svmlight_file(X[:1000], y[:1000], train)
    dump_svmlight_file(X[1000:], y[1000:], test)
    model_file = str(tmp_path / "m.skm")
    status = main(["fit", "--model", "lowrank", "-g", "2", "-c", "4", "-m", "30",
                   "--chunk-size", "250", "--n-passes", "2", "--float32",
                   "--random-state", "0", train, model_file])
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.match(r"LowRankSVC: training accuracy 0\.\d{4} \(\d+/1000\), 30 basis functions,"
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
    dump_svmlight_file(X, y, train)
    assert main(["fit", "--model", "lowrank", "-s", "regression", train, "m.skm"]) == 2
    assert "classification" in capsys.readouterr().err
