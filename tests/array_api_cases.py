"""Cases of ``tests/test_array_api.py``, run in a child process with ``SCIPY_ARRAY_API=1``
(see there): the estimators fitted on arrays of ``array_api_strict`` (and of PyTorch on the
CPU, where installed) against the NumPy models."""

import importlib
import importlib.util
import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":  # collected by hand only, in that process
    pytest.skip("needs SCIPY_ARRAY_API=1 (run through tests/test_array_api.py)",
                allow_module_level=True)


#: The namespaces the cases run on: array_api_strict (the test extra), PyTorch where installed.
NAMESPACES = [name for name in ("array_api_strict", "torch")
              if importlib.util.find_spec(name) is not None]


class Namespace:
    """A namespace under test: its arrays made from NumPy's, and recognized."""

    def __init__(self, name):
        self.name, self.module = name, importlib.import_module(name)

    def asarray(self, a):
        return self.module.asarray(a)

    def owns(self, a):
        return type(a).__module__.split(".")[0] == self.name


@pytest.fixture(params=NAMESPACES)
def xps(request):
    return Namespace(request.param)


@pytest.fixture
def dispatch():
    import sklearn

    with sklearn.config_context(array_api_dispatch=True):
        yield


def _assert_labels_agree(got, labels, scores, tol):
    """Predicted labels equal the NumPy model's, but where its scores are within ``tol`` of a
    tie (a float32 rounding may fall on either side there)."""
    got = np.asarray(got)
    if scores.ndim == 1:
        gap = np.abs(scores)
    else:
        top = np.sort(scores, axis=1)
        gap = top[:, -1] - top[:, -2]
    differ = got != labels
    assert not differ[gap > tol].any(), np.flatnonzero(differ & (gap > tol))


def _data(dtype, n=1500):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.2, random_state=0)
    return X.astype(dtype), y


#: Outputs agree to these shares of their largest value (both paths solve K(Z, Z)'s
#: eigenproblem in float64, so float32 features differ by their products' rounding only).
RTOL = {np.float64: 1e-10, np.float32: 1e-5}


def _tolerance(dtype, expected, fit64):
    """The absolute tolerance of a model's outputs ``expected`` (NumPy's, in ``dtype``):
    RTOL of their largest value; for float32, or twice the distance of NumPy's float32
    model from its float64 one (``fit64()``'s outputs) where that is larger. A solver
    amplifies its features' rounding by the condition of its system (the LS-SVM's normal
    equations at large C): each float32 model, its products summed in its own order, is then
    that far from the float64 model, so the two are within twice that of each other, and no
    closer agreement exists."""
    scale = np.abs(expected).max()
    if dtype == np.float64:
        return RTOL[dtype] * scale
    with __import__("sklearn").config_context(array_api_dispatch=False):
        own = np.abs(expected - fit64()).max()
    return max(RTOL[dtype] * scale, 2.0 * own)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("basis", ["random", "kmeans"])
@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "polynomial"])
def test_nystrom_features_equal_numpys(xps, dispatch, dtype, basis, kernel):
    """Fitted on the namespace, transforming there, equal to the NumPy model's features;
    every fitted float array lives in the namespace."""
    import sklearn

    from sparsekernel import NystromFeatures

    X, _ = _data(dtype)
    params = dict(kernel=kernel, n_basis=25, basis=basis, random_state=0,
                  gamma=10.0 if kernel != "polynomial" else 0.5, degree=2, coef0=1.0)
    with sklearn.config_context(array_api_dispatch=False):
        ref = NystromFeatures(**params).fit(X)
        expected = ref.transform(X)
    est = NystromFeatures(**params).fit(xps.asarray(X))
    got = est.transform(xps.asarray(X))
    assert xps.owns(got)
    assert str(got.dtype).endswith(np.dtype(dtype).name)  # (torch.float32, ...)
    for name in ("basis_", "normalization_", "eigenvalues_"):
        assert xps.owns(getattr(est, name)), name
    assert est.n_components_ == ref.n_components_
    got = np.asarray(got)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=RTOL[dtype] * scale)
    np.testing.assert_array_equal(est.basis_indices_, ref.basis_indices_)


