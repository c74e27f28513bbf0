"""SLMC, sparse KFD and reduced-set compression: gradients, known optima, bad input."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris, make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from sparsekernel import (
    ReducedSetSVC,
    ReducedSVC,
    SparseFisherDiscriminant,
    SparseMarginClassifier,
    compress_svc,
)
from sparsekernel.basis import BasisSelector, RandomBasis
from sparsekernel.io import load, save
from sparsekernel.kernels import Kernel
from sparsekernel.sparse_margin import (
    FisherBasis,
    SparseMarginBasis,
    kernel_expansion,
    modified_rsvm,
    reduced_set_rbf,
)
from sparsekernel.sparse_margin._basis_svm import BasisSVM
from sparsekernel.sparse_margin._fisher import FisherBasisObjective

RNG = np.random.default_rng(0)
X_SMALL = RNG.normal(size=(70, 3))
Y_SMALL = np.where(X_SMALL[:, 0] * X_SMALL[:, 1] + 0.3 * RNG.normal(size=70) > 0, 1.0, -1.0)
X_MOON, Y_MOON = make_moons(300, noise=0.2, random_state=0)
X_MOON_TEST, Y_MOON_TEST = make_moons(1000, noise=0.2, random_state=1)
for _a in (X_SMALL, Y_SMALL, X_MOON, Y_MOON, X_MOON_TEST, Y_MOON_TEST):
    _a.setflags(write=False)


def _finite_difference(fun, Z, h=1e-6):
    fd = np.zeros_like(Z)
    for idx in np.ndindex(Z.shape):
        Zp, Zm = Z.copy(), Z.copy()
        Zp[idx] += h
        Zm[idx] -= h
        fd[idx] = (fun(Zp) - fun(Zm)) / (2 * h)
    return fd


def _svm_problem(loss, targets=(Y_SMALL,), C=2.0):
    return BasisSVM(Kernel("rbf", gamma=0.5), X_SMALL, np.column_stack(targets), C=C, loss=loss,
                    sample_weight=None, tol=1e-13, max_iter=200000, random_state=0)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_slmc_gradient_matches_finite_differences_of_resolved_W(loss):
    problem = _svm_problem(loss)
    Z = X_SMALL[:5] + 0.1
    W, grad = problem.value_and_grad(Z)
    fd = _finite_difference(lambda Zx: problem.solve(Zx)[0], Z)
    assert W > 0
    assert np.abs(fd - grad).max() <= 1e-5 * np.abs(grad).max()


def test_sparse_fisher_gradient_matches_finite_differences():
    sw = np.linspace(0.5, 2.0, len(Y_SMALL))
    targets = [Y_SMALL, -Y_SMALL * np.sign(X_SMALL[:, 2])]
    fisher = FisherBasisObjective(Kernel("rbf", gamma=0.5), X_SMALL, np.column_stack(targets),
                                  sw, 1e-2)
    Z = X_SMALL[:5] + 0.1
    W, grad = fisher.value_and_grad(Z)
    fd = _finite_difference(lambda Zx: fisher.value_and_grad(Zx)[0], Z)
    assert W < 0
    assert np.abs(fd - grad).max() <= 1e-5 * np.abs(grad).max()


def _full_svm_reference(X, y, C, gamma):
    """The family's SVM (hinge, penalized bias) on the full kernel, by scipy on its dual.

    min_a 1/2 a^T Q a - sum a,  0 <= a <= C/2,  Q = y y^T (K + 1); optimum = -(dual minimum).
    """
    Q = np.outer(y, y) * (Kernel("rbf", gamma=gamma)(X, X) + 1.0)
    res = minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(len(y)),
                   jac=True, method="L-BFGS-B", bounds=[(0.0, C / 2)] * len(y),
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000})
    return -res.fun, res.x


def test_slmc_objective_equals_full_svm_at_its_support_vectors():
    """The paper's Example 1: with Z = the SVM's support vectors, W(Z) is the SVM optimum."""
    C, gamma = 2.0, 0.5
    optimum, alpha = _full_svm_reference(X_SMALL, Y_SMALL, C, gamma)
    sv = alpha > 1e-6 * C
    assert 5 < sv.sum() < len(Y_SMALL)
    W_sv = _svm_problem("hinge", C=C).solve(np.array(X_SMALL[sv]))[0]
    assert W_sv == pytest.approx(optimum, rel=1e-6)
    clf = SparseMarginClassifier(gamma=gamma, C=C, basis=X_SMALL[sv], max_iter=0, tol=1e-8,
                                 random_state=0).fit(X_SMALL, Y_SMALL)
    assert clf.objective_ == pytest.approx(optimum, rel=1e-5)
    # Fewer vectors than support vectors cannot reach the optimum.
    W_fewer = _svm_problem("hinge", C=C).solve(np.array(X_SMALL[sv][:-3]))[0]
    assert W_fewer > optimum * (1 + 1e-4)


def test_slmc_moves_vectors_off_the_data_and_lowers_W():
    clf = SparseMarginClassifier(gamma=2.0, C=20.0, n_basis=8, random_state=0)
    clf.fit(X_MOON, Y_MOON)
    assert clf.basis_.shape == (8, 2) and clf.coef_.shape == (1, 8)
    assert clf.objective_ < 0.97 * clf.objective_init_
    dist = np.min(((clf.basis_[:, None, :] - X_MOON[None]) ** 2).sum(-1), axis=1)
    assert np.all(dist > 1e-8)
    assert clf.score(X_MOON_TEST, Y_MOON_TEST) > 0.93


def test_slmc_multiclass_shares_one_basis():
    X, y = load_iris(return_X_y=True)
    clf = SparseMarginClassifier(C=20.0, n_basis=6, max_iter=30, random_state=0).fit(X, y)
    assert clf.basis_.shape == (6, 4) and clf.coef_.shape == (3, 6)
    assert clf.score(X, y) > 0.9


def test_mrsvm_is_lowrank_svc_and_slmc_without_moves():
    """Eq. (45) on fixed random Z: LowRankSVC (Nystrom map) and SLMC (Cholesky map) agree."""
    mrsvm = modified_rsvm(12, C=20.0, gamma=2.0, random_state=0, tol=1e-10, max_iter=100000)
    mrsvm.fit(X_MOON, Y_MOON)
    slmc = SparseMarginClassifier(gamma=2.0, C=20.0, basis=mrsvm.basis_, max_iter=0,
                                  tol=1e-9).fit(X_MOON, Y_MOON)
    np.testing.assert_allclose(slmc.decision_function(X_MOON_TEST),
                               mrsvm.decision_function(X_MOON_TEST), atol=1e-4)


def test_slmc_removes_duplicate_initial_vectors():
    X = np.vstack([X_MOON, X_MOON[:50]])
    y = np.r_[Y_MOON, Y_MOON[:50]]
    basis = np.vstack([X_MOON[:4], X_MOON[:2]])
    clf = SparseMarginClassifier(gamma=2.0, basis=basis, max_iter=0).fit(X, y)
    assert clf.basis_.shape == (4, 2)


def test_sparse_fisher_raises_the_fisher_criterion_and_classifies():
    clf = SparseFisherDiscriminant(gamma=2.0, C=20.0, n_basis=8, random_state=0)
    clf.fit(X_MOON, Y_MOON)
    assert clf.objective_ < clf.objective_init_ < 0
    assert clf.score(X_MOON_TEST, Y_MOON_TEST) > 0.93


@pytest.fixture(scope="module")
def svc_moons():
    return SVC(C=10.0, gamma=2.0).fit(X_MOON, Y_MOON)


def test_kernel_expansion_reproduces_svc_decision_function(svc_moons):
    V, a, b, gamma, C = kernel_expansion(svc_moons, X_MOON)
    f = Kernel("rbf", gamma=gamma).apply(X_MOON_TEST, V, a) + b
    np.testing.assert_allclose(f, svc_moons.decision_function(X_MOON_TEST), atol=1e-8)
    assert C == 20.0


def test_reduced_set_residual_is_orthogonal_and_shrinks(svc_moons):
    V, a, _, gamma, _ = kernel_expansion(svc_moons, X_MOON)
    k = Kernel("rbf", gamma=gamma)
    errors = []
    for m in (2, 5, 10):
        Z, beta, _ = reduced_set_rbf(k, V, a, m)
        # eq. (47): beta is the feature-space projection of w on span phi(Z).
        np.testing.assert_allclose(k(Z, V) @ a, k(Z, Z) @ beta, atol=1e-6)
        errors.append(a @ k(V, V) @ a - 2 * beta @ k(Z, V) @ a + beta @ k(Z, Z) @ beta)
    assert errors[0] > errors[1] > errors[2] >= 0


def _svm_objective(model, X, y, C):
    """The family's hinge objective of a fitted ReducedSetSVC on (X, y)."""
    k = Kernel("rbf", gamma=model.gamma_)
    beta, b = model.coef_[0], model.intercept_[0]
    f = k.apply(X, model.basis_, beta) + b
    return (0.5 * beta @ k(model.basis_, model.basis_) @ beta + 0.5 * b * b
            + 0.5 * C * np.maximum(0.0, 1.0 - y * f).sum())


