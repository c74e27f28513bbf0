"""Tests for the ``sparsekernel`` command, run in-process through ``main``."""

import lzma
import re
import shutil
import subprocess

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification, make_regression

from sparsekernel import ReducedSVC, ReducedSVR, SmoothSVC
from sparsekernel.cli import main
from sparsekernel.datasets import load_svmlight_path
from sparsekernel.io import load, save

X_CLF, Y_CLF = make_classification(n_samples=160, n_features=5, n_informative=3,
                                   random_state=0)
Y_CLF = 2.0 * Y_CLF - 1.0  # LIBSVM-style labels -1 / +1
X_REG, Y_REG = make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)


def _write(path, X, y):
    if path.suffix == ".xz":
        with lzma.open(path, "wb") as fh:
            dump_svmlight_file(X, y, fh)
    else:
        dump_svmlight_file(X, y, str(path))
    return str(path)


@pytest.fixture
def clf_files(tmp_path):
    return (_write(tmp_path / "train.svm", X_CLF[:100], Y_CLF[:100]),
            _write(tmp_path / "test.svm", X_CLF[100:], Y_CLF[100:]))


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_fit_predict_round_trip(suffix, tmp_path, capsys):
    train = _write(tmp_path / f"train.svm{suffix}", X_CLF[:100], Y_CLF[:100])
    test = _write(tmp_path / f"test.svm{suffix}", X_CLF[100:], Y_CLF[100:])
    model_file, output = str(tmp_path / "model.skm"), tmp_path / "pred.txt"

    status, out, _ = _run(capsys, "fit", "-g", "0.5", "-m", "20", "--random-state", "0",
                          train, model_file)
    assert status == 0
    assert re.fullmatch(r"ReducedSVC: training accuracy 0\.\d{4} \(\d+/100\), 20 basis "
                        r"functions, fit [0-9.e-]+ s; saved to .*model\.skm\n", out)

    status, out, _ = _run(capsys, "predict", test, model_file, str(output))
    assert status == 0
    model = load(model_file)
    expected = model.predict(load_svmlight_path(test, n_features=5)[0])
    lines = output.read_text().splitlines()
    assert lines == [str(int(v)) for v in expected]
    assert set(lines) <= {"-1", "1"}
    correct = int(np.sum(expected == Y_CLF[100:]))
    assert out == f"Accuracy = {100 * correct / 60:.2f}% ({correct}/60)\n"
    assert correct >= 45


def test_fit_options_reach_estimator(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "model.skm")
    status, _, _ = _run(capsys, "fit", "-k", "polynomial", "-d", "2", "-r", "1", "-c", "2.5",
                        "-g", "auto", "-e", "1e-4", "--max-iter", "30", "-m", "0.2",
                        "-b", "kmeans", "--memory-budget", "1MB", "--random-state", "3",
                        clf_files[0], model_file)
    assert status == 0
    params = load(model_file).get_params()
    assert params == ReducedSVC(kernel="polynomial", degree=2, coef0=1.0, C=2.5, gamma="auto",
                                tol=1e-4, max_iter=30, n_basis=0.2, basis="kmeans",
                                memory_budget="1MB", random_state=3).get_params()


def test_fit_smooth_model(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "model.skm")
    status, out, _ = _run(capsys, "fit", "--model", "smooth", "-k", "linear", clf_files[0],
                          model_file)
    assert status == 0
    assert out.startswith("SmoothSVC: training accuracy")
    assert type(load(model_file)) is SmoothSVC


def test_fit_predict_regression_prints_rmse(tmp_path, capsys):
    train = _write(tmp_path / "train.svm", X_REG[:80], Y_REG[:80])
    test = _write(tmp_path / "test.svm", X_REG[80:], Y_REG[80:])
    model_file, output = str(tmp_path / "model.skm"), tmp_path / "pred.txt"
    status, out, _ = _run(capsys, "fit", "-s", "regression", "-c", "100", "-p", "0.5",
                          "-m", "40", "--random-state", "0", train, model_file)
    assert status == 0
    assert out.startswith("ReducedSVR: training RMSE ")

    status, out, _ = _run(capsys, "predict", test, model_file, str(output))
    model = load(model_file)
    assert type(model) is ReducedSVR and model.epsilon == 0.5
    expected = model.predict(load_svmlight_path(test, n_features=4)[0])
    written = np.array([float(v) for v in output.read_text().split()])
    np.testing.assert_array_equal(written, expected)  # repr round-trips exactly
    rmse = np.sqrt(np.mean((expected - Y_REG[80:]) ** 2))
    assert status == 0 and out == f"RMSE = {rmse:.6g} (40 samples)\n"
    assert rmse < np.std(Y_REG)


def test_predict_reads_test_file_at_model_width(tmp_path, capsys):
    # The test file never uses feature 5, so on its own it would read as 4 features.
    X_test = X_CLF[100:].copy()
    X_test[:, 4] = 0.0
    test = _write(tmp_path / "test.svm", X_test, Y_CLF[100:])
    model_file = str(tmp_path / "model.skm")
    save(ReducedSVC(n_basis=10, random_state=0).fit(X_CLF[:100], Y_CLF[:100]), model_file)
    status, out, err = _run(capsys, "predict", test, model_file)
    assert status == 0, err
    assert out.startswith("Accuracy = ")


def test_fit_quiet_prints_nothing(clf_files, tmp_path, capsys):
    status, out, err = _run(capsys, "fit", "-q", "-m", "10", *clf_files[:1],
                            str(tmp_path / "m.skm"))
    assert (status, out, err) == (0, "", "")
    status, out, _ = _run(capsys, "predict", "-q", clf_files[1], str(tmp_path / "m.skm"))
    assert (status, out) == (0, "")


