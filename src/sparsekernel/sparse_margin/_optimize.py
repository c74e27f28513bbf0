"""L-BFGS over the expansion vectors Z of a marginal function W(Z) (value and gradient)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from ..utils import SolverProgress

__all__ = ["minimize_over_basis"]


class _Tracker:
    """Wraps value_and_grad for scipy: flattens Z and remembers the best point seen."""

    def __init__(self, value_and_grad, shape):
        self.value_and_grad, self.shape = value_and_grad, shape
        self.best_W, self.best_Z, self.first_W, self.n_eval = np.inf, None, None, 0

    def __call__(self, z):
        Z = z.reshape(self.shape)
        W, grad = self.value_and_grad(Z)
        self.n_eval += 1
        if self.first_W is None:
            self.first_W = W
        if W < self.best_W:
            self.best_W, self.best_Z = W, Z.copy()
        return W, grad.ravel()


def minimize_over_basis(value_and_grad, Z0, *, max_iter, tol, verbose, name):
    """Minimise W over Z by L-BFGS (scipy), starting at Z0.

    Returns ``(Z, info)``: the best Z evaluated (L-BFGS may end on a worse trial point after a
    failed line search) and a dict with ``n_iter``, ``W_init``, ``W`` and ``status``.
    A KeyboardInterrupt stops the search and keeps the best Z so far (with a warning).
    """
    track = _Tracker(value_and_grad, Z0.shape)
    status, n_iter = "max_iter", 0
    with SolverProgress(verbose, 1, name) as progress:
        report = progress.callback(None)
        state = {"it": 0}

        def callback(xk):
            state["it"] += 1
            if report is not None:
                report({"n_iter": state["it"], "objective": track.best_W,
                        "grad_norm": np.nan})

        try:
            if max_iter == 0:
                track(Z0.ravel())
                status = "converged"
            else:
                res = minimize(track, Z0.ravel(), jac=True, method="L-BFGS-B",
                               callback=callback,
                               options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-10})
                n_iter = int(res.nit)
                status = "max_iter" if res.status == 1 else "converged"
        except KeyboardInterrupt:
            status, n_iter = "interrupted", state["it"]
            warnings.warn(f"{name} fit interrupted after {n_iter} L-BFGS iterations; keeping "
                          "the best expansion vectors found so far.", UserWarning, stacklevel=3)
        progress.done()
    if track.best_Z is None:  # interrupted before the first evaluation finished
        track.best_Z = Z0
    if status == "max_iter":
        warnings.warn(f"{name}: L-BFGS over the expansion vectors stopped at max_iter="
                      f"{max_iter} iterations (W {track.first_W:.6g} -> {track.best_W:.6g}); "
                      "increase max_iter for a lower objective.", ConvergenceWarning,
                      stacklevel=3)
    return track.best_Z, {"n_iter": n_iter, "W_init": track.first_W, "W": track.best_W,
                          "status": status, "n_eval": track.n_eval}