def test_mrs_coefficients_beat_rs_on_the_svm_objective(svc_moons):
    rs = compress_svc(svc_moons, X_MOON, Y_MOON, n_basis=6, method="rs")
    mrs = compress_svc(svc_moons, X_MOON, Y_MOON, n_basis=6, method="mrs")
    np.testing.assert_allclose(rs.basis_, mrs.basis_)
    y = np.where(Y_MOON == 1, 1.0, -1.0)
    assert _svm_objective(mrs, X_MOON, y, 20.0) < _svm_objective(rs, X_MOON, y, 20.0)


def test_compress_svc_keeps_predictions(svc_moons):
    n_sv = int(svc_moons.n_support_.sum())
    m = int(np.ceil(0.2 * n_sv))
    small = compress_svc(svc_moons, X_MOON, Y_MOON, n_basis=m)
    assert small.basis_.shape[0] <= m and small.n_source_support_ == n_sv
    assert small.n_support_ == small.basis_.shape[0]
    agree = np.mean(small.predict(X_MOON_TEST) == svc_moons.predict(X_MOON_TEST))
    assert agree > 0.97


def test_reduced_set_svc_fits_unfitted_svc_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    model = ReducedSetSVC(svc=SVC(C=10.0), n_basis=0.3, random_state=0).fit(X, y)
    assert model.coef_.shape == (3, model.basis_.shape[0])
    assert model.score(X, y) > 0.9


