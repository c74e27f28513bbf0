"""Tests for the ``sparsekernel`` command, run in-process through ``main``."""

import lzma
import re
import shutil
import subprocess

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import dump_svmlight_file, make_classification, make_regression
from sklearn.model_selection import StratifiedKFold

import sparsekernel.model_selection._search as search_module
from sparsekernel import LSSVC, ReducedSVC, ReducedSVR, SmoothSVC
from sparsekernel.basis._base import AUTO_MIN
from sparsekernel.cli import main
from sparsekernel.cli._main import build_parser
from sparsekernel.cli._options import libsvm_argv
from sparsekernel.cli._probability import predict_proba
from sparsekernel.datasets import load_svmlight_path
from sparsekernel.io import load, save
from sparsekernel.model_selection._search import DESIGNS
from sparsekernel.model_selection._uniform_design import UD_TABLES, ud_points

X_CLF, Y_CLF = make_classification(n_samples=160, n_features=5, n_informative=3,
                                   random_state=0)
Y_CLF = 2.0 * Y_CLF - 1.0  # LIBSVM-style labels -1 / +1
X_MC, Y_MC = make_classification(n_samples=150, n_features=5, n_informative=4, n_redundant=0,
                                 n_classes=3, random_state=0)
X_REG, Y_REG = make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)


def _write(path, X, y):
    if path.suffix == ".xz":
        with lzma.open(path, "wb") as fh:
            dump_svmlight_file(X, y, fh, zero_based=False)
    else:
        dump_svmlight_file(X, y, str(path), zero_based=False)
    return str(path)


@pytest.fixture
def clf_files(tmp_path):
    return (_write(tmp_path / "train.svm", X_CLF[:100], Y_CLF[:100]),
            _write(tmp_path / "test.svm", X_CLF[100:], Y_CLF[100:]))


