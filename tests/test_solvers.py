import importlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from sparsekernel.solvers import (
    ArrayBlocks,
    SquaredSmoothEpsilonInsensitive,
    SquaredSmoothHinge,
    newton_ovr,
    smooth_plus,
)


def newton(F, y, loss, **kwargs):
    """newton_ovr on one column of targets."""
    (res,) = newton_ovr(F, np.asarray(y)[:, None], loss=loss, **kwargs)
    return res


def test_smooth_plus_is_stable():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / underflow warnings
        assert smooth_plus(-50.0, 5.0) == pytest.approx(np.exp(-250.0) / 5.0, rel=1e-12)
        assert smooth_plus(-800.0, 5.0) == 0.0 or smooth_plus(-800.0, 5.0) < 1e-300
        assert smooth_plus(1000.0, 5.0) == pytest.approx(1000.0, rel=1e-15)
        assert np.isfinite(smooth_plus(-4000.0, 1.0))
    # Reference forms that are accurate on each side of zero.
    neg, pos = np.linspace(-3, 0, 7), np.linspace(0, 3, 7)
    np.testing.assert_allclose(smooth_plus(neg, 5.0), np.log1p(np.exp(5.0 * neg)) / 5.0,
                               rtol=1e-14)
    np.testing.assert_allclose(smooth_plus(pos, 5.0), pos + np.log1p(np.exp(-5.0 * pos)) / 5.0,
                               rtol=1e-14)
    x = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(smooth_plus(x, np.inf), np.maximum(x, 0))


@pytest.mark.parametrize("loss", [SquaredSmoothHinge(5.0),
                                  SquaredSmoothEpsilonInsensitive(5.0, 0.3)])
def test_loss_derivatives_match_finite_differences(rng, loss):
    f = rng.normal(scale=2.0, size=50)
    y = np.sign(rng.normal(size=50)) if isinstance(loss, SquaredSmoothHinge) else rng.normal(
        size=50)
    value, d1, d2 = loss.derivatives(f, y)
    np.testing.assert_allclose(value, loss.value(f, y))
    h = 1e-6
    np.testing.assert_allclose(d1, (loss.value(f + h, y) - loss.value(f - h, y)) / (2 * h),
                               rtol=1e-6, atol=1e-8)
    _, d1p, _ = loss.derivatives(f + h, y)
    _, d1m, _ = loss.derivatives(f - h, y)
    np.testing.assert_allclose(d2, (d1p - d1m) / (2 * h), rtol=1e-5, atol=1e-7)


def _objective(F, y, loss, C, sw):
    m = F.shape[1]

    def fun(z):
        f = F @ z[:m] + z[m]
        return 0.5 * z @ z + 0.5 * C * sw @ loss.value(f, y)

    def grad(z):
        f = F @ z[:m] + z[m]
        _, d1, _ = loss.derivatives(f, y)
        g = 0.5 * C * sw * d1
        return z + np.r_[F.T @ g, g.sum()]

    return fun, grad


def _problem(rng, kind, n=200, m=8):
    F = rng.normal(size=(n, m))
    if kind == "classification":
        y = np.sign(F @ rng.normal(size=m) + 0.8 * rng.normal(size=n))
    else:
        y = F @ rng.normal(size=m) + 0.2 * rng.normal(size=n)
    return F, y


@pytest.mark.parametrize("alpha", [5.0, np.inf])
@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_newton_matches_scipy_minimize(rng, kind, alpha):
    F, y = _problem(rng, kind)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    loss = SquaredSmoothHinge(alpha) if kind == "classification" else \
        SquaredSmoothEpsilonInsensitive(alpha, 0.1)
    C = 4.0
    res = newton(F, y, loss, C=C, sample_weight=sw, tol=1e-10)
    assert res.converged, res.message
    fun, grad = _objective(F, y, loss, C, sw)
    ref = minimize(fun, np.zeros(F.shape[1] + 1), jac=grad, method="L-BFGS-B",
                   options=dict(ftol=1e-16, gtol=1e-11, maxiter=20000))
    z = np.r_[res.coef, res.intercept]
    np.testing.assert_allclose(z, ref.x, rtol=1e-6, atol=1e-6 * np.abs(ref.x).max())
    assert res.objective == pytest.approx(ref.fun, rel=1e-10)
    # The reported gradient norm is the true one and is below the requested tolerance.
    g = np.abs(grad(z)).max()
    assert g == pytest.approx(res.grad_norm, rel=1e-6, abs=1e-12)
    assert g <= res.tol_reached