def test_compress_sparsekernel_model():
    slmc = SparseMarginClassifier(gamma=2.0, C=20.0, n_basis=12, max_iter=0,
                                  random_state=0).fit(X_MOON, Y_MOON)
    small = compress_svc(slmc, X_MOON, Y_MOON, n_basis=6, method="rs")
    agree = np.mean(small.predict(X_MOON_TEST) == slmc.predict(X_MOON_TEST))
    assert small.basis_.shape[0] == 6 and agree > 0.9


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # few iterations
@pytest.mark.parametrize("model", [
    SparseMarginClassifier(gamma=2.0, C=10.0, n_basis=5, max_iter=5, random_state=0),
    SparseFisherDiscriminant(gamma=2.0, n_basis=5, max_iter=5, random_state=0),
    ReducedSetSVC(n_basis=5, random_state=0),
], ids=lambda m: type(m).__name__)
def test_save_load_round_trip(model, tmp_path):
    model.fit(X_MOON, Y_MOON)
    save(model, tmp_path / "m.skm")
    loaded = load(tmp_path / "m.skm")
    np.testing.assert_array_equal(loaded.decision_function(X_MOON_TEST),
                                  model.decision_function(X_MOON_TEST))


@pytest.mark.parametrize("params, match", [
    ({"n_basis": 500}, "n_basis=500"),
    ({"C": -1.0}, "'C'.*-1.0"),
    ({"kernel": "poly"}, "'kernel'.*'poly'"),
    ({"basis": "nonsense"}, "'nonsense'"),
    ({"loss": "log"}, "'loss'.*'log'"),
    ({"gamma": 0.0}, "'gamma'"),
])
def test_slmc_bad_parameters_name_the_value(params, match):
    with pytest.raises(ValueError, match=match):
        SparseMarginClassifier(**params).fit(X_MOON, Y_MOON)


@pytest.mark.parametrize("cls", [SparseMarginClassifier, SparseFisherDiscriminant,
                                 ReducedSetSVC])
def test_bad_data(cls):
    X_nan = np.array(X_MOON)
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(X_nan, Y_MOON)
    with pytest.raises(ValueError, match="1 class"):
        cls().fit(X_MOON, np.zeros(len(X_MOON)))
    with pytest.raises(ValueError, match="2D array"):
        cls().fit(X_MOON[:, 0], Y_MOON)
    model = cls(n_basis=5).fit(X_MOON, Y_MOON)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(np.ones((2, 3)))


