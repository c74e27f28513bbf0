"""The Newton core: every problem of one loss on one feature matrix, at once.

Objective per column j of the targets (the SVM family's, :mod:`sparsekernel.svm._base`)::

    Phi_j(w, b) = 1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i l(f_i, Y_ij),   f = F w + b,

with ``l`` the squared hinge ``max(0, 1 - y f)^2`` (one-vs-rest classification: the
default), the squared epsilon-insensitive loss (regression), or a smooth loss (the SSVM
family's with finite smoothing, the logistic deviance). Each loss is a per-row state class
(:class:`HingeRows`, :class:`EpsilonRows`, :class:`SmoothRows`) on the same iteration.

The rows reach the solver through a provider (:mod:`sparsekernel.solvers._rows`: margins
``F W``, gradients ``[F 1]^T V``, the Gram sum of a row set, a copy of some rows), held in
memory, read block by block, on a device or on a cluster's workers; the solver is the same.
Its per-row state (targets, weights, margins, residuals, active sets) is kept where the
rows are, and the solver exchanges with it only m-, (m + 1) x k- and (m + 1)^2-sized sums,
counts and the line search's sums at trial steps.

With k problems on the same F and the exact squared hinge, three things are shared or
exact:

* From w = 0 every row violates the margin in every problem, so the first Hessian
  ``I + C [F 1]^T S [F 1]`` is the same for all k: one ``syrk`` and one Cholesky serve every
  class, and the first step moves all of them most of the way.
* The products with all n rows (gradients ``F^T V`` and directions ``F D``) are done for
  all unconverged problems at once, as BLAS-3 products that read F once per iteration.
* Later Hessians involve only each problem's active rows (those inside the margin), a
  fraction of n; each is built and factored on one BLAS thread, the problems side by side
  on the planned threads (:mod:`sparsekernel.compute`). A problem with fewer
  active rows than basis functions (small n, large m) solves the active rows' own system
  instead (Woodbury), when that costs fewer flops.

The exact losses are piecewise quadratic, so the step length along a Newton direction is
found exactly (the root of a piecewise-linear increasing derivative: :mod:`._line_search`)
instead of by backtracking, and the iteration ends exactly when the active set stops
changing: typically 4-8 iterations. On a smooth loss every row's curvature changes at every
step, so each Hessian is summed anew (never updated or kept) and the step is Armijo
backtracking's; the iteration ends by the gradient test. A step's new active rows (or
new curvatures) fix the next Hessian's rows before the next gradient is summed, so both are
summed in one pass over the rows (:meth:`_Newton._ahead`): two passes an iteration, with
the direction's margins.

Large problems (``n m^2 >= WARM_WORK``) start from the solution on every stride-th row
(:func:`_warm_stride`; C scaled by the stride, so that the objective is the same sum's
estimate), solved the same way. The first Hessian over all n rows, a large share of the
solver's time, is then replaced by one on the rows active at that start, a fraction of them.
How many rows the sample needs depends on m: a sample of a few rows per basis function fits
them and violates the margin on most unseen rows, so the first full Newton step stays nearly
as costly as from zero; a sample with several times as many rows per basis function leaves
far fewer rows active and the solve fewer full steps, which more than pays for the sample. So
the sample has WARM_PER_BASIS rows per basis function where that is at most every
WARM_MIN_STRIDE-th row, else every WARM_STRIDE-th row when that gives at least two per basis
function (larger samples cost more than they save). Each problem then takes one Newton step
on all rows at least: the sample's solution can meet the tolerance on the whole data's
gradient (whose scale, the gradient at zero, grows with n) and still be another model, several
Newton steps from the full data's optimum.
"""

from __future__ import annotations

import functools

import numpy as np

from ..compute import (
    blas_threads,
    copy_array,
    map_balanced,
    planned_threads,
    spd_solve,
    split_threads,
)
from ._constants import F32_PATIENCE, F32_ROUNDING, GATHER_BYTES
from ._line_search import backtrack, exact_steps, line_terms
from ._result import SolverResult
from ._rows import as_rows

__all__ = ["EpsilonRows", "HingeRows", "SmoothRows", "newton_ovr", "newton_ovr_bytes"]

#: A smooth loss's rows whose curvature l'' is below this are left out of the Hessian: next
#: to its identity term they are under double precision (:class:`SmoothRows`).
ACTIVE_RTOL = 1e-12
#: Rows gathered at a time into the active rows' system (:meth:`_Newton._dual_direction`).
_DUAL_CHUNK = 1024
#: Warm start (module docstring, :func:`_warm_stride`): from n m^2 of this size, on a sample
#: of WARM_PER_BASIS rows per basis function when that is at most every WARM_MIN_STRIDE-th
#: row, else on every WARM_STRIDE-th row when that gives at least two per basis function.
WARM_WORK, WARM_STRIDE, WARM_MIN_STRIDE, WARM_PER_BASIS = 1e10, 8, 3, 8


