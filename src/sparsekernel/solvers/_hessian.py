"""The Newton system H = I + [F 1]^T diag(q) [F 1], kept up to date row by row.

With the exact squared loss (smoothing = inf) a row's curvature q_i is a constant while the
row violates the margin and 0 otherwise, so between Newton iterations H changes only by the
rows entering or leaving the active set. Updating H with those rows costs |changed| m^2
instead of |active| m^2; late iterations change a few rows. A full rebuild happens when more
than half of the active rows changed and every ``refresh_every`` updates (to bound drift).

Mixed precision. While the active set is still changing wholesale (early iterations, where
most of the work lies: from w = 0 every row is active), H is built in float32, faster
than float64 and half the copy traffic: rebuilt, or updated in float32 by the changed rows
when fewer rows changed than are active. The Hessian only sets the search direction; the
gradient, objective and stopping test stay in float64, so the solution is as accurate as
before. Once the active set settles (at most ``SETTLED`` of the active rows change), H is
rebuilt once in float64 and updated exactly from then on, so the last iterations converge as
fast as with a float64 Hessian.

Contributions are gathered across row blocks and added to one (m, m) accumulator in few large
products: a product per row block allocated, symmetrized, upcast and added a fresh m x m array
each time (about 70 MB of memory traffic per block at m = 1500), which cost more than the
arithmetic once few rows changed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._blocks import gram_weighted, rmatvec
from ._constants import GATHER_BYTES

__all__ = ["ACTIVE_RTOL", "NewtonSystem"]

#: Rows whose curvature is below this fraction of the largest are left out of H: their
#: contribution is under double precision next to the identity term.
ACTIVE_RTOL = 1e-12
#: A rebuild uses float32 only when it costs more than this many multiply-adds (rows * m^2):
#: small systems gain nothing from it.
FAST_GRAM_MIN_WORK = 2e9
#: A float32 H is replaced by an exact one once at most this fraction of active rows change.
SETTLED = 0.2


class NewtonSystem:
    """Accumulates H over the row blocks of one pass (see the module docstring)."""

    def __init__(self, m, refresh_every=20, fast_gram=True, gather_bytes=GATHER_BYTES):
        self.m = m
        self.gather_bytes = gather_bytes
        self.refresh_every = refresh_every
        self.fast_gram = fast_gram
        self.q = None
        self.H = None
        self.approximate = False  # whether H was last rebuilt in float32
        self._since_refresh = 0
        self._buffers = {}  # gather buffers, reused across iterations

    def begin(self, q):
        """Plan this iteration's update; returns the number of active rows."""
        q = np.where(q > ACTIVE_RTOL * q.max(), q, 0.0) if q.size and q.max() > 0 else \
            np.zeros_like(q)
        n_active = int(np.count_nonzero(q))
        mode = self._plan(q, n_active)
        if mode in ("update", "fast-update"):
            self._delta, self._rows = self._dq, self._dq != 0
            self._next = self.H.copy()
            dtype = np.float32 if mode == "fast-update" else np.float64
            self._gram = _GramAccumulator(self.m, dtype, self._buffers, len(q),
                                          self.H[:self.m, :self.m], self.gather_bytes)
            self._since_refresh += 1
        else:
            fast = (mode == "fast" and self.fast_gram
                    and n_active * float(self.m) ** 2 > FAST_GRAM_MIN_WORK)
            self._delta, self._rows = q, q > 0
            self._next = np.zeros((self.m + 1, self.m + 1))
            self._since_refresh = 0
            self._gram = _GramAccumulator(self.m, np.float32 if fast else np.float64,
                                          self._buffers, len(q), None, self.gather_bytes)
            self.approximate = fast
        self.q = q
        return n_active

    def _plan(self, q, n_active):
        """'fast' (rebuild, float32 allowed), 'exact' (rebuild in float64), 'update' (exact
        row updates of an exact H) or 'fast-update' (float32 row updates of a float32 H).

        The work is rows times m^2 either way, so a float32 H is updated while fewer rows
        changed than are active, and replaced by an exact rebuild once at most
        ``SETTLED`` of the active rows change, which takes less Gram work than rebuilding
        until the change halves.
        """
        if self.q is None:
            return "fast"
        if self._since_refresh >= self.refresh_every:
            return "exact"
        self._dq = q - self.q
        changed = np.count_nonzero(self._dq)
        if self.approximate:
            if changed > n_active:
                return "fast"
            return "fast-update" if changed > SETTLED * n_active else "exact"
        return "fast" if 2 * changed > max(n_active, 1) else "update"

    def add_block(self, rows, Fb):
        """Add the contribution of the planned rows within one block."""
        delta = self._delta[rows]
        H, m = self._next, self.m
        for sign, sel in ((1.0, self._rows[rows] & (delta > 0)),
                          (-1.0, self._rows[rows] & (delta < 0))):
            if not sel.any():
                continue
            d = delta[sel]
            Fa = Fb if sel.all() else Fb[sel]
            H[:m, m] += rmatvec(Fa, d)
            H[m, m] += d.sum()
            self._gram.add(Fa, sign * d, sign)

    def finish(self):
        """Return the assembled H (identity included)."""
        m = self.m
        self._next[:m, :m] = self._gram.result()
        self._gram = None
        if self._since_refresh == 0:
            self._next[np.diag_indices(m + 1)] += 1.0
        self._next[m, :m] = self._next[:m, m]
        self.H = self._next
        return self.H


