"""LS-SVM family: solvers against dense references, estimators against known answers."""

import numpy as np
import pytest

from sparsekernel import (
    LSSVC,
    LSSVR,
    LowRankLSSVC,
    LowRankLSSVR,
    OnlineLSSVR,
    PrunedLSSVC,
    PrunedLSSVR,
)
from sparsekernel.basis import BasisSelector, KMedoidsBasis, RandomBasis
from sparsekernel.io import load, save
from sparsekernel.kernels import Kernel
from sparsekernel.lssvm._learnable import basis_values
from sparsekernel.lssvm._lowrank_fit import criterion_gradient
from sparsekernel.solvers import ArrayBlocks, IncrementalLSSVM, LSSVMPath, lssvm_dual, lssvm_primal
from sparsekernel.solvers.least_squares import lssvm_normal_equations
from sparsekernel.utils import MemoryBudgetError


def _rbf(A, B, gamma):
    d = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d)


def _bordered(K, y, C, s):
    """Dense numpy.linalg.solve of [[0, 1^T], [1, K + diag(1/(C s))]] [b; alpha] = [0; y]."""
    n = len(y)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K + np.diag(1.0 / (C * s))
    sol = np.linalg.solve(A, np.r_[0.0, y])
    return sol[1:], sol[0]


@pytest.fixture
def reg_data():
    rng = np.random.RandomState(0)
    X = rng.uniform(-2, 2, (80, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.randn(80)
    return X, y


# ----------------------------------------------------------------------------- solvers
def test_lssvm_dual_matches_dense_bordered_solve(reg_data):
    X, y = reg_data
    K = _rbf(X, X, 0.7)
    s = np.random.RandomState(1).uniform(0.5, 2.0, len(y))
    res = lssvm_dual(K, y, 3.0, s)
    alpha, b = _bordered(K, y, 3.0, s)
    np.testing.assert_allclose(res.coef, alpha, rtol=1e-9, atol=1e-10)
    assert abs(res.intercept - b) < 1e-10
    # Several target columns share one factorization and give the column-wise answers.
    Y = np.column_stack([y, -2 * y + 1])
    multi = lssvm_dual(K, Y, 3.0, s)
    np.testing.assert_allclose(multi.coef[:, 1], _bordered(K, Y[:, 1], 3.0, s)[0], atol=1e-9)


def test_lssvm_primal_matches_uncentred_normal_equations(reg_data):
    X, y = reg_data
    F = _rbf(X, X[:7], 0.5)
    s = np.random.RandomState(2).uniform(0.0, 2.0, len(y))
    C = 5.0
    m = F.shape[1]
    # [F^T S F + I/C, F^T s; s^T F, sum s] [w; b] = [F^T S y; s^T y]
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = F.T @ (s[:, None] * F) + np.eye(m) / C
    A[:m, m] = A[m, :m] = F.T @ s
    A[m, m] = s.sum()
    ref = np.linalg.solve(A, np.r_[F.T @ (s * y), s @ y])
    for data in (F, ArrayBlocks(F, block_rows=9)):
        res = lssvm_primal(data, y, C, s)
        np.testing.assert_allclose(res.coef, ref[:m], rtol=1e-8, atol=1e-10)
        assert abs(res.intercept - ref[m]) < 1e-9
    e = y - F @ res.coef - res.intercept
    assert res.objective == pytest.approx(0.5 * ref[:m] @ ref[:m] + 0.5 * C * s @ e**2)
    # The factored equations a caller reuses: the factor is of the ridge-augmented gram.
    ne = lssvm_normal_equations(F, y, C, s)
    np.testing.assert_allclose(ne.L @ ne.L.T, ne.gram, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ne.solve(ne.rhs), res.coef, rtol=1e-12, atol=1e-14)


def test_lowrank_closed_form_matches_n_by_n_dual(reg_data):
    X, y = reg_data
    rng = np.random.RandomState(3)
    Phi = basis_values(X, rng.uniform(-1, 1, (4, 2)), rng.uniform(0.3, 1.5, (4, 2)),
                       "robust_rbf")
    primal = lssvm_primal(Phi, y, 10.0)
    dual = lssvm_dual(Phi @ Phi.T, y, 10.0)
    np.testing.assert_allclose(primal.coef, Phi.T @ dual.coef, rtol=1e-7, atol=1e-9)
    assert abs(primal.intercept - dual.intercept) < 1e-8


@pytest.mark.parametrize("refactor_every", [500, None])
def test_incremental_solver_matches_fresh_solve_after_10000_updates(refactor_every):
    rng = np.random.RandomState(4)
    pool = rng.uniform(-3, 3, (300, 2))
    ypool = np.sin(pool[:, 0]) + rng.randn(300) * 0.1
    wpool = rng.uniform(0.5, 2.0, 300)
    Kp = _rbf(pool, pool, 0.5)
    cap = 60
    solver = IncrementalLSSVM(cap, C=10.0, refactor_every=refactor_every)
    inside = set()
    for _ in range(10_000):
        grow = solver.size < 40 or (solver.size < cap and rng.rand() < 0.5)
        if grow:
            i = int(rng.choice(sorted(set(range(300)) - inside)))
            solver.add(Kp[i, solver.keys], Kp[i, i], ypool[i], key=i, weight=wpool[i])
            inside.add(i)
        else:
            slot = int(rng.choice(np.flatnonzero(solver.active)))
            inside.discard(int(solver.keys[slot]))
            solver.remove(slot)
    assert solver.n_updates == 10_000
    assert (solver.n_refactor > 0) == (refactor_every is not None)
    idx = np.flatnonzero(solver.active)
    keys = solver.keys[idx]
    fresh = lssvm_dual(Kp[np.ix_(keys, keys)], ypool[keys], 10.0, wpool[keys])
    alpha, b = solver.solve()
    np.testing.assert_allclose(alpha[idx], fresh.coef, rtol=0, atol=1e-8)
    assert abs(b - fresh.intercept) < 1e-8


# ----------------------------------------------------------------------------- LSSVR/LSSVC
def test_exact_lssvr_matches_dense_bordered_solve(reg_data):
    X, y = reg_data
    s = np.random.RandomState(5).uniform(0.5, 2.0, len(y))
    model = LSSVR(gamma=0.7, C=3.0, n_basis=None).fit(X, y, sample_weight=s)
    alpha, b = _bordered(_rbf(X, X, 0.7), y, 3.0, s)
    np.testing.assert_allclose(model.coef_, alpha, atol=1e-9)
    assert model.intercept_ == pytest.approx(b, abs=1e-10)
    Xt = np.random.RandomState(6).uniform(-2, 2, (30, 2))
    np.testing.assert_allclose(model.predict(Xt), _rbf(Xt, X, 0.7) @ alpha + b, atol=1e-9)


def test_reduced_with_all_rows_as_basis_equals_exact(reg_data):
    X, y = reg_data
    exact = LSSVR(gamma=0.7, C=3.0, n_basis=None).fit(X, y)
    reduced = LSSVR(gamma=0.7, C=3.0, n_basis="auto", basis=X).fit(X, y)
    np.testing.assert_allclose(reduced.predict(X), exact.predict(X), atol=1e-6)
    yc = np.digitize(y, [-0.5, 0.5])  # three classes, one-vs-rest
    exact_c = LSSVC(gamma=0.7, C=3.0, n_basis=None).fit(X, yc)
    reduced_c = LSSVC(gamma=0.7, C=3.0, n_basis=1.0, basis=X).fit(X, yc)
    np.testing.assert_allclose(reduced_c.decision_function(X), exact_c.decision_function(X),
                               atol=1e-6)


def test_reduced_lssvr_streams_blocks_past_memory_budget(reg_data):
    X, y = reg_data
    stored = LSSVR(gamma=0.7, n_basis=20, random_state=0).fit(X, y)
    # The plan on 20 basis functions takes ~21 KiB; the 12.5 KiB of features do not fit in
    # the rest, which leaves blocks of a few rows.
    blocked = LSSVR(gamma=0.7, n_basis=20, random_state=0, memory_budget=24_000).fit(X, y)
    np.testing.assert_allclose(blocked.predict(X), stored.predict(X), atol=1e-8)


def test_lssvc_multiclass_is_one_vs_rest_regression(reg_data):
    X, y = reg_data
    labels = np.array(["a", "b", "c"])[np.digitize(y, [-0.5, 0.5])]
    clf = LSSVC(gamma=0.7, C=2.0, n_basis=None).fit(X, labels)
    for k, c in enumerate(clf.classes_):
        reg = LSSVR(gamma=0.7, C=2.0, n_basis=None).fit(X, np.where(labels == c, 1.0, -1.0))
        np.testing.assert_allclose(clf.decision_function(X)[:, k], reg.predict(X), atol=1e-9)


def test_exact_fit_refuses_past_memory_budget_with_estimate(reg_data):
    X, y = reg_data
    with pytest.raises(MemoryBudgetError,
                       match=r"LSSVR needs about 151 KiB \(kernel matrix 50 KiB, .*\) beyond "
                             r"its input, above memory_budget=1000 B; an exact fit on n=80 "
                             r"rows .*pass n_basis"):
        LSSVR(memory_budget=1000, n_basis=None).fit(X, y)
    big = np.zeros((2000, 1))
    with pytest.raises(MemoryBudgetError, match=r"about 91.6 MiB \(.*above memory_budget=10 "
                                                r"MiB; an exact fit on n=2000 rows"):
        LSSVR(memory_budget="10MB", n_basis=None).fit(big, np.arange(2000.0))


def test_default_is_reduced_on_auto_basis_functions():
    # 3000 rows: the exact fit needs ~206 MiB and is refused under a 100 MB budget; the
    # default (n_basis='auto') fits on a reduced basis: smooth 2-D data, whose kernel
    # spectrum a classifier resolves with AUTO_MIN = 100 basis functions.
    rng = np.random.RandomState(11)
    X = rng.uniform(-2, 2, (3000, 2))
    y = (np.sin(2 * X[:, 0]) > X[:, 1]).astype(int)
    with pytest.raises(MemoryBudgetError, match="about 206 MiB.*n=3000 rows"):
        LSSVC(memory_budget="100MB", n_basis=None).fit(X, y)
    clf = LSSVC(memory_budget="100MB", random_state=0).fit(X, y)
    assert clf.n_support_ == 100 and clf.basis_indices_.shape == (100,)
    assert clf.score(X, y) > 0.97


def test_default_on_small_n_equals_the_exact_lssvm(reg_data):
    # 'auto' = min(n, 1000) = n rows: the basis spans every training row, so the reduced
    # model is the exact one (the known answer: reduced with Z = X equals exact).
    X, y = reg_data
    exact = LSSVR(gamma=0.7, C=3.0, n_basis=None).fit(X, y)
    default = LSSVR(gamma=0.7, C=3.0, random_state=0).fit(X, y)
    assert default.n_support_ == len(X)
    np.testing.assert_allclose(default.predict(X), exact.predict(X), atol=1e-6)
    assert default.objective_ == pytest.approx(exact.objective_, rel=1e-6)


class _RecordingSelector(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self.seen_kernel = kernel
        return RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)


@pytest.mark.parametrize("kernel", ["rbf", "gaussian", "laplacian", "poly"])
def test_basis_selector_receives_the_estimators_kernel(kernel, reg_data):
    X, y = reg_data
    selector = _RecordingSelector()
    clf = LSSVC(kernel=kernel, n_basis=10, basis=selector, random_state=0).fit(X, y > 0)
    seen = clf.basis.seen_kernel
    assert seen is not None
    expected = {"gaussian": "rbf", "poly": "polynomial"}.get(kernel, kernel)
    assert seen.name == expected and seen.gamma == clf.gamma_


def _stderr_lines(capfd, marker):
    return [line for line in capfd.readouterr().err.splitlines() if marker in line]


@pytest.mark.parametrize("n_basis", [None, 20])
def test_verbose_2_prints_a_line_per_solve(n_basis, capfd, reg_data):
    X, y = reg_data
    LSSVC(gamma=0.7, n_basis=n_basis, random_state=0, verbose=2).fit(X, y > 0)
    lines = _stderr_lines(capfd, "[LSSVC]")
    assert len(lines) == 1 and "solved" in lines[0] and "objective=" in lines[0]
    LSSVC(gamma=0.7, n_basis=n_basis, random_state=0).fit(X, y > 0)
    assert _stderr_lines(capfd, "[LSSVC]") == []


def test_verbose_2_reports_pruning_rounds_stream_chunks_and_iterations(capfd, reg_data):
    X, y = reg_data
    pruned = PrunedLSSVR(gamma=0.7, C=10.0, random_state=0, verbose=2).fit(X, y)
    rounds = _stderr_lines(capfd, "pruning round")
    assert len(rounds) == len(pruned.pruning_path_["n_support"])
    OnlineLSSVR(gamma=0.7, n_basis=20, verbose=2).fit(X, y)
    assert len(_stderr_lines(capfd, "[OnlineLSSVR]")) == 2  # one chunk, one final solve
    lr = LowRankLSSVR(n_basis=3, max_iter=4, random_state=0, verbose=2).fit(X, y)
    assert len(_stderr_lines(capfd, "iteration")) == lr.n_iter_ + 1


# ----------------------------------------------------------------------------- pruning
def test_batch_pruning_path_and_stopping_rule(reg_data):
    X, y = reg_data
    rng = np.random.RandomState(7)
    Xv = rng.uniform(-2, 2, (60, 2))
    yv = np.sin(Xv[:, 0]) + 0.3 * Xv[:, 1]
    model = PrunedLSSVR(gamma=0.7, C=10.0, prune_tol=0.1).fit(X, y, X_val=Xv, y_val=yv)
    path = model.pruning_path_
    sizes, errs = path["n_support"], path["validation_mse"]
    assert sizes[0] == len(X) and np.all(np.diff(sizes) < 0)
    assert np.all(np.diff(sizes)[:-1] <= -1)
    # Every accepted model is within the tolerance; the last refit is not (or hit the floor).
    assert np.all(errs[:-1] <= errs[0] * 1.1 + 1e-15)
    assert errs[-1] > errs[0] * 1.1 or sizes[-1] - np.ceil(0.05 * sizes[-1]) < 2
    assert model.n_support_ == (sizes[-2] if errs[-1] > errs[0] * 1.1 else sizes[-1])
    # The kept model is the exact LS-SVM on its support vectors.
    refit = LSSVR(gamma=0.7, C=10.0, n_basis=None).fit(X[model.basis_indices_],
                                                        y[model.basis_indices_])
    np.testing.assert_allclose(model.predict(Xv), refit.predict(Xv), atol=1e-9)


def test_pruned_classifier_holds_out_a_validation_fraction():
    rng = np.random.RandomState(8)
    X = rng.randn(120, 2)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = PrunedLSSVC(gamma=1.0, C=10.0, random_state=0, validation_fraction=0.25).fit(X, y)
    assert clf.pruning_path_["n_support"][0] == 90
    assert clf.n_support_ < 90 and clf.score(X, y) > 0.9


# ----------------------------------------------------------------------------- online
def _online_reference(X, y, budget, gamma, C):
    """The paper's procedure with a fresh dense solve at every arrival."""
    keep = []
    for i in range(len(X)):
        keep.append(i)
        if len(keep) > budget:
            alpha, _ = _bordered(_rbf(X[keep], X[keep], gamma), y[keep], C, np.ones(len(keep)))
            del keep[int(np.argmin(np.abs(alpha)))]
    return keep


def test_online_pruning_matches_fresh_solves_at_every_arrival(reg_data):
    X, y = reg_data
    model = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=25).fit(X, y)
    keep = _online_reference(X, y, 25, 0.7, 10.0)
    got = {tuple(row) for row in model.basis_}
    assert got == {tuple(row) for row in X[keep]}
    exact = LSSVR(gamma=0.7, C=10.0, n_basis=None).fit(X[keep], y[keep])
    np.testing.assert_allclose(model.predict(X), exact.predict(X), atol=1e-8)
    assert model.n_samples_seen_ == len(X)


def test_online_partial_fit_point_by_point_equals_fit(reg_data):
    X, y = reg_data
    full = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=25).fit(X, y)
    stream = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=25)
    stream.partial_fit(X[:30], y[:30])
    for i in range(30, len(X)):
        stream.partial_fit(X[i:i + 1], y[i:i + 1])
    np.testing.assert_allclose(stream.predict(X), full.predict(X), atol=1e-8)


