"""Newton on the whole training set's kernel: against the feature-space solver, its
optimality conditions, and LowRankSVC's choice of it under n_basis='auto'."""

import importlib

import numpy as np
import pytest
from scipy.linalg.lapack import spotrf

from sparsekernel import LowRankSVC
from sparsekernel.basis import fit_kernel_basis
from sparsekernel.kernels import Kernel
from sparsekernel.solvers import newton_kernel
from sparsekernel.solvers.newton_ovr import newton_ovr

from ._reference import reference_newton

module = importlib.import_module("sparsekernel.solvers.newton_kernel")


def _problem(n=150, k=3, seed=0, gamma=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (np.argmax(X[:, :k] + 0.7 * rng.standard_normal((n, k)), axis=1))
    Y = np.where(y[:, None] == np.arange(k), 1.0, -1.0)
    K = Kernel("rbf", gamma=gamma)(X, X)
    sw = rng.uniform(0.2, 3.0, n)
    sw[:7] = 0.0
    return X, y, Y, K, sw


def _features(K):
    """F with F F^T = K (all eigenpairs)."""
    lam, U = np.linalg.eigh(K)
    return U * np.sqrt(np.clip(lam, 0.0, None))


def _float32_used(K, C, sw):
    s = np.ones(len(K)) if sw is None else sw
    bound = (len(K) + np.trace(K)) * C * s.max()
    return bound * np.finfo(np.float32).eps <= module.F32_SYSTEM_BOUND


@pytest.mark.parametrize("C", [0.1, 10.0, 1e6])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_feature_space_newton(C, weighted):
    """The same objective as newton_ovr on features with F F^T = K: the same minimum,
    w = F^T a and b = sum(a); C = 1e6 takes float64 systems from the start, the others
    float32 ones while the active sets move."""
    _, _, Y, K, sw = _problem()
    sw = sw if weighted else None
    assert _float32_used(K, C, sw) == (C < 1e3)
    F = _features(K)
    ours = newton_kernel(K, Y, C=C, sample_weight=sw, n_threads=2)
    ref = newton_ovr(F, Y, C=C, sample_weight=sw, tol=1e-13, max_iter=100)
    for a, r in zip(ours, ref, strict=True):
        assert a.converged and a.status == "converged"
        assert a.objective == pytest.approx(r.objective, rel=1e-9)
        np.testing.assert_allclose(F.T @ a.coef, r.coef, atol=1e-6 * max(1, np.abs(r.coef).max()))
        assert a.intercept == pytest.approx(r.intercept, abs=1e-6 * max(1, abs(r.intercept)))


def test_solution_vanishes_off_the_margin_and_solves_the_active_system():
    """Chapelle's optimality conditions: a = 0 exactly on rows outside the margin (and of
    weight 0), and (Q_AA + diag(1 / (C s_A))) a_A = y_A on the active rows A."""
    _, _, Y, K, sw = _problem(seed=1)
    C = 5.0
    for j, res in enumerate(newton_kernel(K, Y, C=C, sample_weight=sw)):
        a, y = res.coef, Y[:, j]
        f = K @ a + a.sum()
        active = (y * f < 1.0) & (sw > 0)
        assert np.all(a[~active] == 0.0)
        assert 0 < active.sum() < len(a)
        A = np.flatnonzero(active)
        M = K[np.ix_(A, A)] + 1.0 + np.diag(1.0 / (C * sw[A]))
        np.testing.assert_allclose(M @ a[A], y[A], atol=1e-9)


def test_refinement_reaches_float64_accuracy_from_a_float32_factor():
    _, _, Y, K, sw = _problem(seed=2)
    cs = 10.0 * np.where(sw > 0, sw, 1.0)
    rows = np.arange(0, len(K), 2)
    M64 = module._system(K, rows, cs)[0]
    U, info = spotrf(M64.astype(np.float32).T, lower=0, clean=1)
    assert info == 0
    L = U.T
    rough = np.linalg.solve(M64.astype(np.float32), Y[rows, 0].astype(np.float32))
    exact = np.linalg.solve(M64, Y[rows, 0])
    assert np.abs(rough - exact).max() > 1e-7  # float32 alone is not enough
    refined = module._refined(K, rows, cs, Y[rows, 0], rough.astype(np.float64), L)
    np.testing.assert_allclose(refined, exact, rtol=0, atol=1e-11)


def test_optimality_check_spares_rows_on_the_margin():
    """A row within rounding of the margin may sit on either side (the squared hinge has
    zero loss and gradient there); one clearly on the wrong side fails the check."""
    live = np.ones(4, dtype=bool)
    active = np.array([True, True, False, False])
    on_margin = np.array([0.5, 1.0 + 1e-12, 1.0 - 1e-12, 2.0])
    assert module._keeps_its_rows(1.0 - on_margin, active, live)
    assert not module._keeps_its_rows(1.0 - np.array([0.5, 1.0 + 1e-6, 1.5, 2.0]), active,
                                      live)
    assert not module._keeps_its_rows(1.0 - np.array([0.5, 0.9, 0.999, 2.0]), active, live)
    # rows of weight zero are never active and never checked
    assert module._keeps_its_rows(1.0 - np.array([0.5, 0.9, 3.0, -5.0]), active,
                                  np.array([True, True, True, False]))


def test_max_iter_reports_unconverged_problems():
    _, _, Y, K, _ = _problem(seed=3)
    res = newton_kernel(K, Y, C=10.0, max_iter=1, tol=0.0)
    assert all(r.n_iter == 1 and not r.converged and r.status == "max_iter" for r in res)
    assert all(np.isfinite(r.grad_norm) and r.grad_norm > 0 for r in res)


def _flat_data(n=300, seed=0):
    """Many binary features: a flat kernel spectrum, where 'auto' takes a large basis."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 60)) < 0.3).astype(float)
    y = (X[:, :5].sum(axis=1) + rng.standard_normal(n) > 1.8).astype(int) + (X[:, 5] > 0)
    return X, y


def test_lowrank_auto_on_small_flat_data_is_the_full_kernel_machine():
    """n_basis='auto' on small data with a flat spectrum solves the kernel machine on every
    row and keeps its support as the basis: the decision function of the feature-space
    solution on all rows, with fewer basis functions than rows."""
    X, y = _flat_data()
    auto = LowRankSVC(C=10.0, random_state=0).fit(X, y)
    full = LowRankSVC(C=10.0, n_basis=len(X), basis="random", tol=1e-10, max_iter=200,
                      random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.basis_, X[auto.basis_indices_])
    np.testing.assert_allclose(auto.decision_function(X), full.decision_function(X),
                               atol=1e-6)
    assert auto.n_iter_.shape == (3,)


def test_lowrank_exact_machine_is_stored_as_its_kernel_expansion(tmp_path):
    """The exact machine keeps no whitening: coef_ holds newton_kernel's coefficients on
    the support rows (every row with a nonzero one, in row order), the decision function
    is K(X, basis_) coef_^T + intercept_, and the model survives a save and load."""
    from sparsekernel.io import load, save

    X, y = _flat_data()
    X, y = np.vstack([X, X[:30]]), np.r_[y, y[:30]]  # 30 repeated rows
    auto = LowRankSVC(C=10.0, random_state=0).fit(X, y)
    assert auto.normalization_ is None and auto.eigenvalues_ is None
    kern = Kernel("rbf", gamma=auto.gamma_)
    Y = np.where(y[:, None] == auto.classes_, 1.0, -1.0)
    a = np.column_stack([r.coef for r in newton_kernel(kern(X, X), Y, C=10.0)])
    support = np.flatnonzero((a != 0).any(axis=1))
    distinct = support[support < 300]  # a repeated row's first occurrence stands for both
    np.testing.assert_array_equal(auto.basis_indices_, distinct)
    assert np.isin(np.arange(300, 330)[(a[300:] != 0).any(axis=1)], support).all()
    expected = kern(X, X[support]) @ a[support] + auto.intercept_
    np.testing.assert_allclose(auto.decision_function(X), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(auto.intercept_, a.sum(axis=0), rtol=1e-12)
    save(auto, tmp_path / "exact.skm")
    loaded = load(tmp_path / "exact.skm")
    assert loaded.normalization_ is None
    np.testing.assert_array_equal(loaded.predict(X), auto.predict(X))


@pytest.mark.parametrize("change", [dict(loss="hinge", C=0.5), dict(n_basis=200),
                                    dict(basis="clustering")])
def test_lowrank_keeps_a_reduced_basis_otherwise(change):
    """The hinge loss, an explicit n_basis or per-centre widths keep k-means (or cluster)
    centres, not training rows; the default takes the exact machine's support. (At C = 10
    'auto' would take every row of this flat spectrum, which k-means returns as they are.)"""
    X, y = _flat_data(n=1200)
    exact = LowRankSVC(C=10.0, random_state=0).fit(X, y)
    assert exact.basis_indices_ is not None and exact.basis_.shape[0] < len(X)
    params = {"C": 10.0, "random_state": 0, **change}
    assert LowRankSVC(**params).fit(X, y).basis_indices_ is None


def test_fit_kernel_basis_takes_every_row_only_when_asked_and_affordable():
    X, _ = _flat_data()
    n = len(X)
    _, res = fit_kernel_basis(X, basis="kmeans", random_state=0, all_rows_up_to=n)
    assert res.info.get("all_rows") and res.centers is X
    np.testing.assert_array_equal(res.indices, np.arange(n))
    for kwargs in (dict(all_rows_up_to=None), dict(all_rows_up_to=n - 1),
                   dict(all_rows_up_to=n, basis="clustering"),
                   dict(all_rows_up_to=n, n_basis=40)):
        kwargs.setdefault("basis", "kmeans")
        _, res = fit_kernel_basis(X, random_state=0, **kwargs)
        assert not res.info.get("all_rows")
    # A smooth, low-dimensional spectrum: 'auto' takes few rows, so no exact machine.
    rng = np.random.default_rng(0)
    smooth = rng.standard_normal((2000, 2))
    _, res = fit_kernel_basis(smooth, basis="kmeans", random_state=0, all_rows_up_to=3000)
    assert not res.info.get("all_rows") and res.centers.shape[0] < 0.35 * 2000


@pytest.mark.parametrize("k", [3, 4])
def test_results_do_not_depend_on_the_schedule(k):
    """Problems advance an iteration at a time on whichever thread is free: the same
    iterates as one after another on one thread."""
    _, _, Y, K, sw = _problem(n=200, k=k, seed=3)
    serial = newton_kernel(K, Y, C=10.0, sample_weight=sw, n_threads=1)
    shared = newton_kernel(K, Y, C=10.0, sample_weight=sw, n_threads=2)
    for a, b in zip(serial, shared, strict=True):
        np.testing.assert_array_equal(a.coef, b.coef)
        assert (a.n_iter, a.status, a.history) == (b.n_iter, b.status, b.history)


def test_a_failing_problem_stops_the_others_and_propagates(monkeypatch):
    _, _, Y, K, _ = _problem(n=200, k=3, seed=3)
    advanced, advance = [], module._Problem.advance

    def failing(self):
        advanced.append(self.h is not None)
        if len(advanced) == 4:
            raise KeyboardInterrupt
        advance(self)

    monkeypatch.setattr(module._Problem, "advance", failing)
    with pytest.raises(KeyboardInterrupt):
        newton_kernel(K, Y, C=10.0, n_threads=2)
    assert len(advanced) <= 5  # the other thread ends its iteration and takes no other


def test_ctrl_c_in_the_waiting_caller_stops_the_problems(monkeypatch):
    """The caller only waits while the pool threads advance the problems: a Ctrl-C there
    propagates and the threads take no problem after their current iteration."""
    import threading
    import time

    from sparsekernel.compute import _threads

    _, _, Y, K, _ = _problem(n=200, k=3, seed=3)
    full = sum(r.n_iter for r in newton_kernel(K, Y, C=10.0, n_threads=2))
    advanced, advance = [], module._Problem.advance
    first = threading.Event()

    def slow(self):
        advanced.append(1)
        first.set()
        time.sleep(0.02)
        advance(self)

    workers = []

    def interrupted_wait(fn, items, n):
        # The workers' shares on a thread of their own (not map_threads from a foreign
        # thread: its BLAS limit would be restored out of order), the caller interrupted.
        workers.append(threading.Thread(target=lambda: [fn(t) for t in list(items)[1:]]))
        workers[0].start()
        first.wait(5)
        raise KeyboardInterrupt  # as Ctrl-C would, in the waiting caller

    monkeypatch.setattr(module._Problem, "advance", slow)
    monkeypatch.setattr(_threads, "map_threads", interrupted_wait)  # (drain_queue's)
    with pytest.raises(KeyboardInterrupt):
        newton_kernel(K, Y, C=10.0, n_threads=2)
    workers[0].join(5)
    assert not workers[0].is_alive() and len(advanced) <= 2 < full


def _regression(n=160, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.standard_normal(n)
    sw = rng.uniform(0.2, 3.0, n)
    sw[:5] = 0.0
    return Kernel("rbf", gamma=0.7)(X, X), y, sw


@pytest.mark.parametrize(("C", "epsilon"), [(1.0, 0.1), (100.0, 0.0), (1e5, 0.3)])
def test_regression_matches_feature_space_newton(C, epsilon):
    """The squared epsilon-insensitive loss: a reference Newton's minimum on features with
    F F^T = K (w = F^T a, b = sum(a)), from float32 systems (C <= 100) and float64 ones."""
    from sparsekernel.solvers import SquaredSmoothEpsilonInsensitive

    K, y, sw = _regression()
    assert _float32_used(K, C, sw) == (C < 1e3)
    F = _features(K)
    ours = newton_kernel(K, y[:, None], C=C, sample_weight=sw, epsilon=epsilon)[0]
    ref = reference_newton(F, y, SquaredSmoothEpsilonInsensitive(np.inf, epsilon), C=C,
                        sample_weight=sw, tol=1e-12, max_iter=200)
    assert ours.converged and ours.status == "converged"
    assert ours.objective == pytest.approx(ref.objective, rel=1e-9)
    np.testing.assert_allclose(F.T @ ours.coef, ref.coef,
                               atol=1e-6 * max(1, np.abs(ref.coef).max()))
    assert ours.intercept == pytest.approx(ref.intercept, abs=1e-6 * max(1, abs(ref.intercept)))


def test_regression_solution_vanishes_inside_the_tube():
    """a = 0 on rows inside the epsilon-tube; on the others, (Q_AA + diag(1 / (C s_A))) a_A
    = y_A - epsilon (below the tube) or y_A + epsilon (above it); targets all inside the
    tube at a = 0 end there at once."""
    K, y, sw = _regression(seed=5)
    C, eps = 20.0, 0.2
    a = newton_kernel(K, y[:, None], C=C, sample_weight=sw, epsilon=eps)[0].coef
    f = K @ a + a.sum()
    below, above = (f < y - eps) & (sw > 0), (f > y + eps) & (sw > 0)
    assert below.any() and above.any() and (~(below | above)).any()
    assert np.all(a[~(below | above)] == 0.0)
    A = np.flatnonzero(below | above)
    M = K[np.ix_(A, A)] + 1.0 + np.diag(1.0 / (C * sw[A]))
    np.testing.assert_allclose(M @ a[A], np.where(below, y - eps, y + eps)[A], atol=1e-9)
    inside = newton_kernel(K, 0.1 * np.sign(y)[:, None], C=C, epsilon=0.5)[0]
    assert inside.converged and inside.n_iter == 1 and not inside.coef.any()


def test_a_point_on_a_subset_of_a_factored_system_is_its_own_systems():
    """_solve_on_subset: the system on rows A inside P from P's factor equals factoring A's
    own; rows outside P, or too many rows gone, are left to a factorization."""
    from scipy.linalg import cholesky

    K, y, sw = _regression(n=120, seed=6)
    cs = 5.0 * np.where(sw > 0, sw, 1.0)
    P = np.arange(3, 120)
    L = cholesky(module._system(K, P, cs)[0], lower=True)
    A = np.delete(P, [0, 7, 50, 116])
    x = module._solve_on_subset(P, L, A, y[A])
    np.testing.assert_allclose(x, np.linalg.solve(module._system(K, A, cs)[0], y[A]),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(module._solve_on_subset(P, L, P, y[P]),
                               np.linalg.solve(module._system(K, P, cs)[0], y[P]), atol=1e-10)
    assert module._solve_on_subset(P, L, np.append(A, 0)[np.argsort(np.append(A, 0))],
                                   np.zeros(len(A) + 1)) is None  # row 0 is not in P
    assert module._solve_on_subset(P, L, P[:60], y[P[:60]]) is None  # half gone: refactor


def test_regression_points_on_subsets_change_nothing(monkeypatch):
    """A regression whose later active sets lie inside its first system solves them from
    that factor: the same iterates as factoring each."""
    K, y, sw = _regression(n=200, seed=7)
    y = y + 3.0  # every target outside the tube at a = 0: the first system holds every row
    used, solve_on_subset = [], module._solve_on_subset

    def spy(*args):
        out = solve_on_subset(*args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(module, "_solve_on_subset", spy)
    fast = newton_kernel(K, y[:, None], C=1e4, sample_weight=sw, epsilon=0.05)[0]
    monkeypatch.setattr(module, "_solve_on_subset", lambda *args: None)
    plain = newton_kernel(K, y[:, None], C=1e4, sample_weight=sw, epsilon=0.05)[0]
    assert any(used) and fast.converged and plain.converged
    np.testing.assert_allclose(fast.coef, plain.coef, rtol=1e-8, atol=1e-8)
    assert fast.n_iter == plain.n_iter and fast.objective == pytest.approx(plain.objective,
                                                                           rel=1e-12)
