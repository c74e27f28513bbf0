"""One factorization policy for symmetric positive (semi-)definite systems.

Every SPD solve in the package (the Newton system, the LS-SVM normal equations and bordered
system, the expansion-vector Gram matrix of SLMC) factors through :func:`spd_cholesky`, so
there is one jitter policy: try the matrix as given (plus an optional base jitter the caller
asks for); while Cholesky fails, add ``jitter * mean(|diag A|)`` to the diagonal with
``jitter`` growing 100-fold from 1e-12 up to 1e-4. Failures come from rounding at extreme
``C`` or from (nearly) repeated basis points; past 1e-4 the matrix is not SPD in any useful
sense and the error says so.

Which routine: where the code in force holds BLAS to one thread (every fit's plan,
:func:`~sparsekernel.compute.blas_limit`), LAPACK's ``potrf`` called without the GIL
(:mod:`sparsekernel.compute._lapack`), so that systems side by side factor concurrently.
Elsewhere NumPy's ``cholesky``: the row products around it run on NumPy's OpenBLAS, and a
second OpenBLAS build called right after them on several threads spins against the first
(``benchmarks/bench_cholesky.py`` compares the routines).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ._errors import LIKELY_CAUSES, NonFiniteError
from ._lapack import potrf_lower
from ._threads import blas_limit

__all__ = ["JITTER_START", "JITTER_STOP", "spd_cholesky", "spd_solve"]

JITTER_START = 1e-12
JITTER_STOP = 1e-4


def spd_cholesky(A, jitter=0.0, overwrite=False):
    """Lower Cholesky factor of ``A + j * mean(|diag A|) * I`` with the smallest working j.

    Parameters
    ----------
    A : ndarray of shape (p, p)
        Symmetric matrix (only the lower triangle is read).
    jitter : float, default=0.0
        Relative jitter always added (e.g. 1e-10 to regularize a Gram matrix of basis points).
    overwrite : bool, default=False
        A C-ordered float32/float64 A holding both triangles may become L (no copy, on one
        BLAS thread); when A needs a jitter it is restored first.

    Returns
    -------
    L : ndarray of shape (p, p)
        Lower-triangular factor.
    jitter : float
        The relative jitter used (0.0 when none was needed).

    Raises
    ------
    NonFiniteError
        When ``A`` holds NaN or infinity (LAPACK does not reject them: it returns a factor
        with NaN on its diagonal, which is what is checked, O(p)).
    numpy.linalg.LinAlgError
        When even a relative jitter of 1e-4 leaves the matrix indefinite.
    """
    A = np.asarray(A)
    if A.dtype not in (np.float32, np.float64):  # float32 systems stay float32 (mixed Newton)
        A = A.astype(np.float64)
    scale = max(float(np.abs(np.diagonal(A)).mean()) if A.size else 1.0, np.finfo(float).tiny)
    j = float(jitter)
    while True:
        try:
            M = A if j == 0 else A + (j * scale) * np.eye(len(A), dtype=A.dtype)
            return finite_factor(_cholesky(M, overwrite and j == 0), A), j
        except np.linalg.LinAlgError:
            if not np.isfinite(scale) or not np.isfinite(A).all():  # no jitter will help
                raise NonFiniteError(_non_finite_message(A)) from None
            if j >= JITTER_STOP:
                raise np.linalg.LinAlgError(
                    f"A {len(A)}x{len(A)} system is not positive definite even with a "
                    f"relative jitter of {j:g}; check for NaN or infinite values, a kernel "
                    "that is not positive semi-definite, or repeated basis points."
                ) from None
            j = max(j * 100.0, JITTER_START)


def _cholesky(M, overwrite=False):
    """Lower Cholesky factor of M (its lower triangle read), C-ordered (module docstring)."""
    if blas_limit() != 1:
        return np.linalg.cholesky(M)
    L, info = potrf_lower(M, overwrite)
    if info != 0:
        raise np.linalg.LinAlgError(f"Matrix is not positive definite (LAPACK info {info})")
    return L


def _non_finite_message(A):
    return (f"A {len(A)}x{len(A)} linear system to factor (Cholesky) holds NaN or infinite "
            "values. " + LIKELY_CAUSES)


def finite_factor(L, A):
    """``L`` itself; a NaN or inf anywhere in A reaches L's diagonal, so that is checked."""
    if not np.isfinite(np.diagonal(L)).all():
        raise NonFiniteError(_non_finite_message(A))
    return L


def spd_solve(A, rhs, jitter=0.0, overwrite=False):
    """Solve ``A x = rhs`` through :func:`spd_cholesky`; returns ``(x, L, jitter)``."""
    L, used = spd_cholesky(A, jitter, overwrite)
    x = solve_triangular(L, solve_triangular(L, rhs, lower=True, check_finite=False),
                         lower=True, trans="T", check_finite=False)
    return x, L, used