def newton_ovr(F, Y, C=1.0, sample_weight=None, tol=1e-6, max_iter=50, n_threads=None,
               hessian_bytes=2**30, gather_bytes=GATHER_BYTES, callback=None, loss=None,
               warm_start=True, x0=None):
    """Minimise Phi_j (module docstring) for every column j of ``Y``.

    Parameters
    ----------
    F : ndarray of shape (n, m), CSR matrix, row-block object or row provider
        The features, float32 or float64 (products stay in F's dtype, but for the
        Hessians of a float32 solve that stalls or needs a jitter; the Hessians, the
        margins and the iterates are float64), seen only through a row provider
        (:mod:`sparsekernel.solvers._rows`): a dense array's rows in memory, anything
        else's block by block (a stored CSR matrix, features recomputed from a kernel), a
        cluster's rows where they are.
    Y : array of shape (n, k)
        Targets in {-1, +1}, one column per problem: an ndarray, or what the provider
        keeps beside its rows (a dask array chunked as a cluster's rows).
    C : float
        Loss weight.
    sample_weight : array of shape (n,), optional
        Non-negative weights s_i shared by the problems (of the same kind as ``Y``).
    tol : float
        A problem has converged when ``||grad||_inf <= tol * max(1, ||grad at 0||_inf)``, or
        when a full Newton step left its active set unchanged (then it is exactly optimal).
    max_iter : int
        Maximum Newton iterations.
    n_threads : int, optional
        Threads for the products with F (split by rows) and the per-problem Hessians (one
        problem per thread); BLAS itself runs on one thread. Default: the planned threads
        (:func:`sparsekernel.compute.planned_threads`).
    hessian_bytes : int or float
        Memory allowed for keeping each problem's last Hessian ((m+1)^2 float64 each), so
        that the next one is an update by the rows that entered or left the active set
        instead of a rebuild from all active rows.
    gather_bytes : int or float
        Size of each thread's buffer of gathered rows when a Hessian is built (see
        :func:`newton_ovr_bytes` for the solver's whole working memory).
    callback : callable, optional
        Called after every iteration with a dict (n_iter, n_unconverged, n_active).
    loss : object, optional
        The loss ``l`` in place of ``max(0, 1 - Y_ij f_i)^2`` (None), a loss of
        :mod:`._losses`: the exact squared epsilon-insensitive loss
        (``SquaredSmoothEpsilonInsensitive(inf, epsilon)``, real targets:
        :class:`EpsilonRows`) with the exact line search, or a smooth one (finite
        smoothing, the logistic deviance: :class:`SmoothRows`), whose Hessian is rebuilt
        at every iteration and whose step is found by backtracking.
    warm_start : bool
        Whether a large problem may start from a sample's solution (module docstring); a
        caller whose memory plan cannot hold the sample's rows passes False.
    x0 : ndarray of shape (m + 1, k), optional
        Starting iterates ``[W; b]`` (a previous solution), instead of zero or a sample's
        solution.

    Returns
    -------
    list of SolverResult
        One per column of ``Y``: ``coef`` = w, ``intercept`` = b.
    """
    n_threads = planned_threads() if n_threads is None else max(1, int(n_threads))
    rows_state, smooth = _row_state(loss)
    coupled = loss if getattr(loss, "coupled", False) else None
    state = as_rows(F, n_threads, gather_bytes).state(rows_state, Y, sample_weight)
    try:
        return _Newton(state, Y.shape[1], C, n_threads, hessian_bytes, smooth,
                       coupled).solve(tol, max_iter, callback, warm_start, x0)
    finally:
        state.close()


def _row_state(loss):
    """``(state class, smooth)``: the per-row state of ``loss`` and whether it is smooth
    (a backtracking line search, no exact end)."""
    if loss is None:
        return HingeRows, False
    if getattr(loss, "coupled", False):
        return loss.state, True
    if np.isinf(getattr(loss, "alpha", 1.0)):
        epsilon = getattr(loss, "epsilon", None)
        return (HingeRows if epsilon is None else EpsilonRows.of(epsilon=epsilon)), False
    return SmoothRows.of(loss=loss), True


def _compact(Y):
    """Targets in the narrowest exact dtype: int8 for classification's -1/0/+1, else
    float64 (a state kept beside every row: one byte a row and problem, not eight)."""
    Y = np.asarray(Y)
    if Y.dtype != np.int8 and np.all((Y == 1) | (Y == -1) | (Y == 0)):
        return Y.astype(np.int8)
    return Y if Y.dtype == np.int8 else Y.astype(np.float64, copy=False)


def _unit_or(s, n):
    """The weights, as a read-only broadcast 1 (no per-row array) when all are 1."""
    if s is not None:
        s = np.asarray(s, dtype=np.float64)
        if not np.all(s == 1.0):
            return s
    return np.broadcast_to(np.float64(1.0), (n,))


