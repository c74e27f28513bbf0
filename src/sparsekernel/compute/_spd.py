"""One factorization policy for symmetric positive (semi-)definite systems.

Every SPD solve in the package factors through :func:`spd_cholesky`, so there is one jitter
policy: try the matrix as given (plus an optional base jitter the caller asks for); while
Cholesky fails, add ``jitter * mean(|diag A|)`` to the diagonal with ``jitter`` growing
100-fold from 1e-12 up to 1e-4. Failures come from rounding at extreme ``C`` or from
(nearly) repeated basis points; past 1e-4 the matrix is not SPD in any useful sense.

A system formed on an array-API namespace's device (a GPU's) is factored and solved there
under the same policy: a failure is the namespace's exception or a non-finite diagonal
(CuPy returns NaN rather than raising). Right-hand sides and solutions may stay on the host.

On NumPy with BLAS held to one thread (every fit's plan), LAPACK's ``potrf`` is called
without the GIL (:mod:`sparsekernel.compute._lapack`), so that systems side by side factor
concurrently; elsewhere NumPy's ``cholesky``, since a second OpenBLAS build called on
several threads right after NumPy's spins against it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh, solve_triangular
from scipy.linalg.lapack import dpstrf, dtrtri

from ._errors import LIKELY_CAUSES, NonFiniteError
from ._lapack import potrf_lower
from ._namespace import dtype_name, namespace_of, to_numpy
from ._threads import blas_limit, blas_threads

__all__ = ["JITTER_START", "JITTER_STOP", "add_to_diagonal", "cholesky_solve",
           "pivoted_cholesky", "pivoted_cholesky_on", "spd_cholesky", "spd_solve",
           "symmetric_eigh", "symmetric_from_lower", "triangular_inverse"]

#: Pivots chosen between two updates of the whole matrix in :func:`pivoted_cholesky_on`
#: (LAPACK's ``pstrf`` block).
PIVOT_BLOCK = 64

JITTER_START = 1e-12
JITTER_STOP = 1e-4


def spd_cholesky(A, jitter=0.0, overwrite=False):
    """Lower Cholesky factor of ``A + j * mean(|diag A|) * I`` with the smallest working j.

    Parameters
    ----------
    A : ndarray of shape (p, p), or an array of an array-API namespace
        Symmetric matrix (only the lower triangle is read). A namespace's array is factored
        on its device.
    jitter : float, default=0.0
        Relative jitter always added (e.g. 1e-10 to regularize a Gram matrix of basis points).
    overwrite : bool, default=False
        A C-ordered float32/float64 A holding both triangles may become L (no copy, on one
        BLAS thread); when A needs a jitter it is restored first.

    Returns
    -------
    L : array of shape (p, p)
        Lower-triangular factor, in A's namespace.
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
    xp = namespace_of(A)
    if xp is not np:
        return _cholesky_on(xp, A, jitter)
    A = np.asarray(A)
    if A.dtype not in (np.float32, np.float64):  # float32 systems stay float32 (mixed Newton)
        A = A.astype(np.float64)
    scale = max(float(np.abs(np.diagonal(A)).mean()) if A.size else 1.0, np.finfo(float).tiny)

    def factor(j):
        M = A if j == 0 else A + (j * scale) * np.eye(len(A), dtype=A.dtype)
        try:
            L = _cholesky(M, overwrite and j == 0)
        except np.linalg.LinAlgError:
            return None
        return finite_factor(L, A)

    return _with_jitter(factor, jitter, scale, lambda: np.isfinite(A).all(), A)


def _with_jitter(factor, jitter, scale, finite, A):
    """``(factor(j), j)`` for the first relative jitter j, from ``jitter``, at which
    ``factor(j)`` (the factor of ``A + j * scale * I``, None on failure) succeeds; after a
    failure, ``finite()`` says whether A holds only finite values (else no jitter helps)."""
    j = float(jitter)
    while True:
        L = factor(j)
        if L is not None:
            return L, j
        if not np.isfinite(scale) or not finite():
            raise NonFiniteError(_non_finite_message(A))
        if j >= JITTER_STOP:
            p = int(A.shape[0])
            raise np.linalg.LinAlgError(
                f"A {p}x{p} system is not positive definite even with a relative jitter of "
                f"{j:g}; check for NaN or infinite values, a kernel that is not positive "
                "semi-definite, or repeated basis points.")
        j = max(j * 100.0, JITTER_START)