@pytest.fixture
def reg_files(tmp_path):
    return (_write(tmp_path / "reg.svm", X_REG[:80], Y_REG[:80]),
            _write(tmp_path / "reg.t.svm", X_REG[80:], Y_REG[80:]))


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _assert_error(status, err, expected_status, *fragments):
    assert status == expected_status
    assert err.startswith("sparsekernel: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


# --- train / predict ------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["train", "fit"])
@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_train_predict_round_trip(command, suffix, tmp_path, capsys):
    train = _write(tmp_path / f"train.svm{suffix}", X_CLF[:100], Y_CLF[:100])
    test = _write(tmp_path / f"test.svm{suffix}", X_CLF[100:], Y_CLF[100:])
    model_file, output = str(tmp_path / "model.skm"), tmp_path / "pred.txt"

    status, out, _ = _run(capsys, command, "-g", "0.5", "--n-basis", "20", train, model_file)
    assert status == 0
    assert re.fullmatch(r"ReducedSVC: training accuracy [0-9.]+% \(\d+/100\), 20 basis "
                        r"functions, fit [0-9.e-]+ s; saved to .*model\.skm\n", out)

    status, out, _ = _run(capsys, "predict", test, model_file, str(output))
    assert status == 0
    model = load(model_file)
    expected = model.predict(load_svmlight_path(test, n_features=5)[0])
    lines = output.read_text().splitlines()
    assert lines == [str(int(v)) for v in expected]
    assert set(lines) <= {"-1", "1"}
    correct = int(np.sum(expected == Y_CLF[100:]))
    assert out == f"Accuracy = {100 * correct / 60:g}% ({correct}/60) (classification)\n"
    assert correct >= 45


def test_libsvm_flags_reach_estimator(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "model.skm")
    status, _, err = _run(capsys, "train", "-t", "1", "-d", "2", "-r", "1", "-c", "2.5",
                          "-g", "auto", "-e", "1e-4", "-w1", "5", "-w-1", "0.5",
                          "-m", "100", "-h", "0", "--max-iter", "30", "--n-basis", "0.2",
                          "--basis", "kmeans", "--memory-budget", "1MB", "--random-state", "3",
                          clf_files[0], model_file)
    assert status == 0, err
    params = load(model_file).get_params()
    assert params == ReducedSVC(kernel="polynomial", degree=2, coef0=1.0, C=2.5, gamma="auto",
                                tol=1e-4, class_weight={1.0: 5.0, -1.0: 0.5}, max_iter=30,
                                n_basis=0.2, basis="kmeans", memory_budget="1MB",
                                random_state=3).get_params()


@pytest.mark.parametrize("flag, kernel", [("0", "linear"), ("1", "polynomial"), ("2", "rbf"),
                                          ("3", "sigmoid"), ("laplacian", "laplacian")])
def test_kernel_type_numbers(flag, kernel, clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "m.skm")
    status, _, err = _run(capsys, "train", "-q", "-t", flag, "--n-basis", "10", clf_files[0],
                          model_file)
    assert status == 0, err
    assert load(model_file).kernel == kernel


def test_default_model_file_name(tmp_path, monkeypatch, capsys):
    train = _write(tmp_path / "heart.txt.xz", X_CLF[:100], Y_CLF[:100])
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # svm-train writes the model into the current directory
    status, out, _ = _run(capsys, "train", "--n-basis", "10", train)
    assert status == 0
    assert out.rstrip().endswith("saved to heart.txt.model")
    assert type(load(workdir / "heart.txt.model")) is ReducedSVC


def test_train_smooth_model_and_named_estimator(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "model.skm")
    status, out, _ = _run(capsys, "train", "--model", "smooth", "-t", "0", clf_files[0],
                          model_file)
    assert status == 0 and out.startswith("SmoothSVC: training accuracy")
    assert type(load(model_file)) is SmoothSVC
    status, out, _ = _run(capsys, "train", "--estimator", "LSSVC", "--n-basis", "10",
                          clf_files[0], model_file)
    assert status == 0 and out.startswith("LSSVC: training accuracy")
    assert type(load(model_file)) is LSSVC


def test_regression_output_lines(reg_files, tmp_path, capsys):
    model_file, output = str(tmp_path / "model.skm"), tmp_path / "pred.txt"
    status, out, _ = _run(capsys, "train", "-s", "3", "-c", "100", "-p", "0.5",
                          "--n-basis", "40", reg_files[0], model_file)
    assert status == 0
    assert out.startswith("ReducedSVR: training mean squared error ")

    status, out, _ = _run(capsys, "predict", reg_files[1], model_file, str(output))
    model = load(model_file)
    assert type(model) is ReducedSVR and model.epsilon == 0.5
    expected = model.predict(load_svmlight_path(reg_files[1], n_features=4)[0])
    written = np.array([float(v) for v in output.read_text().split()])
    np.testing.assert_array_equal(written, expected)  # repr round-trips exactly
    mse = np.mean((expected - Y_REG[80:]) ** 2)
    r2 = np.corrcoef(expected, Y_REG[80:])[0, 1] ** 2
    lines = out.splitlines()
    assert status == 0 and len(lines) == 2
    assert lines[0] == f"Mean squared error = {mse:g} (regression)"
    name, value = lines[1].rsplit(" = ", 1)
    assert name == "Squared correlation coefficient"
    assert value.endswith(" (regression)")
    assert float(value.split()[0]) == pytest.approx(r2, rel=1e-5)
    assert mse < np.var(Y_REG)


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


def test_quiet_prints_nothing(clf_files, tmp_path, capsys):
    status, out, err = _run(capsys, "train", "-q", "--n-basis", "10", clf_files[0],
                            str(tmp_path / "m.skm"))
    assert (status, out, err) == (0, "", "")
    status, out, _ = _run(capsys, "predict", "-q", clf_files[1], str(tmp_path / "m.skm"))
    assert (status, out) == (0, "")


def test_verbose_reaches_estimator(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "m.skm")
    status, _, _ = _run(capsys, "train", "--verbose", "--n-basis", "10", clf_files[0],
                        model_file)
    assert status == 0 and load(model_file).verbose == 1
    status, _, err = _run(capsys, "train", "--verbose", "--verbose", "--n-basis", "10",
                          clf_files[0], model_file)
    assert status == 0 and load(model_file).verbose == 2
    assert "[ReducedSVC] solved" in err  # a line per solve


# --- cross-validation, probabilities, decision values ---------------------------------------

def test_train_cross_validation_prints_accuracy_and_saves_nothing(clf_files, tmp_path,
                                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(capsys, "train", "-v", "5", "-q", "--n-basis", "10", clf_files[0])
    assert status == 0  # -q keeps the result line, as svm-train does
    match = re.fullmatch(r"Cross Validation Accuracy = ([0-9.]+)%\n", out)
    assert match and 70 <= float(match[1]) <= 100
    assert not list(tmp_path.glob("*.model"))
    # The folds are seeded: the same command gives the same line.
    assert _run(capsys, "train", "-v", "5", "--n-basis", "10", clf_files[0])[1] == out


def test_train_cross_validation_regression_lines(reg_files, capsys):
    status, out, _ = _run(capsys, "train", "-s", "3", "-v", "4", "-c", "100",
                          "--n-basis", "20", reg_files[0])
    assert status == 0
    assert re.fullmatch(r"Cross Validation Mean squared error = [0-9.e+-]+\n"
                        r"Cross Validation Squared correlation coefficient = 0\.\d+\n", out)


@pytest.mark.parametrize("X, y, labels", [(X_CLF, Y_CLF, ["-1", "1"]),
                                          (X_MC, Y_MC, ["0", "1", "2"])],
                         ids=["binary", "multiclass"])
def test_probability_estimates(X, y, labels, tmp_path, capsys):
    train = _write(tmp_path / "train.svm", X[:100], y[:100])
    test = _write(tmp_path / "test.svm", X[100:], y[100:])
    model_file, output = str(tmp_path / "m.skm"), tmp_path / "p.txt"
    status, _, err = _run(capsys, "train", "-b", "1", "-q", "--n-basis", "15", train,
                          model_file)
    assert status == 0, err
    model = load(model_file)  # the calibrated model itself: one sigmoid per problem
    assert isinstance(model, CalibratedClassifierCV) and not model.ensemble
    (fitted,) = model.calibrated_classifiers_
    assert len(fitted.calibrators) == (1 if len(labels) == 2 else 3)

    status, out, err = _run(capsys, "predict", "-b", "1", test, model_file, str(output))
    assert status == 0, err
    lines = output.read_text().splitlines()
    assert lines[0] == " ".join(["labels", *labels])
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == len(y) - 100
    proba = np.array([[float(v) for v in row[1:]] for row in rows])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)  # printed with %g
    predicted = [labels[k] for k in np.argmax(proba, axis=1)]
    assert [row[0] for row in rows] == predicted  # the label of highest probability
    correct = sum(p == str(int(t)) for p, t in zip(predicted, y[100:], strict=True))
    assert out.startswith(f"Accuracy = {100 * correct / len(rows):g}% ({correct}/")


def test_probability_is_platt_scaling_on_internal_cross_validation(clf_files, tmp_path):
    model_file = str(tmp_path / "m.skm")
    assert main(["train", "-b", "1", "-q", "--n-basis", "15", clf_files[0], model_file]) == 0
    X, y = load_svmlight_path(clf_files[0])
    calibrated = CalibratedClassifierCV(
        ReducedSVC(n_basis=15, random_state=0), method="sigmoid", ensemble=False,
        cv=StratifiedKFold(5, shuffle=True, random_state=0)).fit(X, y)
    X_test = load_svmlight_path(clf_files[1], n_features=5)[0]
    np.testing.assert_allclose(predict_proba(load(model_file), X_test),
                               calibrated.predict_proba(X_test), rtol=1e-10, atol=1e-12)


def test_probability_model_is_saved_and_predicts(clf_files, tmp_path, capsys):
    # The model file holds the CalibratedClassifierCV (a composite), which predict reads;
    # the summary names the estimator trained on all rows, not the wrapper.
    model_file = tmp_path / "m.skm"
    status, out, err = _run(capsys, "train", "-b", "1", "--n-basis", "15", clf_files[0],
                            str(model_file))
    assert status == 0, err
    assert out.startswith("ReducedSVC with probability estimates (-b 1): training accuracy ")
    assert "CalibratedClassifierCV" not in out
    assert main(["predict", "-b", "1", "-q", clf_files[1], str(model_file)]) == 0


def test_probability_needs_a_model_trained_with_b1(clf_files, tmp_path, capsys):
    model_file = str(tmp_path / "m.skm")
    assert main(["train", "-q", "--n-basis", "10", clf_files[0], model_file]) == 0
    status, _, err = _run(capsys, "predict", "-b", "1", clf_files[1], model_file)
    _assert_error(status, err, 1, "probability estimates", "-b 1")


def test_decision_values(tmp_path, capsys):
    train = _write(tmp_path / "train.svm", X_MC[:100], Y_MC[:100])
    test = _write(tmp_path / "test.svm", X_MC[100:], Y_MC[100:])
    model_file, output = str(tmp_path / "m.skm"), tmp_path / "d.txt"
    assert main(["train", "-q", "--n-basis", "15", train, model_file]) == 0
    status, _, err = _run(capsys, "predict", "--decision-values", test, model_file,
                          str(output))
    assert status == 0, err
    lines = output.read_text().splitlines()
    assert lines[0] == "labels 0 1 2"
    model = load(model_file)
    X_test = load_svmlight_path(test, n_features=5)[0]
    values = np.array([[float(v) for v in line.split()[1:]] for line in lines[1:]])
    np.testing.assert_array_equal(values, model.decision_function(X_test))
    assert [line.split()[0] for line in lines[1:]] == [str(int(v)) for v in
                                                       model.predict(X_test)]


# --- scale ----------------------------------------------------------------------------------

SMALL = "1 1:0.5 3:2\n-1 2:1 3:-1\n1 1:1.5 4:7\n-1 1:0.5 2:3 3:2\n"


def test_scale_matches_svm_scale(tmp_path, capsys):
    data = tmp_path / "small.txt"
    data.write_text(SMALL)
    status, out, err = _run(capsys, "scale", "-s", str(tmp_path / "range"), str(data))
    assert status == 0
    # svm-scale's output for this file, byte for byte (trailing blanks included).
    assert out == ("1 1:-0.333333 2:-1 3:1 4:-1 \n-1 1:-1 2:-0.333333 3:-1 4:-1 \n"
                   "1 1:1 2:-1 3:-0.333333 4:1 \n-1 1:-0.333333 2:1 3:1 4:-1 \n")
    assert (tmp_path / "range").read_text() == "x\n-1 1\n1 0 1.5\n2 0 3\n3 -1 2\n4 0 7\n"
    assert "WARNING: original #nonzeros 9" in err  # -l -1 filled in the zeros


@pytest.mark.parametrize("argv, expected", [
    (["-l", "-1e-3"], "1 1:-0.001 2:-0.001 \n-1 1:1 2:1 \n"),
    (["-y", "-1e1", "1"], "1 1:-1 2:-1 \n-10 1:1 2:1 \n"),
    (["-l", "-.5E+1", "-u", "-1"], "1 1:-5 2:-5 \n-1 1:-1 2:-1 \n"),
])
def test_negative_numbers_are_option_values(argv, expected, tmp_path, capsys):
    # As LIBSVM's tools, which take the argument after an option as its value.
    data = tmp_path / "d.txt"
    data.write_text("1 1:1 2:1\n-1 1:2 2:3\n")
    status, out, err = _run(capsys, "scale", *argv, str(data))
    assert (status, out) == (0, expected), err
    args = build_parser().parse_args(["train", *libsvm_argv(["-r", "-1e-3", "-c", "-2E1",
                                                              "d.txt"])])
    assert (args.coef0, args.C) == (-1e-3, -20.0)


@pytest.mark.parametrize("argv, text, expected", [
    ([], "1 1:1e308 2:0.5\n-1 1:-1e308 2:1\n1 1:3 2:2\n",
     "1 1:1 2:-1 \n-1 1:-1 2:-0.333333 \n1 2:1 \n"),
    (["-l", "-1e308", "-u", "1e308"], "1 1:2 2:0.5\n-1 1:0.5 2:1\n",
     "1 1:1e+308 2:-1e+308 \n-1 1:-1e+308 2:1e+308 \n"),
    (["-y", "-1e308", "1e308"], "1e308 1:1\n-1e308 1:2\n0.5 1:3\n",
     "1e+308 1:-1 \n-1e+308 \n0 1:1 \n"),
    (["-r", "RANGE"], "1 1:5 2:1\n", "1 2:-0.333333 \n"),
])
def test_scale_near_the_largest_float(argv, text, expected, tmp_path, capsys):
    # svm-scale's formula overflows on the way (nan); the values map to what it gives in
    # exact arithmetic, rounded (3 in [-1e308, 1e308] maps to 0 and is left out).
    data, range_file = tmp_path / "d.txt", tmp_path / "range"
    data.write_text(text)
    range_file.write_text("x\n-1 1\n1 -1e308 1e308\n2 0.5 2\n")
    argv = [str(range_file) if a == "RANGE" else a for a in argv]
    status, out, err = _run(capsys, "scale", *argv, str(data))
    assert (status, out, err) == (0, expected, "")


def test_scale_keeps_zeros_implicit_with_l0_and_scales_y(tmp_path, capsys):
    data = tmp_path / "small.txt"
    data.write_text(SMALL)
    status, out, err = _run(capsys, "scale", "-l", "0", "-y", "0", "1", "-s",
                            str(tmp_path / "range"), str(data))
    assert status == 0 and err == ""
    assert out == ("1 1:0.333333 3:1 \n0 2:0.333333 \n1 1:1 3:0.333333 4:1 \n"
                   "0 1:0.333333 2:1 3:1 \n")
    assert (tmp_path / "range").read_text().splitlines()[:5] == ["y", "0 1", "-1 1", "x",
                                                                 "0 1"]


@pytest.mark.parametrize("options", [[], ["-l", "0", "-u", "1"], ["-y", "-1", "1"]])
def test_scale_save_then_restore_round_trip(options, clf_files, tmp_path, capsys):
    range_file = str(tmp_path / "range")
    status, saved, _ = _run(capsys, "scale", *options, "-s", range_file, clf_files[0])
    assert status == 0 and saved.count("\n") == 100
    status, restored, _ = _run(capsys, "scale", "-r", range_file, clf_files[0])
    assert status == 0 and restored == saved
    lines = open(range_file).read().splitlines()
    x = lines.index("x")
    assert lines[0] == ("y" if "-y" in options else "x")
    assert [int(line.split()[0]) for line in lines[x + 2:]] == [1, 2, 3, 4, 5]


def test_scale_restore_drops_features_missing_from_range(tmp_path, capsys):
    data, range_file = tmp_path / "small.txt", tmp_path / "range"
    data.write_text(SMALL)
    range_file.write_text("x\n-1 1\n1 0 1.5\n3 -1 2\n")
    status, out, err = _run(capsys, "scale", "-r", str(range_file), str(data))
    assert status == 0
    assert "WARNING: feature index 2 appeared in file" in err
    assert "2:" not in out and "4:" not in out


@pytest.mark.parametrize("argv, fragment", [
    (["-s", "a", "-r", "b"], "cannot use -r and -s simultaneously"),
    (["-l", "1", "-u", "0"], "inconsistent lower/upper specification"),
])
def test_scale_refuses_like_svm_scale(argv, fragment, clf_files, capsys):
    status, _, err = _run(capsys, "scale", *argv, clf_files[0])
    _assert_error(status, err, 2, fragment)


def test_scale_malformed_range_file_names_line(clf_files, tmp_path, capsys):
    range_file = tmp_path / "range"
    range_file.write_text("x\n-1 1\n1 0 2\n2 zero 1\n")
    status, _, err = _run(capsys, "scale", "-r", str(range_file), clf_files[0])
    _assert_error(status, err, 1, "range", "line 4")


# --- tune -----------------------------------------------------------------------------------

def test_tune_prints_best_pair(clf_files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "ud.png"
    status, out, err = _run(capsys, "tune", "-v", "3", "--n-basis", "10", "-log2c", "-2,6,2",
                            "--plot", str(plot), clf_files[0])
    assert status == 0, err
    lines = out.splitlines()
    # 13 + 8 points, or 13 + 9 when the stage-2 box is shifted inside the search box, the
    # best pair, and grid.py's last line 'best_c best_g best_rate'
    assert len(lines) in (23, 24) and lines[0].startswith("stage 1: log2c=")
    assert sum(line.startswith("stage 1:") for line in lines) == 13
    match = re.fullmatch(r"Best C = ([0-9.e+-]+), gamma = ([0-9.e+-]+), "
                         r"CV accuracy = ([0-9.]+)%", lines[-2])
    assert match and float(match[3]) >= 60
    c, g, rate = map(float, lines[-1].split())
    assert (f"{c:g}", f"{g:g}", f"{rate:g}") == match.groups()
    assert plot.stat().st_size > 0


@pytest.mark.parametrize("design, best", [("13-9", 0), ("13-9", 2), *(("9-5", i) for i in
                                                                        range(9))])
def test_tune_stage_2_evaluates_no_stage_1_point_again(design, best, clf_files, monkeypatch,
                                                      capsys):
    # The fits are replaced by a score peaked at stage-1 point `best`, so that stage 2 is
    # centred there: inside the box (its centre is stage 1's best) or moved inside it.
    n1, n2 = DESIGNS[design]
    monkeypatch.setattr(search_module, "LARGE_N", 0 if design == "9-5" else 10**9)
    low, high = np.array([0.0, -5.0]), np.array([20.0, 5.0])
    peak = ud_points(UD_TABLES[n1], low, high)[best]
    monkeypatch.setattr(ReducedSVC, "fit", lambda self, X, y, **kwargs: self)
    monkeypatch.setattr(ReducedSVC, "score", lambda self, X, y, sample_weight=None: -np.hypot(
        np.log2(self.C) - peak[0], np.log2(self.gamma) - peak[1]))
    status, out, err = _run(capsys, "tune", "-v", "2", "-log2c", "0,20", "-log2g", "-5,5",
                            clf_files[0])
    assert status == 0, err
    points = {stage: [line.split()[2:4] for line in out.splitlines()
                      if line.startswith(f"stage {stage}:")] for stage in (1, 2)}
    assert len(points[1]) == n1
    stage1 = {tuple(p) for p in points[1]}
    assert not stage1 & {tuple(p) for p in points[2]}
    assert len({tuple(p) for p in points[2]}) == len(points[2])
    # As docs/cli.md and 'tune --help' say: all but the centre when the box is centred on
    # the best point (which stage 1 evaluated), n2 - 1 or n2 when it was moved.
    centred = np.all(np.abs(peak - (low + high) / 2) <= (high - low) / 4)
    assert len(points[2]) in ((n2 - 1,) if centred else (n2 - 1, n2))
    if design == "13-9":
        assert len(points[2]) == (n2 - 1 if centred else n2)


def test_tune_regression_reports_mean_squared_error(reg_files, capsys):
    status, out, err = _run(capsys, "tune", "-q", "-s", "3", "-v", "2", "--n-basis", "10",
                            reg_files[0])
    assert status == 0, err
    assert re.fullmatch(r"Best C = \S+, gamma = \S+, CV mean squared error = \S+\n"
                        r"\S+ \S+ \S+\n", out)


def test_tune_refuses_linear_kernel(clf_files, capsys):
    status, _, err = _run(capsys, "tune", "-t", "0", clf_files[0])
    _assert_error(status, err, 2, "no gamma")


# --- interrupts -----------------------------------------------------------------------------

def _interrupt(self, *args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("method", ["fit", "_solve"], ids=["at-fit", "in-the-solver"])
@pytest.mark.parametrize("extra", [[], ["-b", "1"], ["-v", "3"]])
def test_interrupt_exits_130_and_saves_nothing(method, extra, clf_files, tmp_path, monkeypatch,
                                               capsys):
    # '_solve': Ctrl-C after validation and the basis choice propagates from the fit.
    monkeypatch.setattr(ReducedSVC, method, _interrupt)
    model_file = tmp_path / "m.skm"
    status, out, err = _run(capsys, "train", *extra, clf_files[0], str(model_file))
    assert status == 130
    assert err == "sparsekernel: interrupted\n"
    assert not list(tmp_path.glob("m.skm*"))


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, fragments", [
    (["-s", "1"], ["-s", "nu-SVC", "not available"]),
    (["-s", "4"], ["-s", "nu-SVR", "not available", "-s 3"]),
    (["-s", "5"], ["-s", "0 (C-SVC), 2 (one-class SVM) or 3 (epsilon-SVR)"]),
    (["-t", "4"], ["-t", "precomputed"]),
    (["-n", "0.5"], ["-n (nu)", "one-class SVM (-s 2)", "not available"]),
    (["-s", "3", "-n", "0.5"], ["-n (nu)", "nu-SVR"]),
    (["-s", "2", "-c", "10"], ["-c", "LowRankOneClassSVM"]),
    (["-s", "2", "--model", "reduced"], ["--model reduced", "classification (-s 0)"]),
    (["-s", "2", "-b", "1"], ["-b 1", "classification"]),
    (["-s", "2", "--estimator", "LSSVC"], ["LSSVC does classification"]),
])
def test_refused_libsvm_types(argv, fragments, clf_files, capsys):
    status, _, err = _run(capsys, "train", *argv, clf_files[0])
    _assert_error(status, err, 2, *fragments)


def test_error_missing_train_file(tmp_path, capsys):
    status, _, err = _run(capsys, "train", str(tmp_path / "absent.svm"),
                          str(tmp_path / "m.skm"))
    _assert_error(status, err, 1, "absent.svm")


def test_error_missing_model_file(clf_files, tmp_path, capsys):
    status, _, err = _run(capsys, "predict", clf_files[1], str(tmp_path / "absent.skm"))
    _assert_error(status, err, 1, "absent.skm")


def test_error_negative_C_names_parameter(clf_files, tmp_path, capsys):
    status, _, err = _run(capsys, "train", "-c", "-1", clf_files[0], str(tmp_path / "m.skm"))
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
    assert main(["train", "-q", "--n-basis", "10", clf_files[0], str(model_file)]) == 0
    data = model_file.read_bytes()
    model_file.write_bytes(data[: len(data) // 2])  # cut off, central directory lost
    status, _, err = _run(capsys, "predict", clf_files[1], str(model_file))
    _assert_error(status, err, 1, "model.skm")


def test_error_malformed_data_file(tmp_path, capsys):
    train = tmp_path / "train.svm"
    train.write_text("1 1:0.5\nthis is not svmlight\n")
    status, _, err = _run(capsys, "train", str(train), str(tmp_path / "m.skm"))
    _assert_error(status, err, 1, "train.svm", "line 2")
    status, _, err = _run(capsys, "scale", str(train))
    _assert_error(status, err, 1, "train.svm", "line 2")


@pytest.mark.parametrize("argv, fragments", [
    (["train", "-g", "wide", "a.svm"], ["-g", "'wide'"]),
    (["train", "--n-basis", "many", "a.svm"], ["--n-basis", "'many'"]),
    (["train", "--n-features", "0", "a.svm"], ["--n-features"]),
    (["train", "-v", "1", "a.svm"], ["-v", "n >= 2"]),
    (["train", "-w1", "heavy", "a.svm"], ["-wLABEL WEIGHT", "'1:heavy'"]),
    (["train", "-b", "2", "a.svm"], ["-b", "invalid choice"]),
    (["train", "--model", "smooth", "--estimator", "LSSVC", "a.svm"], ["not allowed"]),
    (["train", "--estimator", "NoSuchSVC", "a.svm"], ["'NoSuchSVC'", "ReducedSVC"]),
    (["train", "-s", "0", "--estimator", "LSSVR", "a.svm"], ["LSSVR does regression"]),
    (["train", "--model", "lowrank", "-s", "3", "a.svm"], ["classification"]),
    (["train", "-s", "3", "-b", "1", "a.svm"], ["-b 1", "classification"]),
    (["train", "--float32", "a.svm"], ["--float32"]),
    (["train"], ["TRAINING_SET_FILE"]),
    (["predict", "a.svm"], ["MODEL_FILE"]),
    (["scale"], ["DATA_FILE"]),
    (["tune", "-log2c", "5,1", "a.svm"], ["-log2c", "'5,1'"]),
    (["transform"], ["'transform'"]),
    ([], ["a command is required"]),
])
def test_error_bad_usage(argv, fragments, capsys):
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 2, *fragments)


@pytest.mark.parametrize("option", [["--loss", "hinge"], ["--n-passes", "2"], ["-p", "0.2"]])
def test_error_option_not_for_model(option, clf_files, tmp_path, capsys):
    argv = ["train", "--model", "smooth", *option, clf_files[0], str(tmp_path / "m.skm")]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 2, option[0], "does not apply", "SmoothSVC")


def test_smooth_model_refuses_a_basis_it_would_not_use(clf_files, tmp_path, capsys):
    argv = ["train", "--model", "smooth", "--basis", "kmeans", clf_files[0],
            str(tmp_path / "m.skm")]
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 1, "n_basis=None", "'kmeans'")