def test_online_under_budget_is_the_exact_lssvm(reg_data):
    X, y = reg_data
    online = OnlineLSSVR(gamma=0.7, C=3.0, n_basis=100).fit(X, y)
    exact = LSSVR(gamma=0.7, C=3.0, n_basis=None).fit(X, y)
    np.testing.assert_allclose(online.predict(X), exact.predict(X), atol=1e-9)


def test_online_continues_after_save_and_load(tmp_path, reg_data):
    X, y = reg_data
    a = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=20).fit(X[:50], y[:50])
    save(a, tmp_path / "online.skm")
    b = load(tmp_path / "online.skm")
    a.partial_fit(X[50:], y[50:])
    b.partial_fit(X[50:], y[50:])
    np.testing.assert_allclose(b.predict(X), a.predict(X), atol=1e-8)


def test_online_resolves_gamma_scale_once_also_after_load(tmp_path, reg_data):
    """gamma='scale' is resolved by the first call only: a later partial_fit, on a loaded
    model too, keeps gamma_ although the new rows have another variance."""
    X, y = reg_data
    a = OnlineLSSVR(n_basis=20).partial_fit(X[:50], y[:50])
    gamma = a.gamma_
    save(a, tmp_path / "online.skm")
    b = load(tmp_path / "online.skm")
    a.partial_fit(3 * X[50:], y[50:])
    b.partial_fit(3 * X[50:], y[50:])
    assert a.gamma_ == b.gamma_ == gamma and b.n_samples_seen_ == 80
    np.testing.assert_allclose(b.predict(X), a.predict(X), atol=1e-8)


