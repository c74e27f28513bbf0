"""Kernel math as pure functions of one (X, Z) block (memory planning: ``_blocks.py``).

Every function accepts dense arrays or CSR matrices for ``X`` and ``Z`` and returns a dense
``(n_x, n_z)`` array in the working dtype (:func:`working_dtype`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

__all__ = ["laplacian_kernel", "linear_kernel", "polynomial_kernel", "rbf_kernel",
           "sigmoid_kernel", "squared_norms", "working_dtype"]


def working_dtype(*arrays):
    """float32 if every input is float32, else float64 (never a silent upcast of float32 data)."""
    if all(a.dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


#: A sparse Z (k-means centres of sparse data, say) is made dense up to this size, and up
#: to an eighth of the kernel's memory budget.
DENSE_Z_BYTES = 64 * 2**20


def dense_landmarks(Z, memory_budget=np.inf):
    """Z as a dense array when it is sparse and small: sparse X times dense Z^T is one pass
    over the nonzeros of X, while sparse times sparse builds a sparse product of a matrix
    that is dense anyway, at a large share of the kernel's time."""
    limit = min(DENSE_Z_BYTES, memory_budget / 8)
    if sp.issparse(Z) and 8.0 * Z.shape[0] * Z.shape[1] <= limit:
        return Z.toarray()
    return Z


def squared_norms(X, dtype=None):
    """Row-wise squared Euclidean norms of a dense or CSR matrix."""
    dtype = dtype or working_dtype(X)
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=dtype).ravel()
    X = np.asarray(X, dtype=dtype)
    return np.einsum("ij,ij->i", X, X)


def _dot(X, Z, dtype, out=None):
    """X @ Z.T as a dense array of ``dtype``; the only place that handles sparse products.

    ``out`` (C-contiguous, ``dtype``) receives dense products directly; sparse products
    ignore it and return a new array.
    """
    if sp.issparse(X) or sp.issparse(Z):
        K = X @ Z.T
        K = K.toarray() if sp.issparse(K) else np.asarray(K)
        return K.astype(dtype, copy=False)
    Xd, Zd = np.asarray(X, dtype=dtype), np.asarray(Z, dtype=dtype)
    if out is not None and out.dtype == dtype and out.flags.c_contiguous:
        return np.matmul(Xd, Zd.T, out=out)
    return Xd @ Zd.T


def linear_kernel(X, Z, out=None):
    """K(x, z) = <x, z>."""
    return _dot(X, Z, working_dtype(X, Z), out)


def polynomial_kernel(X, Z, gamma, degree, coef0, out=None):
    """K(x, z) = (gamma <x, z> + coef0) ** degree."""
    K = _dot(X, Z, working_dtype(X, Z), out)
    K *= gamma
    K += coef0
    K **= degree
    return K


def sigmoid_kernel(X, Z, gamma, coef0, out=None):
    """K(x, z) = tanh(gamma <x, z> + coef0)."""
    K = _dot(X, Z, working_dtype(X, Z), out)
    K *= gamma
    K += coef0
    np.tanh(K, out=K)
    return K


def rbf_kernel(X, Z, gamma, Z_sq_norms=None, out=None, dtype=None):
    """K(x, z_j) = exp(-gamma_j ||x - z_j||^2).

    Parameters
    ----------
    X : ndarray or CSR of shape (n, d)
    Z : ndarray or CSR of shape (m, d)
    gamma : float or ndarray of shape (m,)
        One width for all centres, or one per centre (column) for per-centre RBF widths.
    Z_sq_norms : ndarray of shape (m,), optional
        Precomputed squared norms of Z, reused across blocks of X.
    out : ndarray of shape (n, m), optional
        Where to write a dense result (saves a copy when filling a larger array).
    dtype : numpy dtype, optional
        Precision of the result (default the working dtype). float32 from float64 inputs
        keeps the squared distances in float64 (their expansion cancels) and takes only the
        exponential in float32.
    """
    work = working_dtype(X, Z)
    dtype = np.dtype(dtype or work)
    if Z_sq_norms is None:
        Z_sq_norms = squared_norms(Z, work)
    if np.ndim(gamma) == 0:
        # -g ||x - z||^2 = <2 g x, z> - g ||x||^2 - g ||z||^2: the scale folded into the
        # smaller of the two inputs (a copy of min(n, m) rows) saves two passes over K.
        g = float(gamma)
        if X.shape[0] <= Z.shape[0]:
            Xs, Zs = _scaled(X, 2.0 * g, work), Z
        else:
            Xs, Zs = X, _scaled(Z, 2.0 * g, work)
        K = _dot(Xs, Zs, work, out if dtype == work else None)
        K -= (g * squared_norms(X, work))[:, None]
        K -= (g * Z_sq_norms.astype(work, copy=False))[None, :]
        # Cancellation in the expansion can leave tiny negative squared distances.
        np.minimum(K, 0.0, out=K)
    else:
        K = _dot(X, Z, work, out if dtype == work else None)
        K *= -2.0
        K += squared_norms(X, work)[:, None]
        K += Z_sq_norms.astype(work, copy=False)[None, :]
        np.maximum(K, 0.0, out=K)
        K *= -np.asarray(gamma, dtype=work)
    if dtype != work:
        K = _into(K, dtype, out)
    np.exp(K, out=K)
    return K


def _scaled(A, s, dtype):
    """``s * A`` in ``dtype`` (dense or CSR): scaled in the working precision, not A's."""
    if sp.issparse(A):
        return A.astype(dtype) * s
    return np.asarray(A, dtype=dtype) * s


def _into(K, dtype, out):
    """K in ``dtype``: written into ``out`` when it fits, else a new array."""
    if out is not None and out.dtype == dtype and out.shape == K.shape:
        out[...] = K
        return out
    return K.astype(dtype)


def laplacian_kernel(X, Z, gamma):
    """K(x, z) = exp(-gamma ||x - z||_1)."""
    dtype = working_dtype(X, Z)
    if sp.issparse(X) or sp.issparse(Z):
        from sklearn.metrics.pairwise import manhattan_distances

        D = manhattan_distances(sp.csr_matrix(X), sp.csr_matrix(Z))
    else:
        D = cdist(np.asarray(X), np.asarray(Z), metric="cityblock")
    K = np.asarray(D, dtype=dtype)
    K *= -gamma
    np.exp(K, out=K)
    return K