def _cholesky_on(xp, A, jitter):
    """:func:`spd_cholesky` on an array-API namespace's device: the same jitter policy."""
    p = int(A.shape[0])
    S = symmetric_from_lower(A)  # (a namespace's cholesky need not read one triangle only)
    scale = float(xp.mean(xp.abs(xp.linalg.diagonal(S)))) if p else 1.0
    scale = max(scale, np.finfo(float).tiny)

    def factor(j):
        try:
            L = xp.linalg.cholesky(S if j == 0 else add_to_diagonal(S, j * scale, copy=True))
        except _linalg_errors(xp):
            return None
        return L if bool(xp.all(xp.isfinite(xp.linalg.diagonal(L)))) else None

    return _with_jitter(factor, jitter, scale, lambda: bool(xp.all(xp.isfinite(S))), A)


def _linalg_errors(xp):
    """The exceptions a namespace's ``cholesky`` raises for a matrix that is not positive
    definite (NumPy's, which CuPy and array_api_strict raise too, and PyTorch's own)."""
    import array_api_compat

    if array_api_compat.is_torch_namespace(xp):
        import torch

        return (np.linalg.LinAlgError, torch.linalg.LinAlgError)
    return (np.linalg.LinAlgError,)


def symmetric_from_lower(A):
    """The symmetric matrix whose lower triangle is A's (a new array, in A's namespace)."""
    xp = namespace_of(A)
    return A + xp.tril(A, k=-1).T - xp.triu(A, k=1)


def add_to_diagonal(A, value, copy=False):
    """A with ``value`` added to its diagonal: in place for a NumPy array unless ``copy``,
    a new array on other namespaces (which need not support it in place)."""
    xp = namespace_of(A)
    if xp is np:
        A = A.copy() if copy else A
        A[np.diag_indices_from(A)] += value
        return A
    import array_api_compat

    return A + value * xp.eye(A.shape[0], dtype=A.dtype, device=array_api_compat.device(A))


def cholesky_solve(L, rhs):
    """``x`` with ``L L^T x = rhs``, for a lower factor ``L`` of :func:`spd_cholesky`: two
    triangular solves in L's namespace, on its device; ``rhs`` (a vector or columns) may
    be a NumPy array, and x is then one too."""
    xp = namespace_of(L)
    if xp is np:
        return solve_triangular(L, solve_triangular(L, rhs, lower=True, check_finite=False),
                                lower=True, trans="T", check_finite=False)
    import array_api_compat

    host = isinstance(rhs, np.ndarray)
    B = xp.asarray(np.asarray(rhs, dtype=dtype_name(L.dtype)) if host else rhs,
                   device=array_api_compat.device(L))
    vector = B.ndim == 1
    B = xp.reshape(B, (-1, 1)) if vector else B
    x = _triangular_solve(xp, L, _triangular_solve(xp, L, B, False), True)
    x = xp.reshape(x, (-1,)) if vector else x
    return np.asarray(to_numpy(x)) if host else x


def _triangular_solve(xp, L, B, transpose):
    """``L^-1 B`` (``L^-T B`` when ``transpose``) on L's device: PyTorch's and CuPy's
    triangular solvers, else the namespace's general ``solve``."""
    import array_api_compat

    if array_api_compat.is_torch_namespace(xp):
        import torch

        return torch.linalg.solve_triangular(L.mT if transpose else L, B, upper=transpose)
    if array_api_compat.is_cupy_namespace(xp):
        from cupyx.scipy.linalg import solve_triangular as cupy_solve_triangular

        return cupy_solve_triangular(L, B, lower=True, trans=1 if transpose else 0)
    return xp.linalg.solve(L.T if transpose else L, B)