def test_online_interrupted_partial_fit_changes_nothing(monkeypatch, reg_data):
    """Ctrl-C in the middle of a batch: the working set is copied on write, so the model,
    its row count and its solver stay as they were, and the batch streamed again gives the
    uninterrupted model."""
    X, y = reg_data
    ref = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=20).fit(X[:40], y[:40])
    ref.partial_fit(X[40:], y[40:])
    est = OnlineLSSVR(gamma=0.7, C=10.0, n_basis=20).fit(X[:40], y[:40])
    before, Xw = dict(vars(est)), est._Xw.copy()
    saved = {k: v.copy() for k, v in vars(est._solver).items() if isinstance(v, np.ndarray)}
    original, calls = IncrementalLSSVM.add, []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(IncrementalLSSVM, "add", add)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[40:], y[40:])
    monkeypatch.undo()
    assert vars(est).keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())
    assert all(np.array_equal(getattr(est._solver, k), v) for k, v in saved.items())
    np.testing.assert_array_equal(est._Xw, Xw)
    est.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    assert est.n_samples_seen_ == 80


# ----------------------------------------------------------------------------- low rank
@pytest.mark.parametrize("basis_function", ["robust_rbf", "sbf"])
@pytest.mark.parametrize("criterion", ["abs", "square", "target", "objective"])
def test_lowrank_basis_gradients_match_finite_differences(basis_function, criterion):
    rng = np.random.RandomState(9)
    X = rng.uniform(-1, 1, (40, 3))
    Y = np.column_stack([np.sign(X[:, 0] + 0.1), np.sin(2 * X[:, 1])])
    sw = rng.uniform(0.5, 1.5, 40)
    mu = rng.uniform(-0.8, 0.8, (3, 3))
    sigma = rng.uniform(0.3, 0.8, (3, 3))
    Phi = basis_values(X, mu, sigma, basis_function)
    fit = lssvm_primal(Phi, Y, 4.0, sw)
    W, b = fit.coef, fit.intercept  # held fixed for 'abs' and 'target'

    def J(m, s):
        return criterion_gradient(X, Y, sw, m, s, basis_function, criterion, 4.0, W, b)[0]

    _, g_mu, g_sigma = criterion_gradient(X, Y, sw, mu, sigma, basis_function, criterion,
                                          4.0, W, b)
    h = 1e-6
    for grad, which in ((g_mu, 0), (g_sigma, 1)):
        fd = np.zeros_like(grad)
        for idx in np.ndindex(grad.shape):
            p = [mu.copy(), sigma.copy()]
            p[which][idx] += h
            up = J(*p)
            p[which][idx] -= 2 * h
            fd[idx] = (up - J(*p)) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    assert np.abs(g_mu).max() > 1e-4  # the check above is not vacuous


