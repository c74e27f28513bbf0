"""Selective block minimization: exact without drops, near exact in one pass with summaries."""

import numpy as np
import pytest

from sparsekernel.solvers import SelectiveBlockMinimization, dual_cd


def _problem(n=1200, m=6, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, m))
    y = np.where(np.sin(2 * F[:, 0]) + 0.5 * F[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return F, y


def _primal(W, F, y, C, loss="squared_hinge"):
    v = np.maximum(0.0, 1.0 - y * (F @ W[:-1] + W[-1]))
    return 0.5 * W @ W + 0.5 * C * np.sum(v**2 if loss == "squared_hinge" else v)


def _stream(sbm, F, y, chunk, n_passes=1):
    for _ in range(n_passes):
        for start in range(0, len(F), chunk):
            rows = slice(start, start + chunk)
            sbm.step(F[rows], y[rows, None], ids=np.arange(len(F))[rows])
    return np.r_[sbm.coef[0], sbm.intercept[0]]


@pytest.mark.parametrize("forget", ["summary", "freeze"])
def test_sbm_without_drops_is_dual_cd(forget):
    F, y = _problem(300)
    exact = dual_cd(F, y, C=2.0, tol=1e-10, max_iter=10000)
    sbm = SelectiveBlockMinimization(6, 1, 2.0, cache_size=10**6, drop_fraction=0.0,
                                     forget=forget, tol=1e-10, max_iter=10000)
    W = _stream(sbm, F, y, chunk=100)
    np.testing.assert_allclose(W, np.r_[exact.coef, exact.intercept], atol=1e-4)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_sbm_summary_one_pass_is_near_exact_and_beats_freeze(loss):
    F, y = _problem()
    exact = dual_cd(F, y, C=1.0, loss=loss, tol=1e-9, max_iter=20000)
    p_exact = _primal(np.r_[exact.coef, exact.intercept], F, y, 1.0, loss)
    got = {}
    for forget in ("summary", "freeze"):
        sbm = SelectiveBlockMinimization(6, 1, 1.0, loss, cache_size=150, forget=forget,
                                         tol=1e-6, random_state=0)
        got[forget] = _primal(_stream(sbm, F, y, chunk=200), F, y, 1.0, loss)
    assert p_exact * (1 - 1e-8) <= got["summary"] <= p_exact * (1 + 0.01)
    if loss == "squared_hinge":
        assert got["summary"] < got["freeze"]
    else:  # a dropped hinge row is at a bound of its box: summary and frozen dual agree
        assert got["summary"] == pytest.approx(got["freeze"], rel=1e-9)


@pytest.mark.parametrize("forget", ["summary", "freeze"])
def test_sbm_passes_converge_to_the_optimum(forget):
    F, y = _problem(600)
    exact = dual_cd(F, y, C=1.0, tol=1e-10, max_iter=20000)
    p_exact = _primal(np.r_[exact.coef, exact.intercept], F, y, 1.0)
    sbm = SelectiveBlockMinimization(6, 1, 1.0, cache_size=100, forget=forget, store=True,
                                     tol=1e-8, random_state=0)
    W = _stream(sbm, F, y, chunk=150, n_passes=12)
    assert _primal(W, F, y, 1.0) == pytest.approx(p_exact, rel=1e-4)


def test_sbm_rejects_unknown_forget():
    with pytest.raises(ValueError, match="forget"):
        SelectiveBlockMinimization(3, 1, 1.0, forget="drop")
