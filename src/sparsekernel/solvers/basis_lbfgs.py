"""L-BFGS over the basis points Z of a smooth function W(Z) given with its gradient.

Learned-basis methods (SLMC and sparse KFD of Wu, Schoelkopf & Bakir 2006) move the m points
Z in R^d to minimise a marginal function W(Z) given by an inner solve. scipy's L-BFGS-B on the
flattened Z, returning the best Z evaluated (a failed line search may end on a worse trial
point) as a :class:`SolverResult`; it never warns, and a KeyboardInterrupt propagates.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ._result import LIKELY_CAUSES, NonFiniteError, SolverResult

__all__ = ["basis_lbfgs"]

#: scipy L-BFGS-B ``status`` -> SolverResult status (anything else is an abnormal stop).
_STATUS = {0: "converged", 1: "max_iter", 2: "line_search"}

_MESSAGES = {
    "converged": "Converged after {k} L-BFGS iterations ({e} evaluations): W {w0:.6g} -> "
                 "{w:.6g}.",
    "max_iter": "Reached max_iter={k} L-BFGS iterations ({e} evaluations; W {w0:.6g} -> "
                "{w:.6g}); increase max_iter for a lower objective.",
    "line_search": "The L-BFGS line search failed after {k} iterations ({e} evaluations; W "
                   "{w0:.6g} -> {w:.6g}): the gradient does not match the objective to the "
                   "precision needed ({scipy}); the best Z evaluated is kept.",
}


class _Tracker:
    """scipy's objective: flattens Z, remembers the first, the last and the best evaluation."""

    def __init__(self, value_and_grad, shape):
        self.value_and_grad, self.shape = value_and_grad, shape
        self.best = (np.inf, None, np.nan)  # (W, Z, gradient inf-norm)
        self.first_W = self.first_gnorm = self.last_gnorm = np.nan
        self.last_x, self.n_eval = None, 0

    def __call__(self, z):
        Z = z.reshape(self.shape)
        W, grad = self.value_and_grad(Z)
        W, grad = float(W), np.asarray(grad, dtype=np.float64)
        gnorm = float(np.abs(grad).max()) if grad.size else 0.0
        self.n_eval += 1
        if self.n_eval == 1:
            self.first_W, self.first_gnorm = W, gnorm
        if W < self.best[0]:
            self.best = (W, Z.copy(), gnorm)
        self.last_x, self.last_gnorm = z.copy(), gnorm
        return W, grad.ravel()


def basis_lbfgs(value_and_grad, Z0, *, max_iter=100, tol=1e-4, gtol=1e-10, callback=None):
    """Minimise W over the basis points Z by L-BFGS, starting at Z0.

    Parameters
    ----------
    value_and_grad : callable
        ``value_and_grad(Z) -> (W, G)``: the objective (float) and its gradient with respect
        to Z, an array of Z's shape (m, d).
    Z0 : ndarray of shape (m, d)
        Starting points.
    max_iter : int, default=100
        L-BFGS iterations. 0 evaluates W at Z0 and returns Z0 (status 'converged': nothing
        was asked).
    tol : float, default=1e-4
        Stop when the relative decrease of W in an iteration falls below ``tol`` (scipy's
        ``ftol``).
    gtol : float, default=1e-10
        Stop when the largest gradient entry falls below ``gtol`` (absolute).
    callback : callable, optional
        Called after every iteration with a dict (n_iter, objective, grad_norm).

    Returns
    -------
    SolverResult
        ``coef`` is the best Z evaluated as an (m, d) array (not flattened), ``objective`` its
        W, ``grad_norm`` the infinity norm of its gradient, ``intercept`` 0.0. ``status`` is
        'converged' (scipy status 0), 'max_iter' (1: iterations or evaluations exhausted),
        'line_search' (2: ABNORMAL line search, usually a gradient inconsistent with W, e.g.
        from an inexact inner solve; ``converged`` is False).
        ``history[0]`` is the starting point (n_iter 0, its W), then one entry per iteration.

    Raises
    ------
    NonFiniteError
        When no evaluated W is finite (a trial point with a non-finite W is only skipped).
    """
    Z0 = np.array(Z0, dtype=np.float64)
    track, history = _Tracker(value_and_grad, Z0.shape), []

    def on_iteration(intermediate_result):
        gnorm = (track.last_gnorm if np.array_equal(track.last_x, intermediate_result.x)
                 else np.nan)
        record = {"n_iter": len(history) + 1, "objective": float(intermediate_result.fun),
                  "grad_norm": gnorm}
        history.append(record)
        if callback is not None:
            callback(record)

    status, scipy_message = "converged", ""
    if max_iter == 0:
        track(Z0.ravel())
    else:  # scipy's first evaluation is at Z0: the tracker records it as the start
        res = minimize(track, Z0.ravel(), jac=True, method="L-BFGS-B", callback=on_iteration,
                       options={"maxiter": max_iter, "ftol": tol, "gtol": gtol})
        status, scipy_message = _STATUS.get(res.status, "line_search"), str(res.message)
    history.insert(0, {"n_iter": 0, "objective": track.first_W,
                       "grad_norm": track.first_gnorm})
    W, Z, gnorm = track.best
    if Z is None:  # not one finite W: there is no point to return
        raise NonFiniteError(
            f"basis_lbfgs: the objective W is {track.first_W} at the starting points and was "
            f"never finite in {track.n_eval} evaluations. " + LIKELY_CAUSES)
    n_iter = len(history) - 1
    message = _MESSAGES[status].format(k=n_iter, e=track.n_eval, w0=track.first_W, w=W,
                                       scipy=scipy_message)
    return SolverResult(
        coef=Z, intercept=0.0, objective=float(W), grad_norm=gnorm, tol_reached=float(tol),
        n_iter=n_iter,
        converged=status == "converged", status=status, message=message, history=history,
    )
