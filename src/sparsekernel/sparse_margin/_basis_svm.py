"""The SVM on a fixed set of expansion vectors Z (Wu, Schoelkopf & Bakir 2006, eqs. 28-46).

For fixed Z the family objective (:mod:`sparsekernel.sparse_margin._base`) is a *linear* SVM
on the whitened map phi_z (K_z gets a jitter; its kernel is that of the projection onto
span{phi(z_j)}, eq. 40), solved exactly by dual coordinate descent
(:func:`sparsekernel.solvers.dual_cd`), warm-started from the previous dual vector. With
``c = alpha * y``, ``beta = K_z^-1 Psi c = L^-T v`` (eq. 45) and the optimal value W(Z) has
the gradient (eq. 46)
``dW/dz_u = -beta_u sum_i c_i dK(z_u, x_i)/dz_u + beta_u sum_j beta_j dK(z_u, z_j)/dz_u``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

from ..compute import spd_cholesky
from ..solvers import dual_cd

__all__ = ["BasisSVM", "rbf_basis_gradient", "whitened_features"]

#: Relative diagonal jitter always added to K_z: coinciding vectors make it singular.
JITTER = 1e-10
#: dual_cd passes allowed per evaluation of W(Z) (warm starts usually need a few).
INNER_MAX_ITER = 1000


class BasisFeatures(NamedTuple):
    """What one Z gives every problem: K_z, its Cholesky factor, Psi = K(X, Z), phi_z(X)."""

    Kz: np.ndarray
    L: np.ndarray
    Psi: np.ndarray
    F: np.ndarray


def whitened_features(Psi, L):
    """phi_z(X) = Psi L^-T as a C-contiguous (n, m) float64 array."""
    F = solve_triangular(L, np.asarray(Psi, dtype=np.float64).T, lower=True, check_finite=False)
    return np.ascontiguousarray(F.T)


def rbf_basis_gradient(Z, X, Psi, gx, beta, Kz, zz_weight, gamma):
    """Gradient rows ``G[u] = beta_u sum_i gx_i dK(z_u, x_i)/dz_u``
    ``+ zz_weight beta_u sum_j beta_j dK(z_u, z_j)/dz_u``.

    For ``K(a, b) = exp(-g ||a - b||^2)``, ``dK(z, x)/dz = -2 g (z - x) K(z, x)``, so both sums
    are BLAS products of the already computed ``Psi = K(X, Z)`` (n, m) and ``Kz = K(Z, Z)``
    (m, m, without jitter) (Wu, Schoelkopf & Bakir 2006, eq. 46): ``-2 g beta_u [(Psi^T gx)_u z_u -
    (Psi^T diag(gx) X)_u]`` plus the same with (K_z, beta, Z) for (Psi, gx, X). ``gx`` weighs
    the training points (``-c`` for the SVM) and ``zz_weight`` the K_z term (1 for the SVM);
    Z is (m, d), X (n, d) dense or CSR, beta (m,).
    """
    P = Psi * gx[:, None]
    PX = np.asarray(X.T @ P).T if sp.issparse(X) else P.T @ X
    grad = P.sum(axis=0)[:, None] * Z - PX
    if zz_weight:
        Kb = Kz * beta[None, :]
        grad += zz_weight * (Kb.sum(axis=1)[:, None] * Z - Kb @ Z)
    return -2.0 * gamma * beta[:, None] * grad


class BasisSVM:
    """Linear SVMs on phi_z(X) for a sequence of Z, one per one-vs-rest target, warm-started.

    Parameters
    ----------
    kernel : sparsekernel.kernels.Kernel
        An 'rbf' kernel with a scalar gamma (the gradient is RBF-only).
    X : ndarray or CSR matrix of shape (n, d)
    Y : ndarray of shape (n, k)
        +-1 labels, one column per binary problem; W is summed over the problems.
    C, loss, sample_weight, tol, max_iter, random_state
        Passed to :func:`sparsekernel.solvers.dual_cd` (SVM-family scaling of ``C``).
    """

    def __init__(self, kernel, X, Y, *, C, loss, sample_weight, tol, max_iter=INNER_MAX_ITER,
                 random_state=None):
        self.kernel, self.X, self.Y = kernel, X, np.asarray(Y, dtype=np.float64)
        self.solver_args = {"C": C, "loss": loss, "sample_weight": sample_weight, "tol": tol,
                            "max_iter": max_iter, "random_state": random_state}
        self.duals = [None] * self.Y.shape[1]

    def features(self, Z):
        """K_z, its jittered Cholesky factor, Psi = K(X, Z) and phi_z(X) for Z."""
        Kz = np.asarray(self.kernel(Z, Z), dtype=np.float64)
        L = spd_cholesky(Kz, jitter=JITTER)[0]
        Psi = np.asarray(self.kernel(self.X, Z), dtype=np.float64)
        return BasisFeatures(Kz, L, Psi, whitened_features(Psi, L))

    def solve_one(self, k, feats, max_iter=None, callback=None):
        """Solve problem ``k`` on ``feats`` (warm-started); returns dual_cd's SolverResult."""
        args = dict(self.solver_args, callback=callback)
        if max_iter is not None:
            args["max_iter"] = max_iter
        res = dual_cd(feats.F, self.Y[:, k], dual0=self.duals[k], **args)
        self.duals[k] = res.dual
        return res

    @staticmethod
    def expansion(feats, res):
        """Expansion coefficients beta = L^-T v (eq. 45) of a solved problem."""
        return solve_triangular(feats.L.T, res.coef, lower=False, check_finite=False)

    def solve(self, Z):
        """Every problem on Z: ``(W, feats, results)`` with W the summed optimal objective."""
        feats = self.features(Z)
        results = [self.solve_one(k, feats) for k in range(self.Y.shape[1])]
        return float(sum(r.objective for r in results)), feats, results

    def value_and_grad(self, Z):
        """W(Z) summed over the problems and its gradient (eq. 46), shape (m, d)."""
        W, feats, results = self.solve(Z)
        grad = np.zeros_like(Z)
        gamma = float(self.kernel.gamma)
        for k, res in enumerate(results):
            grad += rbf_basis_gradient(Z, self.X, feats.Psi, -res.dual * self.Y[:, k],
                                       self.expansion(feats, res), feats.Kz, 1.0, gamma)
        return W, grad
