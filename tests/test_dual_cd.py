"""Dual coordinate descent: primal optimum against scipy, duality gap, warm start, weights."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sparsekernel.solvers import dual_cd


def _problem(n=80, m=4, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, m)).astype(dtype)
    y = np.where(F[:, 0] + 0.7 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return F, y, rng.uniform(0.5, 2.0, n)


def _primal(z, F, y, C, sw, loss):
    m = F.shape[1]
    v = np.maximum(0.0, 1.0 - y * (F @ z[:m] + z[m]))
    return 0.5 * z @ z + 0.5 * C * sw @ (v**2 if loss == "squared_hinge" else v)


def _gap_radius(*results):
    return sum(np.sqrt(2.0 * r.gap) for r in results)


def _reference_hinge(F, y, C, sw):
    """The L1-loss primal as a smooth QP in (w, b, xi), solved by SLSQP."""
    n, m = F.shape
    A = np.hstack([y[:, None] * F, y[:, None], np.eye(n)])  # y (F w + b) + xi >= 1

    def obj(x):
        return 0.5 * x[:m + 1] @ x[:m + 1] + 0.5 * C * sw @ x[m + 1:]

    def grad(x):
        return np.r_[x[:m + 1], 0.5 * C * sw]

    cons = [{"type": "ineq", "fun": lambda x: A @ x - 1.0, "jac": lambda x: A}]
    bounds = [(None, None)] * (m + 1) + [(0, None)] * n
    res = minimize(obj, np.r_[np.zeros(m + 1), np.ones(n)], jac=grad, constraints=cons,
                   bounds=bounds, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    return res.x[:m + 1], res.fun


def test_dual_cd_squared_hinge_matches_scipy_primal():
    F, y, sw = _problem()
    res = dual_cd(F, y, C=3.0, sample_weight=sw, tol=1e-10, max_iter=5000, random_state=0)
    ref = minimize(_primal, np.zeros(5), args=(F, y, 3.0, sw, "squared_hinge"),
                   method="BFGS", options={"gtol": 1e-9})
    assert res.converged, res.message
    np.testing.assert_allclose(np.r_[res.coef, res.intercept], ref.x, atol=1e-5)
    assert res.objective == pytest.approx(ref.fun, rel=1e-9)
    assert 0.0 <= res.gap <= 1e-10 * res.objective


def test_dual_cd_hinge_matches_scipy_qp():
    F, y, sw = _problem(n=50, seed=1)
    res = dual_cd(F, y, C=2.0, loss="hinge", sample_weight=sw, tol=1e-10, max_iter=20000,
                  random_state=0)
    z_ref, p_ref = _reference_hinge(F, y, 2.0, sw)
    assert res.converged, res.message
    assert res.objective == pytest.approx(p_ref, rel=1e-7)
    np.testing.assert_allclose(np.r_[res.coef, res.intercept], z_ref, atol=1e-4)
    # Box constraints of the L1-loss dual: 0 <= alpha_i <= C s_i / 2.
    assert np.all(res.dual >= 0) and np.all(res.dual <= 0.5 * 2.0 * sw + 1e-12)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_dual_cd_gap_below_tol_and_primal_from_dual(loss):
    F, y, _ = _problem(n=120, seed=2)
    res = dual_cd(F, y, C=1.0, loss=loss, tol=1e-4, random_state=3)
    assert res.converged and res.gap <= 1e-4 * res.objective
    # The returned primal point is the one the dual vector defines.
    w = F.T @ (res.dual * y)
    np.testing.assert_allclose(res.coef, w, atol=1e-10)
    assert res.intercept == pytest.approx(np.sum(res.dual * y), abs=1e-10)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_dual_cd_warm_start_from_optimum_takes_one_pass(loss):
    F, y, sw = _problem(seed=4)
    opt = dual_cd(F, y, C=2.0, loss=loss, sample_weight=sw, tol=1e-10, max_iter=20000)
    again = dual_cd(F, y, C=2.0, loss=loss, sample_weight=sw, tol=1e-8, dual0=opt.dual)
    assert again.converged and again.n_iter == 1
    cold = dual_cd(F, y, C=2.0, loss=loss, sample_weight=sw, tol=1e-8)
    assert cold.n_iter > 1


def test_dual_cd_c_is_twice_liblinear_c():
    """LinearSVC (liblinear, penalized intercept_scaling=1 bias) with C/2 is the same problem."""
    from sklearn.svm import LinearSVC

    F, y, _ = _problem(n=150, seed=5)
    res = dual_cd(F, y, C=4.0, tol=1e-12, max_iter=10000)
    lin = LinearSVC(C=2.0, loss="squared_hinge", dual=True, tol=1e-8, max_iter=100000,
                    intercept_scaling=1.0).fit(F, y)
    np.testing.assert_allclose(res.coef, lin.coef_.ravel(), atol=1e-6)
    assert res.intercept == pytest.approx(lin.intercept_[0], abs=1e-6)


def test_dual_cd_zero_weight_equals_removed_rows_and_float32():
    F, y, _ = _problem(n=90, seed=6)
    sw = np.ones(90)
    sw[:30] = 0.0
    a = dual_cd(F, y, C=1.0, sample_weight=sw, tol=1e-10, max_iter=5000)
    b = dual_cd(F[30:], y[30:], C=1.0, tol=1e-10, max_iter=5000)
    np.testing.assert_allclose(a.coef, b.coef, atol=_gap_radius(a, b))
    assert np.all(a.dual[:30] == 0)
    c = dual_cd(F.astype(np.float32), y, C=1.0, sample_weight=sw, tol=1e-8, max_iter=5000)
    np.testing.assert_allclose(c.coef, b.coef, atol=1e-4)


def test_dual_cd_no_intercept_and_shrinking_off_agree():
    F, y, _ = _problem(n=100, seed=7)
    a = dual_cd(F, y, C=1.0, fit_intercept=False, tol=1e-10, max_iter=5000)
    b = dual_cd(F, y, C=1.0, fit_intercept=False, shrinking=False, shuffle=False, tol=1e-10,
                max_iter=5000)
    assert a.intercept == 0.0 and b.intercept == 0.0
    # Strong convexity (modulus 1): ||z - z*||^2 / 2 <= gap for each run.
    np.testing.assert_allclose(a.coef, b.coef, atol=_gap_radius(a, b))


def test_dual_cd_reads_memmap_in_place(tmp_path):
    F, y, _ = _problem(n=60, seed=8, dtype=np.float32)
    mm = np.lib.format.open_memmap(tmp_path / "F.npy", mode="w+", dtype=np.float32,
                                   shape=F.shape)
    mm[:] = F
    a = dual_cd(mm, y, C=1.0, tol=1e-8, random_state=0)
    b = dual_cd(F, y, C=1.0, tol=1e-8, random_state=0)
    np.testing.assert_array_equal(a.coef, b.coef)


def test_dual_cd_callback_interrupt_and_budget():
    F, y, _ = _problem(n=100, seed=9)
    seen = []

    def stop(info):
        seen.append(info)
        if info["n_iter"] == 2:
            raise KeyboardInterrupt

    dual0 = np.full(100, 0.01)
    with pytest.raises(KeyboardInterrupt):  # propagates: never a partial result
        dual_cd(F, y, C=1.0, tol=1e-14, dual0=dual0, callback=stop)
    assert len(seen) == 2 and np.all(dual0 == 0.01)  # the warm start is not written to
    assert {"n_iter", "objective", "gap", "grad_norm", "n_active"} <= set(seen[0])
    res = dual_cd(F, y, C=1.0, tol=1e-14, max_iter=3)
    assert res.status == "max_iter" and res.n_iter == 3 and "3 passes" in res.message


@pytest.mark.parametrize(
    "kwargs, match",
    [({"loss": "log"}, "loss must be one of"),
     ({"sample_weight": -np.ones(10)}, "sample_weight"),
     ({"dual0": np.zeros(3)}, "dual0 must have shape")],
)
def test_dual_cd_bad_input(kwargs, match):
    F, y, _ = _problem(n=10)
    with pytest.raises(ValueError, match=match):
        dual_cd(F, y, **kwargs)


def test_dual_cd_refuses_copies():
    F, y, _ = _problem(n=10)
    with pytest.raises(ValueError, match="C-contiguous"):
        dual_cd(np.asfortranarray(F), y)
    with pytest.raises(TypeError, match="float32 or float64"):
        dual_cd(F.astype(np.int64), y)
