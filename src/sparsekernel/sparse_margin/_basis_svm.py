"""The SVM on a fixed set of expansion vectors Z (Wu, Schoelkopf & Bakir 2006, eqs. 28-46).

For fixed Z the SVM restricted to ``w = sum_j beta_j phi(z_j)`` is a *linear* SVM on the
whitened empirical kernel map ``phi_z(x) = L^-1 psi_z(x)``, ``K_z + jitter I = L L^T``
(Cholesky), ``psi_z(x) = [K(z_1, x) .. K(z_m, x)]``: ``<phi_z(x), phi_z(x')>`` is the kernel of
the projection onto span{phi(z_j)} (eq. 40). It is solved exactly by dual coordinate descent
(:func:`sparsekernel.solvers.dual_cd`), warm-started from the previous dual vector. With
``v`` the linear weights and ``c = alpha * y``, the expansion coefficients are (eq. 45)
``beta = K_z^-1 Psi c = L^-T v`` and the optimal value W(Z) has the gradient (eq. 46)
``dW/dz_u = -beta_u sum_i c_i dK(z_u, x_i)/dz_u + beta_u sum_j beta_j dK(z_u, z_j)/dz_u``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from sklearn.exceptions import ConvergenceWarning

from ..solvers import dual_cd

__all__ = ["BasisSVM", "basis_cholesky", "rbf_basis_gradient", "whitened_features"]

#: Relative diagonal jitter added to K_z before its Cholesky factorization.
JITTER = 1e-10


def basis_cholesky(Kz, jitter=JITTER):
    """Lower Cholesky factor of ``K_z + eps I`` with ``eps = jitter * mean(diag K_z)``.

    The jitter grows tenfold (up to 1e-2 relative) while the factorization fails, which only
    happens when expansion vectors (nearly) coincide.
    """
    Kz = np.asarray(Kz, dtype=np.float64)
    scale = max(float(np.trace(Kz)) / max(len(Kz), 1), np.finfo(float).tiny)
    eps = jitter
    while True:
        try:
            return cholesky(Kz + eps * scale * np.eye(len(Kz)), lower=True)
        except LinAlgError:
            if eps >= 1e-2:
                raise
            eps *= 10.0


def whitened_features(Psi, L):
    """phi_z(X) = Psi L^-T as a C-contiguous (n, m) float64 array."""
    F = solve_triangular(L, np.asarray(Psi, dtype=np.float64).T, lower=True, check_finite=False)
    return np.ascontiguousarray(F.T)


def rbf_basis_gradient(Z, X, Psi, gx, beta, Kz, zz_weight, gamma):
    """Gradient rows ``G[u] = beta_u sum_i gx_i dK(z_u, x_i)/dz_u``
    ``+ zz_weight beta_u sum_j beta_j dK(z_u, z_j)/dz_u``.

    For ``K(a, b) = exp(-g ||a - b||^2)``, ``dK(z, x)/dz = -2 g (z - x) K(z, x)``, so both sums
    are BLAS products of the already computed ``Psi = K(X, Z)`` and ``K_z`` (formulas.md,
    section 4): ``-2 g beta_u [(Psi^T gx)_u z_u - (Psi^T diag(gx) X)_u]`` plus the same with
    (K_z, beta, Z) for (Psi, gx, X).

    Parameters
    ----------
    Z : ndarray of shape (m, d)
    X : ndarray or CSR matrix of shape (n, d)
    Psi : ndarray of shape (n, m)
        K(X, Z).
    gx : ndarray of shape (n,)
        Weights on the training points (``-c`` for the SVM).
    beta : ndarray of shape (m,)
    Kz : ndarray of shape (m, m)
        K(Z, Z) without jitter.
    zz_weight : float
        Weight of the K_z term (1 for the SVM).
    gamma : float
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
    targets : list of ndarray of shape (n,)
        +-1 labels, one array per binary problem; W is summed over the problems.
    C, loss, sample_weight, tol, max_iter, random_state
        Passed to :func:`sparsekernel.solvers.dual_cd` (SVM-family scaling of ``C``).
    """

    def __init__(self, kernel, X, targets, *, C, loss, sample_weight, tol, max_iter,
                 random_state):
        self.kernel, self.X, self.targets = kernel, X, targets
        self.solver_args = {"C": C, "loss": loss, "sample_weight": sample_weight, "tol": tol,
                            "max_iter": max_iter, "random_state": random_state}
        self.duals = [None] * len(targets)
        self.n_solves = 0

    def solve(self, Z):
        """Fit every problem on Z; return (W, Psi, Kz, results, betas)."""
        Kz = np.asarray(self.kernel(Z, Z), dtype=np.float64)
        L = basis_cholesky(Kz)
        Psi = np.asarray(self.kernel(self.X, Z), dtype=np.float64)
        F = whitened_features(Psi, L)
        results, betas = [], []
        for k, y in enumerate(self.targets):
            res = dual_cd(F, y, dual0=self.duals[k], **self.solver_args)
            self.duals[k] = res.dual
            results.append(res)
            betas.append(solve_triangular(L.T, res.coef, lower=False, check_finite=False))
        self.n_solves += 1
        W = float(sum(r.objective for r in results))
        return W, Psi, Kz, results, betas

    def value_and_grad(self, Z):
        """W(Z) summed over the problems and its gradient (eq. 46), shape (m, d)."""
        W, Psi, Kz, results, betas = self.solve(Z)
        grad = np.zeros_like(Z)
        for y, res, beta in zip(self.targets, results, betas, strict=True):
            grad += rbf_basis_gradient(Z, self.X, Psi, -res.dual * y, beta, Kz, 1.0,
                                       float(self.kernel.gamma))
        return W, grad

    def coefficients(self, Z, max_iter=20000):
        """Expansion coefficients (eq. 45) and biases on Z: (coef (k, m), intercept (k,), res).

        This final solve may use more passes (``max_iter``) than the evaluations of W.
        """
        inner, self.solver_args["max_iter"] = self.solver_args["max_iter"], max_iter
        try:
            _, _, _, results, betas = self.solve(Z)
        finally:
            self.solver_args["max_iter"] = inner
        for res in results:
            if not res.converged:
                warnings.warn(f"The SVM step on the expansion vectors did not converge: "
                              f"{res.message}", ConvergenceWarning, stacklevel=3)
        coef = np.array(betas)
        intercept = np.array([r.intercept for r in results])
        return coef, intercept, results