def test_a_model_moves_to_numpy_and_back(xps, dispatch):
    import sklearn

    from sparsekernel import NystromFeatures
    from sparsekernel.compute import model_to_namespace, model_to_numpy

    X, _ = _data(np.float64, 400)
    Xs = xps.asarray(X)
    est = NystromFeatures(n_basis=20, random_state=0, gamma=5.0).fit(Xs)
    on_device = np.asarray(est.transform(Xs))
    model_to_numpy(est)
    assert isinstance(est.normalization_, np.ndarray) and isinstance(est.basis_, np.ndarray)
    with sklearn.config_context(array_api_dispatch=False):
        np.testing.assert_allclose(est.transform(X), on_device, rtol=1e-12, atol=1e-12)
    model_to_namespace(est, Xs)
    assert xps.owns(est.normalization_)
    np.testing.assert_allclose(np.asarray(est.transform(Xs)), on_device, rtol=1e-12)


def test_a_device_fitted_model_exports_to_onnx_as_numpys(xps, dispatch):
    """sparsekernel.io.to_onnx reads a device model's arrays back to NumPy: the graph gives
    the NumPy fit's labels and scores, and the model stays on its namespace."""
    rt = pytest.importorskip("onnxruntime")
    pytest.importorskip("skl2onnx")
    import sklearn

    from sparsekernel import LowRankSVC
    from sparsekernel.io import to_onnx

    X, y = _data(np.float64, 400)
    dev = LowRankSVC(n_basis=20, random_state=0).fit(xps.asarray(X), xps.asarray(y))
    with sklearn.config_context(array_api_dispatch=False):
        host = LowRankSVC(n_basis=20, random_state=0).fit(X, y)
        outs = []
        for model in (dev, host):
            sess = rt.InferenceSession(to_onnx(model, X[:1]).SerializeToString(),
                                       providers=["CPUExecutionProvider"])
            outs.append(sess.run(None, {sess.get_inputs()[0].name: X}))
    assert xps.owns(dev.coef_)
    (got_labels, got), (labels, scores) = outs
    _assert_labels_agree(got_labels, labels, scores.ravel(), 1e-8)
    np.testing.assert_allclose(got, scores, atol=1e-8 * np.abs(scores).max())


def test_without_dispatch_namespace_arrays_are_numpy_inputs(xps):
    """array_api_dispatch off (the default): behaviour is NumPy's, as scikit-learn's."""
    from sparsekernel.compute import backend_of

    assert backend_of(xps.asarray(np.ones((2, 2)))).is_numpy


def test_sparse_input_is_refused_by_name_on_a_namespace(xps, dispatch):
    from sparsekernel.compute import backend_of

    assert backend_of(np.ones((2, 2))).is_numpy  # NumPy input under dispatch: NumPy
    b = backend_of(xps.asarray(np.ones((2, 2))))
    assert not b.is_numpy and b.float_dtypes() == [b.xp.float64, b.xp.float32]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["LSSVR", "LSSVC"])
def test_reduced_lssvm_equals_numpys(xps, dispatch, monkeypatch, dtype, name):
    """The reduced LS-SVM fitted on the namespace: its decision values and predictions are
    the NumPy model's, its fitted arrays and outputs live in the namespace, and its
    normal equations are summed, merged and factored on the device."""
    import sklearn

    import sparsekernel

    X, y = _data(dtype)
    y3 = y + (X[:, 0] > 1.0)  # three classes for the classifier (one-vs-rest)
    target = y + X[:, 0] if name == "LSSVR" else y3
    Est = getattr(sparsekernel, name)
    params = dict(n_basis=40, gamma=2.0, C=10.0, random_state=0)

    def outputs(model, X):
        return model.predict(X) if name == "LSSVR" else model.decision_function(X)

    with sklearn.config_context(array_api_dispatch=False):
        ref = Est(**params).fit(X, target)
        expected, labels = outputs(ref, X), ref.predict(X)
    calls = _spy_device_factorizations(monkeypatch)
    est = Est(**params).fit(xps.asarray(X), xps.asarray(target))
    assert len(calls) == 1 and calls[0][0] == calls[0][1] <= 40  # (the r x r equations)
    got = outputs(est, xps.asarray(X))
    assert xps.owns(got) and xps.owns(est.coef_) and xps.owns(est.basis_)
    X64 = X.astype(np.float64)
    tol = _tolerance(dtype, expected, lambda: outputs(Est(**params).fit(X64, target), X64))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=tol)
    if name == "LSSVC":
        predicted = est.predict(xps.asarray(X))
        assert xps.owns(predicted)
        _assert_labels_agree(predicted, labels, expected, tol)


def test_string_labels_come_back_as_numpy(xps, dispatch):
    """Labels that a namespace cannot hold (strings) are predicted as a NumPy array."""
    from sparsekernel import LSSVC

    X, y = _data(np.float64, 400)
    names = np.array(["no", "yes"])[y]
    est = LSSVC(n_basis=20, gamma=2.0, random_state=0).fit(xps.asarray(X), names)
    predicted = est.predict(xps.asarray(X))
    assert isinstance(predicted, np.ndarray) and set(predicted) <= {"no", "yes"}
    assert (predicted == names).mean() > 0.9


