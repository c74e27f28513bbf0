"""The nu-one-class SVM: its dual solver against LIBSVM, the estimator against
scikit-learn's OneClassSVM, the nu-property, weights, precision and model files."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import OneClassSVM

from sparsekernel import LowRankOneClassSVM
from sparsekernel.solvers.nu import nu_svc_dual, one_class_dual


def _blobs(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(1.0, 2.0, d)


@pytest.mark.parametrize("nu", [0.05, 0.3, 0.8])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_dual_solver_is_libsvms_one_class_machine(nu, weighted):
    """On explicit features the linear-kernel OneClassSVM solves the same problem in the
    same scaling: the same decision values to its tolerance, both with sample weights."""
    rng = np.random.default_rng(1)
    F = rng.standard_normal((800, 6)) + 1.5
    sw = rng.uniform(0.5, 2.0, len(F)) if weighted else None
    res = one_class_dual(F, nu, sw, tol=1e-8)
    ref = OneClassSVM(kernel="linear", nu=nu, tol=1e-10).fit(F, sample_weight=sw)
    ours, theirs = F @ res.coef + res.intercept, ref.decision_function(F)
    assert res.converged
    np.testing.assert_allclose(ours, theirs, atol=1e-6 * np.abs(theirs).max())
    alpha, upper = res.dual, (np.ones(len(F)) if sw is None else sw)
    assert np.all(alpha >= 0) and np.all(alpha <= upper)
    assert alpha.sum() == pytest.approx(nu * upper.sum(), rel=1e-12)
    np.testing.assert_allclose(res.coef, F.T @ alpha, rtol=1e-10, atol=1e-10)


def test_integer_weights_are_repeated_rows_and_zero_weights_absent_rows():
    rng = np.random.default_rng(2)
    F = rng.standard_normal((300, 4)) + 1.0
    sw = rng.integers(0, 3, len(F)).astype(float)
    weighted = one_class_dual(F, 0.2, sw, tol=1e-10)
    repeated = one_class_dual(np.repeat(F, sw.astype(int), axis=0), 0.2, tol=1e-10)
    np.testing.assert_allclose(weighted.coef, repeated.coef, rtol=1e-7, atol=1e-9)
    assert weighted.intercept == pytest.approx(repeated.intercept, rel=1e-7)
    assert np.all(weighted.dual[sw == 0] == 0)


def test_every_weight_zero_is_refused():
    with pytest.raises(ValueError, match="every weight is 0"):
        one_class_dual(np.ones((5, 2)), 0.5, np.zeros(5))


@pytest.mark.parametrize("nu", [0.05, 0.2, 0.5])
def test_with_every_row_as_landmark_it_is_sklearns_one_class_svm(nu):
    Xtr, Xte = _blobs(500, seed=3), 1.4 * _blobs(400, seed=4)
    ours = LowRankOneClassSVM(nu=nu, gamma=0.3, basis=Xtr, tol=1e-7).fit(Xtr)
    ref = OneClassSVM(nu=nu, gamma=0.3, tol=1e-8).fit(Xtr)
    assert np.mean(ours.predict(Xte) == ref.predict(Xte)) >= 0.98
    a, b = ours.decision_function(Xte), ref.decision_function(Xte)
    np.testing.assert_allclose(a, b, atol=1e-5 * np.abs(b).max())
    assert ours.offset_ == pytest.approx(float(ref.offset_[0]), rel=1e-5)


@pytest.mark.parametrize("nu", [0.05, 0.1, 0.3, 0.6])
def test_nu_bounds_the_training_outliers(nu):
    """The nu-property: at most a share nu of the training rows outside the boundary; the
    rows on it (at most one more than the features) are the only ones whose side rounding
    decides, so with m << n the share is within nu - 0.03 and nu."""
    X = _blobs(4000, d=4, seed=5)
    det = LowRankOneClassSVM(nu=nu, n_basis=60, random_state=0).fit(X)
    outside = np.mean(det.predict(X) == -1)
    assert nu - 0.03 <= outside <= nu + 1e-12 + (det.n_support_ + 1) / len(X)
    assert abs(outside - nu) <= 0.03


def test_outputs_follow_scikit_learns_outlier_detectors():
    X = _blobs(600, seed=6)
    det = LowRankOneClassSVM(nu=0.1, gamma=0.5, n_basis=40, random_state=0)
    labels = det.fit_predict(X)
    assert labels.dtype.kind == "i" and set(np.unique(labels)) == {-1, 1}
    np.testing.assert_array_equal(labels, det.predict(X))
    decision = det.decision_function(X)
    np.testing.assert_allclose(det.score_samples(X), decision + det.offset_)
    np.testing.assert_array_equal(labels, np.where(decision < 0, -1, 1))
    assert det.intercept_.shape == (1,) and det.coef_.shape == (1, det.n_support_)
    assert det.offset_ == pytest.approx(-det.intercept_[0])
    far = det.predict(np.array([[30.0, 30.0, 30.0], [0.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(far, [-1, 1])


def test_float32_input_gives_the_float64_boundary():
    X = _blobs(1500, seed=7)
    d64 = LowRankOneClassSVM(nu=0.2, n_basis=50, random_state=0, tol=1e-6).fit(X)
    d32 = LowRankOneClassSVM(nu=0.2, n_basis=50, random_state=0, tol=1e-6).fit(
        X.astype(np.float32))
    a, b = d64.decision_function(X), d32.decision_function(X.astype(np.float32))
    np.testing.assert_allclose(a, b, atol=1e-3 * np.abs(a).max())
    assert np.mean(np.sign(a) == np.sign(b)) >= 0.99


def test_novelties_are_found_on_held_out_data():
    """Normal rows from one distribution, novelties from a shifted one: the score ranks
    them (ROC AUC near 1) and the boundary keeps about 1 - nu of the normal rows."""
    from sklearn.metrics import roc_auc_score

    normal, novel = _blobs(3000, seed=8), _blobs(300, seed=9) + 4.0
    det = LowRankOneClassSVM(nu=0.05, random_state=0).fit(normal[:2000])
    X = np.vstack([normal[2000:], novel])
    truth = np.r_[np.ones(1000), -np.ones(300)]
    assert roc_auc_score(truth, det.score_samples(X)) > 0.97
    assert np.mean(det.predict(normal[2000:]) == 1) >= 0.9


def test_a_solve_that_stops_short_warns(monkeypatch):
    """No SMO step is taken (the start's duals stay): max_iter is reached and said."""
    module = __import__("sparsekernel.solvers.nu", fromlist=["nu"])
    monkeypatch.setattr(module, "STEPS_PER_DUAL", 0)
    X = _blobs(3000, seed=10)
    with pytest.warns(ConvergenceWarning, match="did not converge.*max_iter=3"):
        LowRankOneClassSVM(nu=0.3, n_basis=80, max_iter=3, tol=1e-12, random_state=0).fit(X)
    res = one_class_dual(X, 0.3, tol=1e-12, max_iter=0)
    assert res.status == "max_iter" and not res.converged and res.n_iter == 0


@pytest.mark.parametrize("nu", [0.0, 1.5, -0.1])
def test_nu_outside_its_range_is_named(nu):
    with pytest.raises(ValueError, match="nu"):
        LowRankOneClassSVM(nu=nu).fit(_blobs(50))


def test_a_saved_model_predicts_the_same(tmp_path):
    from sparsekernel.io import load, save

    X = _blobs(400, seed=11)
    det = LowRankOneClassSVM(nu=0.1, n_basis=30, random_state=0).fit(X)
    path = tmp_path / "novelty.skm"
    save(det, path)
    back = load(path)
    np.testing.assert_array_equal(back.predict(X), det.predict(X))
    np.testing.assert_allclose(back.score_samples(X), det.score_samples(X))


def test_labels_given_to_fit_are_ignored():
    X = _blobs(300, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = LowRankOneClassSVM(n_basis=20, random_state=0).fit(X).decision_function(X)
        b = LowRankOneClassSVM(n_basis=20, random_state=0).fit(
            X, np.arange(300) % 2).decision_function(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("nu", [0.3, 0.6])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_nu_svc_dual_is_libsvms_nu_svc(nu, weighted):
    """Two groups (the classes), each holding nu S / 2: LIBSVM's nu-SVC, whose decision
    values it gives on the same features (scikit-learn's NuSVC, linear kernel)."""
    from sklearn.svm import NuSVC

    rng = np.random.default_rng(13)
    F = rng.standard_normal((600, 5))
    y = np.where(F[:, 0] + 0.5 * F[:, 1] + 0.2 * rng.standard_normal(600) > 0, 1, -1)
    sw = rng.uniform(0.5, 2.0, 600) if weighted else None
    res = nu_svc_dual(F, y, nu, sw, tol=1e-8)
    ref = NuSVC(kernel="linear", nu=nu, tol=1e-10).fit(F, y, sample_weight=sw)
    ours, theirs = F @ res.coef + res.intercept, ref.decision_function(F)
    assert res.converged
    np.testing.assert_allclose(ours, theirs, atol=1e-6 * np.abs(theirs).max())
    s = np.ones(600) if sw is None else sw
    for label in (1, -1):
        assert res.dual[y == label].sum() == pytest.approx(nu * s.sum() / 2, rel=1e-12)


def test_an_infeasible_nu_is_named_with_the_largest_feasible():
    F = np.random.default_rng(0).standard_normal((100, 3))
    y = np.r_[np.ones(20), -np.ones(80)]
    with pytest.raises(ValueError, match=r"nu=0\.5 is infeasible.*0\.4"):
        nu_svc_dual(F, y, 0.5)


def test_a_sample_start_and_shrinking_reach_the_cold_solution(monkeypatch):
    """Above 2 WARM_ROWS rows the solver starts from a sample's solution and leaves duals
    far from the boundary out of its passes; it ends at the same optimum as from the
    spread-out start with every dual followed."""
    module = __import__("sparsekernel.solvers.nu", fromlist=["nu"])
    rng = np.random.default_rng(14)
    F = rng.standard_normal((6000, 4)) + 1.0
    monkeypatch.setattr(module, "WARM_ROWS", 1000)
    warm = one_class_dual(F, 0.1, tol=1e-9)
    monkeypatch.setattr(module, "WARM_ROWS", 10**9)
    monkeypatch.setattr(module, "_unshrunk", lambda G, alpha, *args: np.arange(len(alpha)))
    cold = one_class_dual(F, 0.1, tol=1e-9)
    assert warm.converged and cold.converged
    np.testing.assert_allclose(warm.coef, cold.coef, rtol=1e-6, atol=1e-6)
    assert warm.intercept == pytest.approx(cold.intercept, rel=1e-6)
