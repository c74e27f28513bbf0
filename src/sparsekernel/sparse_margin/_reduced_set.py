"""Reduced-set compression of a fitted RBF kernel SVM: RS (Burges 1996; Schoelkopf et al. 1999)
and the modified RS method MRS (Wu, Schoelkopf & Bakir 2006, section 4.1)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve

from ..compute import spd_cholesky
from ..kernels import resolve_gamma
from ._basis_svm import JITTER

__all__ = ["kernel_expansion", "reduced_set_rbf"]


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


def _best_start(V, Z, U, g, resid, kernel, n_starts, max_iter, tol):
    """The fixed point with the largest projection from the ``n_starts`` worst-fit rows of V.

    Returns (z or None, iterations); None when every start diverged or fell back onto a
    vector already in Z.
    """
    gamma, best, best_val, n_iter = float(kernel.gamma), None, -1.0, 0
    for i in np.argsort(-np.abs(resid))[:n_starts]:
        z, it = _fixed_point(V[i].copy(), U, g, kernel, max_iter, tol)
        n_iter = max(n_iter, it)
        if z is None or (len(Z) and gamma * np.min(((Z - z) ** 2).sum(1)) < 1e-8):
            continue
        val = abs(float(g @ kernel(U, z[None, :])[:, 0]))
        if val > best_val:
            best, best_val = z, val
    return best, n_iter


def reduced_set_rbf(kernel, V, a, n_basis, *, n_starts=3, max_iter=50, tol=1e-6,
                    callback=None):
    """Greedy reduced-set approximation of ``w = sum_i a_i phi(v_i)`` by ``n_basis`` vectors.

    Each new z maximizes the squared projection of the residual ``w - sum_j beta_j phi(z_j)``
    on phi(z) (K(z, z) = 1 for the RBF kernel) by the classical fixed-point iteration, started
    from the ``n_starts`` support vectors with the largest residual |f|; after every new
    vector all coefficients are re-fitted to minimize ``||w - sum_j beta_j phi(z_j)||^2``
    (eq. 47: ``beta = K_z^-1 K(Z, V) a``).

    Parameters
    ----------
    kernel : Kernel
        'rbf' with a scalar gamma.
    V : ndarray of shape (n_sv, d)
    a : ndarray of shape (n_sv,)
    n_basis : int
    n_starts, max_iter, tol
        Starts per vector, fixed-point iterations per start and their relative step tolerance.
    callback : callable, optional
        Called after each new vector with a dict (n_iter = vectors so far, objective = the
        squared residual norm, fixed_point_iter).

    Returns
    -------
    Z : ndarray of shape (m, d), m <= n_basis
        Fewer rows when the residual became numerically zero.
    beta : ndarray of shape (m,)
    n_iter : int
        Largest number of fixed-point iterations any start needed.
    """
    f_full = kernel.apply(V, V, a)  # w . phi(v_i) at every support vector
    Z, beta, Kvz = np.empty((0, V.shape[1])), np.empty(0), np.empty((len(V), 0))
    n_iter = 0
    for _ in range(n_basis):
        resid = f_full - Kvz @ beta
        U, g = np.vstack([V, Z]), np.r_[a, -beta]
        best, it = _best_start(V, Z, U, g, resid, kernel, n_starts, max_iter, tol)
        n_iter = max(n_iter, it)
        if best is None:  # every start failed: take the worst-approximated vector itself
            best = V[int(np.argmax(np.abs(resid)))].copy()
            if len(Z) and kernel.gamma * np.min(((Z - best) ** 2).sum(1)) < 1e-8:
                break  # nothing new to add: the residual is numerically zero
        Z = np.vstack([Z, best])
        Kvz = np.hstack([Kvz, kernel(V, best[None, :])])
        beta = cho_solve((spd_cholesky(kernel(Z, Z), jitter=JITTER)[0], True), Kvz.T @ a)
        if callback is not None:
            callback({"n_iter": len(Z), "objective": float(a @ f_full - beta @ (Kvz.T @ a)),
                      "fixed_point_iter": int(it)})
    return Z, beta, n_iter
