"""The Newton system H = I + [F 1]^T diag(q) [F 1], kept up to date row by row.

With the exact squared loss (smoothing = inf) a row's curvature q_i is a constant while the
row violates the margin and 0 otherwise, so between Newton iterations H changes only by the
rows entering or leaving the active set. Updating H with those rows costs |changed| m^2
instead of |active| m^2; late iterations change a few rows. A full rebuild happens when more
than half of the active rows changed and every ``refresh_every`` updates (to bound drift).

Mixed precision. While the active set is still changing wholesale (early iterations, where
most of the work lies: from w = 0 every row is active), a rebuild computes the row Gram in
float32, twice the speed of float64 and half the copy traffic. The Hessian only sets the
search direction; the gradient, objective and stopping test stay in float64, so the solution
is as accurate as before. Once the active set settles (the first iteration that would take
the update path), H is rebuilt once in float64 and updated exactly from then on, so the last
iterations converge as fast as with a float64 Hessian.
"""

from __future__ import annotations

import numpy as np

from ._blocks import gram_weighted, rmatvec

__all__ = ["ACTIVE_RTOL", "NewtonSystem"]

#: Rows whose curvature is below this fraction of the largest are left out of H: their
#: contribution is under double precision next to the identity term.
ACTIVE_RTOL = 1e-12
#: A rebuild uses float32 only when it costs more than this many multiply-adds (rows * m^2):
#: small systems gain nothing from it.
FAST_GRAM_MIN_WORK = 2e9


class NewtonSystem:
    """Accumulates H over the row blocks of one pass (see the module docstring)."""

    def __init__(self, m, refresh_every=20, fast_gram=True):
        self.m = m
        self.refresh_every = refresh_every
        self.fast_gram = fast_gram
        self.q = None
        self.H = None
        self.approximate = False  # whether H was last rebuilt in float32
        self._since_refresh = 0

    def begin(self, q):
        """Plan this iteration's update; returns the number of active rows."""
        q = np.where(q > ACTIVE_RTOL * q.max(), q, 0.0) if q.size and q.max() > 0 else \
            np.zeros_like(q)
        n_active = int(np.count_nonzero(q))
        mode = self._plan(q, n_active)
        if mode == "update":
            self._dtype = None
            self._delta, self._rows = self._dq, self._dq != 0
            self._next = self.H.copy()
            self._since_refresh += 1
        else:
            self._delta, self._rows = q, q > 0
            self._next = np.zeros((self.m + 1, self.m + 1))
            self._since_refresh = 0
            fast = (mode == "fast" and self.fast_gram
                    and n_active * float(self.m) ** 2 > FAST_GRAM_MIN_WORK)
            self._dtype = np.float32 if fast else None
            self.approximate = fast
        self.q = q
        return n_active

    def _plan(self, q, n_active):
        """'fast' (rebuild, float32 allowed), 'exact' (rebuild in float64) or 'update'."""
        if self.q is None:
            return "fast"
        if self._since_refresh >= self.refresh_every:
            return "exact"
        self._dq = q - self.q
        if 2 * np.count_nonzero(self._dq) > max(n_active, 1):
            return "fast"
        return "exact" if self.approximate else "update"

    def add_block(self, rows, Fb):
        """Add the contribution of the planned rows within one block."""
        delta = self._delta[rows]
        H, m = self._next, self.m
        for sign, sel in ((1.0, self._rows[rows] & (delta > 0)),
                          (-1.0, self._rows[rows] & (delta < 0))):
            if not sel.any():
                continue
            d = delta[sel]
            Fa = Fb[sel]  # a private copy, scaled in place below
            if self._dtype is not None and Fa.dtype != self._dtype:
                Fa = Fa.astype(self._dtype)
            H[:m, m] += rmatvec(Fa, d)
            H[m, m] += d.sum()
            H[:m, :m] += sign * gram_weighted(Fa, sign * d, overwrite=True)

    def finish(self):
        """Return the assembled H (identity included)."""
        if self._since_refresh == 0:
            self._next[np.diag_indices(self.m + 1)] += 1.0
        self._next[self.m, :self.m] = self._next[:self.m, self.m]
        self.H = self._next
        return self.H
