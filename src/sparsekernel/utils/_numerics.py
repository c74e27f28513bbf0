"""The one eigenvalue floor of the package, and column statistics that cannot overflow.

Whitening K(Z, Z) (Nystrom features, the reduced LS-SVM, reduced kernel PCA) and the
pseudo-inverse square roots of the decomposition family drop eigenvalues at or below
``floor * lambda_max`` with ``floor = 10 * eps`` of the dtype the features are computed in
(2.2e-15 for float64, 1.2e-6 for float32). Rounding errors of size eps in K(x, Z) are
amplified by lambda^(-1/2) in the features, so float32 features cannot resolve smaller
eigenvalues; for a positive semi-definite kernel a direction with K(Z, Z) u = 0 carries
nothing (K(x, Z) u = 0 for every x), so dropping it is exact, not an approximation. (On the
checkerboard a floor of m * eps32 dropped useful components and raised the error.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_mean_std", "eigenvalue_floor"]


def eigenvalue_floor(dtype=np.float64, rcond="auto"):
    """Relative eigenvalue floor: ``rcond`` if it is a number, else ``10 * eps(dtype)``."""
    if isinstance(rcond, str):
        return 10.0 * float(np.finfo(np.result_type(dtype, np.float32)).eps)
    return float(rcond)


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