def test_lowrank_ripley_beats_a_linear_boundary():
    from sparsekernel.datasets import load_ripley

    Xtr, ytr, Xte, yte = load_ripley()
    clf = LowRankLSSVC(n_basis=4, random_state=0).fit(Xtr, ytr)
    assert clf.coef_.shape == (1, 4) and clf.basis_.shape == (4, 2) and clf.n_support_ == 4
    assert np.all(clf.shapes_ > 0)
    assert clf.history_[clf.best_iter_, 0] == pytest.approx(clf.objective_)
    assert clf.objective_ <= clf.history_[0, 0]
    assert 1 - clf.score(Xte, yte) < 0.11  # a linear LS classifier gets about 0.11-0.12


def test_lowrank_objective_criterion_is_the_lssvm_cost(reg_data):
    X, y = reg_data
    rng = np.random.RandomState(1)
    mu, sigma = X[:3].copy(), rng.uniform(0.5, 1.5, (3, 2))
    J = criterion_gradient(X, y[:, None], np.ones(len(X)), mu, sigma, "robust_rbf",
                           "objective", 3.0)[0]
    Phi = basis_values(X, mu, sigma, "robust_rbf")
    A = np.column_stack([Phi, np.ones(len(X))])
    # Dense reference: ridge on w only (unpenalised b), then the primal objective.
    P = np.diag([1.0 / 3.0] * 3 + [0.0])
    wb = np.linalg.solve(A.T @ A + P, A.T @ y)
    ref = 0.5 * wb[:3] @ wb[:3] + 1.5 * np.sum((y - A @ wb) ** 2)
    assert J == pytest.approx(ref, rel=1e-9)


