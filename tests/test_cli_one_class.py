"""``train -s 2`` (the one-class SVM, LIBSVM's flags) and ``predict`` of a novelty model."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from sparsekernel import LowRankOneClassSVM
from sparsekernel.io import load

from .test_cli import _run


def _files(tmp_path):
    rng = np.random.default_rng(0)
    normal = rng.standard_normal((600, 3))
    novel = rng.standard_normal((40, 3)) + 6.0
    train, test = tmp_path / "normal.svm", tmp_path / "mixed.svm"
    dump_svmlight_file(normal[:400], np.ones(400), str(train), zero_based=False)
    X = np.vstack([normal[400:], novel])
    y = np.r_[np.ones(200), -np.ones(40)]
    dump_svmlight_file(X, y, str(test), zero_based=False)
    return str(train), str(test), y


def test_train_predict_writes_inside_and_outside(tmp_path, capsys):
    train, test, truth = _files(tmp_path)
    model_file, output = str(tmp_path / "oc.skm"), tmp_path / "pred.txt"
    status, out, _ = _run(capsys, "train", "-s", "2", "-n", "0.1", "--n-basis", "40", train,
                          model_file)
    assert status == 0
    assert out.startswith("LowRankOneClassSVM: training rows outside ")
    model = load(model_file)
    assert isinstance(model, LowRankOneClassSVM) and model.nu == 0.1
    assert model.random_state == 0 and model.n_support_ == 40
    status, out, _ = _run(capsys, "predict", test, model_file, str(output))
    assert status == 0
    written = np.array(output.read_text().split(), dtype=int)
    assert set(np.unique(written)) == {-1, 1}
    assert np.all(written[truth == -1] == -1)  # every novelty found
    correct = int(np.sum(written == truth))
    assert out == (f"Accuracy = {100 * correct / len(truth):g}% ({correct}/{len(truth)}) "
                   "(classification)\n")


def test_the_estimator_option_and_cross_validation(tmp_path, capsys):
    train, _, _ = _files(tmp_path)
    status, out, _ = _run(capsys, "train", "--estimator", "LowRankOneClassSVM", "-n", "0.2",
                          "--n-basis", "20", "-v", "4", train)
    assert status == 0
    accuracy = float(out.removeprefix("Cross Validation Accuracy = ").rstrip("%\n"))
    assert 70.0 <= accuracy <= 90.0  # the labels are all +1: about 1 - nu predicted inside


@pytest.mark.parametrize("nu", ["0", "1.5"])
def test_nu_outside_its_range_names_it(nu, tmp_path, capsys):
    train, _, _ = _files(tmp_path)
    status, _, err = _run(capsys, "train", "-s", "2", "-n", nu, train, str(tmp_path / "m"))
    assert status == 1 and "'nu'" in err and nu in err
