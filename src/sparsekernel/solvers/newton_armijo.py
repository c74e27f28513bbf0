"""Newton's method for the smooth SVM family on explicit features, one problem at a time.

Objective (the SVM family's, :mod:`sparsekernel.svm._base`; ``C`` means the same everywhere)::

    Phi(w, b) = 1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * l(f_i, y_i),   f = F w + b

with ``l`` a smooth loss from :mod:`._losses` (squared smooth hinge for SSVM, squared smooth
epsilon-insensitive loss for SSVR) and ``s_i`` sample weights. Both ``w`` and ``b`` are
penalized, so the Hessian ``I + C/2 [F 1]^T diag(s l'') [F 1]`` is symmetric positive definite
and Cholesky always applies (Lee & Mangasarian 2001, SSVM, eqs. 7-9 and the Newton-Armijo
algorithm 3.1; Lee, Hsieh & Huang 2005 for epsilon-SSVR).

The rows come from a provider (:mod:`._rows`: in memory, streamed or recomputed), the Newton
system is kept up to date by :class:`._hessian.NewtonSystem`, its Gram sums added in the
gradient's pass over the rows. The step is Armijo backtracking on a smooth loss and exact on
the exact, piecewise-quadratic ones (``smoothing=inf``; the line search of newton_ovr and
newton_kernel, :mod:`._line_search`).
"""

from __future__ import annotations

import numpy as np

from ..compute import spd_solve
from ._constants import GATHER_BYTES
from ._hessian import NewtonSystem
from ._line_search import backtrack, exact_step
from ._result import SolverResult, check_finite
from ._rows import as_rows

__all__ = ["newton_armijo", "newton_armijo_bytes"]


def _margins(rows, z):
    """f = F w + b for z = [w; b]."""
    return rows.margins(z[:-1, None])[:, 0] + z[-1]


def _gradient(rows, z, g_vec, grams=()):
    """Exact gradient of Phi; the Gram sums ``grams`` are added in the same pass."""
    return z + rows.gradient(g_vec[:, None], grams)[:, 0]