def test_exact_lssvm_on_a_namespace_is_refused_by_name(xps, dispatch):
    from sparsekernel import LSSVR

    X, y = _data(np.float64, 200)
    with pytest.raises(ValueError, match="n_basis=None is the exact LS-SVM"):
        LSSVR(n_basis=None).fit(xps.asarray(X), xps.asarray(y * 1.0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("method", ["nystrom", "reduced"])
@pytest.mark.parametrize("whiten", [False, True])
def test_reduced_kernel_pca_equals_numpys(xps, dispatch, dtype, method, whiten):
    import sklearn

    from sparsekernel import ReducedKernelPCA

    X, _ = _data(dtype)
    w = np.linspace(0.5, 2.0, X.shape[0])  # weighted moments
    params = dict(n_components=3, n_basis=40, gamma=2.0, random_state=0, method=method,
                  whiten=whiten)
    with sklearn.config_context(array_api_dispatch=False):
        ref = ReducedKernelPCA(**params).fit(X, sample_weight=w)
        expected = ref.transform(X)
    est = ReducedKernelPCA(**params).fit(xps.asarray(X), sample_weight=w)
    got = est.transform(xps.asarray(X))
    assert xps.owns(got) and xps.owns(est.components_) and xps.owns(est.mean_)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0,
                               atol=RTOL[dtype] * np.abs(expected).max())
    np.testing.assert_allclose(np.asarray(est.explained_variance_), ref.explained_variance_,
                               rtol=RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["LowRankSVC", "KernelLogisticRegression"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n", [1500, 3500])
def test_nystrom_classifiers_equal_numpys(xps, dispatch, dtype, name, n_classes, n):
    """LowRankSVC and KernelLogisticRegression on the namespace: the same solver, its rows
    on the device (above the size of the exact machine on every row), or the model fitted
    on a host copy and moved there (below); decision values, probabilities and labels
    equal the NumPy model's."""
    import sklearn

    import sparsekernel

    X, y = _data(dtype, n)
    if n_classes == 3:
        y = y + (X[:, 0] > 1.0)
    Est = getattr(sparsekernel, name)
    params = dict(n_basis=40, gamma=2.0, C=10.0, random_state=0, tol=1e-8)
    with sklearn.config_context(array_api_dispatch=False):
        ref = Est(**params).fit(X, y)
        expected, labels = ref.decision_function(X), ref.predict(X)
    Xs = xps.asarray(X)
    est = Est(**params).fit(Xs, xps.asarray(y))
    got = est.decision_function(Xs)
    assert xps.owns(got) and xps.owns(est.coef_) and xps.owns(est.normalization_)
    X64 = X.astype(np.float64)
    tol = _tolerance(dtype, expected,
                     lambda: Est(**params).fit(X64, y).decision_function(X64))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=tol)
    _assert_labels_agree(est.predict(Xs), labels, expected, tol)
    if name == "KernelLogisticRegression":
        proba = est.predict_proba(Xs)
        assert xps.owns(proba)
        # (a probability's error is at most a quarter of its decision value's)
        np.testing.assert_allclose(np.asarray(proba), ref.predict_proba(X), rtol=0,
                                   atol=max(tol, RTOL[dtype]))


@pytest.mark.parametrize("name,n", [("LowRankSVC", 1500), ("LowRankSVC", 3500),
                                    ("KernelLogisticRegression", 3500), ("LSSVC", 1500),
                                    ("NystromFeatures", 1500), ("ReducedKernelPCA", 1500)])
def test_a_basis_array_of_the_namespace_is_the_numpy_basis(xps, dispatch, name, n):
    """``basis=`` given as an array of X's namespace: the model fitted on NumPy with the
    same centres, its basis and outputs in the namespace."""
    import sklearn

    import sparsekernel

    X, y = _data(np.float64, n)
    Z = X[::n // 30]
    Est = getattr(sparsekernel, name)
    params = dict(basis=Z, gamma=2.0, random_state=0)
    supervised = hasattr(Est, "decision_function")
    if supervised:
        params.update(C=10.0, **({"tol": 1e-8} if "tol" in Est().get_params() else {}))
    elif name == "ReducedKernelPCA":
        params.update(n_components=3)  # (the leading, well-separated eigenvectors)
    with sklearn.config_context(array_api_dispatch=False):
        ref = Est(**params).fit(X, y)
        expected = ref.decision_function(X) if supervised else ref.transform(X)
    Xs = xps.asarray(X)
    est = Est(**{**params, "basis": xps.asarray(Z)}).fit(Xs, xps.asarray(y))
    got = est.decision_function(Xs) if supervised else est.transform(Xs)
    assert xps.owns(est.basis_) and xps.owns(got)
    np.testing.assert_array_equal(np.asarray(est.basis_), ref.basis_)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0,
                               atol=RTOL[np.float64] * np.abs(expected).max())


def test_lowrank_svc_hinge_on_a_namespace_is_refused_by_name(xps, dispatch):
    from sparsekernel import LowRankSVC

    X, y = _data(np.float64, 3500)
    with pytest.raises(ValueError, match="loss='squared_hinge'"):
        LowRankSVC(loss="hinge", n_basis=20).fit(xps.asarray(X), xps.asarray(y))


def test_float_labels_stay_labels(xps, dispatch):
    """Float class labels (-1.0 / 1.0) are labels: ``classes_`` (numeric, so in the
    namespace, as scikit-learn keeps it) and predictions take their values."""
    from sparsekernel import LowRankSVC
    from sparsekernel.datasets import make_checkerboard

    X, y = make_checkerboard(4000, noise=0.05, random_state=0)
    est = LowRankSVC(n_basis=60, gamma=2.0, C=10.0, random_state=0).fit(
        xps.asarray(X), xps.asarray(y))
    assert xps.owns(est.classes_) and set(np.asarray(est.classes_)) == {-1.0, 1.0}
    predicted = est.predict(xps.asarray(X))
    assert xps.owns(predicted) and set(np.unique(np.asarray(predicted))) <= {-1.0, 1.0}
    assert (np.asarray(predicted) == y).mean() > 0.9


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("name", ["NystromFeatures", "LowRankSVC", "KernelLogisticRegression",
                                  "LSSVC", "LSSVR", "ReducedKernelPCA"])
def test_scikit_learns_array_api_check(xps, name, dtype_name):
    """scikit-learn's own array-API check: fitted attributes and outputs in the input's
    namespace and device, of NumPy's dtypes, equal to NumPy's values."""
    from sklearn.utils.estimator_checks import check_array_api_input

    import sparsekernel

    params = dict(n_basis=20, random_state=0)
    if name == "ReducedKernelPCA":
        params["n_components"] = 2
    for check_values in (False, True):
        check_array_api_input(name, getattr(sparsekernel, name)(**params), xps.name,
                              device_name="cpu" if xps.name == "torch" else None,
                              dtype_name=dtype_name, check_values=check_values)


def test_memory_budget_caps_the_devices_features_and_squares(xps, dispatch):
    """The features stored on the device and the solver's squares formed there are planned
    against memory_budget: a fit whose features fit but not with the squares is refused
    before they are computed, naming the device; a budget for both fits."""
    import sklearn

    from sparsekernel import LowRankSVC
    from sparsekernel.utils import MemoryBudgetError

    X, y = _data(np.float64, 4000)
    with sklearn.config_context(array_api_dispatch=False):  # (the independent landmarks
        r = LowRankSVC(n_basis=200, random_state=0).fit(X, y).normalization_.shape[1]
    features = 4000 * r * 8  # of the 200, which Cholesky whitening keeps)
    with pytest.raises(MemoryBudgetError, match="are on the device") as info:
        LowRankSVC(n_basis=200, memory_budget=1.2 * features, random_state=0).fit(
            xps.asarray(X), xps.asarray(y))
    assert "solver squares" in str(info.value)
    LowRankSVC(n_basis=200, memory_budget=2 * features, random_state=0).fit(
        xps.asarray(X), xps.asarray(y))


def test_data_frames_and_dask_arrays_under_dispatch_keep_their_paths(dispatch):
    """Under dispatch, a pandas DataFrame is converted as without it, and a dask array takes
    the Dask path (its rows stay on the workers): neither selects a namespace."""
    pd = pytest.importorskip("pandas")
    da = pytest.importorskip("dask.array")
    from sparsekernel.compute import backend_of

    X, _ = _data(np.float64, 50)
    assert backend_of(pd.DataFrame(X)).is_numpy
    assert backend_of(da.from_array(X, chunks=25)).is_numpy
    from sparsekernel import NystromFeatures

    F = NystromFeatures(n_basis=10, random_state=0).fit(pd.DataFrame(X)).transform(X)
    assert isinstance(F, np.ndarray) and F.shape == (50, 10)


def test_kernel_blocks_on_a_namespace_cover_the_rows_within_the_budget(xps, dispatch):
    """A small memory budget gives many blocks, each within it; together they cover every
    row once, and K(X, Z) @ right equals NumPy's."""
    from sparsekernel.compute import backend_of
    from sparsekernel.kernels import Kernel
    from sparsekernel.kernels._xp import xp_apply, xp_blocks

    rng = np.random.default_rng(0)
    X, Z, right = rng.normal(size=(500, 3)), rng.normal(size=(20, 3)), rng.normal(size=(20, 2))
    kern = Kernel("rbf", gamma=0.5, memory_budget=20_000)
    Xs = xps.asarray(X)
    backend = backend_of(Xs)
    spans = [(start, stop) for start, stop, K in xp_blocks(kern, Xs, xps.asarray(Z), backend)]
    assert len(spans) > 5 and spans[0][0] == 0 and spans[-1][1] == 500
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert max(stop - start for start, stop in spans) * 8 * (3 * 20 + 4) <= 20_000
    got = xp_apply(kern, Xs, xps.asarray(Z), xps.asarray(right), backend)
    np.testing.assert_allclose(np.asarray(got), kern(X, Z) @ right, rtol=1e-12)


def _spy_device_factorizations(monkeypatch):
    """Count the Cholesky factorizations made on a namespace's device (compute._spd)."""
    from sparsekernel.compute import _spd

    calls = []
    original = _spd._cholesky_on

    def spy(xp, A, jitter):
        calls.append(tuple(int(s) for s in A.shape))
        return original(xp, A, jitter)

    monkeypatch.setattr(_spd, "_cholesky_on", spy)
    return calls


@pytest.mark.parametrize("solver", ["newton_ovr", "logistic_exact", "logistic_cg"])
def test_the_newton_solvers_form_and_factor_their_systems_on_the_device(xps, monkeypatch,
                                                                        solver):
    """Given the rows of a namespace (``NamespaceRows``), the unchanged Newton solvers form
    their (m+1)-square systems there and factor them there, and reach NumPy's solution."""
    import array_api_compat

    from sparsekernel.compute import Backend
    from sparsekernel.solvers._rows import NamespaceRows
    from sparsekernel.solvers.logistic import logistic_newton
    from sparsekernel.solvers.newton_ovr import newton_ovr

    rng = np.random.default_rng(0)
    n, m = (1200, 700) if solver == "logistic_cg" else (1500, 40)
    F = rng.normal(size=(n, m)) / np.sqrt(m)
    labels = (F[:, 0] + 0.5 * F[:, 1] > 0).astype(int) + (F[:, 2] > 0.8)  # three classes
    Fs = xps.asarray(F)
    rows = NamespaceRows(Fs, Backend(array_api_compat.array_namespace(Fs)))
    if solver == "newton_ovr":
        Y = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)

        def fit(F):
            return newton_ovr(F, Y, C=10.0, tol=1e-10)
    else:
        def fit(F):
            return [logistic_newton(F, labels, C=10.0, tol=1e-10)]
    expected = fit(F)
    calls = _spy_device_factorizations(monkeypatch)
    got = fit(rows)
    assert calls and all(shape[0] >= m + 1 for shape in calls)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a.coef, b.coef, rtol=0, atol=1e-8 * np.abs(b.coef).max())
        np.testing.assert_allclose(a.intercept, b.intercept, rtol=0, atol=1e-8)
        assert a.converged and b.converged


