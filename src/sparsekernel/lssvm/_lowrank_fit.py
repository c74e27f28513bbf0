"""The LR-LSSVM two-step algorithm (Fang, Xu, Hong & Gao 2019, section III) on plain arrays.

With ``K(x, x') = phi(x)^T phi(x')`` for M learnable basis functions
(:mod:`sparsekernel.lssvm._learnable`), the LS-SVM (objective in
:mod:`sparsekernel.lssvm._base`) is solved in closed form on the n x M design ``Phi``
(:func:`~sparsekernel.solvers.least_squares.lssvm_normal_equations`), alternating with
gradient steps on the centres ``mu`` and shapes ``sigma``.

Criteria for the basis step (our reading of the paper's prose; yhat_i = f(x_i), weights s_i,
S = sum_i s_i, summed over the one-vs-rest problems):

- ``'abs'`` (eq. 23): maximise ``sum_i s_i |yhat_i| / S``, w, b held at their closed-form
  values.
- ``'square'`` (eq. 31): maximise ``sum_i s_i yhat_i^2 / (2 S)``, differentiating through
  the closed-form w, b as functions of Phi.
- ``'target'``: minimise ``sum_i s_i |y_i - yhat_i| / S``, w, b held fixed.
- ``'objective'`` (ours, not the paper's): minimise the LR-LSSVM objective at its optimal
  w, b; by the envelope theorem ``dJ*/dPhi = -C S E W^T`` (E the residuals).

Step (eq. 29): ``theta <- theta - eta g / ||g||`` on the centres and log-shapes (which keeps
every shape positive); ``eta`` halves whenever the criterion got worse and grows by 10 %
otherwise. The returned iterate is the one with the lowest LR-LSSVM objective.

Initialisation (section III-D): L1 k-medoids centres on a subsample; shapes
``sigma_kj = c / mean_{i in cluster k} ||x_i - mu_k||_1`` (c = 1 robust RBF, 1/2 SBF) unless
``shape_init`` is a constant. ``n_init > 1`` keeps the lowest training objective over more
seedings. Dead units (an SBF whose support holds no training point) are re-seeded at the
worst-fitted training point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from ..basis._base import subsample_rows
from ..basis._kmedoids import kmedoids_l1
from ..solvers import SolverResult
from ..solvers.least_squares import lssvm_normal_equations
from ._learnable import basis_gradient, basis_values

__all__ = ["CRITERIA", "LearnedBases", "criterion_gradient", "fit_learnable_bases"]

CRITERIA = ("abs", "square", "target", "objective")
_DEAD = 1e-12  # a unit whose largest value on the training rows is below this is dead
_KMEDOIDS_ROWS = 2000  # k-medoids is O(rows^2): seed on a subsample past this


@dataclass
class LearnedBases:
    """The learned basis functions of the returned iterate (units of the X given).

    Attributes
    ----------
    centers, shapes : ndarray of shape (M, d)
        Centres mu and positive shapes sigma.
    best_iter : int
        Iteration of the returned (lowest-objective) iterate in its run.
    n_reseeded : int
        Dead units re-seeded, over all runs.
    history : ndarray of shape (n_iter + 1, 2)
        Objective and criterion (as minimised) at every iterate of the returned run.
    """

    centers: np.ndarray
    shapes: np.ndarray
    best_iter: int
    n_reseeded: int
    history: np.ndarray


def _closed_form(Phi, Y, sw, C):
    ne = lssvm_normal_equations(Phi, Y, C, sw)
    return ne, ne.solution()


def _criterion(criterion, Phi, Y, sw, C, W, b, ne):
    """(J to minimise, dJ/dPhi) for the weights (W, b); ``ne`` are the factored equations."""
    S = sw.sum()
    Yhat = Phi @ W + b
    s = sw[:, None]
    if criterion == "abs":
        return -np.sum(s * np.abs(Yhat)) / S, -(s * np.sign(Yhat) / S) @ W.T
    if criterion == "target":
        return np.sum(s * np.abs(Y - Yhat)) / S, (s * np.sign(Yhat - Y) / S) @ W.T
    if criterion == "objective":
        # Envelope theorem: w, b are optimal, so only the explicit Phi-dependence counts.
        return ne.solution().objective, -C * (s * (Y - Yhat)) @ W.T
    # 'square': differentiate through the closed form (w, b)(Phi) with the same factor.
    Fc = Phi - ne.fbar
    R = s * Yhat / S
    V = ne.solve(Fc.T @ R)
    G = (R - s * (Fc @ V)) @ W.T + (s * (Y - Yhat)) @ V.T
    G -= s * G.sum(axis=0) / S
    return -0.5 * np.sum(s * Yhat**2) / S, -G


def criterion_gradient(X, Y, sample_weight, centers, shapes, basis_function, criterion, C,
                       W=None, b=None):
    """Criterion (as minimised) and its gradient with respect to centres and shapes.

    For ``'abs'`` and ``'target'`` the weights ``W`` (M x k) and bias ``b`` (k,) are held
    fixed (closed-form values at these bases when not given); for ``'square'`` and
    ``'objective'`` they are always the closed-form solution (for ``'square'`` the gradient
    includes its dependence on the bases; for ``'objective'`` that dependence vanishes).

    Returns
    -------
    J : float
    g_centers, g_shapes : ndarray of shape (M, d)
    """
    Phi = basis_values(X, centers, shapes, basis_function)
    ne, res = _closed_form(Phi, Y, sample_weight, C)
    if criterion in ("square", "objective") or W is None:
        W, b = res.coef, res.intercept
    J, G = _criterion(criterion, Phi, Y, sample_weight, C, W, b, ne)
    return (J, *basis_gradient(X, centers, shapes, basis_function, G))


def initial_bases(X, M, basis_function, shape_init="auto", centers=None, random_state=None):
    """Centres (L1 k-medoids, or ``centers``) and shapes (module docstring) of M units."""
    rng = check_random_state(random_state)
    if centers is not None:
        mu = np.asarray(centers, dtype=np.float64)
        if mu.shape != (M, X.shape[1]):
            raise ValueError(f"basis must have shape ({M}, {X.shape[1]}) for n_basis={M}; "
                             f"got {mu.shape}.")
        labels = np.abs(X[:, None] - mu[None]).sum(-1).argmin(1)
    else:
        rows = subsample_rows(X.shape[0], _KMEDOIDS_ROWS, rng)
        med, labels = kmedoids_l1(X[rows], M, random_state=rng)
        mu, X = X[rows][med], X[rows]
    if shape_init != "auto":
        return mu, np.full_like(mu, float(shape_init))
    c = 1.0 if basis_function == "robust_rbf" else 0.5
    spread = np.array([np.abs(X[labels == k] - mu[k]).sum(1).mean()
                       if np.any(labels == k) else np.nan for k in range(M)])
    positive = spread[spread > 0]
    spread[~(spread > 0)] = np.median(positive) if positive.size else X.shape[1]
    return mu, np.repeat((c / spread)[:, None], X.shape[1], axis=1)


@dataclass
class _Run:
    """One alternation from one seeding: its best iterate and how it ended."""

    objective: float = np.inf
    mu: np.ndarray = None
    sigma: np.ndarray = None
    W: np.ndarray = None
    b: np.ndarray = None
    best_iter: int = 0
    n_iter: int = 0
    status: str = "max_iter"
    message: str = ""
    n_reseeded: int = 0
    history: list = None


class _TwoStep:
    """The alternation on fixed data: closed-form (w, b), then a basis step, repeated."""

    def __init__(self, X, Y, sw, basis_function, criterion, C, learning_rate, max_iter,
                 callback):
        self.X, self.Y, self.sw = X, Y, sw
        self.kind, self.criterion, self.C = basis_function, criterion, C
        self.learning_rate, self.max_iter, self.callback = learning_rate, max_iter, callback

    def run(self, mu, sigma, residual):
        """Alternate from (mu, sigma); returns the run with its best iterate."""
        run = _Run(history=[])
        sigma0, eta, prev = sigma.copy(), self.learning_rate, np.inf
        for it in range(self.max_iter + 1):
            run.n_iter = it
            J, G, residual = self._evaluate(run, it, mu, sigma, sigma0, residual, eta)
            eta, prev = (eta * 1.1 if J <= prev else eta * 0.5), J
            if self._stopped(run, it, eta):
                break
            mu, sigma = self._basis_step(mu, sigma, G, eta)
            if mu is None:
                run.status, run.message = "converged", "zero gradient of the criterion"
                break
        return run

    def _evaluate(self, run, it, mu, sigma, sigma0, residual, eta):
        """Closed-form step at (mu, sigma) (after re-seeding dead units); record the iterate."""
        Phi = basis_values(self.X, mu, sigma, self.kind)
        if self._reseed(run, Phi, mu, sigma, sigma0, residual):
            Phi = basis_values(self.X, mu, sigma, self.kind)
        ne, res = _closed_form(Phi, self.Y, self.sw, self.C)
        W, b = res.coef, res.intercept
        residual = (self.sw[:, None] * np.abs(self.Y - Phi @ W - b)).sum(1)
        J, G = _criterion(self.criterion, Phi, self.Y, self.sw, self.C, W, b, ne)
        run.history.append((res.objective, J))
        if self.callback is not None:
            self.callback({"n_iter": it, "objective": float(res.objective),
                           "criterion": float(J), "step": float(eta)})
        if res.objective < run.objective:
            run.objective, run.mu, run.sigma, run.W, run.b = (res.objective, mu.copy(),
                                                              sigma.copy(), W, b)
            run.best_iter = it
        return J, G, residual

    def _stopped(self, run, it, eta):
        if it == self.max_iter:
            run.status, run.message = "max_iter", f"took the max_iter={it} basis steps."
            return True
        if eta < 1e-6 * self.learning_rate:
            run.status, run.message = "converged", "the step fell below 1e-6 learning_rate."
            return True
        return False

    def _reseed(self, run, Phi, mu, sigma, sigma0, residual):
        dead = np.flatnonzero(Phi.max(axis=0) <= _DEAD)
        for k in dead:
            i = int(np.argmax(residual))
            mu[k], sigma[k] = self.X[i], sigma0[k]
            residual[i] = -np.inf  # two dead units never land on one point
        run.n_reseeded += len(dead)
        return len(dead) > 0

    def _basis_step(self, mu, sigma, G, eta):
        """Normalized gradient step on (mu, log sigma); (None, None) at a zero gradient."""
        g_mu, g_sigma = basis_gradient(self.X, mu, sigma, self.kind, G)
        g_log = g_sigma * sigma
        norm = np.sqrt(np.sum(g_mu**2) + np.sum(g_log**2))
        if not norm > 0:
            return None, None
        return mu - eta * g_mu / norm, sigma * np.exp(-eta * g_log / norm)


def fit_learnable_bases(X, Y, sample_weight, *, n_basis, basis_function="robust_rbf",
                        criterion="square", C=1.0, learning_rate=0.05, max_iter=100, n_init=1,
                        shape_init="auto", centers=None, random_state=None, callback=None):
    """Learn M basis functions and the LS-SVM weights on them (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Dense inputs (standardised by the caller: steps and shapes are in these units).
    Y : ndarray of shape (n, k)
        Target columns (one-vs-rest problems share the bases).
    sample_weight : ndarray of shape (n,)
        Non-negative weights ``s_i``.
    n_basis : int
        Number M of basis functions.
    basis_function, criterion, C, learning_rate, max_iter, n_init, shape_init
        As the estimators' parameters (:class:`sparsekernel.LowRankLSSVR`).
    centers : ndarray of shape (M, d), optional
        Initial centres (in the units of X) instead of k-medoids.
    random_state : int, RandomState or None
        Seed of the k-medoids initialisation and re-seeding.
    callback : callable, optional
        Called with a dict (``n_iter``, ``objective``, ``criterion``, ``step``) per iterate.

    Returns
    -------
    result : SolverResult
        ``coef`` = W (M, k), ``intercept`` = b (k,), ``objective`` of the returned iterate;
        ``converged`` is True: the algorithm runs a fixed budget of ``max_iter`` basis steps
        and returns its best iterate (``status`` says why it stopped). A KeyboardInterrupt
        propagates. ``history`` holds one dict per iterate of the returned run.
    bases : LearnedBases
    """
    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=np.float64)
    two_step = _TwoStep(X, Y, sample_weight, basis_function, criterion, C, learning_rate,
                        max_iter, callback)
    best, n_reseeded = None, 0
    for _ in range(n_init):
        mu, sigma = initial_bases(X, n_basis, basis_function, shape_init, centers, rng)
        run = two_step.run(mu, sigma, rng.random_sample(X.shape[0]))
        n_reseeded += run.n_reseeded
        if best is None or run.objective < best.objective:
            best = run
    result = SolverResult(
        coef=best.W, intercept=best.b, objective=float(best.objective), grad_norm=float("nan"),
        tol_reached=float("nan"), n_iter=best.n_iter, converged=True,
        status=best.status, message=f"LR-LSSVM {best.message} Returned iterate "
        f"{best.best_iter} (lowest objective).",
        history=[{"objective": o, "criterion": j} for o, j in best.history])
    return result, LearnedBases(best.mu, best.sigma, best.best_iter, n_reseeded,
                                np.array(best.history))
