"""ONNX export: onnxruntime's outputs against the model's own predictions.

Every exportable estimator x kernel x task x precision runs inside
``make_pipeline(StandardScaler(), est)``: labels equal ``predict`` except where the model's two
best scores tie at the graph's rounding, probabilities within 1e-4, regression outputs and
transforms within 1e-4 (float32) and 1e-9 (float64) of the largest output.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import sparsekernel as sk

rt = pytest.importorskip("onnxruntime")
pytest.importorskip("skl2onnx")

from sparsekernel.io import OnnxExportError, to_onnx  # noqa: E402
from sparsekernel.io._onnx import affine_form  # noqa: E402

KERNELS = ["rbf", "laplacian", "polynomial", "linear", "sigmoid"]
# Whitened Nystrom machines factor K(Z, Z), which the sigmoid kernel does not keep positive
# definite: their fits refuse it (LinAlgError), so it is not exported for them.
PSD_KERNELS = KERNELS[:4]

CLASSIFIERS = [
    (sk.LowRankSVC(random_state=0), PSD_KERNELS),
    (sk.ReducedSVC(random_state=0), KERNELS),
    (sk.SmoothSVC(), KERNELS),
    (sk.KernelLogisticRegression(random_state=0), KERNELS),
    (sk.LSSVC(random_state=0), KERNELS),
    (sk.LSSVC(n_basis=None), KERNELS),  # the exact LS-SVM: every row a basis point
    (sk.PrunedLSSVC(random_state=0), PSD_KERNELS),
    (sk.MapReduceSVC(n_parts=2, random_state=0), KERNELS),
    (sk.SparseMarginClassifier(n_basis=5, max_iter=3, random_state=0), ["rbf"]),
    (sk.SparseFisherDiscriminant(n_basis=5, max_iter=3, random_state=0), ["rbf"]),
]
REGRESSORS = [
    (sk.ReducedSVR(random_state=0), KERNELS),
    (sk.SmoothSVR(), KERNELS),
    (sk.LSSVR(random_state=0), KERNELS),
    (sk.PrunedLSSVR(random_state=0), PSD_KERNELS),
    (sk.OnlineLSSVR(n_basis=20), PSD_KERNELS),
]
NOVELTY = [
    (sk.LowRankOneClassSVM(nu=0.2, random_state=0), PSD_KERNELS),
]
TRANSFORMERS = [
    (sk.NystromFeatures(random_state=0), PSD_KERNELS),
    (sk.ReducedFeatures(random_state=0), KERNELS),
    (sk.ReducedKernelPCA(n_components=3, random_state=0), KERNELS),
    (sk.ReducedKernelPCA(n_components=3, whiten=True, method="nystrom", random_state=0),
     PSD_KERNELS),
    (sk.ReducedKernelSIR(n_components=2, random_state=0), KERNELS),
    (sk.ReducedKernelCCA(n_components=1, random_state=0), KERNELS),
]


def _cases(table, tasks):
    return [pytest.param(est, kernel, task, id=f"{type(est).__name__}-{kernel}-{task}")
            for est, kernels in table for kernel in kernels for task in tasks]


def _data(task, dtype, n=90, random_state=0):
    if task == "regression" or task == "transform":
        X, y = make_regression(n, 4, n_informative=3, noise=0.1, random_state=random_state)
    else:
        X, y = make_classification(n, 4, n_informative=3, n_redundant=0,
                                   n_classes=2 if task == "binary" else 3,
                                   n_clusters_per_class=1, random_state=random_state)
    return (3.0 * X + 1.0).astype(dtype), y  # the scaler in the pipeline has work to do


def _session(onx):
    return rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])


def _run(onx, X):
    sess = _session(onx)
    return sess.run(None, {sess.get_inputs()[0].name: X})


def _fit(est, kernel, task, dtype):
    params = {"kernel": kernel} if kernel is not None else {}
    if kernel in ("polynomial", "sigmoid") and "gamma" in est.get_params():
        params["gamma"] = 0.1  # keeps scores of order one on standardized rows
    X, y = _data(task, dtype)
    pipe = make_pipeline(StandardScaler(), clone(est).set_params(**params))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    return pipe, _data(task, dtype, n=60, random_state=1)[0]


def _tolerance(dtype):
    return 1e-4 if dtype == np.float32 else 1e-9


def check_labels(pipe, X, labels, scores):
    """Labels equal predict's, except where the two best scores tie at float32 rounding."""
    expected = pipe.predict(X)
    differ = labels != expected
    if differ.any():
        s = pipe.decision_function(X) if hasattr(pipe, "decision_function") else None
        s = np.column_stack([-s, s]) if s.ndim == 1 else np.sort(s, axis=1)
        gap = np.abs(s[:, -1] - s[:, -2])
        assert np.all(gap[differ] < 1e-5 * np.abs(s).max()), "labels differ beyond ties"
    assert differ.mean() <= 0.005


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("est", "kernel", "task"),
                         _cases(CLASSIFIERS, ["binary", "multiclass"]))