@pytest.mark.parametrize("command, fragments", [
    ("train", ["TRAINING_SET_FILE [MODEL_FILE]", "squared hinge", "passed through unchanged",
               "-h shrinking", "accepted and ignored"]),
    ("predict", ["TEST_FILE MODEL_FILE", "--decision-values"]),
    ("scale", ["-y y_lower y_upper"]),
    ("tune", ["-log2c", "--plot"]),
])
def test_help_exits_zero(command, fragments, capsys):
    status, out, _ = _run(capsys, command, "--help")
    assert status == 0
    text = " ".join(out.split())
    for fragment in fragments:
        assert fragment in text


@pytest.mark.parametrize("command", ["train", "predict", "scale", "tune", "demo"])
def test_help_gives_every_default_it_names(command, capsys):
    status, out, _ = _run(capsys, command, "--help")
    assert status == 0
    text = " ".join(out.split())
    # 'default:' with nothing after it, or 'the library's' without the size.
    assert not re.search(r"default:\s*($|[),;(])", text), text
    assert not re.search(r"the library's(?! \d)", text), text


def test_help_defaults_are_the_estimators(capsys):
    from sparsekernel import LowRankSVC
    from sparsekernel.utils import DEFAULT_MEMORY_BUDGET, format_bytes

    _, out, _ = _run(capsys, "scale", "--help")
    assert f"default: the library's {format_bytes(DEFAULT_MEMORY_BUDGET)}" in " ".join(
        out.split())
    _, out, _ = _run(capsys, "train", "--help")
    text = " ".join(out.split())
    lowrank, reduced = LowRankSVC(), ReducedSVC()
    assert (f"default: {reduced.max_iter} ({lowrank.max_iter} for --model lowrank)" in text
            and reduced.max_iter != lowrank.max_iter)
    assert f"default: {reduced.basis} ({lowrank.basis} for --model lowrank)" in text


