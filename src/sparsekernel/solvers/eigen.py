"""Small dense eigenproblems for reduced kernel dimension reduction.

Everything here works on m x m (or m x J) matrices: the n rows of the data only enter through
:class:`MomentAccumulator`, which folds row blocks of features into weighted means, a
covariance and per-group means in one pass (O(m^2) memory, never n x n). The solvers then
whiten a covariance (:func:`whitening`) and take an eigen- or singular value decomposition of
a small matrix.

The rank of these *covariances of features* (which eigenvalues, Cholesky pivots and squared
singular values count as zero) is decided by :data:`RANK_RTOL` (1e-10), on purpose not by the
package's eigenvalue floor (:func:`sparsekernel.utils.eigenvalue_floor`, ``10 * eps``, for
matrices computed directly such as K(Z, Z)). Covariance eigenvalues are squared feature
scales, so features with relative rounding errors u give a singular covariance (m basis
points spanning fewer directions: a linear kernel with m > d, duplicate points) spurious
eigenvalues of relative size about u^2: 1.4e-14 for the float32 kernel blocks of float32
input, above the ``10 * eps`` floor, and more from summing n rows. Whitening such a direction
amplifies noise: with the floor as rank tolerance, linear KSIR on float32 input (12 basis
points in 5-d) returned directions with weights of 3e5 and training scores of standard
deviation 1.5 instead of 1, and KCCA weights grew 6000-fold; with 1e-10 both equal their
float64 results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
from scipy.linalg.blas import dsyrk as _syrk

from ..compute import Backend, namespace_of, sign_columns, symmetric_eigh, to_numpy

__all__ = ["RANK_RTOL", "EigenResult", "MomentAccumulator", "Moments", "canonical_correlations",
           "generalized_low_rank_eigen", "relative_ridge", "symmetric_eigen", "whitening"]

#: Rank tolerance of feature covariances (module docstring): eigenvalues, pivots and squared
#: singular values below this fraction of the largest count as zero. Not the eigenvalue floor.
RANK_RTOL = 1e-10


def _full(upper):
    """The symmetric matrix of an upper triangle (what the syrk updates write)."""
    xp = namespace_of(upper)
    upper = xp.triu(upper)
    return upper + xp.triu(upper, k=1).T


def _outer(a, b):
    xp = namespace_of(a)
    return xp.reshape(a, (-1, 1)) * xp.reshape(b, (1, -1))


@dataclass(frozen=True)
class Moments:
    """Weighted first and second moments of n feature rows (1/sum(w) normalisation).

    Attributes
    ----------
    mean : ndarray of shape (p,)
    cov : ndarray of shape (p, p)
        ``sum_i w_i (f_i - mean)(f_i - mean)^T / sum_i w_i``.
    weight : float
        ``sum_i w_i`` (n without weights).
    group_means : ndarray of shape (J, p) or None
        Weighted mean of each group's rows (zeros for empty groups).
    group_weights : ndarray of shape (J,) or None
        Sum of the weights in each group.
    """

    mean: np.ndarray
    cov: np.ndarray
    weight: float
    group_means: np.ndarray | None = None
    group_weights: np.ndarray | None = None


class MomentAccumulator:
    """Accumulate :class:`Moments` from row blocks in a single pass.

    Sums are taken around a shift (the first block's mean) so that the final
    ``E[ff^T] - mean mean^T`` does not cancel catastrophically when the features have a large
    common offset, as kernel values do. All sums are float64 whatever the block dtype.
    Blocks of an array-API namespace are summed on their device, in its widest float
    (groups: NumPy only).

    Parameters
    ----------
    n_groups : int, default=0
        Number of groups (slices) whose means are also wanted; 0 for none.
    """

    def __init__(self, n_groups=0):
        self.n_groups = n_groups
        self._shift = None

    def update(self, F, weight=None, group=None):
        """Add the rows of the dense block ``F`` (b, p).

        ``weight`` (b,) are non-negative row weights (None: ones); ``group`` (b,) integer
        group labels in [0, n_groups) when groups were requested.
        """
        xp = namespace_of(F)
        if xp is not np:
            return self._update_device(xp, F, weight)
        F = np.asarray(F, dtype=np.float64)
        w = np.ones(F.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
        if self._shift is None:
            p = F.shape[1]
            self._shift = F.mean(axis=0) if F.shape[0] else np.zeros(p)
            self._w, self._s1, self._s2 = 0.0, np.zeros(p), np.zeros((p, p), order="F")
            if self.n_groups:
                self._gw, self._gs = np.zeros(self.n_groups), np.zeros((self.n_groups, p))
        G = F - self._shift
        self._w += w.sum()
        self._s1 += w @ G
        # sum_i w_i g_i g_i^T as a symmetric rank-k update of the upper triangle (half the
        # flops of a general product), written in place into the Fortran-ordered sum.
        Gs = G * np.sqrt(w)[:, None] if weight is not None else G
        self._s2 = _syrk(1.0, Gs.T, beta=1.0, c=self._s2, trans=0, lower=0, overwrite_c=1)
        if self.n_groups:
            Gw = G * w[:, None]
            onehot = np.zeros((F.shape[0], self.n_groups))
            onehot[np.arange(F.shape[0]), group] = 1.0
            self._gw += onehot.T @ w
            self._gs += onehot.T @ Gw

    def _update_device(self, xp, F, weight):
        """:meth:`update` on a device: the same shifted sums, the square in full (its
        namespace has no ``syrk``), on F's device in its widest float."""
        import array_api_compat

        device = array_api_compat.device(F)
        wide = Backend(xp, device).widest_float()
        F = xp.astype(F, wide)
        if self._shift is None:
            self._shift = xp.mean(F, axis=0)
            self._w, self._s1 = 0.0, xp.zeros_like(self._shift)
            self._s2 = xp.zeros((F.shape[1], F.shape[1]), dtype=wide, device=device)
        G = F - self._shift
        if weight is None:
            self._w += float(F.shape[0])
            self._s1 += xp.sum(G, axis=0)
        else:
            w = xp.astype(weight, wide)
            self._w += float(xp.sum(w))
            self._s1 += xp.reshape(xp.reshape(w, (1, -1)) @ G, (-1,))
            G = G * xp.reshape(xp.sqrt(w), (-1, 1))
        self._s2 += G.T @ G

    def merge(self, other):
        """Both accumulators' rows in one (a new accumulator; either may be empty): the
        centred sums about the merged mean (Chan, Golub & LeVeque's pairwise update), so
        chunks summed apart, on other machines, merge without cancellation."""
        if other._shift is None:
            return self
        if self._shift is None:
            return other
        out = MomentAccumulator(self.n_groups)
        w = self._w + other._w
        means = [a._shift + a._s1 / a._w if a._w > 0 else a._shift for a in (self, other)]
        scatters = [_full(a._s2) - a._w * _outer(m - a._shift, m - a._shift)
                    for a, m in zip((self, other), means, strict=True)]
        delta = means[1] - means[0]
        out._shift = means[0] + (other._w / w) * delta if w > 0 else means[0]
        out._w, out._s1 = w, self._s1 * 0.0
        out._s2 = (scatters[0] + scatters[1]
                   + (self._w * other._w / w if w > 0 else 0.0) * _outer(delta, delta))
        if isinstance(out._s2, np.ndarray):  # (syrk updates a Fortran-ordered sum in place)
            out._s2 = np.asfortranarray(out._s2)
        if self.n_groups:  # group sums about the new shift
            out._gw = self._gw + other._gw
            out._gs = sum(a._gs + a._gw[:, None] * (a._shift - out._shift)
                          for a in (self, other))
        return out

    def result(self):
        """Return the :class:`Moments` of every row added so far."""
        if self._shift is None or self._w <= 0:
            raise ValueError("No rows with positive weight were accumulated.")
        d = self._s1 / self._w
        cov = _full(self._s2) / self._w - _outer(d, d)
        mean = self._shift + d
        if not self.n_groups:
            return Moments(mean, cov, self._w)
        safe = np.where(self._gw > 0, self._gw, 1.0)
        gmeans = np.where(self._gw[:, None] > 0, self._gs / safe[:, None] + self._shift, 0.0)
        return Moments(mean, cov, self._w, gmeans, self._gw.copy())


@dataclass(frozen=True)
class EigenResult:
    """Leading solutions of a small eigenproblem, in decreasing order of ``values``.

    Attributes
    ----------
    values : ndarray of shape (k,)
        Eigenvalues (PCA, SIR) or canonical correlations (CCA).
    vectors : ndarray of shape (p, k)
        Eigenvectors / directions (first view for CCA).
    vectors_y : ndarray of shape (q, k) or None
        Second view's directions (CCA only).
    rank : int
        Numerical rank of the (whitened) problem: how many solutions are meaningful.
    message : str
        How the problem was solved (which whitening, how many eigenvalues were floored).
    """

    values: np.ndarray
    vectors: np.ndarray
    vectors_y: np.ndarray | None = None
    rank: int = 0
    message: str = ""


def _check_k(n_components, available, what):
    if n_components is None:
        return available
    if not 1 <= n_components <= available:
        raise ValueError(
            f"n_components={n_components} must be between 1 and {available}, the number of "
            f"{what}."
        )
    return int(n_components)


def _signs(V):
    """Column signs making each column's largest-magnitude entry positive (deterministic)."""
    if V.size == 0:
        return np.ones(V.shape[1])
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return signs


def symmetric_eigen(C, n_components=None, rtol=RANK_RTOL):
    """Leading eigenpairs of the symmetric PSD matrix ``C`` (PCA), where C is (NumPy, or a
    namespace's device).

    Eigenvalues below ``rtol * max`` are floored to zero and count as outside the rank; with
    ``n_components=None`` all components above the floor are returned.

    Returns
    -------
    EigenResult
    """
    xp = namespace_of(C)
    vals, vecs = symmetric_eigh(C, driver=None)
    host = np.asarray(to_numpy(vals), dtype=np.float64)
    top = max(float(host[0]), 0.0) if host.size else 0.0
    rank = int(np.count_nonzero(host > rtol * top))
    k = _check_k(n_components, rank if n_components is None else C.shape[0], "features")
    vals = xp.where(vals > rtol * top, vals, xp.zeros_like(vals))
    return EigenResult(vals[:k], sign_columns(xp, vecs[:, :k]), rank=rank,
                       message=f"eigh of a {C.shape[0]}x{C.shape[0]} matrix, rank {rank}")


def relative_ridge(C, ridge):
    """Absolute ridge ``ridge * trace(C) / p``: scale-free, as the KSIR pitfall advises."""
    return float(ridge) * float(np.trace(C)) / max(C.shape[0], 1)


def whitening(C, ridge=0.0, rtol=RANK_RTOL):
    """A matrix T with ``T^T (C + ridge I) T = I_r`` on the numerical range of C + ridge I.

    Cholesky first (T = L^{-T}, r = p); if it fails or a pivot falls below ``rtol`` times the
    largest diagonal entry (numerically singular), an eigendecomposition ``Q D Q^T`` with
    eigenvalues at or below ``rtol * max`` dropped: T = Q_r D_r^{-1/2}, a pseudo-inverse
    square root (``T T^T`` is the pseudo-inverse of C + ridge I on its numerical range).

    Returns
    -------
    T : ndarray of shape (p, r)
    how : str
        'cholesky' or 'eigen (r of p kept)'.
    """
    A = C + ridge * np.eye(C.shape[0])
    scale = float(np.max(np.diag(A))) if A.size else 0.0
    if scale <= 0:
        raise ValueError("The covariance is zero: the features do not vary over the data.")
    try:
        L = la.cholesky(A, lower=True)
        if np.min(np.diag(L)) ** 2 > rtol * scale:
            T = la.solve_triangular(L, np.eye(A.shape[0]), lower=True).T
            return T, "cholesky"
    except la.LinAlgError:
        pass
    vals, vecs = la.eigh(A)
    keep = vals > rtol * max(vals[-1], 0.0)
    if not keep.any():
        raise ValueError("The matrix is zero (or negative) on every eigen-direction.")
    T = vecs[:, keep] / np.sqrt(vals[keep])
    return T, f"eigen ({T.shape[1]} of {A.shape[0]} kept)"


def generalized_low_rank_eigen(W, C, ridge=0.0, n_components=None, rtol=RANK_RTOL):
    """Solve ``W W^T beta = lambda (C + ridge I) beta`` for a thin W (p x J).

    The between-slice covariance of SIR is ``W W^T`` with rank <= J, so the problem reduces
    to the J x J symmetric matrix ``M = W^T (C + ridge I)^{-1} W``; with the whitening
    ``T^T (C + ridge I) T = I`` it is ``M = Wt^T Wt`` for ``Wt = T^T W``, and the SVD
    ``Wt = A S B^T`` gives ``lambda = S^2`` and ``beta = T A`` (the same as
    ``(C + ridge I)^{-1} W u / sqrt(lambda)`` for the eigenvectors u = B of M, without
    squaring the condition number). Directions satisfy ``beta^T (C + ridge I) beta = I``.

    Returns
    -------
    EigenResult
        ``values`` are the lambdas (in [0, 1] for SIR), ``rank`` the number above the floor.
    """
    T, how = whitening(C, ridge, rtol)
    A, s, _ = la.svd(T.T @ W, full_matrices=False)
    lam = s**2
    top = lam[0] if lam.size else 0.0
    rank = int(np.count_nonzero(lam > rtol * max(top, np.finfo(float).tiny)))
    k = _check_k(n_components, rank, "non-zero between-slice directions")
    beta = T @ A[:, :k]
    beta *= _signs(beta)
    return EigenResult(lam[:k], beta, rank=rank,
                       message=f"whitening by {how}, SVD of a {W.shape[0]}x{W.shape[1]} matrix")


def canonical_correlations(S11, S22, S12, ridge_x=0.0, ridge_y=0.0, n_components=None,
                           rtol=RANK_RTOL):
    """Canonical correlation analysis from (cross-)covariances, by whitening + SVD.

    Solves ``[0 S12; S21 0][a; b] = rho [S11 + rx I, 0; 0, S22 + ry I][a; b]``: with
    ``T1^T (S11 + rx I) T1 = I`` and ``T2^T (S22 + ry I) T2 = I`` (Cholesky whitening), the
    SVD ``T1^T S12 T2 = U diag(rho) V^T`` gives ``a = T1 U`` and ``b = T2 V``, so the variates
    have unit (regularised) variance and correlations ``rho`` in [0, 1].

    Returns
    -------
    EigenResult
        ``values`` = rho (decreasing), ``vectors`` = a, ``vectors_y`` = b.
    """
    T1, how1 = whitening(S11, ridge_x, rtol)
    T2, how2 = whitening(S22, ridge_y, rtol)
    U, rho, Vt = la.svd(T1.T @ S12 @ T2, full_matrices=False)
    rank = rho.size
    k = _check_k(n_components, rank, "canonical pairs (min of the two views' ranks)")
    a, b = T1 @ U[:, :k], T2 @ Vt[:k].T
    signs = _signs(a)  # the same flip on both views keeps every pair positively correlated
    return EigenResult(np.clip(rho[:k], 0.0, None), a * signs, b * signs, rank=rank,
                       message=f"whitening by {how1} / {how2}, SVD of "
                               f"{T1.shape[1]}x{T2.shape[1]}")
