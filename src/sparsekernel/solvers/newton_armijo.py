"""Newton-Armijo for the smooth SVM family on explicit features.

Objective (one scaling for the whole SVM family; ``C`` means the same in every estimator)::

    Phi(w, b) = 1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * l(f_i, y_i),   f = F w + b

with ``l`` a smooth loss from :mod:`._losses` (squared smooth hinge for SSVM, squared smooth
epsilon-insensitive loss for SSVR) and ``s_i`` sample weights. Both ``w`` and ``b`` are
penalized, so the Hessian ``I + C/2 [F 1]^T diag(s l'') [F 1]`` is symmetric positive definite
and Cholesky always applies (Lee & Mangasarian's SSVM; formulas.md section 3).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._blocks import as_row_blocks, gram_weighted, matvec, rmatvec
from ._result import SolverResult

__all__ = ["newton_armijo"]

#: Rows whose curvature weight is below this fraction of the largest are left out of the
#: Hessian: their contribution is under double precision next to the identity term.
ACTIVE_RTOL = 1e-12
_ARMIJO_DELTA = 0.05  # sufficient-decrease constant of the SSVM paper and toolbox
_MIN_STEP = 2.0**-30


def _margins(blocks, w, b):
    f = np.empty(blocks.shape[0])
    for rows, Fb in blocks:
        f[rows] = matvec(Fb, w)
    return f + b


def _hessian_rows(q, max_rows):
    """Rows (mask) and weight scale used for the Hessian.

    Rows whose curvature is negligible are dropped. When more than ``max_rows`` remain (far
    from the solution, e.g. at w = 0 where every row violates the margin), every k-th of
    them is kept and reweighted by k: an unbiased, deterministic subsample giving an inexact
    Newton step at a fraction of the cost; the line search keeps it a descent step.
    """
    active = q > (ACTIVE_RTOL * q.max() if q.size and q.max() > 0 else 0.0)
    n_active = int(active.sum())
    if max_rows is None or n_active <= max_rows:
        return active, 1.0, n_active
    idx = np.flatnonzero(active)
    stride = -(-n_active // max_rows)
    use = np.zeros_like(active)
    use[idx[::stride]] = True
    return use, n_active / use.sum(), n_active


def _grad_hess(blocks, z, g_vec, q, max_rows):
    """Gradient of Phi (exact) and its Hessian from the rows chosen by _hessian_rows."""
    m = blocks.shape[1]
    grad = z.copy()
    H = np.zeros((m + 1, m + 1))
    use, scale, n_active = _hessian_rows(q, max_rows)
    qs = q * scale
    for rows, Fb in blocks:
        grad[:m] += rmatvec(Fb, g_vec[rows])
        act = use[rows]
        if act.any():
            Fa, qa = Fb[act], qs[rows][act]
            H[:m, :m] += gram_weighted(Fa, qa)
            H[:m, m] += rmatvec(Fa, qa)
    grad[m] += g_vec.sum()
    H[m, m] = qs[use].sum()
    H[m, :m] = H[:m, m]
    H[np.diag_indices_from(H)] += 1.0
    return grad, H, n_active


def _solve_spd(H, rhs):
    """Cholesky solve; on failure (only from rounding at extreme C) retry with jitter."""
    jitter = 0.0
    for _ in range(6):
        try:
            return cho_solve(cho_factor(H + jitter * np.eye(len(H)), lower=True), rhs)
        except LinAlgError:
            jitter = max(jitter * 100, 1e-12 * np.trace(H) / len(H))
    return np.linalg.lstsq(H, rhs, rcond=None)[0]


def _objective(z, f, y, loss, cw):
    return 0.5 * z @ z + cw @ loss.value(f, y)


def _line_search(z, d, f, u, y, loss, cw, obj, slope):
    """Armijo backtracking: largest step in {1, 1/2, ...} with sufficient decrease."""
    step = 1.0
    while step >= _MIN_STEP:
        f_new = f + step * u
        obj_new = _objective(z + step * d, f_new, y, loss, cw)
        if obj_new <= obj + _ARMIJO_DELTA * step * slope:
            return step, obj_new, f_new
        step *= 0.5
    return 0.0, obj, f


def newton_armijo(F, y, loss, C=1.0, sample_weight=None, tol=1e-6, max_iter=100, x0=None,
                  max_hessian_rows="auto", callback=None):
    """Minimise Phi(w, b) (module docstring) by Newton's method with Armijo line search.

    Parameters
    ----------
    F : ndarray, CSR matrix or row-block object of shape (n, m)
        Explicit features (the solver never sees a kernel).
    y : ndarray of shape (n,)
        Labels in {-1, +1} or real targets, as the loss expects.
    loss : object
        Provides ``value(f, y)`` and ``derivatives(f, y) -> (l, l', l'')``.
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
    max_hessian_rows : int, 'auto' or None
        Most rows used to build one Hessian (see ``_hessian_rows``): 'auto' is
        max(10000, 4 (m + 1)); None always uses every active row (exact Newton).
    callback : callable, optional
        Called after every iteration with a dict (n_iter, objective, grad_norm, step, n_active).

    Returns
    -------
    SolverResult
        ``coef`` = w, ``intercept`` = b. A KeyboardInterrupt returns the last accepted iterate
        with ``status='interrupted'`` instead of propagating.
    """
    blocks = as_row_blocks(F)
    n, m = blocks.shape
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    cw = 0.5 * C * sw
    z = np.zeros(m + 1) if x0 is None else np.array(x0, dtype=np.float64)
    f = _margins(blocks, z[:m], z[m]) if x0 is not None else np.zeros(n)
    scale = None if x0 is None else _grad_scale(blocks, y, loss, cw)
    if max_hessian_rows == "auto":
        max_hessian_rows = max(10000, 4 * (m + 1))
    history, status, n_iter, gnorm = [], "max_iter", 0, np.inf
    obj = _objective(z, f, y, loss, cw)
    try:
        for n_iter in range(1, max_iter + 1):
            _, d1, d2 = loss.derivatives(f, y)
            grad, H, n_active = _grad_hess(blocks, z, cw * d1, cw * d2, max_hessian_rows)
            gnorm = float(np.abs(grad).max())
            scale = max(1.0, gnorm) if scale is None else scale
            if gnorm <= tol * scale:
                n_iter -= 1
                status = "converged"
                break
            d = _solve_spd(H, -grad)
            u = _margins(blocks, d[:m], d[m])
            step, obj, f = _line_search(z, d, f, u, y, loss, cw, obj, grad @ d)
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
            gnorm = _grad_norm(blocks, z, cw * d1)
            status = "converged" if gnorm <= tol * scale else "max_iter"
    except KeyboardInterrupt:
        status = "interrupted"
        gnorm = _grad_norm(blocks, z, cw * loss.derivatives(f, y)[1])
    return _result(z, obj, gnorm, tol * (scale or 1.0), n_iter, status, history)


def _grad_norm(blocks, z, g_vec):
    m = blocks.shape[1]
    grad = z.copy()
    for rows, Fb in blocks:
        grad[:m] += rmatvec(Fb, g_vec[rows])
    grad[m] += g_vec.sum()
    return float(np.abs(grad).max())


def _grad_scale(blocks, y, loss, cw):
    _, d1, _ = loss.derivatives(np.zeros(len(y)), y)
    return max(1.0, _grad_norm(blocks, np.zeros(blocks.shape[1] + 1), cw * d1))


_MESSAGES = {
    "converged": "Converged: gradient norm {g:.3g} <= {t:.3g} after {k} iterations.",
    "max_iter": "Reached max_iter={k} with gradient norm {g:.3g} > {t:.3g}; "
                "increase max_iter or tol.",
    "line_search": "Line search found no decrease after {k} iterations (gradient norm "
                   "{g:.3g}, target {t:.3g}); the solution is accurate to rounding.",
    "interrupted": "Interrupted by the user after {k} iterations (gradient norm {g:.3g}).",
}


def _result(z, obj, gnorm, tol_abs, n_iter, status, history):
    msg = _MESSAGES[status].format(g=gnorm, t=tol_abs, k=n_iter)
    return SolverResult(
        coef=z[:-1].copy(), intercept=float(z[-1]), objective=float(obj), grad_norm=gnorm,
        tol_reached=tol_abs, n_iter=n_iter, converged=status == "converged", status=status,
        message=msg, history=history,
    )