def test_train_help_describes_auto_as_the_estimators_choose_it(capsys):
    _, out, _ = _run(capsys, "train", "--help")
    text = " ".join(out.split())
    assert "twice the fit's effective dimension at -c" in text
    assert f"from {AUTO_MIN} (or every row, if fewer)" in text and "sqrt(n)" not in text


def test_predict_help_does_not_claim_svm_predict_s_predictions(capsys):
    _, out, _ = _run(capsys, "predict", "--help")
    text = " ".join(out.split())
    assert "never saw" in text and "ignored" in text and "can differ" in text
    assert "as svm-predict ignores" not in text


# --- demo -----------------------------------------------------------------------------------

def test_demo_prints_table(capsys):
    status, out, _ = _run(capsys, "demo", "--rows", "10000", "--svc-rows", "5000", "--seed", "1")
    assert status == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("model"))
    rows = {line.split()[0]: line.split() for line in lines[header:header + 4]}
    assert "model" in rows and "LowRankSVC" in rows and "sklearn" in rows
    lowrank, svc = rows["LowRankSVC"], rows["sklearn"]
    assert lowrank[1] == "10,000" and svc[2] == "5,000"  # rows used
    assert lowrank[-2:] == ["basis", "functions"] and svc[-2:] == ["support", "vectors"]
    assert 0.9 <= float(lowrank[4]) <= 1.0
    assert re.search(r"LowRankSVC used 2\.0x the rows: .* test errors .*\n"
                     r"predicted [0-9.]+x (faster|slower), with a [0-9.]+x (smaller|larger) "
                     r"model\.", out)
    assert re.search(r"SVC's fit time grew as rows\^-?[0-9.]+ from 2,500 to 5,000 rows; at "
                     r"that rate all 10,000 rows\nwould take about [0-9,]+ s \(estimated, not "
                     r"run\)", out)


