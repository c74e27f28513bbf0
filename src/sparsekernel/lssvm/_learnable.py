"""Learnable basis functions of the low-rank LS-SVM (LR-LSSVM; Fang, Xu, Hong & Gao 2019).

Each of the M basis functions has a centre ``mu_k`` and positive per-dimension shapes
``sigma_k`` (both in R^d). With the weighted L1 distance ``z_k(x) = sum_j sigma_kj |x_j - mu_kj|``:

- ``'robust_rbf'``: ``phi_k(x) = exp(-z_k(x))`` (paper eq. 12, whose first-order
  approximation is the SBF);
- ``'sbf'``: ``phi_k(x) = max(0, 1 - z_k(x))`` (simplex basis function, paper eq. 7).

Derivatives (sign(0) := 0; ``dphi/dz`` is ``-phi`` for the robust RBF and ``-1[z < 1]`` for
the SBF)::

    dphi_k/dmu_kj    = -dphi/dz * sigma_kj * sign(x_j - mu_kj)
    dphi_k/dsigma_kj =  dphi/dz * |x_j - mu_kj|

Everything is computed in row chunks so the (rows x M x d) temporaries stay bounded.
"""

from __future__ import annotations

import numpy as np

from ..kernels import iter_row_slices

__all__ = ["BASIS_FUNCTIONS", "basis_gradient", "basis_values"]

BASIS_FUNCTIONS = ("robust_rbf", "sbf")
_CHUNK_VALUES = 2**21  # values of one (rows x M x d) temporary


def _chunks(n, M, d):
    return iter_row_slices(n, max(1, _CHUNK_VALUES // max(M * d, 1)))


def _values_from_z(z, kind):
    if kind == "robust_rbf":
        return np.exp(-z)
    if kind == "sbf":
        return np.maximum(1.0 - z, 0.0)
    raise ValueError(f"basis_function must be one of {BASIS_FUNCTIONS}; got {kind!r}.")


def basis_values(X, centers, shapes, kind):
    """The design matrix Phi (n x M), ``Phi[i, k] = phi_k(x_i)``, in float64.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    centers, shapes : ndarray of shape (M, d)
        Centres mu and positive shapes sigma.
    kind : {'robust_rbf', 'sbf'}
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    M = centers.shape[0]
    Phi = np.empty((n, M))
    for rows in _chunks(n, M, d):
        A = np.abs(X[rows, None, :] - centers[None])
        Phi[rows] = _values_from_z(np.einsum("ikj,kj->ik", A, shapes), kind)
    return Phi


def basis_gradient(X, centers, shapes, kind, G):
    """Contract d Phi / d(mu, sigma) with a weight matrix ``G = dJ/dPhi`` (n x M).

    Returns ``(G_mu, G_sigma)``, each (M x d), with
    ``G_mu[k, j] = sum_i G[i, k] dphi_k(x_i)/dmu_kj`` and likewise for sigma: the gradient of
    any criterion J that depends on the basis parameters only through Phi.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    M = centers.shape[0]
    g_mu = np.zeros((M, d))
    g_sigma = np.zeros((M, d))
    for rows in _chunks(n, M, d):
        D = X[rows, None, :] - centers[None]
        A = np.abs(D)
        z = np.einsum("ikj,kj->ik", A, shapes)
        # Q = G * (-dphi/dz): the weight each (row, unit) pair puts on dz.
        Q = G[rows] * (np.exp(-z) if kind == "robust_rbf" else (z < 1.0).astype(np.float64))
        g_mu += np.einsum("ik,ikj->kj", Q, np.sign(D))
        g_sigma -= np.einsum("ik,ikj->kj", Q, A)
    return g_mu * shapes, g_sigma
