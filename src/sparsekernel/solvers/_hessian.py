"""The Newton system H = I + [F 1]^T diag(q) [F 1] of one problem, kept up to date row by row.

The rows are a provider's (:mod:`._rows`): H is its Gram sums of row sets, on H's lower
triangle (the triangle the Cholesky factor reads), so the same system serves rows in memory,
streamed or recomputed. :meth:`NewtonSystem.begin` plans the iteration and returns its Gram
requests, which the solver hands to the provider's ``gradient`` so that a provider reading
its rows once per pass adds them in the pass that sums the gradient.

With the exact squared loss (smoothing = inf) a row's curvature q_i is a constant while the
row violates the margin and 0 otherwise, so between Newton iterations H changes only by the
rows entering or leaving the active set. Updating H with those rows costs |changed| m^2
instead of |active| m^2; late iterations change a few rows. A full rebuild happens when more
than half of the active rows changed and every ``refresh_every`` updates (to bound drift).

Mixed precision. While the active set is still changing wholesale (early iterations, where
most of the work lies: from w = 0 every row is active), H's products are float32 (sums
float64), faster than float64 and half the copy traffic: rebuilt, or updated in float32 by
the changed rows when fewer rows changed than are active. The Hessian only sets the search
direction; the gradient, objective and stopping test stay in float64, so the solution is as
accurate as before. Once the active set settles (at most ``SETTLED`` of the active rows
change), H is rebuilt once in float64 and updated exactly from then on, so the last
iterations converge as fast as with a float64 Hessian.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ACTIVE_RTOL", "NewtonSystem"]

#: Rows whose curvature is below this fraction of the largest are left out of H: their
#: contribution is under double precision next to the identity term.
ACTIVE_RTOL = 1e-12
#: A rebuild uses float32 products only when it costs more than this many multiply-adds
#: (rows * m^2): small systems gain nothing from it.
FAST_GRAM_MIN_WORK = 2e9
#: A float32 H is replaced by an exact one once at most this fraction of active rows change.
SETTLED = 0.2


class NewtonSystem:
    """H of one problem over the ``m`` features of a row provider (module docstring).

    Per iteration: ``requests, n_active = begin(q)``; the provider adds ``requests`` (in its
    ``gradient(V, grams=requests)`` pass, or by ``add_gram``); ``finish()`` returns H.
    """

    def __init__(self, m, refresh_every=20, fast_gram=True):
        self.m = m
        self.refresh_every = refresh_every
        self.fast_gram = fast_gram
        self.q = None
        self.H = None
        self.approximate = False  # whether H was last built with float32 products
        self._since_refresh = 0

    def begin(self, q):
        """Plan this iteration's H for curvatures ``q``; returns ``(requests, n_active)``,
        the Gram sums the provider is to add, as ``add_gram``'s arguments ``(H, weights,
        rows, sign, threads, dtype)`` (threads None: the provider's)."""
        q = np.where(q > ACTIVE_RTOL * q.max(), q, 0.0) if q.size and q.max() > 0 else \
            np.zeros_like(q)
        n_active = int(np.count_nonzero(q))
        mode, dq = self._plan(q, n_active)
        if mode in ("update", "fast-update"):
            self._next = self.H.copy()
            dtype = np.float32 if mode == "fast-update" else np.float64
            weights = np.abs(dq)
            requests = [(self._next, weights, np.flatnonzero(dq > 0), 1.0, None, dtype),
                        (self._next, weights, np.flatnonzero(dq < 0), -1.0, None, dtype)]
            self._since_refresh += 1
        else:
            fast = (mode == "fast" and self.fast_gram
                    and n_active * float(self.m) ** 2 > FAST_GRAM_MIN_WORK)
            self._next = np.eye(self.m + 1)
            requests = [(self._next, q, np.flatnonzero(q), 1.0, None,
                         np.float32 if fast else np.float64)]
            self._since_refresh = 0
            self.approximate = fast
        self.q = q
        return requests, n_active

    def _plan(self, q, n_active):
        """``(mode, q - previous q)``: 'fast' (rebuild, float32 allowed), 'exact' (rebuild
        in float64), 'update' (exact row updates of an exact H) or 'fast-update' (float32
        row updates of a float32 H).

        The work is rows times m^2 either way, so a float32 H is updated while fewer rows
        changed than are active, and replaced by an exact rebuild once at most
        ``SETTLED`` of the active rows change, which takes less Gram work than rebuilding
        until the change halves.
        """
        if self.q is None:
            return "fast", None
        if self._since_refresh >= self.refresh_every:
            return "exact", None
        dq = q - self.q
        changed = np.count_nonzero(dq)
        if self.approximate:
            if changed > n_active:
                return "fast", dq
            return ("fast-update" if changed > SETTLED * n_active else "exact"), dq
        return ("fast" if 2 * changed > max(n_active, 1) else "update"), dq

    def finish(self):
        """The assembled H (identity included; its lower triangle, the upper one as the
        last rebuild left it)."""
        self.H = self._next
        return self.H