def test_generalized_newton_hessian_uses_active_rows_only(rng):
    F, y = _problem(rng, "classification", n=400)
    res = newton(F, y, SquaredSmoothHinge(np.inf), C=1.0)
    active = [h["n_active"] for h in res.history]
    assert max(active[1:]) < len(y)  # after the first step, only margin violators count
    f = F @ res.coef + res.intercept
    # Rows with zero loss at the optimum carry no curvature.
    assert np.sum(1 - y * f > 0) <= max(active)


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_exact_losses_take_the_exact_step_and_end_at_the_optimum(rng, kind):
    """On a piecewise-quadratic loss Newton ends where the active set stops changing: the
    gradient there is zero to rounding."""
    from sparsekernel.solvers._losses import hinge_terms

    F, y = _problem(rng, kind, n=300)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    loss = SquaredSmoothHinge(np.inf) if kind == "classification" else \
        SquaredSmoothEpsilonInsensitive(np.inf, 0.1)
    res = newton(F, y, loss, C=5.0, sample_weight=sw, tol=1e-14, max_iter=50)
    assert res.converged and "active set stopped changing" in res.message
    # The gradient at the end, from the hinges' own definition.
    row, sign, target = hinge_terms(y, None if kind == "classification" else 0.1)
    f = F @ res.coef + res.intercept
    pull = np.bincount(row, weights=5.0 * sw[row] * sign * np.maximum(
        sign * (target - f[row]), 0.0), minlength=len(y))
    grad = np.r_[res.coef - F.T @ pull, res.intercept - pull.sum()]
    assert np.abs(grad).max() < 1e-9 * max(1.0, np.abs(F.T @ (5.0 * sw * y)).max())
    assert res.n_iter <= 15


@pytest.mark.parametrize("fmt", ["blocks", "csr", "float32"])
def test_storage_formats_give_the_same_solution(rng, fmt):
    F, y = _problem(rng, "classification", n=150)
    loss = SquaredSmoothHinge(5.0)
    ref = newton(F, y, loss, C=2.0, tol=1e-10)
    if fmt == "blocks":
        Fin = ArrayBlocks(F, block_rows=7)
    elif fmt == "csr":
        Fin = sp.csr_matrix(np.where(np.abs(F) > 0.3, F, 0.0))
        ref = newton(Fin.toarray(), y, loss, C=2.0, tol=1e-10)
    else:
        Fin = F.astype(np.float32)
        ref = newton(Fin.astype(np.float64), y, loss, C=2.0, tol=1e-10)
    res = newton(Fin, y, loss, C=2.0, tol=1e-10)
    # Stored float32 rows are multiplied in float32 (as newton_ovr's): the gradient, and so
    # the solution, is exact to float32's rounding of the products, not float64's.
    rtol = 1e-6 if fmt == "float32" else 1e-8
    np.testing.assert_allclose(res.coef, ref.coef, rtol=rtol, atol=rtol / 100)


def test_warm_start_at_the_solution_needs_no_iteration(rng):
    F, y = _problem(rng, "regression")
    loss = SquaredSmoothEpsilonInsensitive(5.0, 0.1)
    res = newton(F, y, loss, C=3.0, tol=1e-9)
    again = newton(F, y, loss, C=3.0, tol=1e-6, x0=np.r_[res.coef, res.intercept])
    assert again.converged and again.n_iter == 0


def test_max_iter_reports_failure(rng):
    F, y = _problem(rng, "classification")
    res = newton(F, y, SquaredSmoothHinge(5.0), C=100.0, tol=1e-14, max_iter=1)
    assert not res.converged and res.status == "max_iter" and res.n_iter == 1
    assert "max_iter=1" in res.message and f"{res.grad_norm:.3g}" in res.message


def test_keyboard_interrupt_propagates(rng):
    """Ctrl-C is never turned into a result: the caller's fit is abandoned."""
    F, y = _problem(rng, "classification")
    calls = []

    def stop_after_two(info):
        calls.append(info["n_iter"])
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        newton(F, y, SquaredSmoothHinge(5.0), C=1.0, tol=1e-12, callback=stop_after_two)
    assert calls == [1, 2]


@pytest.fixture
def split_products(monkeypatch):
    """Every product split over the threads, however small."""
    from sparsekernel.compute import _products

    monkeypatch.setattr(_products, "_PARALLEL_MIN_WORK", 0)


def _provider(F, kind, block_rows=37, gather_rows=None):
    """F's rows in memory (on two threads) or in row blocks, gathering ``gather_rows`` rows
    at a time."""
    from sparsekernel.solvers._rows import ArrayRows, BlockRows

    gather = 8 * F.shape[1] * (gather_rows or 4096)
    if kind == "array":
        return ArrayRows(F, threads=2, gather_bytes=gather)
    return BlockRows(ArrayBlocks(F, block_rows=block_rows), gather_bytes=gather)


def _exact(F, q):
    A = np.c_[F, np.ones(len(F))]
    return np.tril(A.T @ (q[:, None] * A))


