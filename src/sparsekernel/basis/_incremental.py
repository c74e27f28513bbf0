"""IRSVM (Lee, Lo & Huang 2003; review Algorithm 1): add a centre only if its kernel column
carries information the current columns do not span."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._base import (
    BasisResult,
    BasisSelector,
    default_kernel,
    row_bytes,
    rows_within,
    subsample_rows,
)

__all__ = ["IncrementalBasis", "IncrementalQR"]

#: Relative residuals at or below this are rounding noise of a dependent column (the columns
#: are orthogonalised in float64; two Gram-Schmidt passes leave errors near 1e-15).
_RANK_TOL = np.sqrt(np.finfo(np.float64).eps)


class IncrementalQR:
    """An orthonormal basis Q of span(K(A, Z)), grown one column at a time.

    ``K(A, Z) = Q R`` is a thin QR factorisation kept up to date by Gram-Schmidt with
    re-orthogonalisation (two passes, "twice is enough"), so the least-squares problem
    ``min_beta ||K(A, Z) beta - k||`` of the review's eqs. (25)-(28) is never re-solved: its
    residual is ``k - Q Q^T k``. Adding a column costs O(n_rows m); the distance of b
    candidate columns costs O(n_rows m b).

    Parameters
    ----------
    n_rows : int
        Rows of A (the length of every column).
    max_cols : int
        Capacity; at most ``n_rows`` independent columns exist.

    See Also
    --------
    IncrementalBasis : The selector that accepts kernel columns with it.
    """

    def __init__(self, n_rows, max_cols):
        self.Q = np.empty((n_rows, min(max_cols, n_rows)))
        self.n_cols = 0

    @property
    def basis(self):
        """The orthonormal columns found so far, shape (n_rows, n_cols)."""
        return self.Q[:, : self.n_cols]

    def residuals(self, columns):
        """``(I - Q Q^T) columns`` for an (n_rows, b) array, in two projection passes."""
        Q = self.basis
        R = np.array(columns, dtype=np.float64, copy=True)
        if self.n_cols:
            R -= Q @ (Q.T @ R)
            R -= Q @ (Q.T @ R)
        return R

    def distance(self, columns):
        """Euclidean distance of each column to span(Q): the square root of eq. (25)'s optimum."""
        R = self.residuals(np.asarray(columns, dtype=np.float64).reshape(self.Q.shape[0], -1))
        return np.linalg.norm(R, axis=0)

    def add(self, residual):
        """Append the normalised residual of an accepted column (one more cleaning pass)."""
        if self.n_cols >= self.Q.shape[1]:
            raise ValueError(f"IncrementalQR is full: {self.n_cols} columns of {self.Q.shape[0]}"
                             " rows.")
        q = self.residuals(residual[:, None])[:, 0]
        q /= np.linalg.norm(q)
        self.Q[:, self.n_cols] = q
        self.n_cols += 1
        return q


class IncrementalBasis(BasisSelector):
    """Incremental reduced set (IRSVM): keep a random candidate x_j only when its kernel column
    K(A, x_j) is far from the column space of the current K(A, Z).

    Candidates are visited in random order; the distance r_j (review eq. 28) comes from an
    incrementally updated QR factor of K(A, Z) (:class:`IncrementalQR`). A candidate is
    accepted when ``r_j / ||K(A, x_j)|| > delta``: the sine of the angle between the new
    column and the current span, which unlike the paper's absolute threshold does not depend
    on how many rows A has (the paper's ``r >= delta_abs`` is ``delta = delta_abs /
    ||K(A, x_j)||``). Selection stops after ``max_rejections`` consecutive rejections, at
    ``n_basis`` centres (a limit: the scheme chooses the size), or when candidates run out.

    Parameters
    ----------
    delta : float, default=0.1
        Relative distance threshold in [0, 1). ``delta=0`` still rejects columns whose
        relative distance is rounding noise (below sqrt(machine epsilon)), so K(A, Z) always
        keeps full column rank.
    max_rejections : int, default=100
        Stop after this many consecutive rejected candidates ("several successive points").
    max_rows : int or None, default=5000
        Rows of A: a random subsample of this many training rows (at least ``2 * n_basis``);
        None uses all rows.
    batch_size : int, default=128
        Candidates whose kernel columns are computed together (the acceptance test is still
        sequential: the residuals of the batch are updated after every accepted column).

    Notes
    -----
    Cost with n_A rows, m accepted centres and T candidates examined: O(T n_A (d + m)) time
    (kernel columns plus two projections each) and O(n_A (m + batch_size)) memory, against
    the paper's O(T m^3) for re-solving the normal equations per candidate.

    See Also
    --------
    SystematicBasis : Rows chosen by the training error of the reduced SVM.
    RandomBasis : Random rows, no test of independence.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 3: IRSVM).
    """

    def __init__(self, *, delta=0.1, max_rejections=100, max_rows=5000, batch_size=128):
        self.delta = delta
        self.max_rejections = max_rejections
        self.max_rows = max_rows
        self.batch_size = batch_size

    def _check(self):
        if not 0 <= self.delta < 1:
            raise ValueError(f"IncrementalBasis: delta must be in [0, 1). Got {self.delta!r}.")
        for name in ("max_rejections", "batch_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"IncrementalBasis: {name} must be a positive int. "
                                 f"Got {getattr(self, name)!r}.")

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self._check()
        rng = check_random_state(random_state)
        kernel = kernel if kernel is not None else default_kernel(X)
        n = X.shape[0]
        # Q (rows x n_basis), a batch's kernel columns and residuals, and the rows themselves.
        per_row = 8.0 * (n_basis + 2 * self.batch_size) + row_bytes(X)
        limit = rows_within(kernel, per_row, self.max_rows)
        A = X[subsample_rows(n, limit, rng, min(2 * n_basis, limit or n))]
        n_rows = A.shape[0]
        qr = IncrementalQR(n_rows, n_basis)
        tau = max(self.delta, _RANK_TOL)
        order = rng.permutation(n)
        chosen, rejected, examined, stop = [], 0, 0, "candidates exhausted"
        for start in range(0, n, self.batch_size):
            batch = order[start:start + self.batch_size]
            cols = np.asarray(kernel(A, X[batch]), dtype=np.float64)
            R = qr.residuals(cols)
            norms = np.linalg.norm(cols, axis=0)
            for j, idx in enumerate(batch):
                examined += 1
                r = np.linalg.norm(R[:, j])
                if norms[j] > 0 and r > tau * norms[j]:
                    q = qr.add(R[:, j])
                    R[:, j + 1:] -= np.outer(q, q @ R[:, j + 1:])
                    chosen.append(idx)
                    rejected = 0
                else:
                    rejected += 1
                stop = self._stop_reason(len(chosen), n_basis, qr, rejected)
                if stop:
                    break
            if stop:
                break
        stop = stop or "candidates exhausted"
        idx = np.asarray(chosen, dtype=np.intp)
        info = {"n_candidates": examined, "n_rows": n_rows, "stopped": stop}
        return BasisResult(centers=X[idx], indices=idx, info=info)

    def _stop_reason(self, m, n_basis, qr, rejected):
        if m >= n_basis:
            return "n_basis reached"
        if qr.n_cols >= qr.Q.shape[1]:
            return "rank limit of the row subsample reached"
        if rejected >= self.max_rejections:
            return f"{rejected} consecutive rejections"
        return ""