class HingeRows:
    """The per-row state of k squared-hinge problems on one set of rows.

    Targets ``Y`` (n, k) in {-1, +1}, weights ``s``, margins ``f``; during an iteration the
    residuals ``R`` of the problems under test (``todo``), the margins ``U`` of their
    directions, and for each problem whose Hessian the solver keeps, the rows that Hessian
    was summed over (``kept``). Each method is one piece of the solver's work on these rows:
    it takes their provider ``F`` (the features) and returns a sum over the rows of m,
    (m + 1) x k, (m + 1)^2 or k values, so that rows held in parts (a cluster's chunks) keep
    one of these beside each part and add the parts' results
    (:meth:`~sparsekernel.solvers._rows.ArrayRows.state`). The methods named in
    ``UPDATES`` change the state; they rebind its arrays rather than writing into them, so
    that a part's previous state stays valid (a cluster recomputes a lost part from it).
    """

    UPDATES = frozenset({"refresh", "test", "select", "direction", "advance"})

    def __init__(self, Y, s=None):
        self.Y = _compact(Y)
        n, k = self.Y.shape
        self.s = _unit_or(s, n)
        self.f = np.zeros((n, k))
        self.todo = self.R = self.U = None
        self.kept = {}

    @classmethod
    def of(cls, **params):
        """The constructor ``state(Y, s)`` of a provider for this class with ``params``
        (``UPDATES`` included)."""
        make = functools.partial(cls, **params)
        make.UPDATES = cls.UPDATES
        return make

    def every(self, start, stride):
        """The state of rows start, start + stride, ... (their targets and weights)."""
        return HingeRows(self.Y[start::stride], self.s[start::stride])

    def refresh(self, F, Z, exact=False):
        """Margins from the iterates Z ((m + 1) x k)."""
        m = F.shape[1]
        self.f = F.margins(Z[:m], exact) + Z[m]

    def test(self, F, todo, C, kept, exact=False, grams=(), Z=None):
        """The loss part of problems ``todo``'s gradients, their :meth:`counts` (with
        ``kept``) and the squares of :meth:`gram` asked in ``grams`` ((col, j, dtype)
        each: a pass over the rows that computes their features once for all); keeps the
        residuals. With iterates ``Z``, the margins are first moved there and the loss
        part of every problem's gradient at zero is returned too (else None): a started
        solve's first test is one pass with its :meth:`refresh`."""
        if Z is not None:
            self.f = F.margins(Z[:F.shape[1]], exact) + Z[F.shape[1]]
        R, V = self._residuals(self.Y[:, todo], self.f[:, todo], C)
        self.todo, self.R = todo, R
        squares, requests = [], []
        for col, j, dtype in grams:
            H, asked = self._grams(F, None, col, j, C, None, dtype)
            squares.append(H)
            requests += asked
        if Z is None:
            return F.gradient(V, requests, exact), self.counts(kept), squares, None
        V0 = self._residuals(self.Y, np.zeros_like(self.f), C)[1]
        G = F.gradient(np.hstack([V, V0]), requests, exact)
        return G[:, :len(todo)], self.counts(kept), squares, G[:, len(todo):]

    def _residuals(self, Y, f, C):
        """``(R, V)`` at margins f of targets Y: the hinge's residuals (a row is active
        where R > 0) and the loss part of the gradient per row, ``C s dloss/df``."""
        R = 1.0 - Y * f
        return R, np.where(R > 0, R, 0.0) * (-C * self.s)[:, None] * Y

    def select(self, F, cols):
        """Keep the tested problems ``cols`` (of ``todo``), those still to solve."""
        self.todo, self.R = self.todo[cols], self.R[:, cols]

    def _active(self):
        return (self.R > 0) & (self.s > 0)[:, None]

    def counts(self, js):
        """For each tested problem (problem ``js[col]``): its active rows, the rows where
        its active set differs from the first problem's, and the rows that changed side
        since its kept Hessian (its active rows when it has none)."""
        active = self._active()
        changed = [np.count_nonzero(active[:, col] != self.kept[j]) if j in self.kept
                   else np.count_nonzero(active[:, col]) for col, j in enumerate(js)]
        return np.array([np.count_nonzero(active, axis=0),
                         np.count_nonzero(active != active[:, :1], axis=0), changed])

    def gram(self, F, H, col, j, C, threads=None, dtype=None):
        """``H += [F 1]_A^T diag(C s_A) [F 1]_A`` over problem ``col``'s active rows A, or,
        with ``j``, the update of problem j's kept Hessian: its rows that entered A
        added, those that left it subtracted. ``H`` None: a zero square (the provider's).
        Rows a provider rereads at every pass are read once for both sets."""
        H, requests = self._grams(F, H, col, j, C, threads, dtype)
        if len(requests) > 1 and F.rereads:
            F.gradient(np.zeros((F.shape[0], 1)), requests)
        else:
            for request in requests:
                F.add_gram(*request)
        return H

    def _weights(self, col, C):
        """Each row's curvature in problem ``col``'s Hessian while it is active."""
        return C * self.s

    def _grams(self, F, H, col, j, C, threads, dtype):
        """``(H, requests)``: :meth:`gram`'s square and its ``add_gram`` arguments."""
        if H is None:
            H = F.square(F.shape[1] + 1)
        active, cs = self._active()[:, col], self._weights(col, C)
        if j is None:
            return H, [(H, cs, np.flatnonzero(active), 1.0, threads, dtype)]
        was = self.kept[j]
        return H, [(H, cs, np.flatnonzero(active & ~was), 1.0, threads, dtype),
                   (H, cs, np.flatnonzero(was & ~active), -1.0, threads, dtype)]

    def _keep(self, js, cols):
        """Problems ``js`` keep Hessians summed over the active rows of ``cols`` (a col
        of None: problem j keeps none)."""
        kept, active = dict(self.kept), self._active()
        for j, col in zip(js, cols, strict=True):
            if col is None:
                kept.pop(j, None)
            else:
                kept[j] = active[:, col]
        self.kept = kept

    def take(self, F, col, C):
        """Problem ``col``'s active rows, ``[F 1]_A`` scaled by the root of their
        curvatures (``sqrt(C s_A)``)."""
        rows = np.flatnonzero(self._active()[:, col])
        A = np.empty((len(rows), F.shape[1] + 1))
        for start in range(0, len(rows), _DUAL_CHUNK):  # no gathered copy of all the rows
            part = rows[start:start + _DUAL_CHUNK]
            A[start:start + len(part), :-1] = F.take(part)
        A[:, -1] = 1.0
        A *= np.sqrt(self._weights(col, C)[rows])[:, None]
        return A

    def direction(self, F, D, C, keep=((), ())):
        """The margins of the directions D ((m + 1) x len(todo)), and :meth:`line` at
        t = 0 and t = 1; ``keep``: the arguments of :meth:`_keep` (the Hessians the
        solver kept while finding D)."""
        self._keep(*keep)
        m = F.shape[1]
        self.U = F.margins(D[:m]) + D[m]
        k = D.shape[1]
        return self.line(F, np.array([np.zeros(k), np.ones(k)]), np.full((2, k), np.nan), C)

    def line(self, F, T, P, C):
        """:func:`~sparsekernel.solvers._line_search.line_terms` of the tested problems'
        lines."""
        c = self.Y[:, self.todo] * self.U
        return line_terms(self.R, c, (C * self.s)[:, None] * c, T, P)

    def advance(self, F, t):
        """The margins moved by steps ``t`` along the directions; for each tested problem
        its active rows and those that changed side in the step."""
        f = self.f.copy()
        f[:, self.todo] += t * self.U
        active = (self.Y[:, self.todo] * f[:, self.todo] < 1.0) & (self.s > 0)[:, None]
        out = np.array([np.count_nonzero(active, axis=0),
                        np.count_nonzero(active != self._active(), axis=0)])
        self.f, self.U = f, None
        return out

    def loss(self, F, C):
        """``C/2 sum_i s_i max(0, 1 - Y_ij f_ij)^2`` of every problem."""
        r = np.maximum(1.0 - self.Y * self.f, 0.0)
        return 0.5 * C * (self.s @ (r * r))