def _cholesky(M, overwrite=False):
    """Lower Cholesky factor of M (its lower triangle read), C-ordered: LAPACK's without
    the GIL on one BLAS thread, else NumPy's (module docstring)."""
    if blas_limit() != 1:
        return np.linalg.cholesky(M)
    L, info = potrf_lower(M, overwrite)
    if info != 0:
        raise np.linalg.LinAlgError(f"Matrix is not positive definite (LAPACK info {info})")
    return L


def _non_finite_message(A):
    p = int(A.shape[0])
    return (f"A {p}x{p} linear system to factor (Cholesky) holds NaN or infinite "
            "values. " + LIKELY_CAUSES)


def finite_factor(L, A):
    """``L`` itself; a NaN or inf anywhere in A reaches L's diagonal, so that is checked."""
    if not np.isfinite(np.diagonal(L)).all():
        raise NonFiniteError(_non_finite_message(A))
    return L


def spd_solve(A, rhs, jitter=0.0, overwrite=False):
    """Solve ``A x = rhs`` through :func:`spd_cholesky` and :func:`cholesky_solve`; returns
    ``(x, L, jitter)``, L in A's namespace and x in rhs's (NumPy for a NumPy rhs)."""
    L, used = spd_cholesky(A, jitter, overwrite)
    return cholesky_solve(L, rhs), L, used


def pivoted_cholesky_on(K, tol, block=PIVOT_BLOCK):
    """Pivoted Cholesky factorization of a symmetric positive semi-definite K of an array-API
    namespace, on its device: the greedy rule of LAPACK's ``pstrf``.

    Each step takes the largest remaining diagonal entry of the Schur complement as the
    pivot, and stops when it is at or below ``tol`` (or NaN). Ties go as in ``pstrf``, to
    the first in the order its pivot swaps leave, so equal diagonals (distant landmarks of
    an RBF kernel) give LAPACK's landmarks in LAPACK's order. The pivots of one block are
    found with matrix-vector corrections by the block's own columns, then the whole matrix
    is updated by one product with the block (BLAS-3, as ``pstrf``'s ``syrk``).

    Parameters
    ----------
    K : array of shape (m, m)
        Symmetric (both triangles read), in the precision to factor in.
    tol : float
        Absolute stopping threshold on the pivots.
    block : int
        Pivots between two updates of the matrix.

    Returns
    -------
    L : array of shape (m, r)
        The factor's columns, rows in K's order: ``K[piv][:, piv] ~ L[piv] L[piv]^T`` with
        ``L[piv]`` lower triangular, exact on the r chosen rows and columns.
    piv : ndarray of shape (r,)
        The chosen indices, in order (NumPy, on the host).
    """
    import array_api_compat

    xp, device = namespace_of(K), array_api_compat.device(K)
    m = int(K.shape[0])
    A = xp.asarray(K, copy=True)
    d = xp.asarray(xp.linalg.diagonal(A), copy=True)
    index = xp.arange(m, device=device)
    order = np.arange(m)  # pstrf's row order after its swaps (host) ...
    order_dev = xp.arange(m, device=device)  # ... and on the device
    chosen = xp.zeros((m,), dtype=xp.bool, device=device)
    columns, piv = [], []
    while len(piv) < m:
        size = min(block, m - len(piv))
        Lb = xp.zeros((m, size), dtype=K.dtype, device=device)
        used, stop = 0, False
        for j in range(size):
            k = len(piv)
            remaining = xp.take(d, order_dev[k:])
            at = xp.reshape(xp.argmax(remaining), (1,))  # position and value: one transfer
            q, pivot = to_numpy(xp.concat([xp.astype(at, K.dtype), xp.take(remaining, at)]))
            q, pivot = int(q), float(pivot)
            if not pivot > tol:  # (NaN included)
                stop = True
                break
            p = int(order[k + q])
            if q:  # swap the pivot into place, as pstrf does
                order[k + q], order[k] = order[k], p
                order_dev[k + q] = int(order[k + q])
                order_dev[k] = p
            col = A[:, p] - Lb[:, :j] @ Lb[p, :j] if j else A[:, p]
            col = xp.where(chosen, xp.zeros_like(col), col) / math.sqrt(pivot)
            Lb[:, j] = col
            d = d - col * col
            chosen = chosen | (index == p)
            piv.append(p)
            used = j + 1
        if used:
            Lb = Lb[:, :used]
            columns.append(Lb)
            if not stop and len(piv) < m:
                A -= Lb @ Lb.T  # (in place: no second m x m array)
                d = xp.asarray(xp.linalg.diagonal(A), copy=True)
        if stop:
            break
    if not columns:
        return xp.zeros((m, 0), dtype=K.dtype, device=device), np.zeros(0, dtype=np.int64)
    L = columns[0] if len(columns) == 1 else xp.concat(columns, axis=1)
    return L, np.asarray(piv, dtype=np.int64)