def test_compress_rejects_unsupported_models(svc_moons):
    with pytest.raises(ValueError, match="'rbf' kernel.*'linear'"):
        compress_svc(SVC(kernel="linear").fit(X_MOON, Y_MOON), X_MOON, Y_MOON)
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="Only binary models"):
        compress_svc(SVC().fit(X, y), X, y)
    with pytest.raises(ValueError, match="n_basis=10000"):
        compress_svc(svc_moons, X_MOON, Y_MOON, n_basis=10_000)
    with pytest.raises(ValueError, match="classes"):
        compress_svc(svc_moons, X_MOON, np.where(Y_MOON == 1, "a", "b"))


def test_reduced_set_svc_n_basis_is_the_total_and_capped_by_the_support_vectors(svc_moons):
    X, y = load_iris(return_X_y=True)
    model = ReducedSetSVC(svc=SVC(C=10.0), n_basis=9, random_state=0).fit(X, y)
    assert model.basis_.shape[0] <= 9
    n_sv = int(svc_moons.n_support_.sum())
    big = compress_svc(svc_moons, X_MOON, Y_MOON, n_basis=min(n_sv + 20, len(X_MOON)),
                       method="rs")
    assert big.basis_.shape[0] <= n_sv


# ----------------------------------------------------------------- the L-BFGS-over-Z solver
def _quadratic(Z):
    return float((Z**2).sum()), 2.0 * Z


def test_basis_lbfgs_converges_and_records_the_start():
    from sparsekernel.solvers import basis_lbfgs

    Z0 = np.arange(6.0).reshape(3, 2) + 1.0
    res = basis_lbfgs(_quadratic, Z0, max_iter=50, tol=1e-12, gtol=1e-8)
    assert res.status == "converged" and res.converged
    assert res.coef.shape == (3, 2) and np.abs(res.coef).max() < 1e-6
    assert res.history[0] == {"n_iter": 0, "objective": float((Z0**2).sum()),
                              "grad_norm": 12.0}
    assert res.n_iter == len(res.history) - 1 >= 1


def test_basis_lbfgs_max_iter_and_zero_iterations():
    from sparsekernel.solvers import basis_lbfgs

    def rosenbrock(Z):
        x, y = Z[0]
        f = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        g = np.array([[-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)]])
        return f, g

    res = basis_lbfgs(rosenbrock, np.array([[-1.2, 1.0]]), max_iter=2, tol=1e-12)
    assert res.status == "max_iter" and not res.converged and res.n_iter == 2
    kept = basis_lbfgs(rosenbrock, np.array([[-1.2, 1.0]]), max_iter=0)
    assert kept.converged and kept.n_iter == 0
    np.testing.assert_array_equal(kept.coef, [[-1.2, 1.0]])
    assert kept.objective == pytest.approx(24.2)


def test_basis_lbfgs_failed_line_search_is_not_converged():
    """A gradient of the wrong sign: scipy ends ABNORMAL (status 2), which is no success."""
    from sparsekernel.solvers import basis_lbfgs

    Z0 = np.array([[1.0, -2.0], [0.5, 3.0]])
    res = basis_lbfgs(lambda Z: (float((Z**2).sum()), -2.0 * Z), Z0, max_iter=20)
    assert res.status == "line_search" and not res.converged
    assert "line search" in res.message
    np.testing.assert_array_equal(res.coef, Z0)  # every trial point was worse
    assert res.objective == pytest.approx(float((Z0**2).sum()))


def test_basis_lbfgs_interrupt_propagates():
    from sparsekernel.solvers import basis_lbfgs

    calls, scale = [], np.array([[1.0, 10.0], [100.0, 1000.0]])

    def interrupted(Z):
        calls.append(Z.copy())
        if len(calls) == 4:
            raise KeyboardInterrupt
        return float((scale * Z**2).sum()), 2.0 * scale * Z

    Z0 = np.ones((2, 2))
    with pytest.raises(KeyboardInterrupt):
        basis_lbfgs(interrupted, Z0, max_iter=50)
    assert len(calls) == 4 and np.all(Z0 == 1.0)


