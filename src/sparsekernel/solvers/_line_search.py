"""The line searches of the Newton solvers, shared by all of them: exact on the
piecewise-quadratic losses, backtracking on the smooth ones (:func:`backtrack`).

Along a Newton direction the objective 1/2 ||z + t d||^2 + 1/2 sum_i cs_i max(0, r_i - t c_i)^2
is a piecewise quadratic in t with an increasing, piecewise linear derivative: its minimum
is found exactly, not by backtracking. The search needs of the rows only sums at trial
steps (:func:`line_terms`), so rows held in parts (a cluster's chunks) answer it with a sum
of their parts' terms and never send a row.
"""

from __future__ import annotations

import numpy as np

from ._constants import ARMIJO, MAX_HALVINGS

__all__ = ["backtrack", "exact_step", "exact_steps", "line_terms"]

#: Newton steps on the derivative before the search falls back to bisection, and the
#: bisections then taken (the bracket halves each time: to float64's resolution).
MAX_TRIES, BISECTIONS = 20, 64


def line_terms(r, c, w, T, P):
    """The rows' part of the line search at the trial steps ``T``.

    Parameters
    ----------
    r, c, w : ndarray of shape (n, k)
        Residuals at t = 0, their slopes along the direction, and ``cs * c``, for k lines.
    T, P : ndarray of shape (q, k)
        Trial steps (NaN: none, its terms 0), and for each the step whose active rows it
        is compared with (NaN: none).

    Returns
    -------
    ndarray of shape (3, q, k)
        ``sum_act w (r - t c)``, ``sum_act w c`` (act: the rows with r - t c > 0 at t in
        T) and the number of rows whose side differs at T and at P.
    """
    out = np.zeros((3,) + T.shape)
    for q, j in np.ndindex(T.shape):  # (dot products of the active rows: BLAS's sums)
        if np.isnan(T[q, j]):  # (a line already searched)
            continue
        slack = r[:, j] - T[q, j] * c[:, j]
        act = slack > 0
        wa = w[act, j]
        out[0, q, j] = wa @ slack[act]
        out[1, q, j] = wa @ c[act, j]
        if not np.isnan(P[q, j]):
            out[2, q, j] = np.count_nonzero((r[:, j] - P[q, j] * c[:, j] > 0) != act)
    return out


def exact_steps(terms, zd, dd, start=None):
    """argmin_{t >= 0} of each line's 1/2 ||z + t d||^2 + 1/2 sum cs_i max(0, r_i - t c_i)^2.

    The derivative ``zd + t dd - sum_act cs_i c_i (r_i - t c_i)`` is continuous, piecewise
    linear and increasing; its breakpoints are where rows change side. Newton's method on
    it, from the Newton step's t = 1 and kept inside the bracket of the root, lands on the
    root's segment in a few passes over the rows (when the rows active at the new t are
    those of the segment it solved, the root is exact); after MAX_TRIES of them the
    bracket is bisected. A direction that does not descend gets t = 0.

    Parameters
    ----------
    terms : callable
        ``terms(T, P)``: :func:`line_terms` of the rows (summed over their parts).
    zd, dd : ndarray of shape (k,)
        ``z . d`` and ``d . d`` of each line.
    start : ndarray of shape (3, 2, k), optional
        ``terms`` at t = 0 and t = 1, when the caller has them.

    Returns
    -------
    ndarray of shape (k,)
    """
    zd, dd = np.asarray(zd, dtype=np.float64), np.asarray(dd, dtype=np.float64)
    k = len(zd)
    if start is None:
        start = terms(np.array([np.zeros(k), np.ones(k)]), np.full((2, k), np.nan))
    A, B, _ = start
    steps = np.where(zd - A[0] >= 0, 0.0, np.nan)  # not a descent direction: stay
    t, lo, hi = np.ones(k), np.zeros(k), np.full(k, np.inf)
    a, b = zd + dd - A[1], dd + B[1]  # phi'(1) and its slope
    for tries in range(MAX_TRIES + BISECTIONS):
        steps[np.isnan(steps) & (a == 0.0)] = t[np.isnan(steps) & (a == 0.0)]
        todo = np.isnan(steps)
        if not todo.any():
            break
        lo, hi = np.where(todo & (a < 0), t, lo), np.where(todo & (a > 0), t, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_new = t - a / b  # the root of t's segment
        inside = (lo < t_new) & (t_new < hi) & (tries < MAX_TRIES)
        t_new = np.where(inside, t_new, np.where(np.isfinite(hi), 0.5 * (lo + hi), 2.0 * t))
        t_new = np.where(todo, t_new, np.nan)
        compare = np.where(inside & todo, t, np.nan)
        A, B, changed = (x[0] for x in terms(t_new[None], compare[None]))
        t_new = np.where(todo, t_new, t)
        exact = todo & inside & (changed == 0)  # the same segment: exact
        steps[exact] = t_new[exact]
        t, a, b = t_new, zd + t_new * dd - A, dd + B
    left = np.isnan(steps)
    steps[left] = 0.5 * (lo[left] + np.where(np.isfinite(hi[left]), hi[left], lo[left]))
    return steps


def exact_step(r, c, cs, zd, dd):
    """:func:`exact_steps` for one line whose rows are these arrays (shape (n,))."""
    r, c = np.asarray(r)[:, None], np.asarray(c)[:, None]
    w = cs[:, None] * c
    return float(exact_steps(lambda T, P: line_terms(r, c, w, T, P), [zd], [dd])[0])


def backtrack(value, obj, slope, first=None):
    """Armijo backtracking from the full step along descent directions of smooth losses,
    for k lines at once.

    Parameters
    ----------
    value : callable
        ``value(T)``: the objectives at steps ``T`` (shape (k,); NaN: a line not asked,
        whose value is ignored).
    obj, slope : ndarray of shape (k,)
        The objectives at t = 0 and their derivatives along the directions there.
    first : ndarray of shape (k,), optional
        ``value`` at t = 1, when the caller has it.

    Returns
    -------
    ndarray of shape (k,)
        For each line the largest t in {1, 1/2, ...} (``MAX_HALVINGS`` halvings at most)
        whose objective is at most ``obj + ARMIJO t slope``; 0 where none is (the direction
        no longer descends to rounding) or the slope is not negative.
    """
    obj, slope = np.atleast_1d(obj).astype(float), np.atleast_1d(slope).astype(float)
    t, steps = np.ones(len(obj)), np.zeros(len(obj))
    todo = slope < 0
    for halvings in range(MAX_HALVINGS + 1):
        if not todo.any():
            break
        trial = np.where(todo, t, np.nan)
        values = first if halvings == 0 and first is not None else value(trial)
        ok = todo & (values <= obj + ARMIJO * t * slope)
        steps[ok], todo = t[ok], todo & ~ok
        t = 0.5 * t
    return steps