class EpsilonRows(HingeRows):
    """The per-row state of k regressions with the exact squared epsilon-insensitive loss
    ``C/2 sum_i s_i max(0, |Y_ij - f_ij| - epsilon)^2`` (real targets ``Y``).

    Each row has two hinges, ``Y - epsilon - f`` and ``f - Y - epsilon``, at most one of
    them positive (epsilon >= 0): the residual is ``R = |Y - f| - epsilon``, its sign the
    side ``sign(Y - f)``, the curvature ``C s`` on either side, so the Hessians, their
    row sets and the row-space system are :class:`HingeRows`'. The line search sums both
    hinges' terms, and a step that moves a row from one side to the other changes the
    active set (the quadratic model is another one there).
    """

    def __init__(self, Y, s=None, epsilon=0.0):
        super().__init__(Y, s)
        self.epsilon = float(epsilon)

    def every(self, start, stride):
        return EpsilonRows(self.Y[start::stride], self.s[start::stride], self.epsilon)

    def _residuals(self, Y, f, C):
        D = Y - f
        R = np.abs(D) - self.epsilon
        return R, np.where(R > 0, R, 0.0) * (-C * self.s)[:, None] * np.sign(D)

    def line(self, F, T, P, C):
        """Both hinges' :func:`~sparsekernel.solvers._line_search.line_terms`."""
        D = self.Y[:, self.todo] - self.f[:, self.todo]
        cs = (C * self.s)[:, None]
        return (line_terms(D - self.epsilon, self.U, cs * self.U, T, P)
                + line_terms(-D - self.epsilon, -self.U, -cs * self.U, T, P))

    def _sides(self, f, todo):
        D = self.Y[:, todo] - f[:, todo]
        return np.where(np.abs(D) > self.epsilon, np.sign(D), 0.0) * (self.s > 0)[:, None]

    def advance(self, F, t):
        f = self.f.copy()
        f[:, self.todo] += t * self.U
        before, after = self._sides(self.f, self.todo), self._sides(f, self.todo)
        out = np.array([np.count_nonzero(after, axis=0),
                        np.count_nonzero(after != before, axis=0)])
        self.f, self.U = f, None
        return out

    def loss(self, F, C):
        r = np.maximum(np.abs(self.Y - self.f) - self.epsilon, 0.0)
        return 0.5 * C * (self.s @ (r * r))


class SmoothRows(HingeRows):
    """The per-row state of k problems with a smooth loss ``l`` (a loss of :mod:`._losses`
    with ``value(f, y)`` and ``derivatives(f, y) -> (l, l', l'')``): the squared smooth
    hinge or epsilon-insensitive loss of the SSVM family, the logistic deviance.

    The objective's loss part is ``C/2 sum_i s_i l(f_ij, Y_ij)``. Between iterations every
    row's curvature ``C/2 s_i l''`` changes, so each Hessian is summed anew from the rows
    whose curvature is not negligible (``l'' > ACTIVE_RTOL``: the "active" rows); ``R``
    holds the tested problems' curvatures. The step is found by backtracking on the
    objective, whose loss part at trial steps (:meth:`values`) is a sum over the rows like
    every other reduction.
    """

    def __init__(self, Y, s=None, loss=None):
        super().__init__(Y, s)
        self.loss_fn = loss

    def every(self, start, stride):
        return SmoothRows(self.Y[start::stride], self.s[start::stride], self.loss_fn)

    def _residuals(self, Y, f, C):
        """``(curvatures, V)``: ``C/2 s l''`` (0 where ``l''`` is negligible) and the
        loss part of the gradient per row, ``C/2 s l'``."""
        _, d1, d2 = self.loss_fn.derivatives(f, Y)
        cw = (0.5 * C * self.s)[:, None]
        return np.where(d2 > ACTIVE_RTOL, cw * d2, 0.0), cw * d1

    def _weights(self, col, C):
        return self.R[:, col]

    def counts(self, js):
        """For each tested problem: its active rows, the rows whose curvature differs
        from the first problem's, and its active rows again (no Hessian is kept: each is
        summed anew)."""
        active = self._active()
        n_active = np.count_nonzero(active, axis=0)
        return np.array([n_active, np.count_nonzero(self.R != self.R[:, :1], axis=0),
                         n_active])

    def direction(self, F, D, C, keep=((), ())):
        """The margins of the directions D, and the loss at t = 0 and t = 1 along them
        (:meth:`values`)."""
        m = F.shape[1]
        self.U = F.margins(D[:m]) + D[m]
        k = D.shape[1]
        return self.values(F, np.array([np.zeros(k), np.ones(k)]), C)

    def values(self, F, T, C):
        """The tested problems' loss parts at steps ``T`` (q, len(todo)) along their
        directions (NaN: not asked, 0)."""
        out = np.zeros(T.shape)
        f = self.f[:, self.todo]
        for q, col in np.ndindex(T.shape):
            if not np.isnan(T[q, col]):
                loss = self.loss_fn.value(f[:, col] + T[q, col] * self.U[:, col],
                                          self.Y[:, self.todo[col]])
                out[q, col] = 0.5 * C * (self.s @ loss)
        return out

    def advance(self, F, t):
        """The margins moved by steps ``t``; every weighted row counts as active and as
        changed (the next Hessian is summed anew)."""
        f = self.f.copy()
        f[:, self.todo] += t * self.U
        self.f, self.U = f, None
        n = np.full(len(self.todo), np.count_nonzero(self.s > 0))
        return np.array([n, n])

    def loss(self, F, C):
        return 0.5 * C * (self.s @ self.loss_fn.value(self.f, self.Y))