def test_spd_systems_on_a_namespace_follow_numpys_jitter_policy(xps):
    """The jitter policy of compute.spd_cholesky on a device: an SPD matrix factors as is,
    a singular one with NumPy's jitter, NaN raises NonFiniteError; solves equal NumPy's and
    come back in the right-hand side's namespace."""
    from sparsekernel.compute import NonFiniteError, spd_cholesky, spd_solve, to_numpy

    rng = np.random.default_rng(1)
    B = rng.normal(size=(30, 12))
    spd = B.T @ B + np.eye(12)
    singular = np.vstack([B, B[:1]]) @ np.vstack([B, B[:1]]).T  # rank 12 of 31
    rhs = rng.normal(size=(12, 2))
    x, L, jitter = spd_solve(xps.asarray(spd), rhs)
    assert isinstance(x, np.ndarray) and xps.owns(L) and jitter == 0.0
    np.testing.assert_allclose(x, np.linalg.solve(spd, rhs), rtol=1e-10)
    x1 = spd_solve(xps.asarray(np.tril(spd)), rhs[:, 0])[0]  # the lower triangle is read
    np.testing.assert_allclose(x1, np.linalg.solve(spd, rhs[:, 0]), rtol=1e-10)
    L_dev, j_dev = spd_cholesky(xps.asarray(singular))
    L_np, j_np = spd_cholesky(singular)
    assert j_dev == j_np > 0
    np.testing.assert_allclose(to_numpy(L_dev), L_np, atol=1e-8 * np.abs(L_np).max())
    bad = spd.copy()
    bad[3, 2] = np.nan
    with pytest.raises(NonFiniteError):
        spd_cholesky(xps.asarray(bad))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("duplicates", [False, True])
