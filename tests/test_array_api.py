"""The estimators on an array-API namespace: ``array_api_strict`` on the CPU stands for a GPU's.

scikit-learn's ``array_api_dispatch`` needs ``SCIPY_ARRAY_API=1`` before SciPy is imported,
which changes SciPy for the whole process; the rest of the suite runs without it. So this
module runs itself in a child process with the variable set
(:func:`test_in_a_process_with_scipy_array_api`), and its other tests run there only.
Known answers: the same estimator on the same data in NumPy.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

INSIDE = os.environ.get("SCIPY_ARRAY_API") == "1"
inside = pytest.mark.skipif(not INSIDE, reason="runs in the child process with SCIPY_ARRAY_API=1")


@pytest.mark.skipif(INSIDE, reason="this is the child process")
def test_in_a_process_with_scipy_array_api():
    pytest.importorskip("array_api_strict")
    pytest.importorskip("array_api_compat")
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(Path(__file__))],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    # Every test ran there: only this one (the parent's) is skipped in the child.
    assert " passed" in summary and " 1 skipped" in summary, proc.stdout[-2000:]


@pytest.fixture
def xps():
    return pytest.importorskip("array_api_strict")


@pytest.fixture
def dispatch():
    import sklearn

    with sklearn.config_context(array_api_dispatch=True):
        yield


def _data(dtype, n=1500):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.2, random_state=0)
    return X.astype(dtype), y


#: Features agree to these shares of their largest value. float32: both paths solve K(Z, Z)'s
#: eigenproblem in float32, by different LAPACK drivers (SciPy's evd, the namespace's), whose
#: eigenvectors of close eigenvalues differ by float32 rounding over the gap.
RTOL = {np.float64: 1e-10, np.float32: 5e-4}


@inside
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
    assert type(got).__module__.startswith("array_api_strict")
    assert str(got.dtype).endswith(np.dtype(dtype).name)
    for name in ("basis_", "normalization_", "eigenvalues_"):
        assert type(getattr(est, name)).__module__.startswith("array_api_strict"), name
    assert est.n_components_ == ref.n_components_
    got = np.asarray(got)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=RTOL[dtype] * scale)
    np.testing.assert_array_equal(est.basis_indices_, ref.basis_indices_)


@inside
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
    assert type(est.normalization_).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(est.transform(Xs)), on_device, rtol=1e-12)


@inside
def test_without_dispatch_namespace_arrays_are_numpy_inputs(xps):
    """array_api_dispatch off (the default): behaviour is NumPy's, as scikit-learn's."""
    from sparsekernel.compute import backend_of

    assert backend_of(xps.asarray(np.ones((2, 2)))).is_numpy


@inside
def test_sparse_input_is_refused_by_name_on_a_namespace(xps, dispatch):
    from sparsekernel.compute import backend_of

    assert backend_of(np.ones((2, 2))).is_numpy  # NumPy input under dispatch: NumPy
    b = backend_of(xps.asarray(np.ones((2, 2))))
    assert not b.is_numpy and b.float_dtypes() == [xps.float64, xps.float32]


#: Decision values agree to these shares of their largest value (float32: as the features).
DECISION_RTOL = {np.float64: 1e-10, np.float32: 5e-3}


def _strict(a):
    return type(a).__module__.startswith("array_api_strict")


@inside
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["LSSVR", "LSSVC"])
def test_reduced_lssvm_equals_numpys(xps, dispatch, dtype, name):
    """The reduced LS-SVM fitted on the namespace: its decision values and predictions are
    the NumPy model's, its fitted arrays and outputs live in the namespace."""
    import sklearn

    import sparsekernel

    X, y = _data(dtype)
    y3 = y + (X[:, 0] > 1.0)  # three classes for the classifier (one-vs-rest)
    target = y + X[:, 0] if name == "LSSVR" else y3
    Est = getattr(sparsekernel, name)
    params = dict(n_basis=40, gamma=2.0, C=10.0, random_state=0)
    with sklearn.config_context(array_api_dispatch=False):
        ref = Est(**params).fit(X, target)
        expected = ref.predict(X) if name == "LSSVR" else ref.decision_function(X)
        labels = ref.predict(X)
    est = Est(**params).fit(xps.asarray(X), xps.asarray(target))
    got = est.predict(xps.asarray(X)) if name == "LSSVR" else est.decision_function(
        xps.asarray(X))
    assert _strict(got) and _strict(est.coef_) and _strict(est.basis_)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0,
                               atol=DECISION_RTOL[dtype] * np.abs(expected).max())
    if name == "LSSVC":
        predicted = est.predict(xps.asarray(X))
        assert _strict(predicted)
        np.testing.assert_array_equal(np.asarray(predicted), labels)


@inside
def test_string_labels_come_back_as_numpy(xps, dispatch):
    """Labels that a namespace cannot hold (strings) are predicted as a NumPy array."""
    from sparsekernel import LSSVC

    X, y = _data(np.float64, 400)
    names = np.array(["no", "yes"])[y]
    est = LSSVC(n_basis=20, gamma=2.0, random_state=0).fit(xps.asarray(X), names)
    predicted = est.predict(xps.asarray(X))
    assert isinstance(predicted, np.ndarray) and set(predicted) <= {"no", "yes"}
    assert (predicted == names).mean() > 0.9


@inside
def test_exact_lssvm_on_a_namespace_is_refused_by_name(xps, dispatch):
    from sparsekernel import LSSVR

    X, y = _data(np.float64, 200)
    with pytest.raises(ValueError, match="n_basis=None is the exact LS-SVM"):
        LSSVR(n_basis=None).fit(xps.asarray(X), xps.asarray(y * 1.0))


@inside
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
    assert _strict(got) and _strict(est.components_) and _strict(est.mean_)
    # float32: the Nystrom map's eigenproblem is solved in float32 (the features' RTOL);
    # the reduced method has none, and agrees to float32 rounding.
    tol = DECISION_RTOL[dtype] if method == "nystrom" else {np.float64: 1e-10,
                                                            np.float32: 1e-5}[dtype]
    np.testing.assert_allclose(np.asarray(got), expected, rtol=0,
                               atol=tol * np.abs(expected).max())
    np.testing.assert_allclose(np.asarray(est.explained_variance_), ref.explained_variance_,
                               rtol=tol)