class _GramAccumulator:
    """sum_k sign_k G_k^T G_k with G_k = diag(sqrt(|d_k|)) F_k, accumulated in place.

    Scaled rows are gathered into a reused buffer of the accumulator's dtype (which is where a
    float64 block becomes float32 for a fast rebuild) and flushed as one ``G.T @ G`` (NumPy
    runs it as syrk) per ``GATHER_BYTES`` of rows, so the m x m output is written once per
    several row blocks instead of once per block. NumPy, not ``scipy.linalg.blas``, does the
    product on purpose: the row passes around it use NumPy's OpenBLAS, and alternating
    between two OpenBLAS builds leaves one library's threads spinning on the cores the other
    needs (measured: a markedly slower syrk).
    """

    def __init__(self, m, dtype, buffers, n_rows, start=None, gather_bytes=GATHER_BYTES):
        self.dtype = np.dtype(dtype)
        self.acc = (np.zeros((m, m), dtype=dtype) if start is None
                    else np.array(start, dtype=dtype))
        rows = max(1, min(n_rows, int(gather_bytes // (self.dtype.itemsize * max(m, 1)))))
        self._buf = {sign: buffers.setdefault((self.dtype.str, sign), np.empty((0, m), dtype))
                     for sign in (1.0, -1.0)}
        self._buffers, self._rows = buffers, rows
        self._fill = {1.0: 0, -1.0: 0}

    def add(self, Fa, weights, sign):
        if sp.issparse(Fa):
            self.acc += sign * gram_weighted(Fa, weights).astype(self.dtype)
            return
        sq = np.sqrt(weights)[:, None]
        start = 0
        while start < Fa.shape[0]:
            buf, fill = self._buf[sign], self._fill[sign]
            if fill == len(buf):
                if fill:
                    self._flush(sign)
                    continue
                # Allocated on first use: an update that removes no rows needs no buffer.
                buf = np.empty((self._rows, self.acc.shape[0]), self.dtype)
                self._buf[sign] = self._buffers[(self.dtype.str, sign)] = buf
            k = min(len(buf) - fill, Fa.shape[0] - start)
            np.multiply(Fa[start:start + k], sq[start:start + k], out=buf[fill:fill + k],
                        casting="same_kind")
            self._fill[sign] = fill + k
            start += k

    def _flush(self, sign):
        G = self._buf[sign][:self._fill[sign]]
        if sign > 0:
            self.acc += G.T @ G
        else:
            self.acc -= G.T @ G
        self._fill[sign] = 0

    def result(self):
        """The full symmetric sum in float64."""
        for sign in (1.0, -1.0):
            if self._fill[sign]:
                self._flush(sign)
        return self.acc.astype(np.float64, copy=False)
