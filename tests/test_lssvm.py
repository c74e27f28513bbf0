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
from sparsekernel.base import FitInterruptedWarning
from sparsekernel.basis import BasisSelector, KMedoidsBasis, RandomBasis
from sparsekernel.features._learnable import basis_values
from sparsekernel.features._lowrank_fit import criterion_gradient
from sparsekernel.io import load, save
from sparsekernel.solvers import ArrayBlocks, IncrementalLSSVM, lssvm_dual, lssvm_primal
from sparsekernel.solvers.least_squares import lssvm_normal_equations


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
    blocked = LSSVR(gamma=0.7, n_basis=20, random_state=0, memory_budget=4000).fit(X, y)
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
    with pytest.raises(ValueError, match=r"about 0 MiB.*memory_budget=0 MiB.*n_basis"):
        LSSVR(memory_budget=1000, n_basis=None).fit(X, y)
    big = np.zeros((2000, 1))
    with pytest.raises(ValueError, match="n=2000 rows.*about 92 MiB"):
        LSSVR(memory_budget="10MB", n_basis=None).fit(big, np.arange(2000.0))


def test_default_is_reduced_on_min_n_1000_basis_functions():
    # 3000 rows: the exact fit needs ~206 MiB and is refused under a 100 MB budget; the
    # default (n_basis='auto') fits on 1000 basis functions.
    rng = np.random.RandomState(11)
    X = rng.uniform(-2, 2, (3000, 2))
    y = (np.sin(2 * X[:, 0]) > X[:, 1]).astype(int)
    with pytest.raises(ValueError, match="n=3000 rows.*about 206 MiB"):
        LSSVC(memory_budget="100MB", n_basis=None).fit(X, y)
    clf = LSSVC(memory_budget="100MB", random_state=0).fit(X, y)
    assert clf.n_support_ == 1000 and clf.basis_indices_.shape == (1000,)
    assert clf.score(X, y) > 0.9


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


def test_lowrank_interrupt_keeps_the_best_iterate(monkeypatch, reg_data):
    import sparsekernel.features._lowrank_fit as lowrank_fit

    X, y = reg_data
    calls = {"n": 0}
    real = lowrank_fit.basis_gradient

    def interrupted_on_the_third_step(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(lowrank_fit, "basis_gradient", interrupted_on_the_third_step)
    with pytest.warns(FitInterruptedWarning, match="interrupted at iteration 2"):
        model = LowRankLSSVR(n_basis=3, criterion="objective", random_state=0).fit(X, y)
    assert model.n_iter_ == 2 and len(model.history_) == 3
    assert model.objective_ == pytest.approx(model.history_[:, 0].min())


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
