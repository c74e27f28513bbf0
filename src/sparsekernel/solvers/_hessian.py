"""The Newton system H = I + [F 1]^T diag(q) [F 1], kept up to date row by row.

With the exact squared loss (smoothing = inf) a row's curvature q_i is a constant while the
row violates the margin and 0 otherwise, so between Newton iterations H changes only by the
rows entering or leaving the active set. Updating H with those rows costs |changed| m^2
instead of |active| m^2; late iterations change a few rows. A full rebuild happens when more
than half of the active rows changed and every ``refresh_every`` updates (to bound drift).
"""

from __future__ import annotations

import numpy as np

from ._blocks import gram_weighted, rmatvec

__all__ = ["ACTIVE_RTOL", "NewtonSystem"]

#: Rows whose curvature is below this fraction of the largest are left out of H: their
#: contribution is under double precision next to the identity term.
ACTIVE_RTOL = 1e-12


class NewtonSystem:
    """Accumulates H over the row blocks of one pass (see the module docstring)."""

    def __init__(self, m, refresh_every=20):
        self.m = m
        self.refresh_every = refresh_every
        self.q = None
        self.H = None
        self._since_refresh = 0

    def begin(self, q):
        """Plan this iteration's update; returns the number of active rows."""
        q = np.where(q > ACTIVE_RTOL * q.max(), q, 0.0) if q.size and q.max() > 0 else \
            np.zeros_like(q)
        n_active = int(np.count_nonzero(q))
        full = self.q is None or self._since_refresh >= self.refresh_every
        if not full:
            dq = q - self.q
            changed = dq != 0
            full = 2 * np.count_nonzero(changed) > max(n_active, 1)
        if full:
            self._delta, self._rows = q, q > 0
            self._next = np.zeros((self.m + 1, self.m + 1))
            self._since_refresh = 0
        else:
            self._delta, self._rows = dq, changed
            self._next = self.H.copy()
            self._since_refresh += 1
        self.q = q
        return n_active

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
