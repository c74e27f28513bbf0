"""``sparsekernel export``: a model written by ``train``, served by onnxruntime, predicts as
``sparsekernel predict`` does."""

import re
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification, make_regression

from sparsekernel.cli import main
from sparsekernel.datasets import load_svmlight_path

from .test_cli import _assert_error, _run

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("skl2onnx")
onnx = pytest.importorskip("onnx")

X_CLF, Y_CLF = make_classification(n_samples=120, n_features=5, n_informative=3,
                                   random_state=0)
Y_CLF = 2.0 * Y_CLF - 1.0  # LIBSVM-style labels -1 / +1
X_MC, Y_MC = make_classification(n_samples=120, n_features=5, n_informative=4, n_redundant=0,
                                 n_classes=3, random_state=0)
X_REG, Y_REG = make_regression(n_samples=100, n_features=4, noise=1.0, random_state=0)


def _write(path, X, y):
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{name: (train file, test file)}``: binary, three-class and regression data."""
    root = tmp_path_factory.mktemp("data")
    return {name: (_write(root / f"{name}.svm", X[:80], y[:80]),
                   _write(root / f"{name}.t.svm", X[80:], y[80:]))
            for name, X, y in [("binary", X_CLF, Y_CLF), ("multiclass", X_MC, Y_MC),
                               ("regression", X_REG, Y_REG)]}


def _train_export_predict(capsys, tmp_path, train, test, train_options=(),
                          export_options=(), predict_options=()):
    """Train, export and predict with the CLI; ``(session outputs, predict's lines)``."""
    model, graph, output = (str(tmp_path / name) for name in ("m.skm", "m.onnx", "out.txt"))
    status, _, err = _run(capsys, "train", "-q", "--n-basis", "10", *train_options, train,
                          model)
    assert status == 0, err
    status, out, err = _run(capsys, "export", *export_options, model, graph)
    assert status == 0, err
    assert out.endswith(f"; saved to {graph}\n")
    status, _, err = _run(capsys, "predict", "-q", *predict_options, test, model, output)
    assert status == 0, err
    session = ort.InferenceSession(graph, providers=["CPUExecutionProvider"])
    (name,) = [i.name for i in session.get_inputs()]
    assert name == "X"
    dtype = np.float32 if "float32" in export_options else np.float64
    X = load_svmlight_path(test, n_features=session.get_inputs()[0].shape[1])[0]
    outputs = session.run(None, {name: X.toarray().astype(dtype)})
    with open(output, encoding="utf-8") as fh:
        return session, outputs, fh.read().splitlines()


@pytest.mark.parametrize("data", ["binary", "multiclass"])
@pytest.mark.parametrize("export_options", [(), ("--dtype", "float32")])
def test_labels_equal_predicts(data, export_options, files, tmp_path, capsys):
    session, (labels, scores), lines = _train_export_predict(
        capsys, tmp_path, *files[data], export_options=export_options)
    assert [o.name for o in session.get_outputs()] == ["label", "probabilities"]
    assert labels.dtype == np.int64
    assert [str(v) for v in labels] == lines  # predict writes integral labels as '1', '-1'
    assert scores.shape == (len(lines), 1 if data == "binary" else 3)


@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_scores_are_predicts_decision_values(data, files, tmp_path, capsys):
    _, (labels, scores), lines = _train_export_predict(
        capsys, tmp_path, *files[data], predict_options=("--decision-values",))
    header, *rows = [line.split() for line in lines]
    assert header[0] == "labels" and scores.shape == (len(rows), len(header) - 1)
    assert [str(v) for v in labels] == [row[0] for row in rows]
    expected = np.array([[float(v) for v in row[1:]] for row in rows])
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_probability_model_matches_predict_b1(data, files, tmp_path, capsys):
    _, (labels, proba), lines = _train_export_predict(
        capsys, tmp_path, *files[data], train_options=("-b", "1"),
        predict_options=("-b", "1"))
    header, *rows = [line.split() for line in lines]
    assert header[0] == "labels" and proba.shape == (len(rows), len(header) - 1)
    assert [str(v) for v in labels] == [row[0] for row in rows]
    expected = np.array([[float(p) for p in row[1:]] for row in rows])
    np.testing.assert_allclose(proba, expected, atol=1e-4)


def test_regression_values_equal_predicts(files, tmp_path, capsys):
    session, (values,), lines = _train_export_predict(
        capsys, tmp_path, *files["regression"], train_options=("-s", "3"))
    assert [o.name for o in session.get_outputs()] == ["variable"]
    np.testing.assert_allclose(values.ravel(), [float(v) for v in lines], rtol=1e-9,
                               atol=1e-9)


def test_summary_names_input_and_outputs_and_q_silences_it(files, tmp_path, capsys):
    model, graph = str(tmp_path / "m.skm"), str(tmp_path / "m.onnx")
    assert main(["train", "-q", "-b", "1", "--n-basis", "10", files["binary"][0], model]) == 0
    status, out, _ = _run(capsys, "export", model, graph)
    assert status == 0
    assert out == ("ReducedSVC with probability estimates (-b 1): input X (float64, 5 "
                   f"features), outputs label, probabilities; saved to {graph}\n")
    status, out, err = _run(capsys, "export", "-q", "--target-opset", "13", model, graph)
    assert status == 0 and out == err == ""
    opsets = {o.domain: o.version for o in onnx.load(graph).opset_import}
    assert opsets[""] == 13


def _listing(directory):
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("content, fragments", [
    (b"not a model", ["is not a sparsekernel model file"]),
    (b"svm_type c_svc\nkernel_type rbf\n", ["is a LIBSVM model file"]),
])
def test_refuses_a_bad_model_file_and_writes_nothing(content, fragments, tmp_path, capsys):
    model = tmp_path / "bad.model"
    model.write_bytes(content)
    status, out, err = _run(capsys, "export", str(model), str(tmp_path / "m.onnx"))
    _assert_error(status, err, 1, *fragments)
    assert out == "" and _listing(tmp_path) == ["bad.model"]


def test_a_converter_failure_is_one_line_and_writes_nothing(files, tmp_path, capsys,
                                                           monkeypatch):
    import sparsekernel.cli._export as export

    model = tmp_path / "m.skm"
    assert main(["train", "-q", "--n-basis", "10", files["binary"][0], str(model)]) == 0

    def fail(*args, **kwargs):  # skl2onnx fails in its own exception types
        raise NotImplementedError("post_transform 'NONE' is not supported\nwith double.")

    monkeypatch.setattr(export, "to_onnx", fail)
    status, _, err = _run(capsys, "export", str(model), str(tmp_path / "m.onnx"))
    _assert_error(status, err, 1, "ReducedSVC cannot be written as ONNX: post_transform "
                                  "'NONE' is not supported with double.")
    assert _listing(tmp_path) == ["m.skm"]


def test_refuses_without_the_onnx_extra(files, tmp_path, capsys, monkeypatch):
    model = tmp_path / "m.skm"
    assert main(["train", "-q", "--n-basis", "10", files["binary"][0], str(model)]) == 0
    monkeypatch.setitem(sys.modules, "skl2onnx", None)  # import skl2onnx raises ImportError
    status, _, err = _run(capsys, "export", str(model), str(tmp_path / "m.onnx"))
    _assert_error(status, err, 1, "onnx extra", "pip install 'sparsekernel[onnx]'")
    assert _listing(tmp_path) == ["m.skm"]


@pytest.mark.parametrize("argv, fragments", [
    (["export", "m.skm"], ["required: ONNX_FILE"]),
    (["export", "--target-opset", "7", "m.skm", "m.onnx"], ["--target-opset", "from 8 on"]),
    (["export", "--dtype", "float16", "m.skm", "m.onnx"], ["--dtype", "invalid choice"]),
])
def test_usage_errors(argv, fragments, capsys):
    status, _, err = _run(capsys, *argv)
    _assert_error(status, err, 2, *fragments)


def test_help_names_input_and_outputs(capsys):
    status, out, _ = _run(capsys, "export", "--help")
    assert status == 0
    text = " ".join(out.split())
    for fragment in ["MODEL_FILE ONNX_FILE", "'label'", "'probabilities'", "'variable'",
                     "--dtype", "--target-opset", "pip install 'sparsekernel[onnx]'"]:
        assert fragment in text
    assert not re.search(r"default:\s*($|[),;(])", text), text
    status, out, _ = _run(capsys, "--help")
    assert status == 0 and "export" in out