def _presolve(rows, y, loss, C, sw, n_rows, gather_bytes):
    """A warm start from every k-th row, with C scaled by k so both objectives match.

    From w = 0 every row violates the margin, so the first Newton steps on all n rows cost
    n m^2 each; on the subsample they are cheap and land close to the full solution.
    """
    stride = -(-rows.shape[0] // n_rows)
    sub_rows = rows.every(stride)
    sub = newton_armijo(sub_rows, y[::stride], loss, C=C * stride, sample_weight=sw[::stride],
                        tol=1e-4, max_iter=50, presolve_rows=None, gather_bytes=gather_bytes)
    if hasattr(sub_rows, "close"):
        sub_rows.close()
    return np.r_[sub.coef, sub.intercept], sub.n_iter


def _objective(z, f, y, loss, cw):
    return 0.5 * z @ z + cw @ loss.value(f, y)


def _line_search(z, d, f, u, y, loss, cw, obj, slope, hinges=None):
    """The step along d and the objective and margins there: exact on a piecewise-quadratic
    loss (``hinges``, :func:`~sparsekernel.solvers._losses.hinge_terms`), else Armijo
    backtracking (:func:`~sparsekernel.solvers._line_search.backtrack`)."""
    if hinges is not None:
        row, sign, target = hinges
        step = exact_step(sign * (target - f[row]), sign * u[row], 2.0 * cw[row], z @ d,
                          d @ d)
        if step == 0.0:
            return 0.0, obj, f
        f_new = f + step * u
        return step, _objective(z + step * d, f_new, y, loss, cw), f_new
    def value(t):
        f_new = f + t * u
        return _objective(z + t * d, f_new, y, loss, cw), f_new

    found = backtrack(value, obj, slope)
    return (0.0, obj, f) if found is None else found


def newton_armijo(F, y, loss, C=1.0, sample_weight=None, tol=1e-6, max_iter=100, x0=None,
                  presolve_rows="auto", gather_bytes=GATHER_BYTES, callback=None):
    """Minimise Phi(w, b) (module docstring) by Newton's method with Armijo line search.

    Parameters
    ----------
    F : ndarray, CSR matrix, row-block object or row provider of shape (n, m)
        Explicit features (the solver never sees a kernel), through their row provider
        (:func:`~sparsekernel.solvers._rows.as_rows`).
    y : ndarray of shape (n,)
        Labels in {-1, +1} or real targets, as the loss expects.
    loss : object
        Provides ``value(f, y)`` and ``derivatives(f, y) -> (l, l', l'')``; a piecewise-
        quadratic loss also ``hinges(y)`` (:mod:`._losses`), which takes the exact step.
    C : float
        Loss weight (see the objective).
    sample_weight : ndarray of shape (n,), optional
        Non-negative per-sample weights s_i.
    tol : float
        Stop when ``||grad||_inf <= tol * max(1, ||grad(0)||_inf)``: the gradient relative to
        its size at w = 0, b = 0, so the criterion does not depend on n or C.
    max_iter : int
        Maximum Newton iterations.
    x0 : ndarray of shape (m + 1,), optional
        Warm start ``[w; b]``; zeros by default.
    presolve_rows : int, 'auto' or None
        Without ``x0``, first solve (loosely) on about this many evenly spaced rows and start
        from that solution. 'auto' is max(10000, 20 (m + 1)), used when n is more than twice
        that; None never presolves. (With fewer rows per
        basis function the subsample solution overfits and is a poor start.)
    gather_bytes : int or float
        Size of each buffer of gathered rows of the Newton system (one per thread summing
        it); see :func:`newton_armijo_bytes`.
    callback : callable, optional
        Called after every iteration with a dict (n_iter, objective, grad_norm, step, n_active).

    Returns
    -------
    SolverResult
        ``coef`` = w, ``intercept`` = b. A KeyboardInterrupt propagates.
    """
    rows = as_rows(F, gather_bytes=gather_bytes)
    n, m = rows.shape
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    cw = 0.5 * C * sw
    z = np.zeros(m + 1) if x0 is None else np.array(x0, dtype=np.float64)
    if presolve_rows == "auto":
        presolve_rows = max(10000, 20 * (m + 1))
    n_pre = 0
    if x0 is None and presolve_rows and n > 2 * presolve_rows:
        x0, n_pre = _presolve(rows, y, loss, C, sw, presolve_rows, gather_bytes)
        z = x0.copy()
    f = _margins(rows, z) if x0 is not None else np.zeros(n)
    scale = None  # max(1, ||grad(0)||_inf): taken at the first iterate when it is w = 0, b = 0
    if x0 is not None:
        g0 = cw * loss.derivatives(np.zeros(n), y)[1]
        scale = max(1.0, _grad_norm(rows, np.zeros(m + 1), g0))
    system = NewtonSystem(m)
    hinges = loss.hinges(y) if hasattr(loss, "hinges") else None
    history, status, n_iter, gnorm = [], "max_iter", 0, np.inf
    obj = _objective(z, f, y, loss, cw)
    for n_iter in range(1, max_iter + 1):
        _, d1, d2 = loss.derivatives(f, y)
        grams, n_active = system.begin(cw * d2)
        grad = _gradient(rows, z, cw * d1, grams)
        H = system.finish()
        gnorm = float(np.abs(grad).max())
        check_finite("newton_armijo", n_iter, objective=obj, gradient_norm=gnorm)
        scale = max(1.0, gnorm) if scale is None else scale
        if gnorm <= tol * scale:
            n_iter -= 1
            status = "converged"
            break
        d = spd_solve(H, -grad)[0]
        u = _margins(rows, d)
        step, obj, f = _line_search(z, d, f, u, y, loss, cw, obj, grad @ d, hinges)
        if step == 0.0:
            status = "line_search"
            break
        z += step * d
        record = dict(n_iter=n_iter, objective=obj, grad_norm=gnorm, step=step,
                      n_active=n_active)
        history.append(record)
        if callback is not None:
            callback(record)
    else:
        _, d1, _ = loss.derivatives(f, y)
        gnorm = _grad_norm(rows, z, cw * d1)
        status = "converged" if gnorm <= tol * scale else "max_iter"
    return _result(z, obj, gnorm, tol * (scale or 1.0), n_iter, status, history, n_pre)


def _grad_norm(rows, z, g_vec):
    return float(np.abs(_gradient(rows, z, g_vec)).max())


_MESSAGES = {
    "converged": "Converged: gradient norm {g:.3g} <= {t:.3g} after {k} iterations.",
    "max_iter": "Reached max_iter={k} with gradient norm {g:.3g} > {t:.3g}; "
                "increase max_iter or tol.",
    "line_search": "Line search found no decrease after {k} iterations (gradient norm "
                   "{g:.3g}, target {t:.3g}); the solution is accurate to rounding.",
}


def _result(z, obj, gnorm, tol_abs, n_iter, status, history, n_presolve):
    msg = _MESSAGES[status].format(g=gnorm, t=tol_abs, k=n_iter)
    if n_presolve:
        msg += f" Warm-started by {n_presolve} iterations on a row subsample."
    return SolverResult(
        coef=z[:-1].copy(), intercept=float(z[-1]), objective=float(obj), grad_norm=gnorm,
        tol_reached=tol_abs, n_iter=n_iter, converged=status == "converged", status=status,
        message=msg, history=history,
    )


def newton_armijo_bytes(n, m, gather_bytes=GATHER_BYTES, presolve_rows=None, n_threads=1):
    """Peak working memory of :func:`newton_armijo` besides F, in bytes (an upper estimate).

    About ten float64 n-vectors (margins, derivatives, direction products, line-search
    trials), per thread summing the Newton system one gather buffer and one (m+1)^2 square
    (:class:`~sparsekernel.solvers._rows.ArrayRows`), four more squares (the system, the one
    being assembled, the Cholesky factor and a product temporary) and, with a presolve, its
    rows of F with their own solver.
    """
    square = 8.0 * (m + 1) ** 2
    presolve = 2 * 8.0 * presolve_rows * (m + 1) if presolve_rows else 0.0
    return 8.0 * 10 * n + n_threads * (gather_bytes + square) + 4 * square + presolve