def test_kmeans_landmarks_are_chosen_on_the_device(xps, dispatch, monkeypatch, dtype,
                                                   duplicates):
    """basis='kmeans' runs its Lloyd iterations on the namespace's device, with NumPy's
    start rows and steps: the same centres (to rounding), also when duplicate rows leave
    clusters empty (relocated to the farthest rows, as on NumPy)."""
    import sklearn

    from sparsekernel import LowRankSVC, NystromFeatures
    from sparsekernel.basis import _lloyd

    calls = []
    original = _lloyd._assign

    def spy(X, centers, *args):  # every assignment step: rows and centres on the device
        calls.append(type(X).__module__)
        calls.append(type(centers).__module__)
        return original(X, centers, *args)

    monkeypatch.setattr(_lloyd, "_assign", spy)
    X, y = _data(dtype, 1200)
    if duplicates:  # a third of the rows repeat 10 points: duplicate start rows
        X[::3] = X[:10].repeat(40, axis=0)[: len(X[::3])]
    params = dict(n_basis=30, basis="kmeans", gamma=2.0, random_state=0)
    with sklearn.config_context(array_api_dispatch=False):
        ref = NystromFeatures(**params).fit(X)
    assert calls and set(calls) == {"numpy"}
    calls.clear()
    est = NystromFeatures(**params).fit(xps.asarray(X))
    assert calls and all(module.split(".")[0] == xps.name for module in calls)
    np.testing.assert_allclose(np.asarray(est.basis_), ref.basis_, rtol=0,
                               atol=RTOL[dtype] * np.abs(ref.basis_).max())
    calls.clear()  # and a classifier's (its whitening is on the host; above 3,000 rows,
    X, y = _data(dtype, 3500)  # which it fits on a host copy and moves)
    clf = LowRankSVC(**params).fit(xps.asarray(X), xps.asarray(y))
    assert calls and xps.owns(clf.basis_)


