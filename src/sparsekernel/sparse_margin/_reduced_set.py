"""Reduced-set compression of a fitted RBF kernel SVM: RS (Burges 1996; Schoelkopf et al. 1999)
and the modified RS method MRS (Wu, Schoelkopf & Bakir 2006, section 4.1)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..kernels import Kernel, resolve_gamma
from ..utils import Interval, Options, plain
from ._base import BasisClassifierMixin, dedupe_rows
from ._basis_svm import BasisSVM, basis_cholesky
from ._slmc import INNER_MAX_ITER

__all__ = ["ReducedSetSVC", "compress_svc", "kernel_expansion", "reduced_set_rbf"]


def kernel_expansion(model, X):
    """``(V, a, b, gamma, C)`` with ``f(x) = sum_i a_i exp(-gamma ||v_i - x||^2) + b``.

    Accepts a fitted binary scikit-learn ``SVC``/``NuSVC`` with the 'rbf' kernel (``gamma``
    'scale'/'auto' is resolved on ``X``, which must then be its training data) or a fitted
    binary sparsekernel model with ``basis_``, ``coef_``, ``intercept_`` and a scalar
    ``gamma_`` on the RBF kernel. ``C`` is the model's loss weight in the SVM family's scaling
    (``2 * C`` for LIBSVM's), or None when unknown.
    """
    name = type(model).__name__
    if len(getattr(model, "classes_", ())) != 2:
        raise ValueError(f"Only binary models can be compressed; {name} has classes "
                         f"{list(getattr(model, 'classes_', []))}.")
    if getattr(model, "kernel", "rbf") not in ("rbf", "gaussian"):
        raise ValueError(f"Reduced-set compression needs the 'rbf' kernel; {name} uses "
                         f"{model.kernel!r}.")
    if hasattr(model, "dual_coef_") and hasattr(model, "support_vectors_"):
        V, a, b = model.support_vectors_, model.dual_coef_[0], model.intercept_[0]
        gamma = resolve_gamma(model.gamma, X)
        C = 2.0 * model.C if hasattr(model, "C") else None
    elif hasattr(model, "basis_") and hasattr(model, "coef_") and model.basis_ is not None:
        V, a, b = model.basis_, np.ravel(model.coef_), np.ravel(model.intercept_)[0]
        gamma, C = model.gamma_, getattr(model, "C", None)
    else:
        raise TypeError(f"Cannot read a kernel expansion from {name}: expected a fitted "
                        "SVC (support_vectors_, dual_coef_) or a sparsekernel model (basis_, "
                        "coef_).")
    if not np.isscalar(gamma):
        raise ValueError(f"{name} has per-centre widths; only a scalar gamma is supported.")
    V = V.toarray() if sp.issparse(V) else V
    a = a.toarray().ravel() if sp.issparse(a) else np.asarray(a)
    return (np.asarray(V, dtype=np.float64), a.astype(np.float64), float(b), float(gamma), C)


def _fixed_point(z, U, g, kernel, max_iter, tol):
    """Burges/Schoelkopf fixed point ``z <- sum g_l K(u_l,z) u_l / sum g_l K(u_l,z)``.

    Returns (z, iterations); z is None when the iteration left the expansion's support.
    """
    for it in range(1, max_iter + 1):
        w = g * kernel(U, z[None, :])[:, 0]
        den = w.sum()
        if not abs(den) > 1e-12 * np.abs(w).sum():
            return None, it
        z_new = (w @ U) / den
        step = np.linalg.norm(z_new - z)
        z = z_new
        if step <= tol * (1.0 + np.linalg.norm(z)):
            break
    return z, it


def reduced_set_rbf(V, a, gamma, n_basis, *, n_starts=3, max_iter=50, tol=1e-6,
                    memory_budget=None):
    """Greedy reduced-set approximation of ``w = sum_i a_i phi(v_i)`` by ``n_basis`` vectors.

    Each new z maximizes the squared projection of the residual ``w - sum_j beta_j phi(z_j)``
    on phi(z) (K(z, z) = 1 for the RBF kernel) by the classical fixed-point iteration, started
    from the ``n_starts`` support vectors with the largest residual |f|; after every new
    vector all coefficients are re-fitted to minimize ``||w - sum_j beta_j phi(z_j)||^2``
    (eq. 47: ``beta = K_z^-1 K(Z, V) a``).

    Returns
    -------
    Z : ndarray of shape (n_basis, d)
    beta : ndarray of shape (n_basis,)
    n_iter : int
        Largest number of fixed-point iterations any start needed.
    """
    kernel = Kernel("rbf", gamma=gamma, memory_budget=memory_budget)
    f_full = kernel.apply(V, V, a)  # w . phi(v_i) at every support vector
    d = V.shape[1]
    Z, beta = np.empty((0, d)), np.empty(0)
    Kvz = np.empty((len(V), 0))
    n_iter = 0
    for _ in range(n_basis):
        resid = f_full - Kvz @ beta
        U, g = np.vstack([V, Z]), np.r_[a, -beta]
        best, best_val = None, -1.0
        for i in np.argsort(-np.abs(resid))[:n_starts]:
            z, it = _fixed_point(V[i].copy(), U, g, kernel, max_iter, tol)
            n_iter = max(n_iter, it)
            if z is None or (len(Z) and gamma * np.min(((Z - z) ** 2).sum(1)) < 1e-8):
                continue  # diverged, or fell back onto a vector already in the set
            val = abs(float(g @ kernel(U, z[None, :])[:, 0]))
            if val > best_val:
                best, best_val = z, val
        if best is None:  # every start failed: take the worst-approximated vector itself
            best = V[int(np.argmax(np.abs(resid)))].copy()
            if len(Z) and gamma * np.min(((Z - best) ** 2).sum(1)) < 1e-8:
                break  # nothing new to add: the residual is numerically zero
        Z = np.vstack([Z, best])
        Kvz = np.hstack([Kvz, kernel(V, best[None, :])])
        L = basis_cholesky(kernel(Z, Z))
        beta = cho_solve((L, True), Kvz.T @ a)
    return Z, beta, n_iter


def _resolve_count(n_basis, n_sv):
    if isinstance(n_basis, numbers.Integral):
        if n_basis > n_sv:
            raise ValueError(f"n_basis={n_basis} exceeds the {n_sv} support vectors of the "
                             "model being compressed.")
        return int(n_basis)
    return max(1, math.ceil(n_basis * n_sv))


class ReducedSetSVC(BasisClassifierMixin):
    """A fitted RBF kernel SVM compressed to ``n_basis`` expansion vectors (RS or MRS).

    Prediction with a kernel SVM costs one kernel evaluation per support vector. The reduced
    set (RS) method replaces ``w = sum_i a_i phi(x_i)`` by ``sum_j beta_j phi(z_j)`` with far
    fewer vectors z_j (not training points) found greedily by the fixed-point iteration, and
    coefficients minimizing ``||w - sum_j beta_j phi(z_j)||`` (eq. 47); the SVM's bias is
    kept. The modified RS method (MRS, the default) keeps the same vectors but re-computes
    coefficients and bias by solving the SVM on them exactly (eq. 45), i.e. on the training
    data::

        min_{v, b}  1/2 ||v||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss(y_i (v . phi_z(x_i) + b))

    in the SVM family's scaling (``C = 2 * C_libsvm``; the bias is penalized as in the whole
    family). The result predicts ``f(x) = sum_j coef_j K(z_j, x) + b`` in O(m d).

    Parameters
    ----------
    svc : estimator or None, default=None
        The model to compress: a fitted binary scikit-learn ``SVC`` (rbf kernel) or a fitted
        binary sparsekernel RBF model, used as is; an unfitted one is first fitted on (X, y)
        (one clone per class, one-vs-rest, for multiclass y); None means ``SVC()``.
    n_basis : int or float, default=0.1
        Number of expansion vectors: an int, or a fraction in (0, 1] **of the number of
        support vectors** of the model being compressed.
    method : {'mrs', 'rs'}, default='mrs'
        Coefficients by the exact SVM on Z (eq. 45, needs the training data in ``fit``) or by
        the feature-space least squares fit of RS (eq. 47).
    C : float or None, default=None
        Loss weight of the MRS step; None matches the model compressed (``2 * svc.C`` for a
        scikit-learn SVC, whose objective is ``1/2||w||^2 + C_libsvm sum_i hinge_i``).
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        Loss of the MRS step (the SVC's own is 'hinge').
    max_iter : int, default=50
        Fixed-point iterations per expansion vector (per start).
    tol : float, default=1e-6
        Fixed-point stopping tolerance (relative step); the MRS step is solved to a relative
        duality gap of ``tol``.
    memory_budget : int, str or None, default=None
        Bytes for one block of kernel evaluations.
    random_state : int, RandomState or None, default=None
        Seed of the coordinate-descent order of the MRS step.

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
    coef_ : ndarray of shape (1, m) or (n_classes, m)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    gamma_ : float
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Largest number of fixed-point iterations spent on one expansion vector.
    n_support_ : int
        Support vectors of the compressed model(s) (the prediction cost before compression).
    n_features_in_ : int

    Notes
    -----
    :func:`sparsekernel.io.save` stores only sparsekernel estimators as parameters: before
    saving a model made from a scikit-learn SVC call ``set_params(svc=None)`` (prediction uses
    the fitted attributes only).

    See Also
    --------
    compress_svc : the same as a function of a fitted SVC.
    """

    _parameter_constraints = {
        "svc": [None, BaseEstimator],
        "n_basis": [Interval("int", 1, None, closed="left"),
                    Interval("real", 0, 1, closed="right")],
        "method": [Options("mrs", "rs")],
        "C": [None, Interval("real", 0, None, closed="neither")],
        "loss": [Options("hinge", "squared_hinge")],
        "max_iter": [Interval("int", 1, None, closed="left")],
        "tol": [Interval("real", 0, None, closed="neither")],
        "memory_budget": [None, Interval("real", 1, None, closed="left"), str],
        "random_state": ["random_state"],
    }

    def __init__(self, svc=None, n_basis=0.1, method="mrs", C=None, loss="hinge",
                 max_iter=50, tol=1e-6, memory_budget=None, random_state=None):
        self.svc = svc
        self.n_basis = n_basis
        self.method = method
        self.C = C
        self.loss = loss
        self.max_iter = max_iter
        self.tol = tol
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _source_models(self, X, y, targets, sw):
        """The fitted binary model per one-vs-rest target."""
        svc = SVC() if self.svc is None else self.svc
        try:
            check_is_fitted(svc)
        except NotFittedError:
            return [clone(svc).fit(X, t, sample_weight=sw) for t in targets]
        src_classes = [plain(c) for c in getattr(svc, "classes_", [])]
        if len(src_classes) != 2:
            raise ValueError(f"Only binary models can be compressed; the fitted "
                             f"{type(svc).__name__} has classes {src_classes}. Pass an "
                             "unfitted model to fit and compress it one-vs-rest.")
        if not np.array_equal(np.asarray(svc.classes_), self.classes_):
            raise ValueError(
                f"The fitted {type(svc).__name__} has classes {src_classes} but y has "
                f"{[plain(c) for c in self.classes_]}: pass the model's own training data."
            )
        return [svc]

    def fit(self, X, y, sample_weight=None):
        """Compress the model(s); X, y are the training data (MRS re-fits coefficients on it).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Used when fitting an unfitted ``svc`` and in the MRS step.

        Returns
        -------
        self
        """
        X, _, sw, targets = self._validate_fit(X, y, sample_weight)
        parts, C_src, self.n_iter_ = [], None, 0
        for model in self._source_models(X, y, targets, sw):
            V, a, b, gamma, C_src = kernel_expansion(model, X)
            m = _resolve_count(self.n_basis, len(V))
            Z, beta, it = reduced_set_rbf(V, a, gamma, m, max_iter=self.max_iter,
                                          tol=self.tol, memory_budget=self.memory_budget)
            parts.append((Z, beta, b, len(V)))
            self.n_iter_ = max(self.n_iter_, it)
        self.gamma_ = gamma
        self.n_support_ = int(sum(p[3] for p in parts))
        if self.method == "rs":
            self._set_rs(parts)
        else:
            self._set_mrs(parts, X, targets, sw, C_src)
        return self

    def _set_rs(self, parts):
        self.basis_ = np.vstack([p[0] for p in parts])
        self.coef_ = np.zeros((len(parts), len(self.basis_)))
        start = 0
        for k, (Z, beta, _, _) in enumerate(parts):
            self.coef_[k, start:start + len(Z)] = beta
            start += len(Z)
        self.intercept_ = np.array([p[2] for p in parts])

    def _set_mrs(self, parts, X, targets, sw, C_src):
        Z = dedupe_rows(np.vstack([p[0] for p in parts]), decimals=10)
        C = self.C if self.C is not None else (C_src if C_src is not None else 2.0)
        rng = check_random_state(self.random_state)
        kernel = Kernel("rbf", gamma=self.gamma_, memory_budget=self.memory_budget)
        svm = BasisSVM(kernel, X, targets, C=C, loss=self.loss, sample_weight=sw,
                       tol=self.tol, max_iter=INNER_MAX_ITER,
                       random_state=rng.randint(np.iinfo(np.int32).max))
        self.basis_ = Z
        self.coef_, self.intercept_, _ = svm.coefficients(Z)


def compress_svc(svc, X, y, n_basis=0.1, method="mrs", **params):
    """Compress a fitted RBF kernel SVM to ``n_basis`` expansion vectors; returns the model.

    "Make my 20,000-support-vector SVC predict 100x faster": the returned
    :class:`ReducedSetSVC` evaluates ``n_basis`` kernels per prediction instead of one per
    support vector.

    Parameters
    ----------
    svc : fitted binary sklearn.svm.SVC (rbf) or sparsekernel RBF model
    X, y : the model's training data (MRS re-fits the coefficients on them; ``gamma='scale'``
        is resolved on X)
    n_basis : int or float, default=0.1
        Number of expansion vectors, or a fraction of the support vectors.
    method : {'mrs', 'rs'}, default='mrs'
    **params : further :class:`ReducedSetSVC` parameters (C, loss, max_iter, tol, ...)

    Returns
    -------
    ReducedSetSVC
        Fitted.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from sparsekernel import compress_svc
    >>> X, y = make_moons(400, noise=0.2, random_state=0)
    >>> svc = SVC(C=10, gamma=2.0).fit(X, y)
    >>> small = compress_svc(svc, X, y, n_basis=10)
    >>> bool(small.basis_.shape[0] <= 10 < svc.n_support_.sum())
    True
    """
    return ReducedSetSVC(svc=svc, n_basis=n_basis, method=method, **params).fit(X, y)