@pytest.mark.parametrize("kind", ["array", "blocks"])
@pytest.mark.parametrize("gather_rows", [1, 7, 1000])
def test_gram_sums_gathering_rows_across_blocks_are_exact(rng, gather_rows, kind,
                                                          split_products):
    """Gather buffers that fill mid-block (1, 7 rows) or span every block (1000) give the
    formula's Gram sum, for rows added (+) and subtracted (-), alone or in the gradient's
    pass over the rows."""
    F = rng.normal(size=(120, 5))
    rows = _provider(F, kind, block_rows=16, gather_rows=gather_rows)
    q = np.where(rng.random(120) < 0.5, rng.uniform(0.5, 2.0, 120), 0.0)
    on, off = np.flatnonzero(q), np.flatnonzero(rng.random(120) < 0.2)
    H = rows.add_gram(np.zeros((6, 6)), q, on)
    np.testing.assert_allclose(np.tril(H), _exact(F, q), rtol=1e-12, atol=1e-12)
    rows.add_gram(H, np.ones(120), off, -1.0)
    ones = np.zeros(120)
    ones[off] = 1.0
    np.testing.assert_allclose(np.tril(H), _exact(F, q) - _exact(F, ones), rtol=1e-12,
                               atol=1e-12)
    S = np.zeros((6, 6))
    rows.gradient(np.zeros((120, 1)), [(S, q, on, 1.0, None, None)])
    np.testing.assert_allclose(np.tril(S), _exact(F, q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_gram_is_the_full_symmetric_product(n_threads):
    """solvers._parallel.gram: F^T F with both triangles, in float64, for any thread count
    and a float32 F (sizes past one 256-row mirror block and the threads' work threshold)."""
    from sparsekernel.compute._products import gram

    F = np.random.default_rng(0).standard_normal((700, 600))
    G = gram(F.astype(np.float32), n_threads)
    assert G.dtype == np.float64 and G.flags.c_contiguous
    np.testing.assert_allclose(G, F.astype(np.float32).astype(np.float64).T
                               @ F.astype(np.float32).astype(np.float64), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(G, G.T)



def test_repeated_rows_groups_equal_rows_dense_and_csr():
    """Rows equal by value share a group, first occurrences in row order; a CSR row's
    stored zeros, index order and -0.0 do not make it different."""
    import scipy.sparse as sp

    from sparsekernel.utils import repeated_rows

    Z = np.array([[1.0, 0.0], [2.0, 3.0], [1.0, -0.0], [0.0, 0.0], [2.0, 3.0], [0.0, 1.0]])
    first, group = repeated_rows(Z)
    np.testing.assert_array_equal(first, [0, 1, 3, 5])
    np.testing.assert_array_equal(group, [0, 1, 0, 2, 1, 3])
    S = sp.csr_matrix((np.array([1.0, 0.0, 3.0, 2.0, 1.0, -0.0]),
                       np.array([0, 1, 1, 0, 0, 1]), np.array([0, 2, 4, 6, 6, 6])), shape=(5, 2))
    # rows: [1, 0] (a stored zero), [2, 3] (indices reversed), [1, 0], [], []
    first, group = repeated_rows(S)
    np.testing.assert_array_equal(first, [0, 1, 3])
    np.testing.assert_array_equal(group, [0, 1, 0, 2, 2])


def test_backtracking_is_one_rule_for_the_smooth_solvers(monkeypatch, rng):
    """The Armijo search takes the full step where it decreases enough, halves it until the
    objective has fallen by ARMIJO t |slope| otherwise, and gives up past MAX_HALVINGS,
    for several lines at once (a line settled is not asked again); the Newton core searches
    through it on a smooth loss, the multinomial logistic regression's among them."""
    from sparsekernel.solvers import _line_search, logistic_newton
    from sparsekernel.solvers._constants import ARMIJO, MAX_HALVINGS
    from sparsekernel.solvers._line_search import backtrack

    a = np.array([1.0, 0.1])  # phi_j(t) = (t - a_j)^2, of slope -2 a_j at t = 0
    asked = []

    def phi(T):
        asked.append(T.copy())
        return (T - a) ** 2

    t = backtrack(phi, a**2, -2 * a)
    assert t[0] == 1.0 and t[1] == 0.125  # the exact minimiser taken whole; 1/8
    assert (t[1] - 0.1) ** 2 <= 0.01 + ARMIJO * t[1] * -0.2
    assert (2 * t[1] - 0.1) ** 2 > 0.01 + ARMIJO * 2 * t[1] * -0.2  # (too long before)
    assert all(np.isnan(T[0]) for T in asked[1:])  # the first line was not asked again
    tried = []
    assert backtrack(lambda T: tried.append(T[0]) or np.ones(1), [1.0], [-1.0])[0] == 0.0
    assert len(tried) == MAX_HALVINGS + 1 and tried[-1] == 2.0**-MAX_HALVINGS
    assert backtrack(lambda T: T, [1.0], [0.0])[0] == 0.0  # not a descent direction

    calls = []
    original = _line_search.backtrack

    def spy(*args):
        calls.append(args)
        return original(*args)

    module = importlib.import_module("sparsekernel.solvers.newton_ovr")
    monkeypatch.setattr(module, "backtrack", spy)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    newton(X, y, SquaredSmoothHinge(5.0), C=10.0)
    assert calls
    calls.clear()
    logistic_newton(X, np.digitize(X[:, 1], [-0.5, 0.5]), C=10.0)
    assert calls