#: scikit-learn's StandardScaler divides 0 by 0 in its incremental variance on
#: array_api_strict, which warns where NumPy's own path does not.
SCALER_ON_STRICT = pytest.mark.filterwarnings(
    "ignore:invalid value encountered in divide:RuntimeWarning")


@SCALER_ON_STRICT
def test_pipelines_and_searches_run_on_the_namespace(xps, dispatch):
    """scikit-learn's tools around the estimators under dispatch: a Pipeline with its
    array-API StandardScaler, searched by GridSearchCV, scores as on NumPy; temperature
    calibration of an SVM gives probabilities in the namespace, as on NumPy (scikit-learn's
    sigmoid and isotonic calibrations are NumPy's only)."""
    import sklearn
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sparsekernel import LowRankSVC

    X, y = _data(np.float64, 3500)
    y = y + (X[:, 0] > 1.0)

    def search(X, y):
        pipe = make_pipeline(StandardScaler(), LowRankSVC(n_basis=40, random_state=0))
        return GridSearchCV(pipe, {"lowranksvc__C": [0.1, 10.0]}, cv=3).fit(X, y)

    def calibrated(X, y):
        return CalibratedClassifierCV(LowRankSVC(n_basis=40, random_state=0),
                                      method="temperature", cv=3).fit(X, y).predict_proba(X)

    with sklearn.config_context(array_api_dispatch=False):
        ref, ref_proba = search(X, y), calibrated(X, y)
    got = search(xps.asarray(X), xps.asarray(y))
    assert got.best_params_ == ref.best_params_
    np.testing.assert_allclose(got.cv_results_["mean_test_score"],
                               ref.cv_results_["mean_test_score"], atol=1e-12)
    assert xps.owns(got.predict(xps.asarray(X)))
    proba = calibrated(xps.asarray(X), xps.asarray(y))
    assert xps.owns(proba)
    np.testing.assert_allclose(np.asarray(proba), ref_proba, rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,whitening", [("LowRankSVC", "eigh"), ("LowRankSVC", "cholesky"),
                                            ("KernelLogisticRegression", None)])
