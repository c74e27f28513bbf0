"""Low-rank LS-SVM with learnable basis functions (LR-LSSVM; Fang, Xu, Hong & Gao 2019).

The kernel is ``K(x, x') = phi(x)^T phi(x')`` for M learnable basis functions (robust RBF or
SBF, see :mod:`sparsekernel.features._learnable`), so the LS-SVM (objective in
:mod:`sparsekernel.lssvm`) is solved in closed form on the n x M design ``Phi`` (centred
(M+1) normal equations, formulas.md 1.2), alternating with gradient steps on the centres
``mu`` and shapes ``sigma`` ("two-step" algorithm, paper section III).

Criteria for the basis step (the text's formulas are lost in our copy; these are our reading
of its prose, written with yhat_i = f(x_i), weights s_i, S = sum_i s_i, summed over the
one-vs-rest problems):

- ``'abs'`` (paper eq. 23, "maximize the magnitude of model outputs"): maximise
  ``J = sum_i s_i |yhat_i| / S`` with w, b held at their closed-form values (as the paper
  states for eqs. 24-29). Non-differentiable at yhat_i = 0 (sign(0) := 0).
- ``'square'`` (eq. 31, the differentiable version): maximise
  ``J = sum_i s_i yhat_i^2 / (2 S)`` where w, b are the closed-form solution *as functions
  of Phi* (the paper's trace formulas 33-35 differentiate through it). Since yhat is then a
  shrunk projection of y, J is bounded by ||y||^2 / 2 and rewards basis functions that
  explain the targets.
- ``'target'`` ("targeted" objective, non-differentiable per the conclusions): minimise the
  absolute error to the targets, ``J = sum_i s_i |y_i - yhat_i| / S``, w, b held fixed.
  (formulas.md 1.3 guessed a squared error; the paper calls this criterion
  non-differentiable, so we take the absolute one.)
- ``'objective'`` (not one of the paper's criteria; formulas.md 1.3's "envelope" criterion):
  minimise the LR-LSSVM objective itself, ``J*(mu, sigma) = min_{w,b} 1/2 ||w||^2 +
  C/2 sum_i s_i ||y_i - f(x_i)||^2``. By the envelope theorem its gradient holds w, b at
  their optimum: ``dJ*/dPhi = -C S E W^T`` with E the residuals. It descends exactly the
  quantity the returned-iterate rule below ranks on.

Step (paper eq. 29, "constrained normalized gradient descent"): with g the gradient of the
criterion to minimise (sign flipped for the maximised ones) with respect to the centres and
the log-shapes ``log sigma`` (d/d log sigma = sigma d/d sigma; this keeps every shape
positive without projection), ``theta <- theta - eta g / ||g||``. The step ``eta`` starts at
``learning_rate``, halves whenever the criterion got worse, and grows by 10 % otherwise.
The fitted model is the iterate with the lowest LR-LSSVM objective (the problem being
solved, min over w, b, mu, sigma of the family objective).

Initialisation (section III-D): centres by k-medoids with the L1 distance on the
standardised inputs; shapes ``sigma_kj = c / mean_{i in cluster k} ||x_i - mu_k||_1`` with
c = 1 (robust RBF) or 1/2 (SBF, so a typical member is inside the support), unless
``shape_init`` is a number (the paper's "preset constant, e.g. 1"). With ``n_init > 1`` the
whole alternation is run from that many k-medoids seedings (the first one is the seeding
``n_init=1`` uses) and the run with the lowest LR-LSSVM objective is kept: the training
objective only, never held-out or test data. Dead units (max_i
phi_k(x_i) <= 1e-12, an SBF whose support holds no training point) are re-seeded at the
worst-fitted training point with their initial shape.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
from scipy.linalg import cho_solve
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..basis import resolve_n_basis
from ..basis._kmedoids import kmedoids_l1
from ..features._learnable import BASIS_FUNCTIONS, basis_gradient, basis_values
from ..solvers import lssvm_primal
from ..svm._base import _DTYPES
from ..utils import Interval, Options, validate_params
from ._base import LSSVMClassifierMixin, LSSVMRegressorMixin, dense_rows
from ._docs import OBJECTIVE

__all__ = ["CRITERIA", "LowRankLSSVC", "LowRankLSSVR", "criterion_gradient"]

CRITERIA = ("abs", "square", "target", "objective")
_DEAD = 1e-12
_KMEDOIDS_ROWS = 2000
logger = logging.getLogger("sparsekernel")


def _closed_form(Phi, Y, sw, C):
    res = lssvm_primal(Phi, Y, C, sw)
    return res.coef, res.intercept, res


def _criterion(criterion, Phi, Y, sw, C, W, b, res):
    """(J to minimise, dJ/dPhi) for the fitted (W, b); ``res`` holds the solver's factor."""
    S = sw.sum()
    Yhat = Phi @ W + b
    s = sw[:, None]
    if criterion == "abs":
        return -np.sum(s * np.abs(Yhat)) / S, -(s * np.sign(Yhat) / S) @ W.T
    if criterion == "target":
        return (np.sum(s * np.abs(Y - Yhat)) / S, (s * np.sign(Yhat - Y) / S) @ W.T)
    if criterion == "objective":
        # Envelope theorem: w, b are optimal, so only the explicit Phi-dependence counts.
        return res.objective, -C * (s * (Y - Yhat)) @ W.T
    # 'square': differentiate through the closed form (w, b)(Phi); derivation in the docs.
    info = res.history[0]
    Fc = Phi - info["fbar"]
    R = s * Yhat / S
    E = Y - Yhat
    V = cho_solve(info["factor"], Fc.T @ R, check_finite=False)
    G = (R - s * (Fc @ V)) @ W.T + (s * E) @ V.T
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
    W0, b0, res = _closed_form(Phi, Y, sample_weight, C)
    if criterion in ("square", "objective") or W is None:
        W, b = W0, b0
    J, G = _criterion(criterion, Phi, Y, sample_weight, C, W, b, res)
    return (J, *basis_gradient(X, centers, shapes, basis_function, G))