class _Newton:
    """The iterates of the k problems, their Hessians and stopping state; the per-row state
    is the rows' (``P``: a :class:`HingeRows` beside each part of them, reached through
    their provider)."""

    def __init__(self, P, k, C, n_threads, hessian_bytes, smooth=False, coupled=None):
        self.P, self.C, self.threads, self.smooth = P, float(C), n_threads, smooth
        self.coupled = coupled  # a loss whose columns share one system (the multinomial)
        m = P.shape[1]
        self.Z = np.zeros((m + 1, k))
        self.stale = False  # margins updated from float32 products since last exact
        self.exact = np.zeros(k, dtype=bool)  # a unit step kept the active set
        self.converged = np.zeros(k, dtype=bool)
        self.stuck = np.zeros(k, dtype=bool)  # no step decreased a smooth objective
        self.n_iter = np.zeros(k, dtype=int)
        self.scale = None
        self.warmed = False  # started from a sample's solution (warm_start)
        self.cold = True  # started from zero (every row active in every problem)
        self.moved = False  # iterates set whose margins the rows have not computed yet
        self.gnorm = np.full(k, np.inf)
        self.hessians = {}  # problem -> (H, exact, shared)
        self.keep = ((), ())  # (problems, columns) whose Hessians the rows' state follows
        self.ahead = {}  # problem -> (active rows, rows changed) after its last step
        self.sums = {}  # problem (or -1: shared) -> (update?, dtype, square) of this pass
        self.gram_dtype = P.dtype  # of the Hessians' products (_solve_system)
        # (a smooth loss changes every row's curvature: its Hessians are summed anew)
        self.keep_hessians = (not smooth and coupled is None
                              and k * 8.0 * (m + 1) ** 2 <= hessian_bytes)
        self.hessian_bytes = hessian_bytes

    def solve(self, tol, max_iter, callback=None, warm_start=True, x0=None):
        history, self.tol = [], tol
        with blas_threads(1):
            stride = (_warm_stride(*self.P.shape, getattr(self.P, "keep_rows", np.inf))
                      if warm_start and x0 is None else 0)
            if x0 is not None:
                self.start_from(np.array(x0, dtype=np.float64).reshape(self.Z.shape))
            elif stride:
                self.warm_start(stride, tol, max_iter)
            for it in range(max_iter + 1):
                todo = self.check(tol)
                if not todo.size or it == max_iter:
                    break
                D = self._coupled_direction(todo) if self.coupled else self.directions(todo)
                n_active = self.step(todo, D)
                history.append({"n_iter": it + 1, "n_unconverged": int(todo.size),
                                "n_active": n_active})
                if callback is not None:
                    callback(history[-1])
        return self.results(tol, history)

    def warm_start(self, stride, tol, max_iter):
        """Start from the solution on every ``stride``-th row; the stopping scale stays
        that of the gradient at zero, as from a cold start."""
        n, m = self.P.shape
        sub = self.P.every(stride)
        try:
            solver = _Newton(sub, self.Z.shape[1], self.C * n / sub.shape[0], self.threads,
                             self.hessian_bytes, self.smooth, self.coupled)
            solver.solve(max(tol, 1e-2), max_iter)
        finally:
            sub.close()
        self.start_from(solver.Z)
        self.warmed = True

    def start_from(self, Z):
        """Iterates Z instead of zero; the stopping scale stays that of the gradient at
        zero, as from a cold start. The rows move their margins there in the first test's
        pass (:meth:`_test`)."""
        self.Z, self.cold, self.moved = Z, False, True

    def _scale(self, gnorm):
        """The stopping scale ``max(1, ||grad at 0||_inf)`` of each problem (of all the
        coupled columns together)."""
        scale = np.maximum(1.0, gnorm)
        return np.full_like(scale, scale.max()) if self.coupled else scale

    def check(self, tol):
        """Gradients of the unconverged problems; returns the indices still to solve.

        Float32 rows' products round, and margins updated step by step from them drift:
        where a problem's gradient stopped falling near that rounding's level
        (``F32_ROUNDING`` of its scale) before it stops, Newton's steps chase the rounding
        (a tolerance below it), and the margins are recomputed from the
        iterates and the gradients summed from float64 products (``exact=True``), and the
        test repeated on them: an iterative refinement, whose solution is the one float64
        products give on the stored features."""
        todo = np.flatnonzero(~self.converged & ~self.stuck)
        previous = self.gnorm[todo].copy()
        if self.n_iter[todo].max() >= F32_PATIENCE:
            self.gram_dtype = np.dtype(np.float64)  # (_solve_system)
        G, done = self._test(todo, tol)
        stalled = (~done & (self.gnorm[todo] > 0.5 * previous)
                   & (self.gnorm[todo] <= F32_ROUNDING * self.scale[todo]))
        if self.P.dtype != np.float64 and stalled.any():
            if self.stale:
                self.P("refresh", self.Z, True)
                self.stale = False
            G, done = self._test(todo, tol, exact=True)
        self.converged[todo[done]] = True
        if done.any() and not done.all():  # the rows keep the problems still to solve
            self.P("select", np.flatnonzero(~done))
        self.G, self.counts = G[:, ~done], self.counts[:, ~done]
        return todo[~done]

    def _test(self, todo, tol, exact=False):
        """``(G, done)``: gradients and the stopping test of ``todo``, and the Hessian sums
        the directions will need where they are known before (:meth:`_ahead`)."""
        kept = [j if j in self.hessians else -1 for j in todo]
        asked = self._ahead(todo)
        G, self.counts, squares, grad0 = self.P(
            "test", todo, self.C, kept, exact,
            [(col, key if update else None, self.gram_dtype) for col, key, update in asked],
            self.Z if self.moved else None)
        if self.moved:
            self.moved, self.stale = False, self.P.dtype != np.float64 and not exact
            self.scale = self._scale(np.abs(grad0).max(axis=0))
        self.sums = {key: (update, self.gram_dtype, S)
                     for (_, key, update), S in zip(asked, squares, strict=True)}
        G = G + self.Z[:, todo]
        gnorm = np.abs(G).max(axis=0)
        if self.scale is None:
            self.scale = self._scale(gnorm)
        self.gnorm[todo] = gnorm
        done = (gnorm <= tol * self.scale[todo]) | self.exact[todo]
        if self.coupled:  # (one iteration for the columns: they end together)
            done[:] = done.all()
        if self.warmed:  # a sample's solution is not the whole data's: one full step at least
            done &= self.n_iter[todo] > 0
        return G, done

    def _ahead(self, todo):
        """``(col, key, update)`` for the Hessians of ``todo`` whose rows are known before
        the gradient's pass, so that it sums them too: one pass over the rows instead of
        two, where a pass is costly (the provider ``rereads`` its rows: a stream, features
        recomputed, a cluster), and none for rows in memory, whose problems' Hessians are
        summed side by side on the threads instead. From w = 0 the one
        shared by all problems (every row is active in each; key -1), later each problem's
        as planned from the active rows its last step left (:meth:`_plan`): an update of
        its kept Hessian by the rows that changed side, or a rebuild (key j), none for a
        row-space direction."""
        if not getattr(self.P, "rereads", False) or self.coupled:
            return []
        if not self.n_iter[todo].any():
            if self.moved:  # (a started solve's Hessians: rebuilt on its first margins)
                return [(col, j, False) for col, j in enumerate(todo)]
            return [(0, -1, False)] if self.cold and not self.hessians else []
        out = []
        for col, j in enumerate(todo):
            if j not in self.ahead:
                continue
            n_act, changed = self.ahead[j]
            if self._plan(j, n_act, changed)[0]:
                continue
            prev = self.hessians.get(j)
            update = (prev is not None and changed < n_act
                      and not (self._exact() and not prev[1]))
            out.append((col, j, update))
        return out

    def _summed(self, key, update):
        """The square the gradient's pass summed for ``key`` (:meth:`_ahead`) when it is
        the one wanted now (the same kind, in the Hessians' current precision), else
        None."""
        got = self.sums.pop(key, None)
        if got is None or got[0] != update or got[1] != self.gram_dtype:
            return None
        return got[2]

    def directions(self, todo):
        """Newton directions (m + 1, len(todo)): one shared system while the problems'
        active sets coincide and none has a Hessian to update (the first iteration from
        w = 0, every row active), else one system per problem, the problems side by side
        (or, when fewer than the threads, each split by rows). A single problem (binary
        classification) thus updates its Hessian by the rows that changed side, as each
        class does."""
        P, threads = self.P, self.threads
        n_act, differ, changed = self.counts
        first = not self.n_iter[todo].any()
        if (first and self.cold and not differ.any()
                and not any(j in self.hessians for j in todo)):
            def build():
                S = self._summed(-1, False)
                if S is not None:
                    return self._square() + S
                return P.gram(self._square(), 0, None, self.C, threads, self.gram_dtype)

            # One factorization, which the threads share.
            D, H, exact = self._solve_system(build(), self._exact(), -self.G, build, threads)
            if self.keep_hessians:  # shared: the first update copies it (_hessian_of)
                self.hessians = dict.fromkeys(todo.tolist(), (H, exact, True))
                self.keep = (todo.tolist(), [0] * len(todo))
            return D
        side, inner, _ = split_threads(len(todo), threads)
        plans = [self._plan(j, n_act[col], changed[col]) for col, j in enumerate(todo)]

        def solve(col):
            j = todo[col]
            if plans[col][0]:
                self.hessians.pop(j, None)
                return self._dual_direction(col, -self.G[:, col], inner)

            def build():
                S = self._summed(j, False)
                if S is not None:
                    return self._square() + S
                return P.gram(self._square(), col, None, self.C, inner, self.gram_dtype)

            H, exact = self._hessian_of(j, col, changed[col] < n_act[col], inner, build)
            # Side by side, each problem has the one BLAS thread of the plan; a problem
            # alone sums its rows on all the threads, and factors on them from
            # LONE_SOLVE_MIN (_solve_threads).
            d, H, exact = self._solve_system(H, exact, -self.G[:, col], build, inner)
            if self.keep_hessians:
                self.hessians[j] = (H, exact, False)
            return d

        costs = [plan[1] for plan in plans]  # the largest systems first, on a free thread
        D = np.column_stack(map_balanced(solve, range(len(todo)), costs, side))
        self.keep = (todo.tolist(), [col if j in self.hessians else None
                                     for col, j in enumerate(todo)])
        return D

    def _coupled_direction(self, todo):
        """The coupled loss's direction (its own system for its columns), from its
        gradient and how far it is from the stopping threshold (an inexact solve needs
        no more)."""
        scale = self.scale[todo]
        return self.coupled.direction(self.P, self.G, self.C,
                                      float((self.gnorm[todo] / scale).max()),
                                      self.tol * float(scale.min()))

    def _square(self):
        return self.P.square(self.P.shape[1] + 1, 1.0)

    def _plan(self, j, n_act, changed):
        """``(dual, flops)`` for problem j's direction: whether it costs fewer flops through
        the active rows' own (n_act-square) system (:meth:`_dual_direction`) than through
        its Hessian (a rebuild from every active row or an update by the rows that changed
        side, then an (m+1)-square Cholesky), and the flops of the cheaper. The dual only
        when the gathered rows fit ``gather_bytes``."""
        m1 = self.P.shape[1] + 1
        summed = min(n_act, changed) if j in self.hessians else n_act
        half = 0.5 if self.gram_dtype == np.float32 else 1.0  # float32: twice the SIMD lanes
        primal = half * summed * m1 * m1 / 2 + m1 ** 3 / 3
        if not 0 < n_act <= m1 or 8.0 * n_act * m1 > self.P.gather_bytes:
            return False, primal  # (its memory: a gather buffer and the (m+1)^2 squares)
        dual = n_act * n_act * m1 / 2 + n_act ** 3 / 3
        return dual < primal, min(dual, primal)

    def _dual_direction(self, col, rhs, threads):
        """``H^-1 rhs`` for ``H = I + A^T A``, ``A = diag(sqrt(cs)) [F 1]`` on the active
        rows, by Woodbury: ``rhs - A^T (I + A A^T)^-1 A rhs``. With fewer active rows than
        basis functions (small data, large C, late iterations) the row-space system is the
        smaller one to sum and factor (as with the full basis, m = n, once many rows have left
        the margin); its eigenvalues are >= 1, so float64 and no jitter."""
        A = self.P.take(col, self.C)
        with _solve_threads(threads, len(A)):  # (BLAS threads spin between calls)
            K = A @ A.T
            K[np.diag_indices(len(K))] += 1.0
            u = spd_solve(K, A @ rhs)[0]
        return rhs - A.T @ u

    def _exact(self):
        """Whether Hessians are now summed in float64 (always for float64 features)."""
        return self.gram_dtype == np.float64

    def _solve_system(self, H, exact, rhs, rebuild, threads):
        """``(H^-1 rhs, H, exact)``, factored on ``threads`` BLAS threads from
        LONE_SOLVE_MIN (:func:`_solve_threads`; a rebuild sums its rows on the library's
        threads, each with one BLAS thread, as every product).

        Float32 products make a Hessian faster, and with whitened features (Nystrom) as
        good. With raw kernel columns (ReducedSVC) at large C their rounding can swamp the
        identity in ``I + C F^T F``: the Hessian then needs a jitter to factor, or factors
        but points the wrong way, and Newton stalls (runs to ``max_iter`` instead of ending
        in a few iterations). So a Hessian that needs a
        jitter is rebuilt in float64 at once, and after F32_PATIENCE iterations of a problem
        (exact Newton takes 4-8) every later Hessian is summed in float64."""
        with _solve_threads(threads, H.shape[0]):
            d, _, jitter = spd_solve(H, rhs)
        if jitter == 0 or exact:
            return d, H, exact
        self.gram_dtype = np.dtype(np.float64)
        H = rebuild()
        with _solve_threads(threads, H.shape[0]):
            return spd_solve(H, rhs)[0], H, True

    def _hessian_of(self, j, col, update, n_threads, rebuild):
        """Problem j's Hessian on its active rows and whether it is exact (float64 sums):
        the previous one updated by the rows that entered or left when ``update`` (they
        are fewer than the active rows, as in late iterations), else ``rebuild()``."""
        prev = self.hessians.pop(j, None)  # (updated in place: not kept if this fails)
        if prev is None:
            return rebuild(), self._exact()
        H_prev, exact_prev, shared = prev
        if not update or (self._exact() and not exact_prev):
            return rebuild(), self._exact()
        dtype = self.gram_dtype
        H = copy_array(H_prev) if shared else H_prev
        S = self._summed(j, True)
        if S is None:
            self.P.gram(H, col, j, self.C, n_threads, dtype)
        else:
            H += S
        return H, exact_prev and dtype == np.float64

    def step(self, todo, D):
        """The line search along D for each problem (exact on the piecewise-quadratic
        losses, backtracking on the smooth ones); update iterates and margins."""
        P = self.P
        start = P("direction", D, self.C, self.keep)  # (the line's terms at t = 0, 1)
        self.keep = ((), ())
        self.stale |= P.dtype != np.float64
        zd, dd = np.einsum("ij,ij->j", self.Z[:, todo], D), np.einsum("ij,ij->j", D, D)
        if self.smooth:
            zz = 0.5 * np.einsum("ij,ij->j", self.Z[:, todo], self.Z[:, todo])
            slope = np.einsum("ij,ij->j", self.G, D)
            if self.coupled:  # one line for the columns
                zz, zd, dd, slope = (np.atleast_1d(a.sum()) for a in (zz, zd, dd, slope))

            def objective(T, loss=None):
                loss = P("values", T[None], self.C)[0] if loss is None else loss
                return zz + T * zd + 0.5 * T * T * dd + loss

            t = backtrack(objective, zz + start[0], slope, objective(np.ones(len(zz)), start[1]))
            t = np.broadcast_to(t, (len(todo),)).copy()
            self.stuck[todo] = t == 0.0
        else:
            t = exact_steps(lambda T, Q: P("line", T, Q, self.C), zd, dd, start)
        self.Z[:, todo] += t * D
        n_active, changed = P("advance", t)
        self.ahead = {j: (n_active[col], changed[col]) for col, j in enumerate(todo)}
        self.exact[todo] = (np.abs(t - 1.0) <= 1e-9) & (changed == 0) & (not self.smooth)
        self.n_iter[todo] += 1
        return int(n_active.sum())

    def results(self, tol, history):
        loss = self.P("loss", self.C)
        out = []
        for j in range(self.Z.shape[1]):
            obj = 0.5 * self.Z[:, j] @ self.Z[:, j] + loss[j]
            status = ("converged" if self.converged[j] else
                      "line_search" if self.stuck[j] else "max_iter")
            out.append(SolverResult(
                coef=self.Z[:-1, j].copy(), intercept=float(self.Z[-1, j]), objective=obj,
                grad_norm=float(self.gnorm[j]), tol_reached=tol * float(self.scale[j]),
                n_iter=int(self.n_iter[j]), converged=bool(self.converged[j]), status=status,
                message=_message(status, self.gnorm[j], tol * self.scale[j], self.n_iter[j],
                                 self.exact[j]),
                history=history))
        return out