def test_the_classifiers_whiten_on_the_device(xps, dispatch, monkeypatch, dtype, name,
                                              whitening):
    """The Nystrom classifiers whiten on the device (no host map is made), by eigen
    decomposition or pivoted Cholesky (the default of both, with LAPACK's landmarks, here
    duplicates among them), and give the NumPy model's decision values; the map lives in
    the namespace."""
    import sklearn

    import sparsekernel
    from sparsekernel.features import _nystrom

    Est = getattr(sparsekernel, name)
    X, y = _data(dtype, 3500)
    X[100:110] = X[:10]  # duplicate landmarks: Cholesky whitening keeps one of each
    y = y + (X[:, 0] > 1.0)
    params = dict(n_basis=40, gamma=2.0, C=10.0, random_state=0, tol=1e-8,
                  basis=np.vstack([X[:30], X[100:110]]))
    if whitening is not None:
        params["whitening"] = whitening
    with sklearn.config_context(array_api_dispatch=False):
        ref = Est(**params).fit(X, y)
        expected = ref.decision_function(X)
    if whitening != "eigh":
        assert ref.basis_.shape[0] == 30  # (the duplicates dropped)

    original, made = _nystrom.nystrom_map, []

    def on_device(kernel, Z, *args, **kwargs):
        assert xps.owns(Z), "the map was made on the host"
        made.append(Z.shape)
        return original(kernel, Z, *args, **kwargs)

    monkeypatch.setattr(_nystrom, "nystrom_map", on_device)
    est = Est(**params).fit(xps.asarray(X), xps.asarray(y))
    assert made == [(40, X.shape[1])]
    assert xps.owns(est.normalization_) and xps.owns(est.basis_)
    np.testing.assert_array_equal(np.asarray(est.basis_), ref.basis_)  # (in LAPACK's order)
    got = est.decision_function(xps.asarray(X))
    monkeypatch.undo()
    X64 = X.astype(np.float64)
    params["basis"] = params["basis"].astype(np.float64)
    tol = _tolerance(dtype, expected,
                     lambda: Est(**params).fit(X64, y).decision_function(X64))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_gram_sums_in_chunks_equal_the_hosts(xps, dtype):
    """NamespaceRows.add_gram, gathering a few rows at a time, adds the host provider's
    sum to the lower triangle of its device square (the upper one untouched), with the
    bias border, for added and removed row sets."""
    import array_api_compat

    from sparsekernel.compute import Backend, to_numpy
    from sparsekernel.solvers._rows import ArrayRows, NamespaceRows

    rng = np.random.default_rng(2)
    F = rng.normal(size=(500, 12)).astype(dtype)
    w = rng.uniform(0.5, 2.0, 500)
    rows = np.sort(rng.choice(500, 300, replace=False))
    Fs = xps.asarray(F)
    device = NamespaceRows(Fs, Backend(array_api_compat.array_namespace(Fs)),
                           gather_bytes=8 * 12 * 7)  # 7 rows a chunk: 43 chunks
    host = ArrayRows(F, threads=1)
    for sign in (1.0, -1.0):
        H = device.add_gram(device.square(13, 1.0), w, rows, sign, dtype=np.float64)
        assert xps.owns(H)
        expected = host.add_gram(host.square(13, 1.0), w, rows, sign, dtype=np.float64)
        np.testing.assert_allclose(to_numpy(H), expected, rtol=1e-10, atol=1e-10)
        assert not np.triu(to_numpy(H) - np.eye(13), 1).any()


@pytest.mark.parametrize("distinct", [True, False])
def test_pivoted_cholesky_on_a_namespace_is_lapacks(xps, distinct):
    """compute.pivoted_cholesky_on chooses pstrf's pivots in pstrf's order (distinct
    points; with duplicates, the same points), stops at the same rank, and its factor is
    lower triangular on the pivots and reproduces K there."""
    from scipy.linalg.lapack import dpstrf

    from sparsekernel.compute import pivoted_cholesky_on, to_numpy
    from sparsekernel.kernels import Kernel

    rng = np.random.default_rng(3)
    P = rng.normal(size=(150, 4))
    if not distinct:
        P = np.vstack([P, P[:50]])  # rank 150 of 200
    K = Kernel("rbf", gamma=0.3)(P, P)
    tol = 1e-12 * np.abs(K).sum(axis=1).max()
    _, piv, rank, _ = dpstrf(K.copy().T, tol=tol, lower=1)
    piv = piv[:rank] - 1
    L, got = pivoted_cholesky_on(xps.asarray(K), tol, block=16)
    L = to_numpy(L)
    assert len(got) == rank == 150
    if distinct:
        np.testing.assert_array_equal(got, piv)
    else:
        np.testing.assert_array_equal(P[got], P[piv])
    Lp = L[got]
    assert not np.triu(Lp, 1).any()
    np.testing.assert_allclose(Lp @ Lp.T, K[np.ix_(got, got)], atol=1e-12)