def test_classifier(est, kernel, task, dtype):
    pipe, X = _fit(est, kernel, task, dtype)
    onx = to_onnx(pipe, X[:1], options={type(est): {"zipmap": False}})
    labels, scores = _run(onx, X)
    assert scores.dtype == dtype
    check_labels(pipe, X, labels, scores)
    if hasattr(pipe, "predict_proba"):
        np.testing.assert_allclose(scores, pipe.predict_proba(X), rtol=0, atol=1e-4)
    else:  # decision scores: one column for two classes, as decision_function
        expected = pipe.decision_function(X).reshape(scores.shape)
        np.testing.assert_allclose(scores, expected, rtol=0,
                                   atol=_tolerance(dtype) * np.abs(expected).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("est", "kernel", "task"), _cases(REGRESSORS, ["regression"]))
def test_regressor(est, kernel, task, dtype):
    pipe, X = _fit(est, kernel, task, dtype)
    (out,) = _run(to_onnx(pipe, X[:1]), X)
    expected = pipe.predict(X)
    assert out.shape == (X.shape[0], 1) and out.dtype == dtype
    np.testing.assert_allclose(out.ravel(), expected, rtol=0,
                               atol=_tolerance(dtype) * np.abs(expected).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("est", "kernel", "task"), _cases(NOVELTY, ["transform"]))
def test_novelty_detector(est, kernel, task, dtype):
    """skl2onnx's OneClassSVM outputs: ``label`` (+1 inside, -1 outside) and ``scores``
    (the decision function), both (N, 1)."""
    pipe, X = _fit(est, kernel, task, dtype)
    X = np.vstack([X, X[:5] + 10.0])  # some rows far outside
    labels, scores = _run(to_onnx(pipe, X[:1]), X)
    expected = pipe.decision_function(X)
    assert labels.shape == scores.shape == (X.shape[0], 1) and scores.dtype == dtype
    np.testing.assert_allclose(scores.ravel(), expected, rtol=0,
                               atol=_tolerance(dtype) * np.abs(expected).max())
    near_zero = np.abs(expected) <= _tolerance(dtype) * np.abs(expected).max()
    np.testing.assert_array_equal(labels.ravel()[~near_zero], pipe.predict(X)[~near_zero])
    assert set(np.unique(labels)) == {-1, 1}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("est", "kernel", "task"), _cases(TRANSFORMERS, ["transform"]))
def test_transformer(est, kernel, task, dtype):
    pipe, X = _fit(est, kernel, task, dtype)
    (out,) = _run(to_onnx(pipe, X[:1]), X)
    expected = pipe.transform(X)
    assert out.shape == expected.shape and out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=0,
                               atol=_tolerance(dtype) * np.abs(expected).max())


