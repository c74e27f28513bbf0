import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsekernel import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR
from sparsekernel.basis import BasisSelector, RandomBasis
from sparsekernel.kernels import Kernel

from .conftest import read_only

X_BIN, Y_BIN = read_only(*make_classification(120, 5, random_state=0))
X_MC, Y_MC = read_only(*make_blobs(150, 3, centers=4, cluster_std=2.0, random_state=1))
X_REG, Y_REG = read_only(*make_regression(120, 4, noise=5.0, random_state=2))
Y_REG_S = read_only(Y_REG / Y_REG.std())[0]


@pytest.mark.parametrize("smoothing", [5.0, np.inf])
@pytest.mark.parametrize("X, y", [(X_BIN, Y_BIN), (X_MC, Y_MC)], ids=["binary", "multiclass"])
def test_reduced_svc_with_all_points_equals_smooth_svc(X, y, smoothing):
    kw = dict(gamma=0.2, C=3.0, smoothing=smoothing, tol=1e-10)
    full = SmoothSVC(**kw).fit(X, y)
    red = ReducedSVC(basis=X, **kw).fit(X, y)
    # the exact loss in the rows' coordinates against the same features' Hessians
    assert full._in_rows() == np.isinf(smoothing) and not red._in_rows()
    np.testing.assert_allclose(red.objective_, full.objective_, rtol=1e-10)
    np.testing.assert_allclose(red.decision_function(X), full.decision_function(X),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("smoothing", [5.0, np.inf])
def test_reduced_svr_with_all_points_equals_smooth_svr(smoothing):
    kw = dict(gamma=0.3, C=10.0, epsilon=0.2, smoothing=smoothing, tol=1e-10)
    full = SmoothSVR(**kw).fit(X_REG, Y_REG_S)
    red = ReducedSVR(basis=X_REG, **kw).fit(X_REG, Y_REG_S)
    assert full._in_rows() == np.isinf(smoothing) and not red._in_rows()
    np.testing.assert_allclose(red.predict(X_REG), full.predict(X_REG), rtol=1e-7, atol=1e-9)
    assert red.objective_[0] == pytest.approx(full.objective_[0], rel=1e-10)


@pytest.mark.parametrize("Smooth, Reduced, X, y, kw", [
    (SmoothSVC, ReducedSVC, X_MC, Y_MC, {}),
    (SmoothSVR, ReducedSVR, X_REG, Y_REG_S, {"epsilon": 0.2}),
], ids=["classifier", "regressor"])
def test_reduced_with_n_basis_none_is_the_smooth_estimator(Smooth, Reduced, X, y, kw):
    """One estimator, two defaults: SmoothSV* = ReducedSV*(n_basis=None), the full kernel."""
    assert issubclass(Smooth, Reduced) and Smooth().n_basis is None
    assert set(Smooth().get_params()) == set(Reduced().get_params())
    kw = dict(gamma=0.3, C=5.0, tol=1e-10, **kw)
    full = Smooth(**kw).fit(X, y)
    red = Reduced(n_basis=None, **kw).fit(X, y)
    np.testing.assert_array_equal(red.basis_, X)
    np.testing.assert_array_equal(red.basis_indices_, np.arange(len(X)))
    np.testing.assert_allclose(red.coef_, full.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(red.intercept_, full.intercept_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(red.predict(X), full.predict(X))
    # Any other n_basis turns the smooth estimator into the reduced one.
    a = Smooth(n_basis=25, random_state=0, **kw).fit(X, y)
    b = Reduced(n_basis=25, random_state=0, **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_n_basis_none_refuses_a_basis_it_would_not_use():
    with pytest.raises(ValueError, match=r"n_basis=None .* basis='kmeans'"):
        SmoothSVC(basis="kmeans").fit(X_BIN, Y_BIN)
    with pytest.raises(ValueError, match="n_basis=None"):
        ReducedSVR(n_basis=None, basis=X_REG[:5]).fit(X_REG, Y_REG_S)


class _RecordingBasis(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self.kernel_ = kernel
        return RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)


@pytest.mark.parametrize("Est, X, y", [(ReducedSVC, X_MC, Y_MC), (ReducedSVR, X_REG, Y_REG_S),
                                       (SmoothSVC, X_BIN, Y_BIN)])
def test_selector_receives_the_estimators_kernel(Est, X, y):
    rec = _RecordingBasis()
    est = Est(kernel="laplacian", gamma=0.3, n_basis=10, basis=rec, random_state=0).fit(X, y)
    assert rec.kernel_.name == "laplacian" and rec.kernel_.gamma == 0.3 == est.gamma_
    rec = _RecordingBasis()
    est = Est(kernel="gaussian", n_basis=10, basis=rec, random_state=0).fit(X, y)
    assert rec.kernel_.name == "rbf" and rec.kernel_.gamma == est.gamma_  # 'scale' resolved
    assert est.basis_.shape == (10, X.shape[1])


def blocks_budget(est, X, k):
    """The smallest memory_budget (on a 1.1x grid) with which ``est`` fits K(X, Z) in blocks
    recomputed at every pass: the blocks plan fits, the stored plan does not."""
    from sparsekernel.svm._memory import Budget, reduced_plan

    m = est.n_basis
    for budget in np.geomspace(2**10, 2**30, 220):
        plan = Budget(clone(est).set_params(memory_budget=int(budget)))
        if reduced_plan(plan, est, X.shape[0], m, k, 8, stored=False).fits():
            assert not reduced_plan(plan, est, X.shape[0], m, k, 8, stored=True).fits()
            return int(budget)
    raise AssertionError("no budget between the blocks and the stored plans")


def test_interrupted_fit_propagates_and_keeps_the_previous_model(monkeypatch):
    """Ctrl-C in the second Newton iteration of the one-vs-rest solve (on the row-block
    path) propagates, and the two-class model fitted before stays whole."""
    import sparsekernel.svm._base as svm_base

    clf = ReducedSVC(n_basis=20, random_state=0)
    clf.set_params(memory_budget=blocks_budget(clf, X_MC, 4)).fit(X_BIN, Y_BIN)
    before, pred = dict(vars(clf)), clf.predict(X_BIN)
    original, calls = svm_base.newton_ovr, []

    def interrupted_second(*args, callback, **kwargs):
        def second(info):
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt
            callback(info)

        return original(*args, callback=second, **kwargs)

    monkeypatch.setattr(svm_base, "newton_ovr", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X_MC, Y_MC)
    assert len(calls) == 2
    assert vars(clf).keys() == before.keys()
    assert all(vars(clf)[k] is v for k, v in before.items())
    assert len(clf.classes_) == 2 and clf.coef_.shape[0] == 1
    np.testing.assert_array_equal(clf.predict(X_BIN), pred)


def test_verbose_2_prints_a_line_per_solve(capsys):
    ReducedSVC(n_basis=20, verbose=2, random_state=0).fit(X_MC, Y_MC)
    err = capsys.readouterr().err
    assert err.count("[ReducedSVC] solved") == 4 and "[ReducedSVC] iteration" in err


@pytest.mark.parametrize("Est, X, y", [(ReducedSVC, X_MC, Y_MC), (ReducedSVR, X_REG, Y_REG_S)])
def test_recomputed_blocks_equal_stored_features(Est, X, y):
    """A budget too small to store K(X, Z) switches to recomputation: same model."""
    kw = dict(gamma=0.3, n_basis=40, random_state=0, tol=1e-10)
    stored = Est(**kw).fit(X, y)
    k = len(np.unique(y)) if Est is ReducedSVC else 1
    streamed = Est(**kw)
    streamed.set_params(memory_budget=blocks_budget(streamed, X, k)).fit(X, y)
    np.testing.assert_allclose(streamed.coef_, stored.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(streamed.predict(X), stored.predict(X))


def test_multiclass_ovr_shares_one_feature_map(monkeypatch):
    calls = []
    original = Kernel.__call__

    def counting(self, X, Z, block_rows=None):
        calls.append(X.shape)
        return original(self, X, Z, block_rows)

    monkeypatch.setattr(Kernel, "__call__", counting)
    clf = ReducedSVC(n_basis=20, random_state=0).fit(X_MC, Y_MC)
    assert len(calls) == 1  # K(X, Z) once for four one-vs-rest problems
    assert clf.coef_.shape == (4, 20) and clf.intercept_.shape == (4,)
    assert clf.decision_function(X_MC).shape == (150, 4)
    np.testing.assert_array_equal(clf.predict(X_MC),
                                  clf.classes_[clf.decision_function(X_MC).argmax(1)])


def test_string_labels_and_binary_sign_convention():
    y = np.where(Y_BIN == 1, "spam", "ham")
    clf = ReducedSVC(n_basis=30, random_state=0).fit(X_BIN, y)
    scores = clf.decision_function(X_BIN)
    assert scores.shape == (120,)
    np.testing.assert_array_equal(clf.predict(X_BIN), np.where(scores > 0, "spam", "ham"))
    assert list(clf.classes_) == ["ham", "spam"]
    assert clf.score(X_BIN, y) > 0.9


@pytest.mark.parametrize("Est, X, y", [(ReducedSVC, X_BIN, Y_BIN), (ReducedSVR, X_REG, Y_REG_S)])
def test_integer_sample_weight_equals_repetition_with_a_fixed_basis(Est, X, y):
    weights = np.random.default_rng(0).integers(0, 4, size=len(y))
    kw = dict(gamma=0.3, basis=X[:25], tol=1e-10)
    weighted = Est(**kw).fit(X, y, sample_weight=weights)
    repeated = Est(**kw).fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-7, atol=1e-9)


def test_class_weight_equals_sample_weight():
    cw = {0: 3.0, 1: 0.5}
    a = ReducedSVC(basis=X_BIN[:20], class_weight=cw, tol=1e-10).fit(X_BIN, Y_BIN)
    sw = np.where(Y_BIN == 0, 3.0, 0.5)
    b = ReducedSVC(basis=X_BIN[:20], tol=1e-10).fit(X_BIN, Y_BIN, sample_weight=sw)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    balanced = ReducedSVC(basis=X_BIN[:20], class_weight="balanced").fit(X_BIN, Y_BIN)
    assert not np.allclose(balanced.coef_, b.coef_)


@pytest.mark.parametrize("Est, X, y", [(ReducedSVC, X_MC, Y_MC), (ReducedSVR, X_REG, Y_REG_S),
                                       (SmoothSVC, X_BIN, Y_BIN)])
def test_csr_input_equals_dense(Est, X, y):
    Xs = np.where(np.abs(X) > 0.5, X, 0.0)
    kw = dict(gamma=0.3, tol=1e-10)
    if Est is not SmoothSVC:
        kw.update(n_basis=30, random_state=0)
    dense = Est(**kw).fit(Xs, y)
    sparse = Est(**kw).fit(sp.csr_matrix(Xs), y)
    assert sp.issparse(sparse.basis_)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(Xs)), dense.predict(Xs))


def test_float32_input_stays_float32_and_agrees():
    X32 = X_MC.astype(np.float32)
    clf32 = ReducedSVC(n_basis=30, random_state=0, gamma=0.2).fit(X32, Y_MC)
    clf64 = ReducedSVC(n_basis=30, random_state=0, gamma=0.2).fit(X_MC, Y_MC)
    assert clf32.basis_.dtype == np.float32
    np.testing.assert_allclose(clf32.decision_function(X32), clf64.decision_function(X_MC),
                               rtol=1e-3, atol=1e-4)


def test_linear_smooth_svc_works_in_the_primal():
    clf = SmoothSVC(kernel="linear", C=1.0).fit(X_BIN, Y_BIN)
    assert clf.basis_ is None and clf.coef_.shape == (1, 5)
    np.testing.assert_allclose(clf.decision_function(X_BIN),
                               X_BIN @ clf.coef_[0] + clf.intercept_[0])
    sparse = SmoothSVC(kernel="linear").fit(sp.csr_matrix(X_BIN), Y_BIN)
    np.testing.assert_allclose(sparse.coef_, clf.coef_, rtol=1e-8)


def test_kmeans_basis_is_not_training_rows():
    clf = ReducedSVC(n_basis=12, basis="kmeans", random_state=0).fit(X_MC, Y_MC)
    assert clf.basis_indices_ is None and clf.basis_.shape == (12, 3)
    assert clf.score(X_MC, Y_MC) > 0.8


def test_convergence_warning_names_the_gradient_norm():
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1 with gradient norm [0-9.e+-]+"):
        ReducedSVC(n_basis=30, C=100.0, max_iter=1, random_state=0).fit(X_BIN, Y_BIN)


def test_full_kernel_refuses_a_newton_system_over_budget():
    with pytest.raises(ValueError, match=r"n=120.*ReducedSVC|reduced estimator"):
        SmoothSVC(memory_budget=10_000).fit(X_BIN, Y_BIN)


def test_grid_search_over_pipeline():
    pipe = make_pipeline(StandardScaler(), ReducedSVC(n_basis=30, random_state=0))
    grid = GridSearchCV(pipe, {"reducedsvc__C": [0.1, 10.0], "reducedsvc__gamma": [0.1, 1.0]},
                        cv=3).fit(X_MC, Y_MC)
    assert grid.best_score_ > 0.7
    assert set(grid.best_params_) == {"reducedsvc__C", "reducedsvc__gamma"}


def test_verbose_shows_progress(capsys):
    ReducedSVC(n_basis=20, verbose=1, random_state=0).fit(X_MC, Y_MC)
    assert "ReducedSVC" in capsys.readouterr().err


def test_random_state_reproducible_and_matters():
    a = ReducedSVC(n_basis=15, random_state=3).fit(X_MC, Y_MC)
    b = ReducedSVC(n_basis=15, random_state=3).fit(X_MC, Y_MC)
    c = ReducedSVC(n_basis=15, random_state=4).fit(X_MC, Y_MC)
    np.testing.assert_array_equal(a.basis_indices_, b.basis_indices_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.basis_indices_, c.basis_indices_)


# ---- bad input: a clear error naming the value ---------------------------------------------

ALL = [SmoothSVC, SmoothSVR, ReducedSVC, ReducedSVR]


def _y_for(Est, n):
    return np.arange(n) % 2 if Est in (SmoothSVC, ReducedSVC) else np.linspace(0, 1, n)


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_nan_inf_rejected(Est, bad, match):
    X = X_BIN[:20].copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match=match):
        Est().fit(X, _y_for(Est, 20))


@pytest.mark.parametrize("Est", ALL)
def test_shape_problems_rejected(Est):
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        Est().fit(np.arange(10.0), _y_for(Est, 10))
    with pytest.raises(ValueError, match="0 sample"):
        Est().fit(np.empty((0, 3)), _y_for(Est, 0))
    with pytest.raises(ValueError, match="could not convert string to float"):
        Est().fit(np.array([["a", "b"], ["c", "d"]]), _y_for(Est, 2))
    est = Est().fit(X_BIN[:20], _y_for(Est, 20))
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 5 features"):
        est.predict(X_BIN[:4, :3])


@pytest.mark.parametrize("Est", [SmoothSVC, ReducedSVC])
def test_one_class_rejected(Est):
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class \\('a'\\)"):
        Est().fit(X_BIN[:10], ["a"] * 10)


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("param, value, match", [
    ("C", -1.0, r"'C' parameter of \w+ must be a float in the range \(0, inf\). Got -1.0"),
    ("gamma", -0.5, r"'gamma' parameter .* Got -0.5 instead"),
    ("kernel", "cosine", r"'kernel' parameter .*'rbf'.* Got 'cosine' instead"),
    ("tol", 0.0, r"'tol' parameter .* Got 0.0 instead"),
    ("max_iter", 2.5, r"'max_iter' parameter .* Got 2.5 instead"),
    ("memory_budget", "lots", r"'memory_budget' parameter .* Got 'lots' instead"),
])
def test_bad_parameters_named(Est, param, value, match):
    with pytest.raises(ValueError, match=match):
        Est(**{param: value}).fit(X_BIN[:20], _y_for(Est, 20))


@pytest.mark.parametrize("Est", [ReducedSVC, ReducedSVR])
def test_bad_basis_parameters_named(Est):
    y = _y_for(Est, 20)
    with pytest.raises(ValueError, match=r"n_basis=50 .* \(n_samples=20\)"):
        Est(n_basis=50).fit(X_BIN[:20], y)
    with pytest.raises(ValueError, match=r"'n_basis' parameter .* Got 1.5 instead"):
        Est(n_basis=1.5).fit(X_BIN[:20], y)
    with pytest.raises(ValueError, match=r"Got 'grid' instead"):
        Est(basis="grid").fit(X_BIN[:20], y)
    with pytest.raises(ValueError, match="3 features but X has 5"):
        Est(basis=np.ones((4, 3))).fit(X_BIN[:20], y)


def test_bad_sample_weight_named():
    with pytest.raises(ValueError, match=r"shape \(20,\).*\(3,\)"):
        ReducedSVC().fit(X_BIN[:20], Y_BIN[:20], sample_weight=[1, 2, 3])
    with pytest.raises(ValueError, match="non-negative; its minimum is -1.0"):
        ReducedSVC().fit(X_BIN[:20], Y_BIN[:20], sample_weight=-np.ones(20))


def test_no_warning_on_the_happy_path():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ReducedSVC(n_basis=30, random_state=0).fit(X_MC, Y_MC).predict(X_MC)