def test_lowrank_n_init_keeps_the_lowest_training_objective(reg_data):
    X, y = reg_data
    kw = dict(n_basis=3, max_iter=15, criterion="objective", random_state=3)
    one = LowRankLSSVR(**kw).fit(X, y)
    many = LowRankLSSVR(n_init=4, **kw).fit(X, y)
    # The first of the n_init runs is the n_init=1 run, so the best can only be lower.
    assert many.objective_ <= one.objective_ + 1e-12
    assert many.history_[many.best_iter_, 0] == pytest.approx(many.objective_)
    assert one.objective_ < one.history_[0, 0]  # the objective criterion descends


def test_lowrank_reseeds_dead_sbf_units(reg_data):
    X, y = reg_data
    far = np.array([[0.0, 0.0], [50.0, 50.0], [-1.0, 1.0]])
    model = LowRankLSSVR(n_basis=3, basis_function="sbf", basis=far, max_iter=5,
                         random_state=0).fit(X, y)
    assert model.n_reseeded_ >= 1
    assert np.all(model.transform_bases(X).max(axis=0) > 0)


def test_lowrank_interrupt_propagates_and_keeps_the_previous_model(monkeypatch, reg_data):
    import sparsekernel.lssvm._lowrank_fit as lowrank_fit

    X, y = reg_data
    model = LowRankLSSVR(n_basis=3, max_iter=5, random_state=0).fit(X, y)
    before, pred = dict(vars(model)), model.predict(X)
    calls = {"n": 0}
    real = lowrank_fit.basis_gradient

    def interrupted_on_the_third_step(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(lowrank_fit, "basis_gradient", interrupted_on_the_third_step)
    with pytest.raises(KeyboardInterrupt):
        model.set_params(n_basis=4, criterion="objective").fit(X[:50], y[:50])
    assert calls["n"] == 3 and vars(model).keys() == before.keys()
    assert all(vars(model)[k] is v for k, v in before.items() if k.endswith("_"))
    np.testing.assert_array_equal(model.predict(X), pred)


def test_lowrank_prediction_in_input_units(reg_data):
    X, y = reg_data
    model = LowRankLSSVR(n_basis=4, max_iter=10, random_state=0).fit(X * [1.0, 100.0], y)
    Phi = basis_values(X * [1.0, 100.0], model.basis_, model.shapes_, "robust_rbf")
    np.testing.assert_allclose(model.predict(X * [1.0, 100.0]),
                               Phi @ model.coef_ + model.intercept_, atol=1e-12)


def test_kmedoids_centres_are_training_rows_one_per_cluster():
    rng = np.random.RandomState(10)
    X = np.vstack([rng.randn(30, 2), rng.randn(30, 2) + 20])
    res = KMedoidsBasis().select(X, n_basis=2, random_state=0)
    np.testing.assert_array_equal(res.centers, X[res.indices])
    assert sorted(res.indices // 30) == [0, 1]


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("est, msg", [
    (LSSVR(C=-1.0), "'C' parameter of LSSVR"),
    (LSSVC(gamma=-2.0), "'gamma' parameter of LSSVC"),
    (LSSVR(n_basis=500), "n_basis=500"),
    (PrunedLSSVR(prune_fraction=1.5), "'prune_fraction' parameter"),
    (OnlineLSSVR(n_basis=0), "'n_basis' parameter of OnlineLSSVR"),
    (LowRankLSSVR(basis_function="gauss"), "'basis_function'.*Got 'gauss'"),
    (LowRankLSSVC(criterion="hinge"), "'criterion'.*Got 'hinge'"),
    (LowRankLSSVR(n_basis=500), "n_basis=500"),
])
def test_bad_parameters_name_the_value(est, msg, reg_data):
    X, y = reg_data
    target = np.sign(y) if hasattr(est, "classes_") or "SVC" in type(est).__name__ else y
    with pytest.raises(ValueError, match=msg):
        est.fit(X, target)


@pytest.mark.parametrize("Est", [LSSVC, PrunedLSSVC, LowRankLSSVC])
def test_classifiers_reject_one_class(Est, reg_data):
    X, _ = reg_data
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class"):
        Est().fit(X, np.ones(len(X)))


def test_pruned_rejects_mismatched_validation_set(reg_data):
    X, y = reg_data
    with pytest.raises(ValueError, match="y_val has 3 values but X_val has 5 rows"):
        PrunedLSSVR().fit(X, y, X_val=X[:5], y_val=y[:3])
    with pytest.raises(ValueError, match="X_val was given without y_val"):
        PrunedLSSVR().fit(X, y, X_val=X[:5])


# ----------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("est", [
    LSSVR(gamma=0.5, n_basis=None), LSSVC(gamma=0.5, n_basis=20, random_state=0),
    PrunedLSSVR(random_state=0), LowRankLSSVC(n_basis=3, max_iter=5, random_state=0),
    LowRankLSSVR(n_basis=3, max_iter=5, basis_function="sbf", random_state=0),
], ids=lambda e: type(e).__name__)
def test_save_load_round_trip(est, tmp_path, reg_data):
    X, y = reg_data
    target = (y > 0).astype(int) if "SVC" in type(est).__name__ else y
    est.fit(X, target)
    save(est, tmp_path / "m.skm")
    back = load(tmp_path / "m.skm")
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


