"""Penalized logistic regression: the solver against references, and KernelLogisticRegression."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from sparsekernel import KernelLogisticRegression, LowRankSVC
from sparsekernel.io import ModelFormatError, load, save
from sparsekernel.solvers import logistic as logistic_module
from sparsekernel.solvers import logistic_newton


def _features(n=120, m=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, m))
    y = rng.integers(0, k, n)
    F[:, :2] += y[:, None]  # informative but not separable
    return F, y


def _sklearn_reference(F, y, C, sample_weight=None):
    """LogisticRegression with the bias as a penalized constant column."""
    F1 = np.c_[F, np.ones(len(F))]
    ref = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10000)
    ref.fit(F1, y, sample_weight=sample_weight)
    return ref.coef_[:, :-1], ref.coef_[:, -1]


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("exact", [True, False], ids=["newton", "newton-pcg"])
def test_solver_matches_sklearn_with_a_penalized_bias(k, exact, monkeypatch):
    if not exact:
        monkeypatch.setattr(logistic_module, "_EXACT_MAX", 1)
    F, y = _features(k=k)
    res = logistic_newton(F, y, C=0.7, tol=1e-9)
    coef, intercept = _sklearn_reference(F, y, 0.7)
    assert res.coef.shape == (1 if k == 2 else k, 6)
    np.testing.assert_allclose(res.coef, coef, atol=1e-6)
    np.testing.assert_allclose(res.intercept, intercept, atol=1e-6)


def test_solver_matches_scipy_on_the_same_objective():
    F, y = _features(k=3, seed=1)
    C, s = 2.0, np.random.default_rng(1).uniform(0.2, 2.0, len(y))
    Y = np.eye(3)[y]

    F1 = np.c_[F, np.ones(len(F))]

    def phi(z):
        G = F1 @ z.reshape(7, 3)
        value = 0.5 * z @ z + C * s @ (logsumexp(G, axis=1) - np.sum(Y * G, axis=1))
        P = np.exp(G - logsumexp(G, axis=1, keepdims=True))
        # The analytic gradient: BFGS on finite differences stops ~1e-6 from the optimum.
        return value, z + C * (F1.T @ (s[:, None] * (P - Y))).ravel()

    ref = minimize(phi, np.zeros(21), jac=True, method="BFGS",
                   options={"gtol": 1e-10}).x.reshape(7, 3)
    res = logistic_newton(F, y, C=C, sample_weight=s, tol=1e-10)
    assert res.converged and res.status == "converged"
    np.testing.assert_allclose(res.coef, ref[:-1].T, atol=1e-6)
    np.testing.assert_allclose(res.objective, phi(ref.ravel())[0], rtol=1e-10)


def test_binary_is_the_two_class_multinomial_at_twice_c():
    # Softmax columns sum to zero at the optimum: v = w1 - w0 pays ||v||^2 / 4.
    F, y = _features(k=2, seed=2)
    binary = logistic_newton(F, y, C=1.4, tol=1e-10)
    multi = logistic_newton(F, np.eye(2)[y], C=0.7, tol=1e-10)
    assert multi.coef.shape == (2, 6)
    np.testing.assert_allclose(multi.coef[1] - multi.coef[0], binary.coef[0], atol=1e-7)
    np.testing.assert_allclose(multi.intercept[1] - multi.intercept[0], binary.intercept[0],
                               atol=1e-7)


def test_sample_weight_equals_row_repetition():
    F, y = _features(n=60, k=3, seed=3)
    w = np.random.default_rng(3).integers(0, 3, len(y))
    weighted = logistic_newton(F, y, C=1.0, sample_weight=w.astype(float), tol=1e-10)
    rows = np.repeat(np.arange(len(y)), w)
    repeated = logistic_newton(F[rows], y[rows], C=1.0, tol=1e-10)
    np.testing.assert_allclose(weighted.coef, repeated.coef, atol=1e-8)
    np.testing.assert_allclose(weighted.intercept, repeated.intercept, atol=1e-8)


def test_solver_reports_max_iter_without_warning(recwarn):
    F, y = _features()
    res = logistic_newton(F, y, C=1e3, tol=1e-12, max_iter=1)
    assert not res.converged and res.status == "max_iter" and "max_iter" in res.message
    assert not recwarn.list  # a solver never warns; report_result does


@pytest.mark.parametrize("y, match", [
    (np.full(120, 0.5), "class indices"),
    (-np.ones(120, dtype=int), "class indices"),
    (np.ones((120, 3)), "sum to 1"),
])
def test_solver_rejects_bad_targets(y, match):
    F, _ = _features()
    with pytest.raises(ValueError, match=match):
        logistic_newton(F, y)


def test_solver_rejects_bad_weights_and_c():
    F, y = _features()
    with pytest.raises(ValueError, match="sample_weight"):
        logistic_newton(F, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="C must be"):
        logistic_newton(F, y, C=0.0)


# ------------------------------------------------------------------------- the estimator
X_MC, Y_MC = make_classification(150, 5, n_informative=4, n_redundant=0, n_classes=3,
                                 random_state=0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probabilities_sum_to_one_and_agree_with_predict(n_classes):
    X, y = X_MC[Y_MC < n_classes], Y_MC[Y_MC < n_classes]
    clf = KernelLogisticRegression(n_basis=20, random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-10)
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    scores = clf.decision_function(X)
    assert scores.shape == ((len(y),) if n_classes == 2 else (len(y), n_classes))


def test_log_proba_does_not_underflow():
    clf = KernelLogisticRegression(n_basis=10, C=1e4, random_state=0).fit(X_MC, Y_MC)
    far = X_MC[:3] * 50
    assert np.isfinite(clf.predict_log_proba(far)).all()


def test_model_is_the_solver_on_the_nystrom_features():
    clf = KernelLogisticRegression(n_basis=15, C=3.0, tol=1e-10, random_state=0)
    clf.fit(X_MC, Y_MC)
    F = clf._map().transform(X_MC)
    res = logistic_newton(F, Y_MC, C=3.0, tol=1e-10)
    np.testing.assert_allclose(clf.coef_, res.coef, atol=1e-8)
    np.testing.assert_allclose(clf.decision_function(X_MC), F @ res.coef.T + res.intercept,
                               atol=1e-8)


def test_class_weight_multiplies_sample_weight():
    weights = {0: 2.0, 1: 1.0, 2: 0.5}
    a = KernelLogisticRegression(n_basis=15, class_weight=weights, tol=1e-10, random_state=0)
    b = KernelLogisticRegression(n_basis=15, tol=1e-10, random_state=0)
    a.fit(X_MC, Y_MC)
    b.fit(X_MC, Y_MC, sample_weight=np.vectorize(weights.get)(Y_MC))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)


def test_float32_input_keeps_float32_features():
    X32 = X_MC.astype(np.float32)
    clf = KernelLogisticRegression(n_basis=15, random_state=0).fit(X32, Y_MC)
    ref = KernelLogisticRegression(n_basis=15, random_state=0).fit(X_MC, Y_MC)
    assert clf.basis_.dtype == np.float32
    assert clf._map().transform(X32).dtype == np.float32
    np.testing.assert_allclose(clf.predict_proba(X32), ref.predict_proba(X_MC), atol=1e-3)


@pytest.mark.parametrize("params, match", [
    ({"C": -1.0}, "'C' parameter"),
    ({"n_basis": 0}, "'n_basis' parameter"),
    ({"kernel": "nope"}, "'kernel' parameter"),
])
def test_bad_parameters_name_the_parameter(params, match):
    with pytest.raises(ValueError, match=match):
        KernelLogisticRegression(**params).fit(X_MC, Y_MC)


def test_bad_input_errors():
    clf = KernelLogisticRegression(n_basis=10, random_state=0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        clf.fit(X_MC, np.zeros(len(X_MC)))
    X_bad = X_MC.copy()
    X_bad[0, 0] = np.inf
    with pytest.raises(ValueError):
        clf.fit(X_bad, Y_MC)
    clf.fit(X_MC, Y_MC)
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(X_MC[:, :3])


def test_log_loss_close_to_calibrated_svc_on_digits():
    # The acceptance criterion on a fixed split of a real data set (five digits).
    X, y = load_digits(n_class=5, return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X / 16.0, y, train_size=400, random_state=0,
                                              stratify=y)
    ours = KernelLogisticRegression(C=10.0, n_basis=100, random_state=0).fit(X_tr, y_tr)
    svc = CalibratedClassifierCV(SVC(gamma="scale"), cv=3).fit(X_tr, y_tr)
    theirs = log_loss(y_te, svc.predict_proba(X_te))
    assert log_loss(y_te, ours.predict_proba(X_te)) <= 1.05 * theirs + 0.01


def test_save_load_round_trip(tmp_path):
    clf = KernelLogisticRegression(n_basis=15, random_state=0).fit(X_MC, Y_MC)
    save(clf, tmp_path / "klr.skm")
    loaded = load(tmp_path / "klr.skm")
    np.testing.assert_array_equal(loaded.predict_proba(X_MC), clf.predict_proba(X_MC))


def test_platt_parameters_are_not_fitted_attributes(tmp_path):
    """``-b 1`` saves a CalibratedClassifierCV; sigmoid parameters set on an estimator are
    stray attributes, refused like any other."""
    clf = LowRankSVC(n_basis=15, random_state=0).fit(X_MC, Y_MC)
    clf.probA_, clf.probB_ = np.array([-1.0, -2.0, -3.0]), np.zeros(3)
    with pytest.raises(ModelFormatError, match="probA_"):
        save(clf, tmp_path / "platt.skm")


def test_cross_validated_log_loss_is_finite():
    # The symptom: scoring='neg_log_loss' needs predict_proba.
    from sklearn.model_selection import cross_val_score

    clf = KernelLogisticRegression(n_basis=15, random_state=0)
    scores = cross_val_score(clf, X_MC, Y_MC, cv=3, scoring="neg_log_loss")
    assert np.isfinite(scores).all() and (scores < 0).all()


def test_kronecker_preconditioner_is_the_exact_inverse_hessian_at_zero():
    # At Z = 0 every class has probability 1/q: the preconditioner is H^-1 there, so one
    # conjugate-gradient step solves the first Newton system.
    from sparsekernel.compute import symmetric_from_lower
    from sparsekernel.solvers._rows import ArrayRows

    F, y = _features(k=4)
    rows = ArrayRows(F)
    state = logistic_module.SoftmaxRows(logistic_module._targets(y, len(y)))
    state.R = np.full((len(y), 4), 0.25)  # (the probabilities at Z = 0)
    precond = logistic_module._KroneckerPreconditioner(
        symmetric_from_lower(state.kron_gram(rows, 0.7)))
    R = np.random.default_rng(0).normal(size=(7, 4))
    D = precond(R)
    np.testing.assert_allclose(D + state.curvature(rows, D, 0.7), R, atol=1e-10)
