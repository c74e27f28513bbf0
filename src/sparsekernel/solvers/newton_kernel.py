"""Exact Newton for every one-vs-rest squared-hinge problem of a kernel machine whose basis
is its whole training set (Chapelle, "Training a support vector machine in the primal",
Neural Computation 2007, section 4).

Objective per column j of the targets, on the n-square kernel matrix K of the training rows,
with ``Q = K + 1`` (the 1 carries the bias, ``b = 1^T a``)::

    Psi_j(a) = 1/2 a^T Q a + C/2 * sum_i s_i max(0, 1 - Y_ij (Q a)_i)^2 ,

or, for regression (``epsilon`` given), the squared epsilon-insensitive loss
``max(0, |(Q a)_i - Y_ij| - epsilon)^2`` in place of the squared hinge. Both are sums of
one-sided squared hinges on the margins (:class:`_Hinges`): a label's ``1 - y f``, or a
target's ``y - epsilon - f`` and ``f - y - epsilon`` (at most one of them positive), so
everything below holds for either with the active rows' targets ``y_A`` (``y_A -+
epsilon`` on the side they left the tube) on the right-hand side.

It is :func:`~sparsekernel.solvers.newton_ovr.newton_ovr`'s objective on any features F with
``F F^T = K`` (w = F^T a, b = 1^T a, so ``||w||^2 + b^2 = a^T Q a`` and ``f = Q a``): the
same model, solved in the rows' coordinates. Why a solver of its own: the gradient is
``Q g`` with ``g = a - C s Y max(0, 1 - Y f)``, zero exactly when ``a = 0`` outside the
active set A (rows inside the margin) and ``(Q_AA + diag(1 / (C s_A))) a_A = Y_A`` on it. So
the Newton point of an active set is one |A|-square solve, where the feature-space Newton
sums and factors an (n + 1)-square Hessian, after forming the features: with part of the
rows inactive, the smaller system and no feature map make this the cheaper fit of the same
model.

Each iteration of a problem: the Newton point of its active set (from the problem's last
float64 factor when the active set lies inside that system's rows and few have left:
:func:`_solve_on_subset`), the exact line search of
:func:`~sparsekernel.solvers._line_search.exact_step` along it (one product with K), and the
new active set; it stops when a unit step leaves the active set unchanged (then ``a`` is
the Newton point itself: exactly optimal, zero off A). From ``a = 0`` every row is active
in every problem, so the first system is factored once for all of them; the problems then
run side by side on the planned threads, each with one BLAS thread, an iteration at a time
on whichever thread is free (:func:`_advance_all`), so a problem that needs more
iterations than the others does not leave threads idle.

Precision. While the active set moves, its systems are factored in float32 (LAPACK's
``spotrf``, cheaper than ``dpotrf`` and NumPy's float64 Cholesky; called without the GIL,
:mod:`~sparsekernel.compute`, so the classes' factorizations overlap), when their rounding
is harmless: ``(n + trace K) max(C s)`` bounds the condition number, and times float32's
epsilon it must stay below ``F32_SYSTEM_BOUND``. The line search, the margins and the iterates
stay float64, so a float32 direction only costs an iteration's precision. Once a float32 point's
active set holds, it is refined to float64 accuracy through its own float32 factor
(residuals in float64) and the next unit step ends the problem exactly: the cheaper
factorizations shorten the solve at no cost in its final accuracy. All products run on
SciPy's BLAS, as the factorizations: NumPy's, called between them, left its threads spinning
(a GEMV through NumPy's BLAS beside SciPy's ``potrf`` competed with it for the cores).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve, solve_triangular
from scipy.linalg.blas import dgemv

from ..compute import blas_threads, drain_queue, planned_threads, spd_solve
from ._constants import F32_PATIENCE
from ._line_search import exact_step
from ._losses import hinge_terms
from ._result import SolverResult, check_finite

__all__ = ["newton_kernel", "newton_kernel_bytes"]

#: float32 systems when (n + trace K) * max(C s) * eps32 is at most this (module docstring).
F32_SYSTEM_BOUND = 0.05
#: How far (in margin units) a row may sit on the wrong side of the margin when a float64
#: Newton point is checked for optimality (:func:`_keeps_its_rows`).
KKT_SLACK = 1e-9
#: Rows gathered at a time into a system (:func:`_system`).
_SLAB = 256
#: Iterative refinement of a float32 solution: at most this many steps, to this relative
#: residual (in the largest entry).
REFINE_STEPS, REFINE_TOL = 10, 1e-13


def newton_kernel(K, Y, C=1.0, sample_weight=None, tol=1e-6, max_iter=50, n_threads=None,
                  callback=None, epsilon=None):
    """Minimise Psi_j (module docstring) for every column j of ``Y``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite kernel matrix of the training rows (float64; only
        read).
    Y : ndarray of shape (n, k)
        Targets, one column per problem: in {-1, +1} (the squared hinge), or real values
        when ``epsilon`` is given.
    C : float
        Loss weight.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights s_i shared by the problems; rows of weight 0 are never active.
    tol : float
        A problem stopped by ``max_iter`` still counts as converged when its gradient's norm
        in feature space, ``sqrt(g^T Q g)``, is at most ``tol`` times that at ``a = 0``
        (exact Newton otherwise ends on its own, module docstring).
    max_iter : int
        Maximum Newton iterations of each problem.
    n_threads : int, optional
        Problems solved side by side (one BLAS thread each; a single problem gets them all).
        Default: :func:`~sparsekernel.compute.planned_threads`.
    callback : callable, optional
        Called once per problem as it is returned (in the calling thread, problems in order)
        with a dict (problem, n_iter, n_active).
    epsilon : float, optional
        Regression: the loss is the squared epsilon-insensitive
        ``max(0, |f_i - Y_ij| - epsilon)^2`` (module docstring) instead of the squared hinge.

    Returns
    -------
    list of SolverResult
        One per column of ``Y``: ``coef`` = a (shape (n,), zero outside the final active
        set when converged exactly), ``intercept`` = b = sum(a).
    """
    n_threads = planned_threads() if n_threads is None else max(1, int(n_threads))
    Y = np.asarray(Y, dtype=np.float64)
    n, k = Y.shape
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    cs = C * s
    live = np.flatnonzero(s > 0)
    # float32 systems while the active sets still move, when their rounding stays far below
    # the systems' scale (module docstring): a bound on the condition number times eps32
    bound = (n + float(np.trace(K))) * (float(cs.max()) if n else 0.0)
    single = bound * np.finfo(np.float32).eps <= F32_SYSTEM_BOUND
    starts = [None] * k  # regression: each problem's first system is its own
    if epsilon is None and live.size:  # every live row active in every problem: one system
        with blas_threads(1):
            start, L0, _, _ = _newton_point(K, single, live, cs, Y[live])
        for j in range(k):
            starts[j] = (np.zeros(n), L0)
            starts[j][0][live] = start[:, j]
    problems = [_Problem(K, single, _Hinges(Y[:, j], cs, epsilon), starts[j], max_iter)
                for j in range(k)]
    with blas_threads(1):
        _advance_all(problems, n_threads)
    results = [problem.result(tol) for problem in problems]
    for j, res in enumerate(results):
        if callback is not None:
            callback({"problem": j, "n_iter": res.n_iter,
                      "n_active": res.history[-1]["n_active"] if res.history else 0})
    return results


def newton_kernel_bytes(n, k, n_threads):
    """Peak working memory of :func:`newton_kernel` with its n-square K (counted), in bytes
    (an upper estimate): per thread a system's gathered rows, the system and its factor
    (float32 while the active set moves, float64 rows at most n), plus the iterates (a few
    float64 n x k arrays)."""
    return 8.0 * n * n + n_threads * 12.0 * n * n + 8.0 * n * (4 * k + 4)


def _newton_point(K, single, rows, cs, rhs, memory=None):
    """``(a_A, L, memory, jitter)``: ``a_A`` solving ``(Q_AA + diag(1 / (C s_A))) a_A =
    rhs``, the system's Cholesky factor L, in float32 when ``single`` (module docstring),
    the flat array the system was built in (``memory`` when it was given and large enough)
    and the jitter its factorization needed."""
    M, memory = _system(K, rows, cs, memory, np.float32 if single else np.float64)
    x, L, jitter = spd_solve(M, rhs.astype(M.dtype), overwrite=True)  # (M is ours)
    return x.astype(np.float64), L, memory, jitter


def _solve_on_subset(base_rows, L, rows, rhs):
    """The Newton point on rows A inside the rows P of a float64 factor L of M_PP
    (``M = Q + diag(1 / (C s))``), without factoring M_AA, or None when A is not inside P
    or factoring costs fewer flops. M_AA is M_PP less the rows and columns R = P - A: with
    ``y = M_PP^-1 (r - E_R c)`` (r the right-hand side on A, 0 on R; E_R the unit columns
    of R), ``y_R = 0`` fixes c by ``(M_PP^-1)_RR c = (M_PP^-1 r)_R``, and then ``y_A`` is
    the point: one solve with |R| + 1 right-hand sides (|R| |P|^2 multiply-adds) against
    a factorization's |A|^3 / 6. A regression whose first system holds every row and whose
    tube then takes a few of them solves its later points so."""
    where = np.searchsorted(base_rows, rows)
    if (where[-1] >= len(base_rows) or not np.array_equal(base_rows[where], rows)
            or (len(base_rows) - len(rows)) * float(len(base_rows)) ** 2 > len(rows) ** 3 / 6):
        return None
    gone = np.ones(len(base_rows), dtype=bool)
    gone[where] = False
    R = np.flatnonzero(gone)
    B = np.zeros((len(base_rows), len(R) + 1))
    B[where, 0] = rhs
    B[R, np.arange(1, len(R) + 1)] = 1.0
    Z = cho_solve((L, True), B, check_finite=False)
    y = Z[:, 0]
    if len(R):
        y = y - Z[:, 1:] @ solve(Z[R, 1:], y[R], assume_a="pos", check_finite=False)
    return y[where]


def _system(K, rows, cs, memory=None, dtype=np.float64):
    """``(Q_AA + diag(1 / (C s_A)), memory)`` on the rows A (sorted), in ``dtype`` (float32
    systems are rounded from K's rows as they are gathered: no float32 copy of K, whose
    fresh 4 n^2 bytes cost more on a first fit than the wider reads), built in the flat
    array ``memory`` when it is large enough (a problem's previous system, spent by then:
    glibc maps every array above 32 MB afresh, and the first touches of fresh pages
    cost)."""
    s = len(rows)
    if memory is None or memory.dtype != dtype or memory.size < s * s:
        memory = np.empty(s * s, dtype=dtype)
    M = memory[:s * s].reshape(s, s)
    if s == len(K):  # every row: no gather
        M[...] = K
    else:  # rows a slab at a time (no |A| x n copy), each through one float64 buffer
        slab = np.empty((min(_SLAB, s), s))
        for start in range(0, s, _SLAB):
            part = slice(start, start + _SLAB)
            piece = slab[:len(rows[part])]
            np.take(np.take(K, rows[part], axis=0), rows, axis=1, out=piece, mode="clip")
            M[part] = piece
    M += 1.0
    M[np.diag_indices(s)] += (1.0 / cs[rows]).astype(M.dtype)
    return M, memory


def _refined(K, rows, cs, rhs, x, L):
    """The float64 solution of the system whose float32 factor is L, from its float32
    solution x, by iterative refinement (residuals in float64 through products with K, no
    float64 copy of the system; corrections through L); None when it stalls (then the
    caller factors in float64)."""
    size = float(np.abs(rhs).max())
    full = np.zeros(len(K))
    for _ in range(REFINE_STEPS):
        full[rows] = x
        r = rhs - _q_product(K, full)[rows] - x / cs[rows]
        if float(np.abs(r).max()) <= REFINE_TOL * size:
            return x
        z = solve_triangular(L, r.astype(L.dtype), lower=True, check_finite=False)
        x = x + solve_triangular(L, z, lower=True, trans="T", check_finite=False)
    return None


def _keeps_its_rows(residuals, active, live):
    """Whether a Newton point with these hinge residuals is optimal: the hinges it was
    solved on are still violated and the others not, up to ``KKT_SLACK``. A row on the
    margin has zero loss and gradient on either side (the squared hinge is C^1 there), so
    the slack only spares rounding from cycling between two equal assignments of it."""
    return bool(np.all(residuals[active] >= -KKT_SLACK)
                and np.all(residuals[live & ~active] <= KKT_SLACK))


def _q_product(K, d):
    """``Q d``, on SciPy's BLAS as the factorizations (NumPy's would leave its threads
    spinning beside them); K symmetric, so its transpose is read in Fortran order."""
    return dgemv(1.0, K.T, d) + d.sum()


def _advance_all(problems, n_threads):
    """Run every problem to its end on ``n_threads`` threads, an iteration at a time: a
    thread takes whichever problem waits next, so no thread idles while two problems are
    left (with a fixed share of problems per thread, one thread could run two in turn
    while another idled).
    Each problem's iterations stay in order and its own, so the results do not depend on
    the schedule, which :func:`~sparsekernel.compute.drain_queue` runs (pool threads
    only, the caller waiting; a failure stops the others after their iteration)."""

    def step(problem):
        problem.advance()
        return not problem.done

    waiting = [problem for problem in problems if not problem.done]
    if len(waiting) == 1:  # alone (binary, regression): in the caller, where a system's
        while not waiting[0].done:  # factorization takes every planned thread (its tiles,
            waiting[0].advance()  # :mod:`~sparsekernel.compute`)
        return
    drain_queue(step, waiting, n_threads)


class _Hinges:
    """A problem's loss as one-sided squared hinges ``C s_h max(0, r_h)^2``, with residuals
    ``r_h = sign_h (target_h - f_row(h))`` (:func:`~sparsekernel.solvers._losses.hinge_terms`:
    one per label, two per regression target)."""

    def __init__(self, y, cs, epsilon):
        self.n = len(y)
        self.row, self.sign, self.target = hinge_terms(y, epsilon)
        self.cs = cs[self.row]
        self.live = self.cs > 0

    def residuals(self, f):
        return self.sign * (self.target - f[self.row])

    def slopes(self, df):
        """How fast the residuals fall along the change ``df`` of f."""
        return self.sign * df[self.row]

    def active(self, f):
        return (self.residuals(f) > 0) & self.live

    def system(self, active):
        """The rows (sorted) of the active hinges and their targets: the Newton point's
        system is ``(Q_AA + diag(1 / (C s_A))) a_A = targets``."""
        on, rhs = np.zeros(self.n, dtype=bool), np.zeros(self.n)
        on[self.row[active]] = True
        rhs[self.row[active]] = self.target[active]
        rows = np.flatnonzero(on)
        return rows, rhs[rows]

    def pull(self, f):
        """Per row, the sum of its hinges' ``sign max(0, r)``: the gradient in the rows'
        coordinates is ``a - C s pull(f)``."""
        r = self.sign * np.maximum(self.residuals(f), 0.0)
        return r if len(r) == self.n else np.bincount(self.row, weights=r, minlength=self.n)


class _Problem:
    """One problem from a = 0; ``start`` is its first Newton point (every live row active)
    with that system's factor L when shared (classification), else None (computed on the
    first :meth:`advance`). :meth:`advance` runs one Newton iteration."""

    def __init__(self, K, single, hinges, start, max_iter):
        n = hinges.n
        self.K, self.h, self.max_iter = K, hinges, max_iter
        self.cs = np.zeros(n)
        self.cs[hinges.row] = hinges.cs  # per row (a row's hinges share its weight)
        self.a, self.f = np.zeros(n), np.zeros(n)
        self.active = hinges.active(self.f)  # the hinges the Newton point was solved on
        self.rows, self.rhs = hinges.system(self.active)  # the last system (factor L)
        self.target, self.L = start if start is not None else (None, None)
        self.memory = None  # the problem's own systems are built here (not a shared start's)
        self.base = None  # (rows, float64 factor) of its last system (:func:`_solve_on_subset`)
        self.scale = None  # the gradient's norm at a = 0 (on the problem's thread: _scale)
        self.gnorm, self.status, self.history, self.it = np.inf, "max_iter", [], 0
        self.precise = not single  # the last Newton point came from a float64 system
        self.done = max_iter < 1

    def advance(self):
        """Step to the Newton point (exact line search), then the next point; ``done`` is
        set when the problem ends."""
        self.it += 1
        K, h = self.K, self.h
        if self.target is None:
            self._aim()
        self._scale()
        d = self.target - self.a
        qd = _q_product(K, d)
        if self.precise and _keeps_its_rows(h.residuals(self.f + qd), self.active, h.live):
            self.a, self.f, self.gnorm, self.status = self.target, self.f + qd, 0.0, "converged"
            self.history.append({"n_iter": self.it, "step": 1.0,
                                 "n_active": int(self.active.sum())})
            self.done = True
            return
        t = exact_step(h.residuals(self.f), h.slopes(qd), h.cs, self.a @ qd, d @ qd)
        check_finite("newton_kernel", self.it, step=t)
        self.a += t * d
        self.f += t * qd
        new_active = h.active(self.f)
        self.history.append({"n_iter": self.it, "step": t, "n_active": int(new_active.sum())})
        settled = np.array_equal(new_active, self.active)
        self.active = new_active
        self.done = self.it >= self.max_iter
        if settled and self.precise:  # the same system again, its point not optimal: rounding
            self.status, self.done = "line_search", True
            return
        if settled:  # the float32 point's active set holds: refine it
            self.precise = True
            exact = _refined(K, self.rows, self.cs, self.rhs, self.target[self.rows], self.L)
            if exact is not None:
                self.target = np.zeros(len(self.a))
                self.target[self.rows] = exact
                return
        self.precise = self.precise or self.it >= F32_PATIENCE
        if not self.done:
            self._aim()

    def _aim(self):
        """The Newton point of the active hinges (``target``) and its system's factor."""
        self.rows, self.rhs = self.h.system(self.active)
        self.target = np.zeros(len(self.a))
        if not self.rows.size:  # nothing violated: a = 0 is the point, exactly
            self.precise = True
            return
        if self.precise and self.base is not None:
            x = _solve_on_subset(*self.base, self.rows, self.rhs)
            if x is not None:
                self.target[self.rows] = x
                return
        self.base = None  # (its memory is about to hold the new system)
        self.target[self.rows], self.L, self.memory, jitter = _newton_point(
            self.K, not self.precise, self.rows, self.cs, self.rhs,
            self.memory)
        if self.precise and not jitter and self.L.dtype == np.float64:
            self.base = (self.rows, self.L)

    def _scale(self):
        """``max(1, ||gradient at a = 0||)`` in feature space, the stopping test's scale."""
        if self.scale is None:
            g0 = -self.cs * self.h.pull(np.zeros(len(self.a)))
            self.scale = max(1.0, float(np.sqrt(max(g0 @ _q_product(self.K, g0), 0.0))))
        return self.scale

    def result(self, tol):
        """The :class:`SolverResult` of the problem as it ended."""
        K, h, a, it = self.K, self.h, self.a, self.it
        scale, status, gnorm = self._scale(), self.status, self.gnorm
        if status != "converged":  # the gradient's norm says whether the last iterate will do
            g = a - self.cs * h.pull(self.f)
            gnorm = float(np.sqrt(max(g @ _q_product(K, g), 0.0)))
            check_finite("newton_kernel", it, gradient_norm=gnorm)
            status = "converged" if gnorm <= tol * scale else status
        r = np.maximum(h.residuals(self.f), 0.0)
        objective = 0.5 * a @ self.f + 0.5 * (h.cs @ (r * r))
        message = (f"Converged after {it} Newton iterations." if status == "converged" else
                   f"Reached max_iter={self.max_iter} with gradient norm {gnorm:.3g} > "
                   f"{tol * scale:.3g}; increase max_iter or tol." if status == "max_iter" else
                   f"Stopped after {it} Newton iterations: a step kept the active set "
                   f"without reaching its Newton point (rounding), gradient norm "
                   f"{gnorm:.3g} > {tol * scale:.3g}.")
        return SolverResult(coef=a, intercept=float(a.sum()), objective=float(objective),
                            grad_norm=gnorm, tol_reached=tol * scale, n_iter=it,
                            converged=status == "converged", status=status,
                            message=message, history=self.history)