# ------------------------------------------------------------------------- partial_fit
def _stream_data(n=300, seed=3):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.randn(n) + 5.0  # a large mean
    return X, y, rng.uniform(0.5, 2.0, n)


_CHUNKS = [slice(0, 70), slice(70, 71), slice(71, 200), slice(200, 300)]


@pytest.mark.parametrize("layout", ["dense", "csr", "blocks"])
def test_partial_fit_in_chunks_is_the_batch_fit_on_the_same_basis(layout):
    """Chunks of 70, 1, 129 and 100 weighted rows give the batch reduced fit on the same
    centres, stored, sparse or recomputed in blocks of a few rows."""
    import scipy.sparse as sp

    X, y, s = _stream_data()
    X = sp.csr_matrix(X) if layout == "csr" else X
    kw = dict(gamma=0.7, C=10.0, n_basis=25, basis=_stream_data(25, seed=4)[0],
              memory_budget=40_000 if layout == "blocks" else None)  # plan ~36 KiB
    est = LSSVR(**kw)
    for rows in _CHUNKS:
        assert est.partial_fit(X[rows], y[rows], sample_weight=s[rows]) is est
    ref = LSSVR(**kw).fit(X, y, sample_weight=s)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-8, atol=1e-8)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=1e-10)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-8)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-10, atol=1e-10)
    assert est.n_rows_seen_ == 300 and est.n_features_in_ == 3


def test_partial_fit_predicts_after_every_call_and_fixes_the_basis_on_the_first():
    X, y, _ = _stream_data()
    est = LSSVR(n_basis="auto", random_state=0).partial_fit(X[:100], y[:100])
    basis, gamma = est.basis_, est.gamma_
    assert gamma == pytest.approx(1 / (3 * X[:100].var()))  # 'scale' on the first chunk
    assert np.all(est.basis_indices_ < 100)
    ref = LSSVR(gamma=gamma, n_basis=len(basis), basis=basis)
    for stop in (200, 300):
        est.partial_fit(X[stop - 100:stop], y[stop - 100:stop])
        assert est.basis_ is basis and est.gamma_ == gamma
        np.testing.assert_allclose(est.predict(X), ref.fit(X[:stop], y[:stop]).predict(X),
                                   atol=1e-10)