def test_fit_verbose_reaches_estimator(clf_files, tmp_path, capsys):
    status, _, err = _run(capsys, "fit", "-v", "-m", "10", clf_files[0], str(tmp_path / "m.skm"))
    assert status == 0
    assert load(tmp_path / "m.skm").verbose == 1  # a bar over problems: none for one problem
    status, _, err = _run(capsys, "fit", "-vv", "-m", "10", clf_files[0],
                          str(tmp_path / "m.skm"))
    assert status == 0 and load(tmp_path / "m.skm").verbose == 2
    assert "[ReducedSVC] solved" in err  # a line per solve


def test_demo_prints_table(capsys):
    status, out, _ = _run(capsys, "demo", "--repeat", "1")
    assert status == 0
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert "model" in rows and "ReducedSVC" in rows and "sklearn" in rows
    reduced = rows["ReducedSVC"].split()
    accuracy, n_basis = float(reduced[1]), int(reduced[2])
    assert 0.89 <= accuracy <= 0.92 and n_basis == 15
    assert int(rows["sklearn"].split()[3]) > n_basis  # support vectors
    assert re.search(r"speedup of ReducedSVC over SVC \(SVC time / ReducedSVC time\): "
                     r"fit [0-9.]+x, predict [0-9.]+x", out)


@pytest.mark.skipif(shutil.which("sparsekernel") is None, reason="console script not on PATH")
def test_console_script_runs_demo():
    result = subprocess.run(["sparsekernel", "demo", "--repeat", "1"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "sklearn SVC" in result.stdout


def _assert_error(status, err, expected_status, *fragments):
    assert status == expected_status
    assert err.startswith("sparsekernel: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_error_missing_train_file(tmp_path, capsys):
    status, _, err = _run(capsys, "fit", str(tmp_path / "absent.svm"), str(tmp_path / "m.skm"))
    _assert_error(status, err, 1, "absent.svm")


def test_error_missing_model_file(clf_files, tmp_path, capsys):
    status, _, err = _run(capsys, "predict", clf_files[1], str(tmp_path / "absent.skm"))
    _assert_error(status, err, 1, "absent.skm")


def test_error_negative_C_names_parameter(clf_files, tmp_path, capsys):
    status, _, err = _run(capsys, "fit", "-c", "-1", clf_files[0], str(tmp_path / "m.skm"))
    _assert_error(status, err, 1, "'C'", "ReducedSVC", "-1")
    assert not (tmp_path / "m.skm").exists()


@pytest.mark.parametrize("content, fragment", [
    (b"not a model at all", "not a zip archive"),
    (b"PK\x03\x04 truncated", "not a zip archive"),
])
def test_error_corrupted_model_file(content, fragment, clf_files, tmp_path, capsys):
    model_file = tmp_path / "model.skm"
    model_file.write_bytes(content)
    status, _, err = _run(capsys, "predict", clf_files[1], str(model_file))
    _assert_error(status, err, 1, fragment)


def test_error_model_file_with_damaged_member(clf_files, tmp_path, capsys):
    model_file = tmp_path / "model.skm"
    assert main(["fit", "-q", "-m", "10", clf_files[0], str(model_file)]) == 0
    data = model_file.read_bytes()
    model_file.write_bytes(data[: len(data) // 2])  # cut off, central directory lost
    status, _, err = _run(capsys, "predict", clf_files[1], str(model_file))
    _assert_error(status, err, 1, "model.skm")


def test_error_malformed_data_file(tmp_path, capsys):
    train = tmp_path / "train.svm"
    train.write_text("1 1:0.5\nthis is not svmlight\n")
    status, _, err = _run(capsys, "fit", str(train), str(tmp_path / "m.skm"))
    _assert_error(status, err, 1, "train.svm")


@pytest.mark.parametrize("argv, fragments", [
    (["fit", "-g", "wide", "a.svm", "m.skm"], ["-g/--gamma", "'wide'"]),
    (["fit", "-m", "many", "a.svm", "m.skm"], ["-m/--n-basis", "'many'"]),
    (["fit", "--n-features", "0", "a.svm", "m.skm"], ["--n-features"]),
    (["fit", "-s", "ranking", "a.svm", "m.skm"], ["-s/--task", "'ranking'"]),
    (["fit", "a.svm"], ["MODEL_FILE"]),
    (["fit", "-v", "-q", "a.svm", "m.skm"], ["not allowed"]),
    (["transform"], ["'transform'"]),
    ([], ["a command is required"]),
])
def test_error_bad_usage(argv, fragments, capsys):
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 2, *fragments)


@pytest.mark.parametrize("option", [["--loss", "hinge"], ["--n-passes", "2"], ["-p", "0.2"]])
def test_error_option_not_for_model(option, clf_files, tmp_path, capsys):
    argv = ["fit", "--model", "smooth", *option, clf_files[0], str(tmp_path / "m.skm")]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 2, option[0], "does not apply", "SmoothSVC")


def test_smooth_model_refuses_a_basis_it_would_not_use(clf_files, tmp_path, capsys):
    argv = ["fit", "--model", "smooth", "-b", "kmeans", clf_files[0], str(tmp_path / "m.skm")]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 1, "n_basis=None", "'kmeans'")


def test_help_exits_zero(capsys):
    status, out, _ = _run(capsys, "fit", "--help")
    assert status == 0 and "TRAIN_FILE MODEL_FILE" in out