@SCALER_ON_STRICT
def test_a_model_on_a_device_is_saved_from_a_host_copy(xps, dispatch, tmp_path):
    """io.save writes a device model (and a pipeline of them) as NumPy arrays, leaving the
    model in memory on its device; the loaded model predicts as it did.
    compute.model_to_numpy moves a pipeline's steps too."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sparsekernel import KernelLogisticRegression, LowRankSVC, io
    from sparsekernel.compute import holds_namespace_arrays, model_to_numpy

    X, y = _data(np.float64, 500)
    Xs, ys = xps.asarray(X), xps.asarray(y)
    clf = KernelLogisticRegression(n_basis=20, random_state=0).fit(Xs, ys)
    pipe = make_pipeline(StandardScaler(), LowRankSVC(n_basis=20, random_state=0)).fit(Xs, ys)
    for model, output in ((clf, "predict_proba"), (pipe, "decision_function")):
        assert holds_namespace_arrays(model)
        io.save(model, tmp_path / "model.skm")
        assert holds_namespace_arrays(model)  # (the model in memory is left as it was)
        loaded = io.load(tmp_path / "model.skm")
        assert not holds_namespace_arrays(loaded)
        np.testing.assert_allclose(getattr(loaded, output)(X),
                                   np.asarray(getattr(model, output)(Xs)), rtol=1e-12,
                                   atol=1e-12)
    model_to_numpy(pipe)
    assert not holds_namespace_arrays(pipe) and isinstance(pipe[0].mean_, np.ndarray)


@pytest.mark.parametrize("name,params,method", [
    ("NystromFeatures", dict(basis="kmeans"), "transform"),
    ("LowRankSVC", {}, "decision_function"),
    ("LowRankSVC", dict(basis="kmeans", whitening="eigh"), "decision_function"),
    ("KernelLogisticRegression", {}, "predict_proba"),
    ("LSSVC", {}, "decision_function"),
    ("LSSVR", {}, "predict"),
    ("ReducedKernelPCA", dict(n_components=2), "transform"),
])
def test_arrays_stay_on_a_device_other_than_the_default(dispatch, name, params, method):
    """On array_api_strict's second device (which refuses to mix devices and to convert
    to NumPy implicitly), a fit and its output stay there: no array is made on the default
    device (the CPU's, next to a GPU) on the way."""
    xs = pytest.importorskip("array_api_strict")
    import sparsekernel

    device = xs.Device("device1")
    X, y = _data(np.float64, 3500)
    target = {"LSSVR": y + X[:, 0], "NystromFeatures": None,
              "ReducedKernelPCA": None}.get(name, y + (X[:, 0] > 1.0))
    Xd = xs.asarray(X, device=device)
    est = getattr(sparsekernel, name)(n_basis=30, random_state=0, **params)
    est.fit(Xd) if target is None else est.fit(Xd, xs.asarray(target, device=device))
    assert getattr(est, method)(Xd).device == device
    elsewhere = [key for key, value in vars(est).items()
                 if key.endswith("_") and hasattr(value, "device") and value.device != device]
    assert not elsewhere


def test_one_class_svm_fits_a_host_copy_and_scores_the_namespaces_arrays(xps, dispatch):
    """LowRankOneClassSVM fits a namespace's rows on a host copy (the NumPy model), its
    fitted arrays then on that namespace, where it scores the namespace's arrays."""
    from sparsekernel import LowRankOneClassSVM

    X = np.random.default_rng(0).standard_normal((300, 3))
    dev = LowRankOneClassSVM(n_basis=20, random_state=0).fit(xps.asarray(X))
    host = LowRankOneClassSVM(n_basis=20, random_state=0).fit(X)
    assert xps.owns(dev.coef_) and xps.owns(dev.basis_)
    np.testing.assert_array_equal(np.asarray(dev.coef_), host.coef_)
    for method in ("decision_function", "score_samples", "predict"):
        got, expected = getattr(dev, method)(xps.asarray(X)), getattr(host, method)(X)
        assert xps.owns(got)
        np.testing.assert_allclose(np.asarray(got), expected,
                                   atol=1e-10 * np.abs(expected).max())