def test_lssvc_partial_fit_with_classes_is_the_batch_fit():
    X, _, _ = _stream_data()
    labels = np.array(["a", "b", "c"])[(X[:, 0] > -0.5).astype(int) + (X[:, 1] > 1.0)]
    kw = dict(gamma=0.7, C=10.0, n_basis=20, basis=X[::15],
              class_weight={"a": 1.0, "b": 2.0, "c": 0.5})
    first = labels[:100] != "c"
    clf = LSSVC(**kw).partial_fit(X[:100][first], labels[:100][first], classes=["c", "b", "a"])
    clf.partial_fit(X[100:], labels[100:])
    rows = np.r_[np.flatnonzero(first), np.arange(100, 300)]
    ref = LSSVC(**kw).fit(X[rows], labels[rows])
    assert list(clf.classes_) == ["a", "b", "c"] and clf.coef_.shape == (3, 20)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X), atol=1e-9)
    with pytest.raises(ValueError, match="Label 'd' is not one of the classes"):
        clf.partial_fit(X[:5], np.array(["a", "b", "d", "a", "a"]))


def test_partial_fit_on_abalone_keeps_the_accuracy_of_the_batch_fit():
    """Chunks of 500 rows of the seeded 70/30 split, 200 basis functions: the batch fit
    on the same basis predicts the same to 1e-10 and R^2 >= 0.55. The coefficients on
    K(x, Z) are the whitened weights times M = L^(-T), whose entries reach
    1 / sqrt(smallest pivot): their rounding (the two factorizations of one K(Z, Z) in
    different orders) agrees to 1e-7 of the largest coefficient only."""
    from sklearn.model_selection import train_test_split

    from sparsekernel.datasets import find_shared_data, load_svmlight_paths

    base = find_shared_data("abalone")
    if base is None:
        pytest.skip("shared data folder 'abalone' not found (set SPARSEKERNEL_DATA)")
    (X, y), = load_svmlight_paths([base / "abalone_scale.xz"], n_features=8, zero_based=False)
    Xtr, Xte, ytr, yte = train_test_split(X.toarray(), y, test_size=0.3, random_state=0)
    est = LSSVR(n_basis=200, random_state=0)
    for start in range(0, len(ytr), 500):
        est.partial_fit(Xtr[start:start + 500], ytr[start:start + 500])
    ref = LSSVR(gamma=est.gamma_, n_basis=200, basis=est.basis_).fit(Xtr, ytr)
    np.testing.assert_array_equal(est.basis_, ref.basis_)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0,
                               atol=1e-7 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(est.predict(Xte), ref.predict(Xte), rtol=1e-10, atol=1e-10)
    assert est.n_rows_seen_ == len(ytr) == 2923
    assert est.score(Xte, yte) >= 0.55


@pytest.mark.parametrize("n_basis", [None, 0.5])
def test_partial_fit_needs_a_number_of_basis_functions(n_basis):
    est = LSSVR(n_basis=n_basis)
    assert not hasattr(est, "partial_fit")
    with pytest.raises(AttributeError, match="has no attribute 'partial_fit'") as info:
        est.partial_fit(*_stream_data()[:2])
    assert f"got n_basis={n_basis!r}" in str(info.value.__cause__)


@pytest.mark.parametrize("Est", [LSSVR, LSSVC])
def test_partial_fit_after_fit_continues_from_the_fitted_model(Est, tmp_path):
    """fit then partial_fit is partial_fit then partial_fit: fit keeps the summary of its
    rows (the same basis and map as a first partial_fit chooses). A loaded model has none."""
    X, y, sw = _stream_data()
    if Est is LSSVC:
        y = np.digitize(y, [4.7, 5.3])  # three classes
    a = Est(n_basis=20, random_state=0).fit(X[:200], y[:200], sample_weight=sw[:200])
    a.partial_fit(X[200:], y[200:], sample_weight=sw[200:])
    b = Est(n_basis=20, random_state=0)
    for rows in (slice(0, 200), slice(200, 300)):
        b.partial_fit(X[rows], y[rows], sample_weight=sw[rows])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-8, atol=1e-10)
    assert a.n_rows_seen_ == b.n_rows_seen_ == 300
    fitted = Est(n_basis=10, random_state=0).fit(X, y)
    save(fitted, tmp_path / "m.skm")
    with pytest.raises(ValueError, match="loaded from a file"):
        load(tmp_path / "m.skm").partial_fit(X, y)