def test_demo_svc_rows_clipped_to_rows(capsys):
    status, out, _ = _run(capsys, "demo", "--rows", "1000", "--svc-rows", "5000")
    assert status == 0
    assert "LowRankSVC used 1.0x the rows" in out
    assert "estimated" not in out  # SVC had every row: nothing to extrapolate


@pytest.mark.skipif(shutil.which("sparsekernel") is None, reason="console script not on PATH")
def test_console_script_runs_demo():
    result = subprocess.run(["sparsekernel", "demo", "--rows", "3000", "--svc-rows", "500"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "sklearn SVC" in result.stdout


def test_a_budget_that_sets_n_basis_is_said_in_the_command_lines_terms(tmp_path, capsys):
    """The library's MemoryBudgetWarning, restated once with the options that change it."""
    from sklearn.datasets import make_moons

    X, y = make_moons(20000, noise=0.3, random_state=0)
    train = _write(tmp_path / "moons.txt", X, 2 * y - 1)
    status, out, err = _run(capsys, "train", "-c", "100", "--random-state", "0",
                            "--memory-budget", "8MB", train, str(tmp_path / "m.skm"))
    assert status == 0, err
    m = load(str(tmp_path / "m.skm")).basis_.shape[0]
    match = re.fullmatch(r"sparsekernel: warning: --memory-budget 8MiB set the number of basis "
                         rf"functions: --n-basis auto wanted (\d+), the fit uses {m}; "
                         r"--memory-budget (\S+) would hold \1 \(or pass --n-basis\)\n", err)
    assert match and int(match[1]) > m, err
    assert f"{m} basis functions (chosen by --n-basis auto)" in out
    status, _, err = _run(capsys, "train", "-q", "-c", "100", "--random-state", "0",
                          "--memory-budget", match[2], train, str(tmp_path / "m2.skm"))
    assert status == 0 and err == "", err
    assert load(str(tmp_path / "m2.skm")).basis_.shape[0] == int(match[1])
