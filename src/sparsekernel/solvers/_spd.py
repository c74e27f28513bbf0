"""One factorization policy for symmetric positive (semi-)definite systems.

Every SPD solve in the package (the Newton system, the LS-SVM normal equations and bordered
system, the expansion-vector Gram matrix of SLMC) factors through :func:`spd_cholesky`, so
there is one jitter policy: try the matrix as given (plus an optional base jitter the caller
asks for); while Cholesky fails, add ``jitter * mean(|diag A|)`` to the diagonal with
``jitter`` growing 100-fold from 1e-12 up to 1e-4. Failures come from rounding at extreme
``C`` or from (nearly) repeated basis points; past 1e-4 the matrix is not SPD in any useful
sense and the error says so. The factorization of a large system is NumPy's: the row passes
around it use NumPy's OpenBLAS, and SciPy's separate OpenBLAS build called right after them
ran at about half speed on two cores while the other library's threads still spun; and SciPy's
``potrf`` calls do not overlap on two Python threads (1,075 square: 9.9 ms a call alone and
9.7 ms side by side, NumPy 13.0 and 8.6 ms). Systems up to ``SMALL_SYSTEM`` go to SciPy's
``potrf``, where NumPy's overhead is most of the cost (268 square: 0.13 against 0.24 ms): the
one-vs-rest Newton on pendigits (m = 268, about 50 factorizations a fit) went from 0.133-0.142
to 0.106-0.119 s (LowRankSVC fits, medians of 15-21, five paired runs).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpotrf, spotrf

from ._result import LIKELY_CAUSES, NonFiniteError

__all__ = ["JITTER_START", "JITTER_STOP", "spd_cholesky", "spd_solve"]

JITTER_START = 1e-12
JITTER_STOP = 1e-4
#: Largest system factored by SciPy's LAPACK instead of NumPy's (module docstring).
SMALL_SYSTEM = 512


def spd_cholesky(A, jitter=0.0, lapack=False):
    """Lower Cholesky factor of ``A + j * mean(|diag A|) * I`` with the smallest working j.

    Parameters
    ----------
    A : ndarray of shape (p, p)
        Symmetric matrix (only the lower triangle is read).
    jitter : float, default=0.0
        Relative jitter always added (e.g. 1e-10 to regularize a Gram matrix of basis points).
    lapack : bool, default=False
        Factor with SciPy's ``potrf`` at every size, not only up to ``SMALL_SYSTEM``: for a
        caller whose products also run on SciPy's BLAS and whose factorizations need not
        overlap (:mod:`~sparsekernel.solvers.newton_kernel`, float32 systems).

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
            return finite_factor(_cholesky(M, lapack), A), j
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


def _cholesky(M, lapack=False):
    """Lower Cholesky factor of M (its lower triangle read), C-ordered as NumPy's."""
    if len(M) > SMALL_SYSTEM and not lapack:
        return np.linalg.cholesky(M)
    potrf = spotrf if M.dtype == np.float32 else dpotrf
    # M.T is M's Fortran-ordered view: its upper factor U is L^T, read from M's lower half
    U, info = potrf(M.T, lower=0, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Matrix is not positive definite (LAPACK info {info})")
    return U.T


def _non_finite_message(A):
    return (f"A {len(A)}x{len(A)} linear system to factor (Cholesky) holds NaN or infinite "
            "values. " + LIKELY_CAUSES)


def finite_factor(L, A):
    """``L`` itself; a NaN or inf anywhere in A reaches L's diagonal, so that is checked."""
    if not np.isfinite(np.diagonal(L)).all():
        raise NonFiniteError(_non_finite_message(A))
    return L


def spd_solve(A, rhs, jitter=0.0, lapack=False):
    """Solve ``A x = rhs`` through :func:`spd_cholesky`; returns ``(x, L, jitter)``."""
    L, used = spd_cholesky(A, jitter, lapack)
    x = solve_triangular(L, solve_triangular(L, rhs, lower=True, check_finite=False),
                         lower=True, trans="T", check_finite=False)
    return x, L, used
