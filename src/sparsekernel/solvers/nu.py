"""The nu-SVMs (Schölkopf, Smola, Williamson, Bartlett 2000; Schölkopf et al. 2001) on
explicit features, by their duals, in LIBSVM's scaling.

Each is, for features f_i (rows of F), an instance of::

    min_a  1/2 ||sum_k a_k y_k f_(r_k)||^2 + p^T a,   0 <= a_k <= u_k,
           sum of a_k over each group g = t_g,

over duals a_k, each of one row r_k with a sign y_k, a linear term p_k and a group (one or
two groups), and ``w = sum_k a_k y_k f_(r_k)``:

* one-class (:func:`one_class_dual`): a dual per row, y = 1, p = 0, u = s (the weights), one
  group of total nu S (S = sum_i s_i); the boundary is ``w . f(x) = rho``. Primal:
  ``min 1/2 ||w||^2 - nu S rho + sum_i s_i max(0, rho - w . f_i)``.
* nu-SVC (:func:`nu_svc_dual`): a dual per row, y the +-1 label, p = 0, u = s, the two
  classes the groups, each of total nu S / 2; with r and rho from the groups' KKT levels the
  decision is ``(w . f(x) - rho) / r``.

These are LIBSVM's problems, so on the same features the models are its (scikit-learn's
``OneClassSVM``, ``NuSVC``): the same decision values. nu bounds the share of rows outside
the boundary (one-class) or of margin errors (nu-SVC) from above and that of the support
vectors from below.

Solver: a decomposition method on the dual.

* Start: in each group, the vertex of the feasible set that minimizes the objective's
  linearization at a first w (the bounds on the duals of lowest gradient there). With more
  than WHOLE_SET duals that w is the solution on every stride-th row (every second, or
  fewer rows, down to WARM_ROWS; solved the same way, to 1e-2, the bounds scaled so that w
  has the full problem's scale), else the w of the spread-out duals
  ``a_k = t_g u_k / sum_g u``, and the whole problem is one working set.
* Each outer iteration computes the duals' gradients ``G_k = y_k f_(r_k) . w + p_k`` (one
  product with F), takes the ``working_size`` most violating duals (the largest gradients
  among those that can decrease, the smallest among those that can increase, in each
  group), solves the dual restricted to them on their ``Q = (y_W y_W^T) * (F_W F_W^T)`` by
  SMO steps (:func:`._nu_kernels.smo_working_set`), and moves ``w`` by their change.
* Shrinking (LIBSVM's): duals at a bound and further on their side of their group's level
  than the current violation are left out of the next passes, which then read the other
  rows only; a full pass follows when those look solved, and at least every FULL_EVERY.
* Stop, on a full pass, when in every group the largest gradient among the duals that can
  decrease and the smallest among those that can increase differ by at most ``tol`` times
  the larger of max |G| and ``max_k ||f_(r_k)||^2 u_k`` (the KKT conditions to that
  tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._result import SolverResult, check_finite

__all__ = ["NuSolution", "nu_dual", "nu_svc_dual", "one_class_dual"]

#: Rows per block of the products of F^T with all rows' coefficients.
_ROWS_AT_ONCE = 4096
#: A problem of at most WHOLE_SET duals is solved as one working set; a larger one starts
#: from the solution on a sample of its rows (every stride-th row: at most WARM_ROWS of them,
#: and at least every second), itself solved so, down to WHOLE_SET duals. The sample's
#: boundary leaves the full problem's working sets the rows near it.
WHOLE_SET, WARM_ROWS = 2048, 50000
#: Partial passes (over the unshrunk duals) between two full ones, at most.
FULL_EVERY = 10
#: Duals in each working set by default.
WORKING_SIZE = 512
#: SMO steps per working set, per dual in it.
STEPS_PER_DUAL = 20


@dataclass
class NuSolution:
    """The solved dual: ``w``, the KKT level of each group, the duals, and the solver's
    account (``result``: a :class:`SolverResult` whose coef and intercept the callers set)."""

    w: np.ndarray
    levels: np.ndarray
    alpha: np.ndarray
    result: SolverResult


def nu_dual(F, rows, signs, linear, upper, group, totals, tol=1e-3, max_iter=1000,
            working_size=WORKING_SIZE, callback=None):
    """Solve the dual of the module docstring.

    Parameters
    ----------
    F : ndarray of shape (n, m)
        Features, float32 or float64 (products in F's precision; the duals, ``w`` and the
        working sets' Q in float64).
    rows, signs, linear, upper : ndarrays of shape (K,)
        Each dual's row of F, sign y, linear term p and upper bound u.
    group : ndarray of int of shape (K,)
        Each dual's group, 0 .. len(totals) - 1.
    totals : sequence of float
        The sum of each group's duals.
    tol, max_iter, working_size, callback
        The stopping tolerance (relative to the largest |G|), the most working sets, the
        duals per working set, and a function called after each with a dict
        (n_iter, violation).

    Returns
    -------
    NuSolution
    """
    problem = _Dual(F, rows, signs, linear, upper, group, totals)
    problem.start(tol, max_iter, working_size)
    return problem.solve(tol, max_iter, working_size, callback)


class _Dual:
    """The dual's data and iterates (duals, w, gradients) and the passes' shrinking state:
    :meth:`start`, then :meth:`solve` (module docstring)."""

    def __init__(self, F, rows, signs, linear, upper, group, totals):
        if F.dtype not in (np.float32, np.float64):
            F = F.astype(np.float64)
        self.F = np.ascontiguousarray(F)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.signs = np.asarray(signs, dtype=np.float64)
        self.linear = np.asarray(linear, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        self.group = np.asarray(group, dtype=np.int64)
        self.totals = np.asarray(totals, dtype=np.float64)
        self.capacity = np.bincount(self.group, weights=self.upper,
                                    minlength=len(self.totals))
        if np.any(self.totals > self.capacity * (1 + 1e-12)):
            raise ValueError("infeasible")  # (the callers say which nu is)
        self.active = self.Fa = None  # the unshrunk duals and their rows of F

    def start(self, tol, max_iter, working_size):
        """The duals at the vertex of a first w's linearization (module docstring)."""
        if len(self.rows) > WHOLE_SET:
            stride = max(2, self.F.shape[0] // WARM_ROWS)
            w0 = _sample_solution(self, stride, tol, max_iter, working_size)
        else:
            spread = self.upper * (self.totals / np.where(self.capacity > 0, self.capacity,
                                                          1.0))[self.group]
            w0 = _weights(self.F, self.rows, self.signs, spread)
        self.alpha = _vertex(self.gradient(w0), self.upper, self.group, self.totals)
        self.w = _weights(self.F, self.rows, self.signs, self.alpha)

    def gradient(self, w):
        """G_k = y_k f_(r_k) . w + p_k of every dual: one product with F."""
        scores = np.asarray(self.F @ w.astype(self.F.dtype), dtype=np.float64)
        return self.signs * scores[self.rows] + self.linear

    def refresh(self, G):
        """The gradients of a pass (all, or the unshrunk duals' only) and which duals it
        covers."""
        if self.active is None:
            return self.gradient(self.w), np.ones(len(self.alpha), dtype=bool)
        scores = np.asarray(self.Fa @ self.w.astype(self.Fa.dtype), dtype=np.float64)
        G[self.active] = self.signs[self.active] * scores + self.linear[self.active]
        covered = np.zeros(len(self.alpha), dtype=bool)
        covered[self.active] = True
        return G, covered

    def shrink(self, G, band):
        """Follow only the duals not at a bound far on their side of the level, when they
        are fewer than half."""
        keep = _unshrunk(G, self.alpha, self.upper, self.group, len(self.totals), band)
        if 2 * len(keep) < len(self.alpha):
            self.active, self.Fa = keep, self.F[self.rows[keep]]

    def unshrink(self):
        self.active = self.Fa = None

    def smo(self, G, down, up, q, inner_tol):
        """SMO on the working set of the q most violating duals; moves alpha and w."""
        from ._nu_kernels import smo_working_set  # (numba: loaded by the first fit)

        group = self.group
        W = np.unique(np.concatenate([
            _working_set(G, down & (group == g), up & (group == g), q // len(self.totals))
            for g in range(len(self.totals))]))
        Fw = np.asarray(self.F[self.rows[W]], dtype=np.float64)
        yw = self.signs[W]
        Q = (Fw @ Fw.T) * np.outer(yw, yw)
        a = self.alpha[W].copy()
        smo_working_set(Q, G[W].copy(), a, self.upper[W], group[W], len(self.totals),
                        inner_tol, STEPS_PER_DUAL * len(W))
        change = a - self.alpha[W]
        self.alpha[W] = a
        self.w += Fw.T @ (yw * change)

    def violation(self, G, down, up):
        return max(_violation(G, down & (self.group == g), up & (self.group == g))
                   for g in range(len(self.totals)))

    def solve(self, tol, max_iter, working_size, callback):
        alpha, upper = self.alpha, self.upper
        q = len(alpha) if len(alpha) <= WHOLE_SET else int(min(max(2, working_size),
                                                                   len(alpha)))
        # The scale of the KKT test: the largest gradient, or, where w is near 0 (classes
        # whose reduced hulls meet), the most one dual moves a gradient, ||f||^2 u.
        norms = np.einsum("ij,ij->i", self.F, self.F, dtype=np.float64)
        reach = float((norms[self.rows] * upper).max())
        history, status, violation, threshold, partial, G = [], "max_iter", np.inf, 0.0, 0, None
        for it in range(max_iter + 1):
            G, covered = self.refresh(G)
            down, up = (alpha > 0) & covered, (alpha < upper) & covered
            violation = self.violation(G, down, up)
            if self.active is not None and (violation <= threshold or partial == FULL_EVERY):
                # the unshrunk duals look solved (or long unchecked): a full pass
                self.unshrink()
                partial = 0
                G, covered = self.refresh(G)
                down, up = (alpha > 0) & covered, (alpha < upper) & covered
                violation = self.violation(G, down, up)
            full = self.active is None
            if full:
                threshold = tol * max(float(np.abs(G).max()), reach, np.finfo(float).tiny)
            check_finite("nu_dual", it, violation=violation)
            if full and violation <= threshold:
                status = "converged"
                break
            if it == max_iter:
                break
            if full:
                self.shrink(G, violation)
            else:
                partial += 1
            self.smo(G, down, up, q, 0.1 * threshold)
            history.append({"n_iter": it + 1, "violation": float(violation)})
            if callback is not None:
                callback(history[-1])
        if self.active is not None:  # (max_iter on a partial pass: levels need every G)
            G = self.gradient(self.w)
        levels = np.array([_level(G, alpha, upper, self.group == g)
                           for g in range(len(self.totals))])
        converged = status == "converged"
        message = (f"Converged after {it} working sets: KKT violation {violation:.3g} <= "
                   f"{threshold:.3g}." if converged else
                   f"Reached max_iter={max_iter} with KKT violation {violation:.3g} > "
                   f"{threshold:.3g}; increase max_iter or tol.")
        result = SolverResult(coef=self.w, intercept=0.0, objective=0.5 * float(self.w @ self.w),
                              grad_norm=float(violation), tol_reached=float(threshold),
                              n_iter=it, converged=converged, status=status, message=message,
                              history=history, dual=alpha, gap=float(violation))
        return NuSolution(self.w, levels, alpha, result)


def one_class_dual(F, nu, sample_weight=None, tol=1e-3, max_iter=1000,
                   working_size=WORKING_SIZE, callback=None):
    """The nu-one-class SVM on the features F (module docstring).

    Returns
    -------
    SolverResult
        ``coef`` = w, ``intercept`` = -rho (the decision function is ``F w + intercept``),
        ``objective`` = 1/2 ||w||^2, ``dual`` = the duals, ``gap`` the final KKT violation.
    """
    n = F.shape[0]
    s = _weights_or_ones(sample_weight, n)
    total = float(nu) * s.sum()
    if not total > 0:
        raise ValueError("sample_weight: every weight is 0; no row to fit on.")
    sol = nu_dual(F, np.arange(n), np.ones(n), np.zeros(n), s, np.zeros(n, dtype=np.int64),
                  [total], tol, max_iter, working_size, callback)
    sol.result.intercept = -float(sol.levels[0])
    return sol.result


def nu_svc_dual(F, y, nu, sample_weight=None, tol=1e-3, max_iter=1000,
                working_size=WORKING_SIZE, callback=None):
    """The nu-SVC on the features F and labels y in {-1, +1} (module docstring).

    Returns
    -------
    SolverResult
        ``coef`` = w / r, ``intercept`` = -rho / r (the decision function is
        ``F coef + intercept``, LIBSVM's values), ``dual`` the duals.

    Raises
    ------
    ValueError
        When nu is infeasible: above ``2 min(S_+, S_-) / S`` (the classes' weights).
    """
    n = F.shape[0]
    s = _weights_or_ones(sample_weight, n)
    y = np.where(np.asarray(y) > 0, 1.0, -1.0)
    total = float(nu) * s.sum() / 2
    if not total > 0:
        raise ValueError("sample_weight: every weight is 0; no row to fit on.")
    largest = 2 * min(s[y > 0].sum(), s[y < 0].sum()) / s.sum()
    if nu > largest * (1 + 1e-12):
        raise ValueError(f"nu={nu} is infeasible for these classes: nu-SVC needs nu <= 2 "
                         f"min(n_+, n_-) / n = {largest:.4g} (weighted by sample_weight).")
    sol = nu_dual(F, np.arange(n), y, np.zeros(n), s, (y < 0).astype(np.int64),
                  [total, total], tol, max_iter, working_size, callback)
    r_pos, r_neg = sol.levels
    r, rho = (r_pos + r_neg) / 2, (r_pos - r_neg) / 2
    if not r > 0:  # (every row a margin error: the classes cannot be told apart)
        r = 1.0
    sol.result.coef, sol.result.intercept = sol.w / r, -float(rho / r)
    return sol.result


def _sample_solution(problem, stride, tol, max_iter, working_size):
    """w of the same problem on every ``stride``-th row of F: its duals' bounds scaled so
    that each group holds the same share of its capacity, hence w on the full problem's
    scale; solved to at most 1e-2 (its vertex is only a start)."""
    p = problem
    keep = (p.rows % stride) == 0
    sub_upper, sub_group = p.upper[keep], p.group[keep]
    sub_capacity = np.bincount(sub_group, weights=sub_upper, minlength=len(p.totals))
    scale = p.capacity / np.where(sub_capacity > 0, sub_capacity, 1.0)
    sub = nu_dual(np.ascontiguousarray(p.F[::stride]), p.rows[keep] // stride, p.signs[keep],
                  p.linear[keep], sub_upper * scale[sub_group], sub_group, p.totals,
                  max(tol, 1e-2), max_iter, working_size)
    return sub.w


def _weights_or_ones(sample_weight, n):
    return (np.ones(n) if sample_weight is None
            else np.asarray(sample_weight, dtype=np.float64).copy())


def _weights(F, rows, signs, alpha):
    """w = sum_k alpha_k y_k f_(r_k) in float64: the rows of the duals that are not 0,
    gathered, or, when they are many, one product of F^T with each row's coefficient."""
    k = np.flatnonzero(alpha)
    if 4 * len(k) < F.shape[0]:
        return np.asarray(F[rows[k]], dtype=np.float64).T @ (alpha[k] * signs[k])
    c = np.bincount(rows[k], weights=alpha[k] * signs[k], minlength=F.shape[0])
    out = np.zeros(F.shape[1])
    for start in range(0, F.shape[0], _ROWS_AT_ONCE):  # (float64 sums of float32 blocks)
        block = slice(start, start + _ROWS_AT_ONCE)
        out += np.asarray(F[block].T @ c[block].astype(F.dtype), dtype=np.float64)
    return out


def _vertex(G, upper, group, totals):
    """In each group, the feasible duals minimizing ``G . a``: the bounds on the lowest
    gradients, filled in order until the group's total (the last one partly)."""
    alpha = np.zeros_like(upper)
    for g, total in enumerate(totals):
        members = np.flatnonzero(group == g)
        order = members[np.argsort(G[members], kind="stable")]
        filled = np.cumsum(upper[order])
        last = int(np.searchsorted(filled, total))
        alpha[order[:last]] = upper[order[:last]]
        if last < len(order):
            alpha[order[last]] = total - (filled[last - 1] if last else 0.0)
    return alpha


def _violation(G, down, up):
    """max over the duals that can decrease of G minus min over those that can increase
    (0 when one side is empty: then no pair can move)."""
    if not down.any() or not up.any():
        return 0.0
    return max(0.0, float(G[down].max() - G[up].min()))


def _unshrunk(G, alpha, upper, group, n_groups, band):
    """The duals the next passes follow: all but those at a bound and more than ``band``
    (the current KKT violation) on their side of their group's level, which the passes
    after leave there (LIBSVM's shrinking); a full pass checks them before the end."""
    keep = np.ones(len(alpha), dtype=bool)
    for g in range(n_groups):
        members = group == g
        level = _level(G, alpha, upper, members)
        keep &= ~(members & (alpha >= upper) & (G < level - band))
        keep &= ~(members & (alpha <= 0) & (G > level + band))
    return np.flatnonzero(keep)


def _working_set(G, down, up, q):
    """The q most violating duals of a group: the largest gradients among those that can
    decrease and the smallest among those that can increase, half each."""
    half = max(1, q // 2)
    d, u = np.flatnonzero(down), np.flatnonzero(up)
    if len(d) > half:
        d = d[np.argpartition(-G[d], half - 1)[:half]]
    if len(u) > max(1, q - len(d)):
        k = max(1, q - len(d))
        u = u[np.argpartition(G[u], k - 1)[:k]]
    return np.concatenate([d, u])


def _level(G, alpha, upper, members):
    """A group's KKT level: the mean gradient of its free duals, else the middle of the
    interval its bounded ones leave (LIBSVM's rule)."""
    live = members & (upper > 0)
    free = live & (alpha > 0) & (alpha < upper)
    if free.any():
        return float(G[free].mean())
    at_upper, at_zero = live & (alpha >= upper), live & (alpha <= 0)
    low = float(G[at_upper].max()) if at_upper.any() else -np.inf
    high = float(G[at_zero].min()) if at_zero.any() else np.inf
    if np.isfinite(low) and np.isfinite(high):
        return 0.5 * (low + high)
    return low if np.isfinite(low) else (high if np.isfinite(high) else 0.0)
