"""The one result type every solver returns, and the one error a solver raises on NaN/inf."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..compute import LIKELY_CAUSES, NonFiniteError

__all__ = ["NonFiniteError", "SolverResult", "check_finite"]


def check_finite(solver, n_iter, **scalars):
    """Raise :class:`NonFiniteError` when one of the named scalars is NaN or infinite.

    Solvers call it once per iteration on scalars (objective, gradient norm), never on
    arrays, so the check costs nothing next to the iteration itself.
    """
    for name, value in scalars.items():
        if not np.isfinite(value):
            raise NonFiniteError(
                f"{solver}: the {name.replace('_', ' ')} is {float(value)} at iteration {n_iter}. "
                + LIKELY_CAUSES)


@dataclass
class SolverResult:
    """Outcome of a solver run; the same fields for every solver.

    Attributes
    ----------
    coef : ndarray of shape (m,)
        Weights on the m features.
    intercept : float
        Bias term.
    objective : float
        Objective value at the returned point.
    grad_norm : float
        Infinity norm of the gradient at the returned point (nan where not applicable).
    tol_reached : float
        The threshold the gradient norm was compared with (tol times the problem's scale).
    n_iter : int
        Outer iterations performed.
    converged : bool
        Whether the stopping criterion was met.
    status : {'converged', 'max_iter', 'line_search', 'time_limit'}
        Why the solver stopped (a KeyboardInterrupt is never caught: it propagates).
    message : str
        A human-readable account of ``status`` with the numbers involved.
    history : list of dict
        Per-iteration record (objective, gradient norm, step length, active rows).
    dual : ndarray of shape (n,) or None
        Dual variables, for solvers that have them (``dual_cd``); pass back as a warm start.
    gap : float
        Duality gap P - D at the returned point (nan for primal-only solvers).
    """

    coef: np.ndarray
    intercept: float
    objective: float
    grad_norm: float
    tol_reached: float
    n_iter: int
    converged: bool
    status: str
    message: str
    history: list = field(default_factory=list)
    dual: np.ndarray | None = None
    gap: float = float("nan")