def test_slmc_reports_max_iter_through_the_base():
    with pytest.warns(ConvergenceWarning, match="SparseMarginClassifier did not converge"):
        SparseMarginClassifier(gamma=2.0, C=20.0, n_basis=8, max_iter=1,
                               random_state=0).fit(X_MOON, Y_MOON)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # few iterations
def test_verbose_2_prints_lbfgs_iterations_and_final_solves(capfd):
    SparseMarginClassifier(gamma=2.0, n_basis=5, max_iter=3, random_state=0,
                           verbose=2).fit(X_MOON, Y_MOON)
    err = capfd.readouterr().err
    assert err.count("[SparseMarginClassifier] iteration") >= 2
    assert err.count("[SparseMarginClassifier] solved") == 2  # the search and the SVM on Z


# ------------------------------------------------------------- learned bases as selectors
_SEEN = []


class _RecordingBasis(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        _SEEN.append(kernel)
        return RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)


class _RecordingMarginBasis(SparseMarginBasis):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        _SEEN.append(kernel)
        return super().select(X, y, n_basis=n_basis, random_state=random_state,
                              kernel=kernel)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # few iterations
@pytest.mark.parametrize("cls", [SparseMarginClassifier, SparseFisherDiscriminant])
@pytest.mark.parametrize("gamma", [0.3, "scale"])
def test_a_selector_passed_as_basis_receives_the_estimators_kernel(cls, gamma):
    _SEEN.clear()
    est = cls(kernel="gaussian", gamma=gamma, n_basis=6, basis=_RecordingBasis(), max_iter=2,
              random_state=0).fit(X_MOON, Y_MOON)
    (kernel,) = _SEEN
    assert kernel.name == "rbf" and kernel.gamma == est.gamma_
    assert est.basis_indices_ is None and est.basis_.shape == (6, 2)


def test_sparse_margin_basis_learns_z_inside_reduced_svc():
    _SEEN.clear()
    selector = _RecordingMarginBasis(C=20.0, max_iter=30)
    clf = ReducedSVC(basis=selector, n_basis=8, gamma=2.0, C=20.0, random_state=0)
    clf.fit(X_MOON, Y_MOON)
    (kernel,) = _SEEN
    assert kernel.name == "rbf" and kernel.gamma == clf.gamma_ == 2.0
    assert clf.basis_.shape == (8, 2)
    dist = np.min(((clf.basis_[:, None, :] - X_MOON[None]) ** 2).sum(-1), axis=1)
    assert np.all(dist > 1e-8)  # learned points, not training rows
    assert clf.score(X_MOON_TEST, Y_MOON_TEST) > 0.93
    with pytest.raises(ValueError, match="'rbf' kernel"):
        ReducedSVC(kernel="laplacian", basis=SparseMarginBasis(), n_basis=8).fit(X_MOON, Y_MOON)


@pytest.mark.parametrize("selector", [SparseMarginBasis(C=20.0, max_iter=20),
                                      FisherBasis(max_iter=20)], ids=lambda s: type(s).__name__)
def test_learned_selectors_lower_their_objective(selector):
    res = selector.select(X_MOON, Y_MOON, n_basis=8, random_state=0,
                          kernel=Kernel("rbf", gamma=2.0))
    result = res.info["result"]
    assert res.centers.shape == (8, 2)
    np.testing.assert_array_equal(res.centers, result.coef)
    assert result.objective < result.history[0]["objective"]
    with pytest.raises(ValueError, match="class labels"):
        selector.select(X_MOON, None, n_basis=8, kernel=Kernel("rbf", gamma=2.0))


def test_reduced_set_svc_is_the_same_model_on_one_and_two_threads():
    """The greedy selection (the worst-fit starts, the best fixed point) turns any rounding
    difference in the residuals K(V, V) a into other expansion vectors; those residuals are
    computed in kernel blocks planned from the CPUs, not from the threads in force, so one
    seed gives one model, bit for bit (blocks planned per thread changed the model on
    this data)."""
    from threadpoolctl import threadpool_limits

    X, y = make_classification(1000, 20, n_informative=10, n_clusters_per_class=2,
                               flip_y=0.1, random_state=0)
    scores = []
    for n_threads in (1, 2):
        with threadpool_limits(n_threads):
            scores.append(ReducedSetSVC(random_state=0).fit(X, y).decision_function(X))
    np.testing.assert_array_equal(scores[1], scores[0])