class _LowRankBase(BaseEstimator):
    _parameter_constraints = {
        "n_basis": [Options("auto"), Interval("int", 1, None, closed="left"),
                    Interval("real", 0, 1, closed="right")],
        "basis_function": [Options(*BASIS_FUNCTIONS)],
        "criterion": [Options(*CRITERIA)],
        "C": [Interval("real", 0, None, closed="neither")],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 0, None, closed="left")],
        "n_init": [Interval("int", 1, None, closed="left")],
        "shape_init": [Options("auto"), Interval("real", 0, None, closed="neither")],
        "basis": [Options("kmedoids"), "array-like"],
        "random_state": ["random_state"],
        "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
    }

    def _check_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))

    def _standardise(self, X):
        Xd = dense_rows(X)
        mean = Xd.mean(axis=0)
        scale = Xd.std(axis=0)
        scale[scale == 0] = 1.0
        return (Xd - mean) / scale, mean, scale

    def _init_bases(self, Xs, M, rng):
        if not isinstance(self.basis, str):
            mu = (np.asarray(self.basis, dtype=np.float64) - self._mean) / self._scale
            if mu.shape != (M, Xs.shape[1]):
                raise ValueError(f"basis must have shape ({M}, {Xs.shape[1]}) for n_basis={M}; "
                                 f"got {mu.shape}.")
            labels = np.abs(Xs[:, None] - mu[None]).sum(-1).argmin(1)
        else:
            rows = np.arange(Xs.shape[0])
            if len(rows) > _KMEDOIDS_ROWS:
                rows = np.sort(rng.choice(len(rows), _KMEDOIDS_ROWS, replace=False))
            med, labels = kmedoids_l1(Xs[rows], M, random_state=rng)
            mu, Xs = Xs[rows][med], Xs[rows]
        if self.shape_init != "auto":
            return mu, np.full_like(mu, float(self.shape_init))
        c = 1.0 if self.basis_function == "robust_rbf" else 0.5
        spread = np.array([np.abs(Xs[labels == k] - mu[k]).sum(1).mean()
                           if np.any(labels == k) else np.nan for k in range(M)])
        positive = spread[spread > 0]
        spread[~(spread > 0)] = np.median(positive) if positive.size else Xs.shape[1]
        return mu, np.repeat((c / spread)[:, None], Xs.shape[1], axis=1)

    def _reseed(self, Xs, Phi, mu, sigma, sigma0, residual):
        dead = np.flatnonzero(Phi.max(axis=0) <= _DEAD)
        for k in dead:
            i = int(np.argmax(residual))
            mu[k], sigma[k] = Xs[i], sigma0[k]
            residual[i] = -np.inf  # two dead units never land on one point
        self.n_reseeded_ += len(dead)
        return len(dead) > 0

    def _fit_bases(self, X, Y, sw):
        """The alternating loop; sets centers_, shapes_, coef_ (k, M), intercept_ (k,)."""
        rng = check_random_state(self.random_state)
        Xs, self._mean, self._scale = self._standardise(X)
        n = Xs.shape[0]
        if isinstance(self.n_basis, int) and self.n_basis > n:
            raise ValueError(f"n_basis={self.n_basis} exceeds the number of training samples "
                             f"(n_samples={n}).")
        M = resolve_n_basis(self.n_basis, n, max_auto=10)
        self.n_reseeded_ = 0
        best = None
        for _ in range(self.n_init):
            mu, sigma = self._init_bases(Xs, M, rng)
            history = []
            run, it = self._iterate(Xs, Y, sw, mu, sigma, rng.random_sample(n), history)
            if best is None or run[0] < best[0][0]:
                best = (run, it, history)
        (objective, mu, sigma, W, b, it_best), it, history = best
        # Back to input units: sigma |x'_j - mu'_j| with x' = (x - m) / s.
        self.centers_ = self._mean + self._scale * mu
        self.shapes_ = sigma / self._scale
        self.coef_, self.intercept_ = np.ascontiguousarray(W.T), np.atleast_1d(b)
        self.objective_, self.n_iter_, self.best_iter_ = objective, it, it_best
        self.history_ = np.array(history)

    def _iterate(self, Xs, Y, sw, mu, sigma, residual, history):
        """Alternate closed-form and basis steps; return (best iterate, iterations).

        A KeyboardInterrupt stops the loop cleanly and keeps the best iterate so far.
        """
        sigma0 = sigma.copy()
        eta, prev, best, it = self.learning_rate, np.inf, None, 0
        try:
            for it in range(self.max_iter + 1):
                Phi = basis_values(Xs, mu, sigma, self.basis_function)
                if self._reseed(Xs, Phi, mu, sigma, sigma0, residual):
                    Phi = basis_values(Xs, mu, sigma, self.basis_function)
                W, b, res = _closed_form(Phi, Y, sw, self.C)
                residual = (sw[:, None] * np.abs(Y - Phi @ W - b)).sum(1)
                J, G = _criterion(self.criterion, Phi, Y, sw, self.C, W, b, res)
                history.append((res.objective, J))
                if self.verbose:
                    logger.info("%s iteration %d: objective %.6g, criterion %.6g, step %.3g",
                                type(self).__name__, it, res.objective, J, eta)
                if best is None or res.objective < best[0]:
                    best = (res.objective, mu.copy(), sigma.copy(), W, b, it)
                eta = eta * 1.1 if J <= prev else eta * 0.5
                prev = J
                if it == self.max_iter or eta < 1e-6 * self.learning_rate:
                    break
                mu, sigma = self._basis_step(Xs, mu, sigma, G, eta)
                if mu is None:
                    break
        except KeyboardInterrupt:
            if best is None:
                raise
            warnings.warn(f"{type(self).__name__} interrupted at iteration {it}; keeping the "
                          "best iterate so far.", UserWarning, stacklevel=4)
        return best, it

    def _basis_step(self, Xs, mu, sigma, G, eta):
        """Normalized gradient step on (mu, log sigma); (None, None) at a zero gradient."""
        g_mu, g_sigma = basis_gradient(Xs, mu, sigma, self.basis_function, G)
        g_log = g_sigma * sigma
        norm = np.sqrt(np.sum(g_mu**2) + np.sum(g_log**2))
        if not norm > 0:
            return None, None
        return mu - eta * g_mu / norm, sigma * np.exp(-eta * g_log / norm)

    def transform_bases(self, X):
        """The learned features phi(x), shape (n, M)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_DTYPES, reset=False)
        return basis_values(dense_rows(X), self.centers_, self.shapes_, self.basis_function)

    def _raw_decision(self, X):
        return self.transform_bases(X) @ self.coef_.T + self.intercept_

    @property
    def n_support_(self):
        """Number of basis functions M."""
        return self.centers_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LowRankLSSVR(LSSVMRegressorMixin, _LowRankBase):
    def __init__(self, n_basis=5, basis_function="robust_rbf", criterion="square", C=1.0,
                 learning_rate=0.05, max_iter=100, n_init=1, shape_init="auto",
                 basis="kmedoids", random_state=None, verbose=0):
        self.n_basis = n_basis
        self.basis_function = basis_function
        self.criterion = criterion
        self.C = C
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.n_init = n_init
        self.shape_init = shape_init
        self.basis = basis
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit bases, weights and bias.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            CSR input is densified (the bases work on dense rows).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        X, Y, sw = self._regressor_data(X, y, sample_weight)
        self._fit_bases(X, Y, sw)
        self._as_regressor()
        return self


class LowRankLSSVC(LSSVMClassifierMixin, _LowRankBase):
    _parameter_constraints = {**_LowRankBase._parameter_constraints,
                              "class_weight": [None, Options("balanced"), "dict"]}

    def __init__(self, n_basis=5, basis_function="robust_rbf", criterion="square", C=1.0,
                 learning_rate=0.05, max_iter=100, n_init=1, shape_init="auto",
                 basis="kmedoids", class_weight=None, random_state=None, verbose=0):
        self.n_basis = n_basis
        self.basis_function = basis_function
        self.criterion = criterion
        self.C = C
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.n_init = n_init
        self.shape_init = shape_init
        self.basis = basis
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit bases, weights and bias (one-vs-rest problems share the M bases).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            CSR input is densified (the bases work on dense rows).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        X, _, Y, sw = self._classifier_data(X, y, sample_weight)
        self._fit_bases(X, Y, sw)
        return self


_PARAMS = """
    Parameters
    ----------
    n_basis : int, float or 'auto', default=5
        Number M of learnable basis functions (a fraction of n, or 'auto' = min(n, 10)).
    basis_function : {'robust_rbf', 'sbf'}, default='robust_rbf'
        exp(-z) or max(0, 1 - z) of z = sum_j sigma_kj |x_j - mu_kj|.
    criterion : {'abs', 'square', 'target', 'objective'}, default='square'
        Criterion of the basis step (module docstring of ``sparsekernel.lssvm._lowrank``):
        maximise mean |f(x_i)| (w, b fixed), maximise mean f(x_i)^2 / 2 (through the closed
        form), minimise mean |y_i - f(x_i)| (w, b fixed), or minimise the LR-LSSVM
        objective itself (not one of the paper's three).
    C : float, default=1.0
        Weight of the squared-error term (objective above).
    learning_rate : float, default=0.05
        Initial length of the normalized gradient step (standardised input units).
    max_iter : int, default=100
        Basis steps (each followed by the closed-form step).
    n_init : int, default=1
        Runs from different k-medoids seedings; the one with the lowest LR-LSSVM training
        objective is kept (``n_iter_``, ``best_iter_``, ``history_`` describe that run).
    shape_init : 'auto' or float, default='auto'
        Initial shapes: 'auto' = c / mean L1 distance of the cluster's members to its
        medoid (c = 1 robust RBF, 1/2 SBF), or one constant (standardised units).
    basis : 'kmedoids' or array-like of shape (M, n_features), default='kmedoids'
        Initial centres: L1 k-medoids of (at most 2000 rows of) the standardised data, or
        given centres in input units.{extra}
    random_state : int, RandomState or None, default=None
        Seed of the k-medoids initialisation and re-seeding.
    verbose : int, default=0
        Log every iteration (logger ``sparsekernel``, level INFO) when positive.

    Attributes
    ----------
    centers_ : ndarray of shape (M, n_features)
        Centres mu in input units.
    shapes_ : ndarray of shape (M, n_features)
        Positive shapes sigma in input units (phi uses sigma_kj |x_j - mu_kj|).
    coef_ : ndarray of shape (M,), (1, M) or (n_classes, M)
        Weights w on the basis functions.
    intercept_ : float or ndarray
        Bias b.
    objective_ : float
        LR-LSSVM objective of the returned iterate.
    n_iter_ : int
        Basis steps taken.
    best_iter_ : int
        Iteration of the returned (lowest-objective) iterate.
    history_ : ndarray of shape (n_iter_ + 1, 2)
        Objective and criterion (as minimised) at every iterate.
    n_reseeded_ : int
        Dead units re-seeded.
    n_support_ : int
        M (property).
    n_features_in_ : int
"""

LowRankLSSVR.__doc__ = (
    "Low-rank LS-SVM regression on M learnable robust RBF / simplex basis functions.\n"
    + OBJECTIVE + "    Here phi(x) = [phi_1(x) .. phi_M(x)], the learned bases.\n"
    + _PARAMS.replace("{extra}", "")
)
LowRankLSSVC.__doc__ = (
    "Low-rank LS-SVM classifier (LR-LSSVM, Fang et al. 2019) on M learnable bases.\n"
    + OBJECTIVE + "    Here phi(x) = [phi_1(x) .. phi_M(x)], the learned bases.\n"
    + _PARAMS.replace("{extra}", """
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weights of each class's samples.""")
    + """    classes_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> from sparsekernel import LowRankLSSVC
    >>> from sparsekernel.datasets import load_ripley
    >>> Xtr, ytr, Xte, yte = load_ripley()
    >>> clf = LowRankLSSVC(n_basis=4, random_state=0).fit(Xtr, ytr)
    >>> clf.centers_.shape
    (4, 2)
"""
)