def _message(status, gnorm, tol_abs, n_iter, exact):
    if status == "converged":
        why = "the active set stopped changing" if exact else f"gradient norm {gnorm:.3g}"
        return f"Converged after {n_iter} Newton iterations: {why} (target {tol_abs:.3g})."
    if status == "line_search":
        return (f"No step decreased the objective after {n_iter} iterations (gradient norm "
                f"{gnorm:.3g}, target {tol_abs:.3g}): it is minimised to rounding.")
    return (f"Reached max_iter={n_iter} with gradient norm {gnorm:.3g} > {tol_abs:.3g}; "
            "increase max_iter or tol.")


def _solve_threads(threads, size):
    """The BLAS threads for factoring and solving a lone size-square system (the shared
    first one, or a problem solved alone): :func:`~sparsekernel.compute.split_threads`'s."""
    return blas_threads(split_threads(1, threads, size)[2])


def _warm_stride(n, m, keep_rows=np.inf):
    """The stride of the rows an n x m problem starts from (module docstring), 0 for none.

    ``keep_rows``: the most rows whose features the provider keeps for a sample (a
    provider that recomputes its features, such as a cluster's under a memory budget). A
    larger sample would recompute them at every one of its passes, so the stride grows
    until the sample fits, as long as it keeps WARM_PER_BASIS rows per basis function.
    """
    if float(n) * m * m < WARM_WORK:
        return 0
    stride = n // (WARM_PER_BASIS * (m + 1))
    if stride >= WARM_MIN_STRIDE:
        stride = min(stride, WARM_STRIDE)
    else:
        stride = WARM_STRIDE if n // WARM_STRIDE >= 2 * (m + 1) else 0
    if stride and -(-n // stride) > keep_rows >= WARM_PER_BASIS * (m + 1):
        stride = -(-n // int(keep_rows))
    return stride


def warm_sample_rows(n, m):
    """Rows of the sample an n x m problem starts from (:func:`_warm_stride`), 0 for none."""
    stride = _warm_stride(n, m)
    return -(-n // stride) if stride else 0


def newton_ovr_bytes(n, m, k, n_threads, hessian_bytes=2**30, gather_bytes=GATHER_BYTES,
                     itemsize=8, warm_start=True):
    """Peak working memory of :func:`newton_ovr` besides F, in bytes (an upper estimate).

    Margins, residuals, weights and directions of the k problems (about eight float64
    n x k arrays), per thread one gather buffer and one (m+1)^2 partial Gram sum, per
    problem solved side by side (at most one a thread) its Hessian and Cholesky factor,
    plus the Hessians kept between iterations when they fit ``hessian_bytes``. A warm
    start's sampled rows of F (copied in F's dtype, of ``itemsize`` bytes) and their own
    solver are freed before the first Hessian over all rows is built, so only the larger of
    the two phases counts beside the n x k arrays (adding them would overstate a large
    warm-started fit's plan); ``warm_start`` False: none (newton_ovr's).
    """
    square = 8.0 * (m + 1) ** 2
    kept = k * square if k * square <= hessian_bytes else 0.0
    arrays = 8.0 * n * (8 * k + 1)
    work = n_threads * (gather_bytes + square) + 2 * min(k, n_threads) * square + kept
    stride = _warm_stride(n, m) if warm_start else 0
    if not stride:
        return arrays + work
    sub = -(-n // stride)
    warm = float(itemsize) * sub * m + newton_ovr_bytes(sub, m, k, n_threads, hessian_bytes,
                                                         gather_bytes, itemsize)
    return arrays + max(work, warm)
