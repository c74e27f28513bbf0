"""Selective block minimization (Chang & Roth, KDD 2011) for data streamed in chunks.

The linear SVM of :mod:`.dual_cd` over rows that arrive in chunks and never all fit in
memory. Each step solves the dual restricted to a working set W = (retained cache) + (new
chunk) with every other dual variable held fixed (``dual_cd(offset=...)``); the primal point
``[w, b] = sum_i alpha_i y_i [F_i, 1]`` over *all* rows seen so far is carried between steps,
so rows that left memory keep their contribution to ``w``. Then the cache is re-selected from
W: rows with a positive dual variable (support vectors, largest first) are kept, of the
others a fixed fraction ``drop_fraction`` (the least informative: largest margin y f) is
dropped, and the cache never exceeds ``cache_size`` rows. Memory is O((cache_size +
chunk) * m) whatever the number of rows; with ``store_dual=True`` (needed to revisit rows on
a later pass) one float64 per row and problem is kept as well, never a row of features.

Several binary problems (one-vs-rest) share the working set and the cache: a row is kept when
it is informative for any of them.
"""

from __future__ import annotations

import numpy as np

from ._dual_cd_kernels import row_margins, weights_from_dual
from .dual_cd import dual_cd

__all__ = ["SelectiveBlockMinimization"]


class SelectiveBlockMinimization:
    """Stateful solver: feed feature chunks with :meth:`step`, read ``coef`` / ``intercept``.

    Parameters
    ----------
    n_features : int
        Feature dimension m.
    n_problems : int
        Binary problems solved side by side (one column of targets each).
    C : float
        Loss weight, as in :func:`dual_cd`.
    loss : {'squared_hinge', 'hinge'}
    cache_size : int
        Maximum rows retained between steps.
    drop_fraction : float in [0, 1]
        Fraction of the rows with zero dual variables dropped at every step.
    fit_intercept : bool
    tol, max_iter : float, int
        Stopping rule of each block sub-problem (see :func:`dual_cd`); sub-problems need only
        be solved loosely.
    store_dual : bool
        Keep every row's dual variables (O(n) floats), so that a row seen again (identified
        by the ``ids`` given to :meth:`step`) resumes from its dual value. Required for more
        than one pass over the data.
    random_state : int, numpy Generator or None
    """

    def __init__(self, n_features, n_problems, C, loss="squared_hinge", *, cache_size=20000,
                 drop_fraction=0.75, fit_intercept=True, tol=1e-2, max_iter=50,
                 store_dual=False, random_state=None):
        self.m, self.n_problems = n_features, n_problems
        self.C, self.loss = C, loss
        self.cache_size, self.drop_fraction = cache_size, drop_fraction
        self.bias = 1.0 if fit_intercept else 0.0
        self.tol, self.max_iter = tol, max_iter
        self.rng = np.random.default_rng(random_state)
        self.W = np.zeros((n_problems, n_features + 1))
        self.cache = None  # (F, Y, sw, alpha, ids)
        self.store = np.zeros((0, n_problems)) if store_dual else None
        self.n_iter = np.zeros(n_problems, dtype=int)
        self.n_rows_seen = 0
        self.last_results = []

    @property
    def coef(self):
        return self.W[:, :self.m].copy()

    @property
    def intercept(self):
        return self.W[:, self.m].copy()

    def _grow_store(self, ids):
        need = int(ids.max()) + 1 if len(ids) else 0
        if need > len(self.store):
            grown = np.zeros((max(need, 2 * len(self.store)), self.n_problems))
            grown[:len(self.store)] = self.store
            self.store = grown

    def _working_set(self, F, Y, sw, ids):
        """Cache rows plus the chunk rows not already cached, with their dual values."""
        alpha = np.zeros((len(F), self.n_problems))
        if self.store is not None:
            self._grow_store(ids)
            alpha = self.store[ids].copy()
        if self.cache is None:
            return F, Y, sw, alpha, ids
        cF, cY, csw, calpha, cids = self.cache
        new = ~np.isin(ids, cids) if self.store is not None else slice(None)
        return (np.concatenate([cF, F[new]]), np.concatenate([cY, Y[new]]),
                np.concatenate([csw, sw[new]]), np.concatenate([calpha, alpha[new]]),
                np.concatenate([cids, ids[new]]))

    def step(self, F, Y, sample_weight=None, ids=None):
        """Optimise over the cache plus the chunk ``F`` (rows x m) with targets ``Y``.

        Parameters
        ----------
        F : ndarray of shape (b, m), float32 or float64
        Y : ndarray of shape (b, n_problems)
            Targets in {-1, +1}.
        sample_weight : ndarray of shape (b,), optional
        ids : ndarray of shape (b,), optional
            Global row numbers (needed with ``store_dual``); default: the next b numbers.

        Returns
        -------
        list of SolverResult
            One block sub-problem result per problem.
        """
        b = len(F)
        sw = np.ones(b) if sample_weight is None else np.asarray(sample_weight, float)
        if ids is None:
            ids = np.arange(self.n_rows_seen, self.n_rows_seen + b)
        self.n_rows_seen = max(self.n_rows_seen, int(ids.max()) + 1 if b else 0)
        F, Y, sw, alpha, ids = self._working_set(F, Y, sw, np.asarray(ids, dtype=np.int64))
        F = np.ascontiguousarray(F)
        self.last_results = []
        seed = self.rng.integers(2**31)
        for k in range(self.n_problems):
            y = np.ascontiguousarray(Y[:, k], dtype=np.float64)
            held = weights_from_dual(F, alpha[:, k] * y, self.bias, np.zeros(self.m + 1))
            res = dual_cd(F, y, self.C, loss=self.loss, sample_weight=sw,
                          fit_intercept=self.bias > 0, tol=self.tol, max_iter=self.max_iter,
                          dual0=alpha[:, k], offset=self.W[k] - held, random_state=seed + k)
            self.W[k, :self.m], self.W[k, self.m] = res.coef, res.intercept
            alpha[:, k] = res.dual
            self.n_iter[k] += res.n_iter
            self.last_results.append(res)
            if res.status == "interrupted":
                raise KeyboardInterrupt
        if self.store is not None:
            self.store[ids] = alpha
        self._select_cache(F, Y, sw, alpha, ids)
        return self.last_results

    def _select_cache(self, F, Y, sw, alpha, ids):
        """Keep support vectors (largest alpha first), then the smallest-margin others."""
        support = (alpha > 0).any(axis=1)
        rest = np.flatnonzero(~support)
        sv = np.flatnonzero(support)
        sv = sv[np.argsort(-alpha[sv].max(axis=1), kind="stable")]
        n_rest = int(np.ceil((1.0 - self.drop_fraction) * len(rest)))
        if n_rest and len(sv) < self.cache_size:
            margins = np.full(len(rest), np.inf)
            scratch = np.empty(len(rest))
            sub = np.ascontiguousarray(F[rest])
            for k in range(self.n_problems):
                f = row_margins(sub, self.W[k], self.bias, scratch)
                margins = np.minimum(margins, Y[rest, k] * f)
            rest = rest[np.argsort(margins, kind="stable")[:n_rest]]
        else:
            rest = rest[:0]
        keep = np.sort(np.concatenate([sv, rest])[:self.cache_size])
        self.cache = (F[keep], Y[keep], sw[keep], alpha[keep], ids[keep])
