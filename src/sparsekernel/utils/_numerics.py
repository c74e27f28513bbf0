"""The precision policy of the package, its one eigenvalue floor, and column statistics
that cannot overflow.

The Nystrom machines follow one rule on every path (the user guide's "Precision",
:ref:`precision`): K(Z, Z), its factorization and the choice of redundant landmarks are
float64 with the floor :func:`eigenvalue_floor`; K(x, Z) M is computed in float64 and rounded
to the features' storage, which may be float32 (:func:`feature_dtype`); every sum over rows,
the iterates and prediction are float64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLOAT32_WORK", "column_mean_std", "eigenvalue_floor", "feature_dtype",
           "repeated_rows"]

#: n * m^2 from which explicit features are float32 even for float64 input (see
#: :func:`feature_dtype`): where the products with the features become the fit's cost.
FLOAT32_WORK = 1e10


def eigenvalue_floor(dtype=np.float64, rcond="auto"):
    """Relative eigenvalue floor: ``rcond`` if it is a number, else ``10 * eps(dtype)``
    (2.2e-15 for float64, 1.2e-6 for float32). Rounding errors of size eps in K(x, Z) are
    amplified by lambda^(-1/2) in whitened features, so arithmetic in ``dtype`` resolves the
    eigenvalues above it."""
    if isinstance(rcond, str):
        return 10.0 * float(np.finfo(np.result_type(dtype, np.float32)).eps)
    return float(rcond)


def feature_dtype(dtype, n, m):
    """The dtype n x m explicit features are stored in, for input of ``dtype``: float32
    for float32 input, and also when ``n * m**2 >= FLOAT32_WORK``.

    The products with the features are then the fit's cost, and float32 halves them and
    the features' memory; the features are computed in float64 and rounded once.
    """
    if np.result_type(dtype, np.float32) == np.float32 or float(n) * m * m >= FLOAT32_WORK:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def column_mean_std(X):
    """Mean and standard deviation of each column (std 1 where it is 0), without overflow.

    Each column is divided by its largest absolute value first, so squares stay finite for
    features of any magnitude (1e160 or 1e-160); the statistics are scaled back after.
    """
    X = np.asarray(X, dtype=np.float64)
    a = np.abs(X).max(axis=0) if X.shape[0] else np.ones(X.shape[1])
    a = np.where((a > 0) & np.isfinite(a), a, 1.0)
    Xs = X / a
    mean, std = Xs.mean(axis=0) * a, Xs.std(axis=0) * a
    return mean, np.where(std > 0, std, 1.0)


def repeated_rows(Z):
    """``(first, group)`` for the rows of a dense or CSR Z: ``first`` the row indices where
    each distinct row first appears (in row order), ``group[i]`` the position in ``first``
    of the row equal to row i. Rows are compared by value (-0.0 equals 0.0; a CSR row's
    stored zeros and order of indices do not count)."""
    import scipy.sparse as sp

    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, copy=True)
        Z.sum_duplicates()  # (sorts the indices)
        Z.eliminate_zeros()
        data = Z.data + 0.0
        keys = (Z.indices[a:b].tobytes() + b"|" + data[a:b].tobytes()
                for a, b in zip(Z.indptr[:-1], Z.indptr[1:], strict=True))
    else:
        keys = (row.tobytes() for row in np.ascontiguousarray(Z) + 0.0)
    seen, first, group = {}, [], np.empty(Z.shape[0], dtype=np.intp)
    for i, key in enumerate(keys):
        group[i] = seen.setdefault(key, len(first))
        if group[i] == len(first):
            first.append(i)
    return np.asarray(first, dtype=np.intp), group