def pivoted_cholesky(K, tol):
    """Pivoted Cholesky factor of a symmetric positive semi-definite K, where K is.

    The greedy rule of LAPACK's ``pstrf``: the largest remaining pivot first, until it is at
    or below ``tol``. On NumPy, ``pstrf`` itself in place (K, float64, is overwritten: no
    second m x m array); on a namespace's device, :func:`pivoted_cholesky_on`.

    Returns
    -------
    L : array of shape (r, r)
        Lower triangular, ``K[piv][:, piv] ~ L L^T`` (exact on the r chosen). On NumPy its
        strict upper triangle holds K's entries (:func:`triangular_inverse` reads the lower
        one only).
    piv : ndarray of shape (r,)
        The chosen indices, in order (host); empty when no pivot is positive.
    """
    if isinstance(K, np.ndarray):
        # K.T: the Fortran-ordered view LAPACK factors in place (K is symmetric)
        c, piv, rank, _ = dpstrf(K.T, tol=tol, lower=1, overwrite_a=1)
        if rank == 0 or c[0, 0] <= 0:
            return c[:0, :0], np.zeros(0, dtype=np.int64)
        return c[:rank, :rank], (piv[:rank] - 1).astype(np.int64)
    L, piv = pivoted_cholesky_on(K, tol)
    xp = namespace_of(K)
    import array_api_compat

    rows = xp.asarray(piv, device=array_api_compat.device(K))
    return xp.take(L, rows, axis=0), piv


def symmetric_eigh(K, driver="evd"):
    """Eigenvalues (descending) and eigenvectors of the symmetric part of K, where K is.

    On NumPy by SciPy's ``eigh`` with LAPACK's ``driver`` (None: SciPy's default) on one
    BLAS thread (its eigensolvers synchronize often); on a namespace's device by its
    ``eigh``.
    """
    K = 0.5 * (K + K.T)  # exact symmetry
    if isinstance(K, np.ndarray):
        with blas_threads(1):
            lam, U = eigh(K, driver=driver)
        return lam[::-1], U[:, ::-1]
    xp = namespace_of(K)
    lam, U = xp.linalg.eigh(K)
    return xp.flip(lam), xp.flip(U, axis=1)


def triangular_inverse(L):
    """The inverse of a lower-triangular L (its lower triangle read), where L is, its upper
    triangle exactly zero. On NumPy by LAPACK's ``trtri``, in place when L is
    Fortran-ordered."""
    if isinstance(L, np.ndarray):
        L_inv, info = dtrtri(L, lower=1, overwrite_c=1)
        if info != 0:  # a zero pivot: pstrf stops before one
            raise np.linalg.LinAlgError(f"trtri failed on a triangular factor (info={info}).")
        for j in range(1, L_inv.shape[0]):  # column by column: no m-square temporary
            L_inv[:j, j] = 0.0
        return L_inv
    import array_api_compat

    xp = namespace_of(L)
    eye = xp.eye(L.shape[0], dtype=L.dtype, device=array_api_compat.device(L))
    return xp.tril(_triangular_solve(xp, L, eye, False))