@pytest.mark.parametrize("basis_function", ["robust_rbf", "sbf"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_learned_bases(basis_function, dtype):
    """The low-rank LS-SVM's learned bases, classifier and regressor."""
    for est, task in ((sk.LowRankLSSVC, "multiclass"), (sk.LowRankLSSVR, "regression")):
        pipe, X = _fit(est(n_basis=4, max_iter=10, basis_function=basis_function,
                           random_state=0), None, task, dtype)
        outs = _run(to_onnx(pipe, X[:1]), X)
        if task == "regression":
            expected = pipe.predict(X)
            np.testing.assert_allclose(outs[0].ravel(), expected, rtol=0,
                                       atol=_tolerance(dtype) * np.abs(expected).max())
        else:
            check_labels(pipe, X, *outs)
            expected = pipe.decision_function(X)
            np.testing.assert_allclose(outs[1], expected, rtol=0,
                                       atol=_tolerance(dtype) * np.abs(expected).max())


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_reduced_set_and_string_labels(task):
    """A compressed SVC, with string labels: the label output is a string tensor."""
    X, y = _data(task, np.float64)
    names = np.array(["ant", "bee", "cat"])[y]
    pipe = make_pipeline(StandardScaler(), sk.ReducedSetSVC(random_state=0)).fit(X, names)
    labels, scores = _run(to_onnx(pipe, X[:1]), X)
    assert labels.dtype == object
    np.testing.assert_array_equal(labels, pipe.predict(X))
    np.testing.assert_allclose(scores, pipe.decision_function(X).reshape(scores.shape),
                               atol=1e-9 * np.abs(scores).max())


def test_zipmap_probabilities():
    """Probabilities keep skl2onnx's ZipMap by default on a float32 graph, not on scores."""
    X, y = _data("multiclass", np.float32)
    klr = make_pipeline(StandardScaler(), sk.KernelLogisticRegression(random_state=0)).fit(X, y)
    labels, probs = _run(to_onnx(klr, X[:1]), X)
    assert isinstance(probs, list) and set(probs[0]) == {0, 1, 2}
    np.testing.assert_allclose([[p[c] for c in range(3)] for p in probs],
                               klr.predict_proba(X), atol=1e-4)
    labels, probs = _run(to_onnx(klr, X[:1], zipmap=False), X)
    np.testing.assert_allclose(probs, klr.predict_proba(X), atol=1e-4)
    svc = make_pipeline(StandardScaler(), sk.LowRankSVC(random_state=0)).fit(X, y)
    labels, scores = _run(to_onnx(svc, X[:1]), X)
    assert isinstance(scores, np.ndarray) and scores.shape == (X.shape[0], 3)


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_calibrated_classifier(task):
    """skl2onnx's CalibratedClassifierCV converter reads the library's raw scores."""
    X, y = _data(task, np.float32)
    cal = CalibratedClassifierCV(sk.LowRankSVC(random_state=0), cv=3).fit(X, y)
    labels, probs = _run(to_onnx(cal, X[:1], options={id(cal): {"zipmap": False}}), X)
    np.testing.assert_allclose(probs, cal.predict_proba(X), atol=1e-4)
    np.testing.assert_array_equal(labels, cal.predict(X))


def test_pipeline_ending_in_linear_svc():
    """NystromFeatures + LinearSVC: skl2onnx's pipeline parser would give LinearSVC a
    ``zipmap`` option its converter refuses (NameError); to_onnx leaves it out."""
    X, y = _data("multiclass", np.float32)
    pipe = make_pipeline(StandardScaler(), sk.NystromFeatures(random_state=0),
                         LinearSVC()).fit(X, y)
    labels, scores = _run(to_onnx(pipe, X[:1]), X)
    np.testing.assert_array_equal(labels, pipe.predict(X))
    np.testing.assert_allclose(scores, pipe.decision_function(X), atol=1e-4)


def test_column_transformer():
    X, y = _data("regression", np.float64)
    kernel = make_pipeline(StandardScaler(), sk.NystromFeatures(random_state=0))
    ct = ColumnTransformer([("kernel", kernel, [0, 1, 2]), ("raw", "passthrough", [3])])
    pipe = make_pipeline(ct, LinearRegression()).fit(X, y)
    (out,) = _run(to_onnx(pipe, X[:1]), X)
    np.testing.assert_allclose(out.ravel(), pipe.predict(X), atol=1e-9 * np.abs(y).max())


def test_csr_fitted_model_reads_dense_rows():
    X, y = _data("binary", np.float64)
    X[np.abs(X) < 2] = 0.0
    clf = sk.ReducedSVC(random_state=0).fit(sp.csr_matrix(X), y)
    onx = to_onnx(clf, sp.csr_matrix(X[:1]))
    (inp,) = _session(onx).get_inputs()
    assert inp.type == "tensor(double)"
    labels, scores = _run(onx, X)
    np.testing.assert_array_equal(labels, clf.predict(X))


def test_dask_fitted_model_exports():
    """A model fitted on a dask collection holds NumPy arrays: its graph gives its
    predictions on NumPy rows."""
    da = pytest.importorskip("dask.array")
    X, y = _data("multiclass", np.float64, n=300)
    clf = sk.LowRankSVC(n_basis=20, random_state=0).fit(da.from_array(X, chunks=100),
                                                         da.from_array(y, chunks=100))
    labels, scores = _run(to_onnx(clf, X[:1]), X)
    check_labels(clf, X, labels, scores)
    np.testing.assert_allclose(scores, clf.decision_function(X),
                               atol=1e-9 * np.abs(scores).max())


def test_folded_form_matches_raw_decision():
    """MapReduceSVC folds its part models into one expansion: phi W + b, computed here in
    NumPy, equals its decision_function."""
    X, y = _data("multiclass", np.float64)
    clf = sk.MapReduceSVC(n_parts=3, random_state=0).fit(X, y)
    form = affine_form(clf)
    K = clf._kernel()(X, form.Z)
    np.testing.assert_allclose(K @ form.W + form.b, clf.decision_function(X), atol=1e-10)


def test_refusals():
    X, y = _data("binary", np.float64)
    with pytest.raises(NotFittedError):
        to_onnx(sk.LowRankSVC(), X[:1])

    class Unknown(StandardScaler):
        pass

    pipe = make_pipeline(Unknown(), sk.LowRankSVC(random_state=0)).fit(X, y)
    with pytest.raises(OnnxExportError, match="Pipeline cannot be written as ONNX"):
        to_onnx(pipe, X[:1])
    with pytest.raises(OnnxExportError, match="LinearSVC is not a sparsekernel estimator"):
        affine_form(LinearSVC().fit(X, y))


def test_every_public_predictor_and_transformer_is_tested():
    from sparsekernel.io._onnx import _public_estimators

    tested = {type(est) for table in (CLASSIFIERS, REGRESSORS, NOVELTY, TRANSFORMERS)
              for est, _ in table}
    tested |= {sk.LowRankLSSVC, sk.LowRankLSSVR, sk.ReducedSetSVC}
    assert set(_public_estimators()) == tested


@pytest.mark.parametrize("kernel", KERNELS)
def test_graphs_use_standard_operators_only(kernel):
    """The library's graphs need no ai.onnx.ml operator: any ONNX runtime serves them."""
    X, y = _data("multiclass", np.float32)
    clf = sk.ReducedSVC(kernel=kernel, gamma=0.1, random_state=0).fit(X, y)
    onx = to_onnx(clf, X[:1])
    assert {node.domain for node in onx.graph.node} == {""}
    assert {node.op_type for node in onx.graph.node} <= {
        "Cast", "MatMul", "Mul", "Add", "Sub", "Max", "Exp", "Abs", "Reshape", "Pow", "Tanh",
        "Neg", "Concat", "ArgMax", "Gather", "Identity"}


@pytest.mark.parametrize("target_opset", [11, 13, None])
def test_older_opsets(target_opset):
    """The graphs use operators whose semantics opset 11 already fixes (sums as products
    with ones, no axes inputs), so older runtimes serve them."""
    X, y = _data("multiclass", np.float32)
    for est in (sk.KernelLogisticRegression(kernel="laplacian", random_state=0),
                sk.LowRankLSSVC(n_basis=3, max_iter=5, random_state=0)):
        model = est.fit(X, y)
        onx = to_onnx(model, X[:1], target_opset=target_opset,
                      options={type(est): {"zipmap": False}})
        if target_opset is not None:
            assert max(op.version for op in onx.opset_import if op.domain == "") <= target_opset
        labels, _ = _run(onx, X)
        check_labels(model, X, labels, None)


def test_float64_calibrated_classifier_has_no_zipmap():
    """skl2onnx would end a float64 CalibratedClassifierCV in a ZipMap that onnxruntime
    refuses (float32 only); to_onnx turns it off on float64 graphs."""
    X, y = _data("multiclass", np.float64)
    cal = CalibratedClassifierCV(sk.ReducedSVC(random_state=0), cv=3).fit(X, y)
    labels, probs = _run(to_onnx(cal, X[:1]), X)
    np.testing.assert_allclose(probs, cal.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("cls", [sk.ReducedSVC, sk.LowRankSVC])
def test_per_centre_rbf_widths(cls, dtype):
    """ClusteringBasis's per-centre widths: one gamma per column of K(X, Z) in the graph."""
    from sparsekernel.basis import ClusteringBasis

    X, y = _data("multiclass", dtype, n=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(basis=ClusteringBasis(), n_basis=10, random_state=0).fit(X, y)
    assert np.shape(model._kernel().gamma) == (10,)
    labels, scores = _run(to_onnx(model, X[:1]), X)
    check_labels(model, X, labels, scores)
    expected = model.decision_function(X)
    np.testing.assert_allclose(scores, expected, atol=_tolerance(dtype) * np.abs(expected).max())