def test_partial_fit_bad_input():
    X, y, _ = _stream_data()
    with pytest.raises(ValueError, match="class_weight='balanced'"):
        LSSVC(n_basis=10, class_weight="balanced").partial_fit(X, X[:, 0] > 0)
    est = LSSVR(n_basis=10, random_state=0).partial_fit(X[:50], y[:50])
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        est.partial_fit(X[50:60], y[50:60], sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        est.partial_fit(np.where(X[50:60] > 1.5, np.nan, X[50:60]), y[50:60])
    assert est.n_rows_seen_ == 50


def test_fit_after_partial_fit_starts_over():
    X, y, _ = _stream_data()
    est = LSSVR(n_basis=10, random_state=0).partial_fit(X[:50], y[:50]).fit(X, y)
    assert not hasattr(est, "n_rows_seen_") and est._rows_summed == len(X)  # fit's own summary
    np.testing.assert_array_equal(est.predict(X),
                                  LSSVR(n_basis=10, random_state=0).fit(X, y).predict(X))


def _stream_state(est):
    return {name: getattr(est, name) for name in
            ("coef_", "intercept_", "n_rows_seen_", "_moments", "_nystrom", "n_features_in_")}


def test_failed_partial_fit_changes_nothing(monkeypatch):
    """A chunk with a wrong number of features, or a failure after the chunk's sums were
    merged, leaves coef_ and the summary as they were (same objects, same values)."""
    from sparsekernel.lssvm._base import _Moments

    X, y, _ = _stream_data()
    est = LSSVR(n_basis=10, random_state=0).partial_fit(X[:100], y[:100])
    before = _stream_state(est)
    values = (est.coef_.copy(), est._moments.gram.copy(), est._moments.cross.copy())
    with pytest.raises(ValueError, match="X has 2 features"):
        est.partial_fit(X[100:200, :2], y[100:200])

    def broken(self, C):
        raise np.linalg.LinAlgError("injected")

    with monkeypatch.context() as patch:
        patch.setattr(_Moments, "solution", broken)
        with pytest.raises(np.linalg.LinAlgError, match="injected"):
            est.partial_fit(X[100:200], y[100:200])
    after = _stream_state(est)
    assert all(after[name] is value for name, value in before.items())
    now = (est.coef_, est._moments.gram, est._moments.cross)
    for old, new in zip(values, now, strict=True):
        np.testing.assert_array_equal(old, new)
    ref = LSSVR(n_basis=10, random_state=0).partial_fit(X[:100], y[:100])
    np.testing.assert_array_equal(est.partial_fit(X[100:], y[100:]).coef_,
                                  ref.partial_fit(X[100:], y[100:]).coef_)


@pytest.mark.parametrize("est", [LSSVR(n_basis=10, random_state=0),
                                 LSSVC(n_basis=10, random_state=0)],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", ["check_estimators_partial_fit_n_features",
                                   "check_n_features_in_after_fitting",
                                   "check_dataframe_column_names_consistency"])
def test_partial_fit_passes_sklearn_checks(est, check):
    """test_common's LS-SVMs have n_basis None or a fraction, hence no partial_fit."""
    from sklearn.utils import estimator_checks

    getattr(estimator_checks, check)(type(est).__name__, est)


@pytest.mark.parametrize("targets", [1, 3])
def test_lssvm_path_equals_a_fresh_solve_on_every_subset(targets):
    """Each refit of a pruning path, whether it keeps the factor's leading rows (Schur
    complement of the rest) or refactors, is lssvm_dual on that subset."""

    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 3))
    K = Kernel("rbf", gamma=0.4)(X, X)
    Y = rng.standard_normal((90, targets)) if targets > 1 else rng.standard_normal(90)
    sw = rng.uniform(0.5, 2.0, 90)
    path = LSSVMPath(K, Y, 3.0, sw)
    rows, priority, leads = np.arange(90), None, []
    for step in range(6):
        res = path.solve(rows, priority)
        ref = lssvm_dual(K[np.ix_(rows, rows)], Y[rows], 3.0, sw[rows])
        np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(res.intercept, ref.intercept, rtol=1e-9, atol=1e-10)
        assert res.objective == pytest.approx(ref.objective, rel=1e-9)
        leads.append(int(res.message.split(", ")[1].split()[0]))
        alpha = np.abs(res.coef.reshape(len(rows), -1)).max(axis=1)
        priority = np.zeros(90)
        priority[rows] = alpha
        # the smallest |alpha| go (as pruning does), and at step 3 an early row too
        drop = np.argsort(alpha, kind="stable")[:5]
        if step == 3:
            drop = np.append(drop, np.argmax(alpha))
        rows = np.delete(rows, drop)
    # whole: the first factor, the first in |alpha| order, and after an early row left;
    # else the rows pruned last sat late in the factor
    assert leads[:2] == [0, 0] and leads[2] > 45 and leads[3] > 45 and leads[4] == 0


def test_lssvm_path_refactors_a_jittered_factor_whole():
    """A factor that needed a jitter is not extended (its complement would be another
    matrix's): the next subset is factored whole."""
    X = np.repeat(np.random.default_rng(1).standard_normal((20, 2)), 2, axis=0)
    K = Kernel("rbf", gamma=0.5)(X, X)  # duplicated rows: singular, and C huge
    path = LSSVMPath(K, np.arange(40.0), 1e16)
    first = path.solve(np.arange(40))
    assert path.jitter > 0 and "jitter" in first.message
    second = path.solve(np.arange(38))
    assert ", 0 leading rows kept" in second.message
