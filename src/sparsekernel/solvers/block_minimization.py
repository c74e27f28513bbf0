"""Selective block minimization (after Chang & Roth, KDD 2011) for data streamed in chunks.

The linear SVM of :mod:`.dual_cd` over rows that arrive in chunks and never all fit in
memory. Each step optimises a working set W = (retained cache) + (new chunk) by dual
coordinate descent; then the cache is re-selected from W: the rows closest to the margin
(|1 - y f| smallest: free support vectors and rows about to become ones, the informative rows
of SBM) are kept, a fixed fraction ``drop_fraction`` of the working set is let go, and the
cache never exceeds ``cache_size`` rows. What happens to the rows let go is ``forget``:

- ``'freeze'`` (Chang & Roth): their dual variables stay fixed, so they keep a constant
  contribution sum_j alpha_j y_j [F_j, 1] to the primal point.
- ``'summary'`` (default): their *loss* is kept exactly as a function of w, with their
  active set frozen. For the squared hinge a row with y f < 1 contributes
  (1 - y [F, 1] w)^2 = w^T x x^T w - 2 y x^T w + 1, so all of them together are an
  (m+1) x (m+1) matrix G = sum s x x^T and a vector h = sum s y x; for the hinge a linear term.
  The sub-problem 1/2 w^T (I + C G) w - q^T w + C/2 sum_W s loss is turned into a plain dual
  coordinate descent problem by the Cholesky factor L of I + C G (features L^-1 [F, 1],
  offset L^-1 q). Rows keep reacting to later changes of w, which removes the bias of
  frozen duals: in one pass over noisy data 'summary' reaches the exact solution's test
  error and nearly its primal objective, where 'freeze' does clearly worse (worse still
  when the cache keeps the largest duals instead of the rows nearest the margin). For the
  hinge the two rules agree in
  practice: a row let go is at a bound of its box (the cache keeps the free ones), where its
  frozen dual and its linear summary are the same term.

Memory is O((cache_size + chunk) * m + m^2) whatever the number of rows; with
``store=True`` (needed to revisit rows on a later pass) one value per row and problem is
kept as well (the frozen dual, or whether the row was summarized as active), never a row of
features. Several binary problems (one-vs-rest) share the working set and the cache.

Continuing a fitted model (``frozen``). At the optimum of the whole problem on rows R the
primal point is w = sum_{i in R} alpha_i y_i [F_i, 1] (KKT), so under the freeze rule all of R
let go at once is exactly q = w with G = 0: the solver started from W = q = w optimizes later
rows against R with R's duals held fixed, and a chunk whose rows all have y f >= 1 leaves w
where it was. The rows let go after that follow ``forget`` as usual (their G and q add to
this q).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.linalg.blas import dsyrk
from threadpoolctl import threadpool_limits

from ..compute import finite_factor
from .dual_cd import dual_cd

__all__ = ["FORGET", "SelectiveBlockMinimization", "block_minimization_bytes"]

#: What happens to rows leaving the cache.
FORGET = ("summary", "freeze")


class SelectiveBlockMinimization:
    """Stateful solver: feed feature chunks with :meth:`step`, read ``coef`` / ``intercept``.

    A step updates the state in place, so one that raises (Ctrl-C included) leaves it partly
    updated: a caller that must keep the state of the previous step steps a
    ``copy.deepcopy`` of the solver and keeps the copy only when the step returns.

    Parameters
    ----------
    n_features : int
        Feature dimension m.
    n_problems : int
        Binary problems solved side by side (one column of targets each).
    C : float
        Loss weight, as in :func:`dual_cd` (the SVM family's scaling).
    loss : {'squared_hinge', 'hinge'}
    cache_size : int
        Maximum rows retained between steps.
    drop_fraction : float in [0, 1]
        Fraction of the working set let go at every step (the least informative rows).
    forget : {'summary', 'freeze'}
        How rows let go keep their influence (module docstring).
    tol, max_iter : float, int
        Stopping rule of each block sub-problem (see :func:`dual_cd`).
    store : bool
        Keep one value per row and problem so that a row seen again (identified by the
        ``ids`` given to :meth:`step`) replaces its earlier influence. Required for more than
        one pass over the data.
    random_state : int, numpy Generator or None
    frozen : ndarray of shape (n_problems, n_features + 1), optional
        A primal point [w, b] per problem to continue from, e.g. a model fitted on rows that
        are not streamed again: those rows are held with their duals frozen, so
        ``W = q = frozen`` with no summary (module docstring). Default: zeros (no rows yet).
    """

    def __init__(self, n_features, n_problems, C, loss="squared_hinge", *, cache_size=20000,
                 drop_fraction=0.75, forget="summary", tol=1e-3, max_iter=1000, store=False,
                 random_state=None, frozen=None):
        if forget not in FORGET:
            raise ValueError(f"forget must be one of {FORGET}; got {forget!r}.")
        self.m, self.n_problems = n_features, n_problems
        self.C, self.loss, self.forget = float(C), loss, forget
        self.cache_size, self.drop_fraction = cache_size, drop_fraction
        self.tol, self.max_iter = tol, max_iter
        self.rng = np.random.default_rng(random_state)
        d = n_features + 1
        self.W = np.zeros((n_problems, d))
        if frozen is not None:
            frozen = np.asarray(frozen, dtype=np.float64)
            if frozen.shape != (n_problems, d):
                raise ValueError(f"frozen must have shape {(n_problems, d)} (n_problems, "
                                 f"n_features + 1); got {frozen.shape}.")
            if not np.isfinite(frozen).all():
                raise ValueError("frozen holds non-finite values.")
            self.W[...] = frozen
        self.G = np.zeros((n_problems, d, d)) if forget == "summary" else None
        # The linear term: the rows let go so far (all of frozen's rows: w itself).
        self.q = self.W.copy()
        self.cache = None  # (F, Y, sw, alpha, ids)
        self.store = np.zeros((0, n_problems)) if store else None
        self.n_iter = np.zeros(n_problems, dtype=int)
        self.n_rows_seen = 0
        self.last_results = []

    @property
    def coef(self):
        return self.W[:, :self.m].copy()

    @property
    def intercept(self):
        return self.W[:, self.m].copy()

    def _absorb(self, F, Y, sw, alpha, sign=1.0):
        """Add (sign=+1) or remove (-1) the influence of rows let go."""
        X = _augment(F)
        for k in range(self.n_problems):
            if self.forget == "freeze":
                self.q[k] += sign * (X.T @ (alpha[:, k] * Y[:, k]))
                continue
            active = (Y[:, k] * (X @ self.W[k]) < 1.0) if alpha is None else alpha[:, k] > 0
            Xa, sa = X[active], sw[active]
            # Weight of y x in the linear term: C (squared hinge) or C / 2 (hinge).
            weight = self.C if self.loss == "squared_hinge" else 0.5 * self.C
            self.q[k] += sign * weight * (Xa.T @ (sa * Y[active, k]))
            if self.loss == "squared_hinge" and len(Xa):
                if np.any(sa != 1.0):
                    Xa *= np.sqrt(sa)[:, None]
                # Upper triangle only (syrk: half a matrix product); Cholesky reads just it.
                self.G[k] += sign * dsyrk(1.0, Xa.T, trans=0)  # Xa.T is Fortran-ordered

    def _recall(self, F, Y, sw, ids):
        """Rows seen before: remove their stored influence; return their warm dual values."""
        alpha = np.zeros((len(ids), self.n_problems))
        if self.store is None:
            return alpha
        need = int(ids.max()) + 1 if len(ids) else 0
        if need > len(self.store):
            grown = np.zeros((max(need, 2 * len(self.store)), self.n_problems))
            grown[:len(self.store)] = self.store
            self.store = grown
        stored = self.store[ids]
        if stored.any():
            self._absorb(F, Y, sw, stored, sign=-1.0)
        if self.forget == "freeze":
            alpha = stored.copy()
        self.store[ids] = 0.0
        return alpha

    def _working_set(self, F, Y, sw, ids):
        if self.cache is not None:
            new = ~np.isin(ids, self.cache[4])
            F, Y, sw, ids = F[new], Y[new], sw[new], ids[new]
        alpha = self._recall(F, Y, sw, ids)
        if self.cache is None:
            return F, Y, sw, alpha, ids
        parts = zip(self.cache, (F, Y, sw, alpha, ids), strict=True)
        return tuple(np.concatenate([c, x]) for c, x in parts)

    def step(self, F, Y, sample_weight=None, ids=None):
        """Optimise over the cache plus the chunk ``F`` (rows x m) with targets ``Y``.

        Parameters
        ----------
        F : ndarray of shape (b, m), float32 or float64
        Y : ndarray of shape (b, n_problems)
            Targets in {-1, +1}.
        sample_weight : ndarray of shape (b,), optional
        ids : ndarray of shape (b,), optional
            Global row numbers (needed with ``store``); default: the next b numbers.

        Returns
        -------
        list of SolverResult
            One block sub-problem result per problem (in the transformed features).
        """
        b = len(F)
        sw = np.ones(b) if sample_weight is None else np.asarray(sample_weight, float)
        ids = np.arange(self.n_rows_seen, self.n_rows_seen + b) if ids is None else ids
        ids = np.asarray(ids, dtype=np.int64)
        self.n_rows_seen = max(self.n_rows_seen, int(ids.max()) + 1 if b else 0)
        # The (m+1)-sized factorizations and row-block products here are latency bound:
        # threaded BLAS makes a small Cholesky far slower on a loaded machine (threads
        # spinning against other processes), so run them on one.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._step(F, Y, sw, ids)

    def _step(self, F, Y, sw, ids):
        F, Y, sw, alpha, ids = self._working_set(F, Y, sw, ids)
        self.last_results = []
        seed = int(self.rng.integers(2**31))
        for k in range(self.n_problems):
            res = self._solve_block(F, np.ascontiguousarray(Y[:, k], dtype=np.float64), sw,
                                    alpha[:, k], k, seed + k)
            alpha[:, k] = res.dual
            self.n_iter[k] += res.n_iter
            self.last_results.append(res)
        self._select_cache(F, Y, sw, alpha, ids)
        return self.last_results

    def _solve_block(self, F, y, sw, alpha, k, seed):
        """min 1/2 w^T (I + C G) w - q^T w + C/2 sum s loss over the working set."""
        if self.G is None or not self.G[k].any():
            # 1/2 ||w||^2 - q^T w = 1/2 ||w - q||^2 + const over w = [coef, b]: q, bias
            # entry included, is dual_cd's offset with its own bias feature.
            L, Xs, offset = None, np.ascontiguousarray(F), self.q[k]
        else:  # v = L^T w turns the quadratic into 1/2 ||v - L^-1 q||^2 + const
            d = self.m + 1
            # No check_finite pass over the (m+1)^2 matrix: NaN/inf in G reaches the
            # factor's diagonal, which finite_factor checks in O(m).
            A = np.eye(d) + self.C * self.G[k]
            L = finite_factor(cholesky(A, lower=False, check_finite=False).T, A)
            # Features in the rows' own precision (strsm for float32 rows), solved in place
            # of the fresh [F, 1] (its transpose is Fortran-ordered, as LAPACK wants), so
            # the working set is held twice here, not three times.
            Xs = solve_triangular(L.astype(F.dtype), _augment(F, F.dtype).T, lower=True,
                                  overwrite_b=True).T
            Xs = np.ascontiguousarray(Xs)
            offset = np.r_[solve_triangular(L, self.q[k], lower=True), 0.0]
        # Without a summary the bias is dual_cd's own feature; with one it is in [F, 1] L^-T.
        res = dual_cd(Xs, y, self.C, loss=self.loss, sample_weight=sw,
                      fit_intercept=L is None, tol=self.tol, max_iter=self.max_iter,
                      dual0=alpha, offset=offset, random_state=seed)
        if L is None:
            self.W[k] = np.r_[res.coef, res.intercept]
        else:
            self.W[k] = solve_triangular(L.T, res.coef, lower=False)
        return res

    def _select_cache(self, F, Y, sw, alpha, ids):
        """Keep the rows nearest the margin; absorb the others."""
        # Here, not at module level: numba loads with the first fit, not with the package.
        from ._dual_cd_kernels import row_margins

        score = np.full(len(F), np.inf)
        scratch = np.empty(len(F))
        Fc = np.ascontiguousarray(F)
        for k in range(self.n_problems):
            f = row_margins(Fc, self.W[k], 1.0, scratch)
            score = np.minimum(score, np.abs(1.0 - Y[:, k] * f))
        n_keep = min(self.cache_size, int(np.ceil((1.0 - self.drop_fraction) * len(F))))
        order = np.argsort(score, kind="stable")
        keep, drop = np.sort(order[:n_keep]), order[n_keep:]
        if len(drop):
            self._absorb(F[drop], Y[drop], sw[drop],
                         alpha[drop] if self.forget == "freeze" else None)
            if self.store is not None:
                self.store[ids[drop]] = self._stored_value(F[drop], Y[drop], alpha[drop])
        self.cache = (F[keep], Y[keep], sw[keep], alpha[keep], ids[keep])

    def _stored_value(self, F, Y, alpha):
        if self.forget == "freeze":
            return alpha
        X = _augment(F)
        return np.stack([(Y[:, k] * (X @ self.W[k]) < 1.0) for k in range(self.n_problems)],
                        axis=1).astype(float)


def _augment(F, dtype=np.float64):
    """[F, 1] (the penalized bias feature), float64 unless told otherwise."""
    out = np.empty((len(F), F.shape[1] + 1), dtype=dtype)
    out[:, :-1] = F
    out[:, -1] = 1.0
    return out


def block_minimization_bytes(chunk, m, k, n_stored=0):
    """Peak memory of a :class:`SelectiveBlockMinimization` fed chunks of ``chunk`` rows on
    m features for k problems, including each chunk's features (an upper estimate).

    A step works on the cache (at most a third of the working set in the steady state, with
    ``drop_fraction=0.75``) plus the chunk, about 1.4 chunks of rows, and holds up to eight
    float64 copies of it at once (the working set, [F 1], its whitened form and the rows
    absorbed); the summaries are k (m+1)^2 matrices, the factor two more; ``store`` keeps a
    value per stored row and problem.
    """
    square = 8.0 * (m + 1) ** 2
    return 8 * 1.4 * 8.0 * chunk * (m + 1) + (k + 2) * square + 8.0 * n_stored * k
