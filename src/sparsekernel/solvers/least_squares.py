"""Linear systems of the least-squares SVM (LS-SVM) family.

The objective, ``1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2`` with sample weights
``s_i`` and an unpenalized bias (Suykens & Vandewalle 1999), is the LS-SVM family's, stated
in :mod:`sparsekernel.lssvm._base`. Three ways to solve it:

- :func:`lssvm_dual`: the exact (n+1) bordered system on a kernel matrix ``K``::

      [0   1^T              ] [b    ]   [0]
      [1   K + diag(1/(C s))] [alpha] = [y]

  solved by one Cholesky factorization of ``A = K + diag(1/(C s))`` and two solves
  (``A eta = 1``, ``A nu = y``; ``b = 1^T nu / 1^T eta``, ``alpha = nu - b eta``), never an
  explicit inverse.
- :func:`lssvm_primal`: the (m+1) normal equations on explicit features ``F`` (n x m), in the
  centred form (weighted means ``fbar``, ``ybar``; ``F_c = F - 1 fbar^T``; the unpenalized
  bias eliminated, which conditions the system better than the bordered one)::

      (F_c^T S F_c + I / C) w = F_c^T S (y - ybar),   b = ybar - fbar^T w

  :func:`lssvm_normal_equations` returns them factored (:class:`NormalEquations`) for
  callers that reuse the factor.
- :class:`LSSVMPath`: the dual system on shrinking subsets of one kernel matrix's rows (batch
  pruning), refactoring only the trailing part of a factor kept in the rows' priority order.
- :class:`IncrementalLSSVM`: the dual system on a working set that grows and shrinks one point
  at a time in O(N_w^2) (bordered update / downdate of the inverse of ``A``), with a periodic
  full refactorization that bounds the drift.

Several target columns (one-vs-rest classes) share one system. Every factorization goes
through :func:`~sparsekernel.compute.spd_cholesky`, the package's one jitter policy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve
from scipy.linalg.blas import dger as _dger

from ..compute import (
    cholesky_solve,
    map_threads,
    mirror_lower,
    namespace_of,
    planned_threads,
    spd_cholesky,
    syrk_lower,
    to_numpy,
)
from ._blocks import as_row_blocks
from ._result import SolverResult

__all__ = ["IncrementalLSSVM", "LSSVMPath", "NormalEquations", "lssvm_dual",
           "lssvm_normal_equations", "lssvm_primal"]


def _result(coef, intercept, objective, n_iter, message):
    return SolverResult(coef=coef, intercept=intercept, objective=float(objective),
                        grad_norm=float("nan"), tol_reached=float("nan"), n_iter=n_iter,
                        converged=True, status="converged", message=message)


def lssvm_dual(K, y, C, sample_weight=None):
    """Solve the exact LS-SVM bordered system on a kernel matrix.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semidefinite kernel matrix (not modified).
    y : ndarray of shape (n,) or (n, k)
        Targets; several columns share one factorization.
    C : float
        Weight of the squared-error term (module docstring).
    sample_weight : ndarray of shape (n,), optional
        Positive weights ``s_i``; rows of zero weight must be removed by the caller (their
        ``alpha`` is 0).

    Returns
    -------
    SolverResult
        ``coef`` = alpha (shape (n,) or (n, k)), ``intercept`` = b (float or (k,)),
        ``objective`` = 1/2 alpha^T K alpha + C/2 sum s e^2 summed over columns.
    """
    K = np.asarray(K, dtype=np.float64)
    Y = np.asarray(y, dtype=np.float64)
    n = K.shape[0]
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,) or not np.all(sw > 0) or not np.all(np.isfinite(sw)):
        raise ValueError(
            f"sample_weight must be a positive finite array of shape ({n},); drop rows of zero "
            f"weight before solving. Got shape {sw.shape}."
        )
    A = K + np.diag(1.0 / (C * sw))
    L, jitter = spd_cholesky(A)
    eta = cho_solve((L, True), np.ones(n), check_finite=False)
    nu = cho_solve((L, True), Y, check_finite=False)
    b = nu.sum(axis=0) / eta.sum()
    alpha = nu - np.multiply.outer(eta, b)
    # KKT: alpha_i = C s_i e_i, so the residuals need no second pass over K.
    e = alpha / (C * sw.reshape((-1,) + (1,) * (Y.ndim - 1)))
    objective = 0.5 * np.sum(alpha * (K @ alpha)) + 0.5 * C * np.sum(sw @ (e * e))
    msg = f"Cholesky of the {n}x{n} LS-SVM system" + (f" (jitter {jitter:g})" if jitter else "")
    return _result(alpha, b if Y.ndim > 1 else float(b), objective, 1, msg)


class LSSVMPath:
    """:func:`lssvm_dual` on shrinking subsets of the rows of one kernel matrix, as batch
    pruning refits it (Suykens et al. 2000: drop the smallest |alpha|, refit).

    The Cholesky factor of ``A = K + diag(1/(C s))`` is kept with its rows in the order of
    the caller's priority (the last fit's |alpha|, largest first), so the rows pruned next
    sit at its end. On a subset, the factor's leading rows up to the first removed one are
    still the factor of those rows (a row's entries left of the diagonal depend only on the
    rows above it); only the Schur complement of the other rows is formed (one product of
    their leading columns with themselves) and factored. Pruning 5 % a round, that leaves
    a small fraction of a full factorization a round. A factor that
    needed a jitter, or a subset that keeps less than ``REFACTOR_LEAD`` of the factor, is
    refactored whole (the Schur complement of a jittered factor would be another matrix's).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semidefinite kernel matrix of all the rows (not modified).
    Y : ndarray of shape (n,) or (n, k)
        Targets.
    C : float
    sample_weight : ndarray of shape (n,), optional
        Positive weights.
    """

    #: Fraction of the factor that must stay leading for a Schur update instead of a refactor.
    REFACTOR_LEAD = 0.5

    def __init__(self, K, Y, C, sample_weight=None):
        self.K, self.Y, self.C = K, np.asarray(Y, dtype=np.float64), float(C)
        n = K.shape[0]
        self.sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        self.order, self.L, self.jitter = np.zeros(0, dtype=np.intp), None, 0.0

    def solve(self, rows, priority=None):
        """The exact LS-SVM on ``rows`` (sorted indices): a :class:`SolverResult` with
        ``coef`` aligned to ``rows``. ``priority`` (shape (n,)): rows refactored are put in
        its decreasing order (None: as given)."""
        rows = np.asarray(rows, dtype=np.intp)
        lead = self._lead(rows)
        rest = np.setdiff1d(rows, self.order[:lead], assume_unique=True)
        if priority is not None:
            rest = rest[np.argsort(-np.asarray(priority)[rest], kind="stable")]
        self._factor(lead, rest)
        Y = self.Y[self.order]
        rhs = np.column_stack([np.ones(len(rows)), Y.reshape(len(rows), -1)])
        sol = cho_solve((self.L, True), rhs, check_finite=False)  # one pass for both
        eta, nu = sol[:, 0], sol[:, 1:]
        b = nu.sum(axis=0) / eta.sum()
        alpha = nu - np.multiply.outer(eta, b)
        cs = (self.C * self.sw[self.order])[:, None]
        # K alpha = y - b - alpha / (C s) (the system's rows): no product with K
        fitted = Y.reshape(alpha.shape) - b - alpha / cs
        objective = 0.5 * np.sum(alpha * fitted) + 0.5 * np.sum(alpha * alpha / cs)
        back = np.empty_like(alpha)
        back[np.searchsorted(rows, self.order)] = alpha  # the factor's order -> rows'
        if self.Y.ndim == 1:
            back, b = back[:, 0], float(b[0])
        msg = (f"Cholesky of the {len(rows)}x{len(rows)} LS-SVM system, {lead} leading rows "
               "kept" + (f" (jitter {self.jitter:g})" if self.jitter else ""))
        return _result(back, b, objective, 1, msg)

    def _lead(self, rows):
        """How many leading rows of the factor ``rows`` keep (0: refactor whole)."""
        if self.L is None or self.jitter or not np.isin(rows, self.order).all():
            return 0
        removed = ~np.isin(self.order, rows)
        lead = int(np.argmax(removed)) if removed.any() else len(self.order)
        return lead if lead >= self.REFACTOR_LEAD * len(self.order) else 0

    def _factor(self, lead, rest):
        """The factor of ``order[:lead] + rest``: the leading block kept, the rest from the
        Schur complement of its rows (the whole matrix when lead is 0)."""
        A = np.take(np.take(self.K, rest, axis=0), rest, axis=1)
        A[np.diag_indices(len(rest))] += 1.0 / (self.C * self.sw[rest])
        if lead == 0:
            self.L, self.jitter = spd_cholesky(A, overwrite=True)
            self.order = rest
            return
        place = np.empty(len(self.K), dtype=np.intp)
        place[self.order] = np.arange(len(self.order))  # each row's place in the old factor
        L21 = self.L[place[rest], :lead]
        A -= L21 @ L21.T
        L22, jitter = spd_cholesky(A, overwrite=True)
        if jitter:  # the complement needed one: refactor whole under the one policy
            self.L = None
            return self._factor(0, np.concatenate([self.order[:lead], rest]))
        n = lead + len(rest)
        L = np.zeros((n, n))
        L[:lead, :lead] = self.L[:lead, :lead]
        L[lead:, :lead] = L21
        L[lead:, lead:] = L22
        self.L, self.order = L, np.concatenate([self.order[:lead], rest])


@dataclass
class NormalEquations:
    """The centred (m+1) normal equations of the LS-SVM on explicit features, factored.

    ``A w = rhs`` with ``A = F_c^T S F_c + I / C`` and ``rhs = F_c^T S (Y - ybar)``;
    ``b = ybar - fbar^T w``. Built by :func:`lssvm_normal_equations`; :meth:`solution`
    solves them, and :meth:`solve` lets a caller reuse the factor (the LR-LSSVM criterion
    gradient differentiates through ``w(F)`` with it).

    Attributes
    ----------
    fbar : ndarray of shape (m,)
        Weighted feature means ``F^T s / sum(s)``.
    ybar : float or ndarray of shape (k,)
        Weighted target means.
    gram : ndarray of shape (m, m)
        ``A`` (the ``I / C`` ridge included).
    rhs : ndarray of shape (m,) or (m, k)
    yy : float
        ``sum_i s_i ||y_i - ybar||^2``, for the objective without another pass over F.
    L : ndarray of shape (m, m)
        Lower Cholesky factor of ``A`` (plus ``jitter``, see ``solvers._spd``).
    jitter : float
        Relative jitter the factorization needed (0.0 normally).
    """

    fbar: np.ndarray
    ybar: np.ndarray
    gram: np.ndarray
    rhs: np.ndarray
    yy: float
    L: np.ndarray
    jitter: float
    C: float

    def solve(self, B):
        """``A^{-1} B`` through the factor (on the factor's device for a factor of an
        array-API namespace: :func:`~sparsekernel.compute.cholesky_solve`)."""
        if namespace_of(self.L) is not np:
            return cholesky_solve(self.L, B)
        return cho_solve((self.L, True), B, check_finite=False)

    def solution(self):
        """The LS-SVM solution as a :class:`SolverResult` (see :func:`lssvm_primal`); the
        system may be on a namespace's device (summed there), the result is NumPy's."""
        w = self.solve(self.rhs)
        gw = self.gram @ w
        w, gw, rhs, fbar, ybar = (np.asarray(to_numpy(a)) for a in (
            w, gw, self.rhs, self.fbar, self.ybar))
        b = ybar - fbar @ w
        # e^T S e = yc^T S yc - 2 w^T R + w^T (A - I/C) w, without another pass over F.
        sse = self.yy - 2.0 * np.sum(w * rhs) + np.sum(w * gw) - np.sum(w * w) / self.C
        objective = 0.5 * np.sum(w * w) + 0.5 * self.C * max(sse, 0.0)
        m = fbar.shape[0]
        msg = f"Cholesky of the centred {m}x{m} normal equations" + (
            f" (jitter {self.jitter:g})" if self.jitter else "")
        return _result(w, b if np.ndim(b) else float(b), objective, 1, msg)


def lssvm_normal_equations(F, y, C, sample_weight=None):
    """Accumulate and factor the centred normal equations of the LS-SVM on features ``F``.

    Parameters
    ----------
    F : ndarray, CSR matrix or row-block object of shape (n, m)
        Explicit features, read block by block (peak memory O(m^2 + block m)).
    y : ndarray of shape (n,) or (n, k)
        Targets.
    C : float
        Weight of the squared-error term (module docstring).
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights with a positive sum.

    Returns
    -------
    NormalEquations
    """
    blocks = as_row_blocks(F)
    Y = np.asarray(y, dtype=np.float64)
    n, m = blocks.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    fsum = np.zeros(m)
    for rows, Fb in blocks:  # first pass: weighted means
        fsum += np.asarray(Fb.T @ sw[rows], dtype=np.float64).ravel()
    fbar, ybar = fsum / sw.sum(), (sw @ Y) / sw.sum()
    G, R = _centred_sums(blocks, fbar, ybar, Y, sw)
    Yc = Y - ybar
    G[np.diag_indices(m)] += 1.0 / C
    L, jitter = spd_cholesky(G)
    return NormalEquations(fbar, ybar, G, R, float(np.sum(sw @ (Yc * Yc))), L, jitter, float(C))


def _centred_sums(blocks, fbar, ybar, Y, sw):
    """F_c^T S F_c and F_c^T S Y_c over the row blocks, as many blocks at a time as there
    are planned threads (each a one-thread ``syrk`` on the lower triangle, half the
    multiply-adds of a product), so memory holds that many blocks."""
    m = blocks.shape[1]
    G, R = np.zeros((m, m)), np.zeros((m,) + Y.shape[1:])

    def sums(item):
        rows, Fb = item
        Fc = np.asarray(Fb.toarray() if hasattr(Fb, "toarray") else Fb, dtype=np.float64) - fbar
        root = np.sqrt(sw[rows])[:, None]
        Fc *= root
        return (syrk_lower(np.zeros((m, m)), Fc),
                Fc.T @ ((Y[rows] - ybar) * (root if Y.ndim == 2 else root[:, 0])))

    n_threads = planned_threads()
    items = iter(blocks)
    while group := list(itertools.islice(items, n_threads)):
        for g, r in map_threads(sums, group, n_threads):
            G += g
            R += r
    return mirror_lower(G), R


def lssvm_primal(F, y, C, sample_weight=None):
    """Solve the LS-SVM on explicit features through the centred (m+1) normal equations.

    Parameters
    ----------
    F, y, C, sample_weight
        As in :func:`lssvm_normal_equations`.

    Returns
    -------
    SolverResult
        ``coef`` = w (shape (m,) or (m, k)), ``intercept`` = b (float or (k,)),
        ``objective`` as in the module docstring (summed over columns).
    """
    return lssvm_normal_equations(F, y, C, sample_weight).solution()


class IncrementalLSSVM:
    """Exact LS-SVM on a working set that changes one point at a time.

    The working set lives in ``capacity`` slots. The solver keeps
    ``H = (K_w + diag(1/(C s)))^{-1}`` over the occupied slots, with zero rows and columns at
    free slots, so a point is added into a free slot by bordering ``H`` (Schur complement) and
    removed by a rank-one downdate that zeroes its row and column: both O(N_w^2), in place,
    without moving any other point. The working set's kernel matrix ``K_w`` is kept too, so
    that every ``refactor_every`` updates ``H`` is recomputed from scratch (Cholesky,
    O(N_w^3)), which bounds the round-off drift of the rank-one updates.

    Parameters
    ----------
    capacity : int
        Largest working-set size (e.g. N_w + 1 for online pruning).
    C : float
        Weight of the squared-error term (module docstring).
    refactor_every : int or None, default=500
        Updates between full refactorizations; None never refactorizes.

    Notes
    -----
    The solver never sees inputs x, only kernel values (:meth:`add`); ``keys`` holds a
    caller-given integer per slot.
    """

    def __init__(self, capacity, C, refactor_every=500):
        self.capacity, self.C, self.refactor_every = int(capacity), float(C), refactor_every
        cap = self.capacity
        self.H = np.zeros((cap, cap))
        self.K = np.zeros((cap, cap))
        self.y = np.zeros(cap)
        self.s = np.ones(cap)
        self.keys = np.zeros(cap, dtype=np.int64)
        self.active = np.zeros(cap, dtype=bool)
        self._rhs = np.zeros((cap, 2))  # columns: occupancy (the "1" vector) and y
        self._free = list(range(cap - 1, -1, -1))
        self.n_updates = self.n_refactor = self._since_refactor = 0
        self._solution = None

    @property
    def size(self):
        return self.capacity - len(self._free)

    def add(self, k_slots, k_self, y, key=-1, weight=1.0):
        """Put one point in a free slot; return the slot.

        Parameters
        ----------
        k_slots : ndarray of shape (capacity,)
            K(x, point in slot j) for every slot j (free slots: any value).
        k_self : float
            K(x, x).
        y, key, weight : float, int, float
            Target, caller's identifier and sample weight (> 0) of the point.
        """
        if not self._free:
            raise ValueError(f"The working set is full ({self.capacity} points); remove first.")
        p = self._free.pop()
        k = np.where(self.active, k_slots, 0.0)
        u = self.H @ k  # zero at free slots, since H has zero rows there
        schur = k_self + 1.0 / (self.C * weight) - k @ u
        singular = not schur > 0
        if not singular:
            _rank_one(self.H, u, 1.0 / schur)
            self.H[:, p] = self.H[p, :] = -u / schur
            self.H[p, p] = 1.0 / schur
        self.K[:, p] = self.K[p, :] = k
        self.K[p, p] = k_self
        self.y[p], self.s[p], self.keys[p], self.active[p] = y, weight, key, True
        self._rhs[p] = (1.0, y)
        self._updated(force=singular)
        return p

    def remove(self, slot):
        """Free ``slot`` (its point leaves the working set)."""
        if not (0 <= slot < self.capacity and self.active[slot]):
            raise IndexError(f"Slot {slot} does not hold a point of the working set.")
        h = self.H[:, slot].copy()
        _rank_one(self.H, h, -1.0 / h[slot])
        self.H[:, slot] = self.H[slot, :] = 0.0
        self.active[slot] = False
        self._rhs[slot] = 0.0
        self._free.append(slot)
        self._updated()

    def _updated(self, force=False):
        self.n_updates += 1
        self._since_refactor += 1
        self._solution = None
        every = self.refactor_every
        if force or (every is not None and self._since_refactor >= every):
            self.refactorize()

    def refactorize(self):
        """Recompute H from K_w by Cholesky (drops the accumulated round-off)."""
        self._since_refactor = 0
        idx = np.flatnonzero(self.active)
        self.H[:] = 0.0
        if idx.size == 0:
            return
        A = self.K[np.ix_(idx, idx)] + np.diag(1.0 / (self.C * self.s[idx]))
        L, _ = spd_cholesky(A)
        self.H[np.ix_(idx, idx)] = cho_solve((L, True), np.eye(idx.size), check_finite=False)
        self.n_refactor += 1

    def solve(self):
        """(alpha, b) over all slots (alpha = 0 at free slots); cached until the next update."""
        if self._solution is None:
            if self.size == 0:
                raise ValueError("The working set is empty.")
            eta_nu = self.H @ self._rhs
            b = eta_nu[:, 1].sum() / eta_nu[:, 0].sum()
            self._solution = (eta_nu[:, 1] - b * eta_nu[:, 0], float(b))
        return self._solution

    def result(self):
        """The current solution as a :class:`SolverResult` (coef = alpha over the occupied
        slots, in slot order)."""
        alpha, b = self.solve()
        idx = np.flatnonzero(self.active)
        a = alpha[idx]
        e = a / (self.C * self.s[idx])
        objective = 0.5 * a @ (self.K[np.ix_(idx, idx)] @ a) + 0.5 * self.C * (self.s[idx] @ e**2)
        return _result(a, b, objective, self.n_updates,
                       f"{self.n_updates} bordered updates, {self.n_refactor} refactorizations "
                       f"(every {self.refactor_every}) on a working set of {idx.size}")


def _rank_one(H, u, scale):
    """H += scale * u u^T in place (BLAS dger on the transposed, Fortran-ordered view)."""
    out = _dger(scale, u, u, a=H.T, overwrite_a=True)
    if not np.shares_memory(out, H):  # BLAS made a copy: write it back
        H[:] = out.T

