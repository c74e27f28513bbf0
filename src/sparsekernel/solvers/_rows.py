"""Where a solver's rows live: one narrow interface, one provider per place.

A Newton solver on explicit features (rows f_i in R^m, targets and weights per row) sees
its rows only through a provider: ``shape``, ``dtype``, ``square``, ``every``, ``take`` and
``state`` (:data:`PROVIDER_MEMBERS`), its per-row state kept beside the rows. The state's
methods in turn read the rows of their part through these members (rows in this process
have all of them; a cluster's rows are such a provider per chunk, on its worker):

``shape``, ``dtype``
    n and m, and the features' precision.
``margins(W, exact=False)``
    ``F W`` as float64, shape (n, k): margins or directions of k problems at once, each
    entry a sum of m products in the rows' precision; ``exact``: in float64 whatever it
    (a solver refining where float32 rounding stalls it).
``gradient(V, grams=(), exact=False)``
    ``[F 1]^T V`` as float64, shape (m + 1, k), summed in float64 (``exact``: of float64
    products too, as for ``margins``): the loss part of k gradients (the last
    row, the column sums of V, is the bias's); with the Gram sums ``grams`` (argument
    tuples of ``add_gram``) added on the way, so that rows read once per pass (streamed,
    or recomputed from a kernel) are read once for both.
``add_gram(H, weights, rows, sign=1.0, threads=None, dtype=None)``
    ``H += sign [F 1]_rows^T diag(weights_rows) [F 1]_rows`` on H's lower triangle, in
    place: the Hessian contribution of a row set (sorted row numbers: the rows inside the
    margin, or the rows that entered or left it), summed in ``dtype`` products and float64
    sums.
``take(rows)``
    ``F[rows]`` as a new dense ndarray: a chunk of active rows, a small sample.
``every(stride)``
    The provider of rows 0, stride, 2 stride, ...: a warm start's sample, kept where the
    rows are (a copy in memory; on a cluster, each partition's share on its worker).
``state(cls, Y, s)``
    The solver's per-row state ``cls(Y, s)`` (targets, weights, margins: e.g.
    :class:`~sparsekernel.solvers.newton_ovr.HingeRows`) kept where the rows are, one
    beside each part of them: a :class:`LocalState` for rows in this process. Its calls
    ``state(op, *args)`` run ``cls.op(rows_of_the_part, *args)`` on every part and return
    the sum; ``gram(H, ...)`` adds the parts' squares into H, ``take(...)`` stacks the
    parts' rows, ``every(stride)`` is the state of the provider's ``every(stride)``. What
    the solver and the rows exchange is then m-, (m + 1) x k- and (m + 1)^2-sized sums.
``keep_rows`` (optional)
    The most rows of a sample (``every``) whose features the provider keeps; absent: all
    (a warm start's sample is sized to fit, :func:`~sparsekernel.solvers.newton_ovr._warm_stride`).
``square(size, diagonal=0.0)``
    A float64 (size, size) matrix, ``diagonal`` on its diagonal and 0 elsewhere, where
    ``add_gram`` sums: a NumPy array for rows in memory, streamed or on a cluster (whose
    Gram sums come to the host), the device's array for a namespace's rows, so that a
    solver's squares are formed, factored and solved where the rows are
    (:func:`~sparsekernel.compute.spd_solve` follows its argument's namespace).

Providers here: :class:`ArrayRows`, a stored dense array whose products are split by rows
over the planned threads, and :class:`BlockRows`, row blocks read one at a time (a stored
array or CSR matrix in blocks, or features recomputed from a kernel block by block: the
row-block protocol of :mod:`._blocks`), and :class:`NamespaceRows`, a device's array (an
array-API namespace's). Rows on a Dask cluster's partitions are a fourth provider
(``sparsekernel.distributed._rows.DaskRows``): each reduction above is a sum over row sets,
so its state computes the parts where the chunks are and adds them, and the per-row members
are those of each chunk's rows on its worker. :func:`as_rows` picks the provider.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..compute import (
    dtype_name,
    imap_threads,
    matmul,
    planned_threads,
    rmatmul,
    split_rows,
    syrk_lower,
    to_numpy,
)
from ._blocks import as_row_blocks
from ._constants import GATHER_BYTES

__all__ = ["PROVIDER_MEMBERS", "ArrayRows", "BlockRows", "LocalState", "NamespaceRows",
           "as_rows", "host_square", "is_provider"]


#: What makes an object a provider for a solver (besides ``shape`` and ``dtype``).
PROVIDER_MEMBERS = ("take", "every", "square", "state")


class LocalState:
    """A solver's per-row state beside rows held in this process: one part, all the rows.

    Parameters
    ----------
    rows : provider
        The rows (:class:`ArrayRows`, :class:`BlockRows`, :class:`NamespaceRows`).
    state : object
        Their state (``HingeRows(Y, s)``), whose methods take ``rows`` first.
    """

    def __init__(self, rows, state):
        self.rows, self.state = rows, state
        self.rereads = rows.rereads
        self.shape, self.dtype = rows.shape, rows.dtype
        self.gather_bytes, self.square = rows.gather_bytes, rows.square

    def __call__(self, op, *args):
        return getattr(self.state, op)(self.rows, *args)

    def gram(self, H, *args):
        return self.state.gram(self.rows, H, *args)

    def take(self, *args):
        return self.state.take(self.rows, *args)

    def every(self, stride):
        return LocalState(self.rows.every(stride), self.state.every(0, stride))

    def close(self):
        """(Nothing is held elsewhere.)"""


class _InProcess:
    """The ``state`` member of the providers of rows held in this process; ``rereads``:
    whether every pass over the rows reads them again (a stream, features recomputed),
    so that a solver sums what it can in one pass."""

    rereads = False

    def state(self, cls, Y, s=None):
        return LocalState(self, cls(Y, s))


def host_square(size, diagonal=0.0):
    """The ``square`` of the providers whose Gram sums are on the host."""
    return np.eye(size) * diagonal if diagonal else np.zeros((size, size))


def is_provider(F):
    """Whether ``F`` is a row provider (has the members; any class, e.g. Dask's)."""
    return all(hasattr(F, name) for name in PROVIDER_MEMBERS)


def as_rows(F, threads=None, gather_bytes=GATHER_BYTES):
    """The provider of ``F``'s rows: :class:`ArrayRows` for a dense ndarray,
    :class:`BlockRows` for a CSR matrix or a row-block object, ``F`` itself when it is a
    provider already (any class with the members, e.g. Dask's)."""
    if is_provider(F):
        return F
    if isinstance(F, np.ndarray):
        return ArrayRows(F, threads, gather_bytes)
    return BlockRows(as_row_blocks(F), gather_bytes)


class ArrayRows(_InProcess):
    """The rows of a stored dense array (float32 or float64): products split by rows over
    ``threads`` (default the plan's), Gram sums gathered ``gather_bytes`` at a time."""

    def __init__(self, F, threads=None, gather_bytes=GATHER_BYTES):
        self.F = F
        self.threads = planned_threads() if threads is None else max(1, int(threads))
        self.gather_bytes = gather_bytes

    @property
    def shape(self):
        return self.F.shape

    @property
    def dtype(self):
        return self.F.dtype

    def margins(self, W, exact=False):
        return matmul(self.F, W, self.threads, exact)

    def gradient(self, V, grams=(), exact=False):
        out = rmatmul(self.F, V, self.threads, exact)
        for request in grams:
            self.add_gram(*request)
        return out

    def take(self, rows):
        return np.ascontiguousarray(self.F[rows])

    def every(self, stride):
        return ArrayRows(np.ascontiguousarray(self.F[::stride]), self.threads,
                         self.gather_bytes)

    square = staticmethod(host_square)

    def add_gram(self, H, weights, rows, sign=1.0, threads=None, dtype=None):
        """The rows in slices (:func:`~sparsekernel.compute.split_rows`) over ``threads``:
        the first slice into H itself, each other into a square of its own, added in slice
        order (the same sum on any thread count)."""
        m = self.F.shape[1]
        threads = self.threads if threads is None else threads
        parts = split_rows(len(rows), len(rows) * float(m) * m, width=m)
        if len(parts) == 1:
            return self._add(H, weights, rows, sign, dtype)

        def part(k):
            into = H if k == 0 else np.zeros_like(H)
            return self._add(into, weights, rows[parts[k]], sign, dtype)

        for k, other in enumerate(imap_threads(part, range(len(parts)), threads)):
            if k:
                H += other
        return H

    def _add(self, H, weights, rows, sign, dtype):
        """The rows gathered into one buffer a chunk at a time (scaled in place: the
        gathers are a solver's largest temporaries) and added by :func:`_add_scaled`; a
        buffer and, for float32 rows gathered in float64, their float32 copy take
        ``gather_bytes`` together."""
        F = self.F
        m = F.shape[1]
        if not len(rows):
            return H
        dtype = np.dtype(dtype or F.dtype)
        row_bytes = (dtype.itemsize + (F.itemsize if dtype != F.dtype else 0)) * max(m, 1)
        step = max(1, int(self.gather_bytes // row_bytes))
        buf = np.empty((min(step, len(rows)), m), dtype=dtype)
        square = None if dtype == H.dtype else np.zeros((m, m), dtype=dtype)
        for start in range(0, len(rows), step):
            idx = rows[start:start + step]
            w = weights[idx]
            root = np.sqrt(w).astype(dtype)
            G = buf[:len(idx)]
            if idx[-1] - idx[0] == len(idx) - 1:  # a run of rows (sorted): no gather
                np.multiply(F[idx[0]:idx[-1] + 1], root[:, None], out=G)
            else:
                if dtype == F.dtype:
                    np.take(F, idx, axis=0, out=G, mode="clip")  # "raise" mode would buffer
                else:
                    G[...] = F[idx]
                G *= root[:, None]
            _add_scaled(H, G, root, w, sign, square)
        return H


class BlockRows(_InProcess):
    """The rows of a row-block object (``for rows, F_block in blocks``; :mod:`._blocks`),
    one block at a time: nothing of size n x m is held beyond one block and one gather
    of ``gather_bytes``. Blocks may be dense or CSR; sums over rows accumulate in float64
    (:func:`~sparsekernel.compute.rmatmul`)."""

    rereads = True

    def __init__(self, blocks, gather_bytes=GATHER_BYTES):
        self.blocks = blocks
        self.gather_bytes = gather_bytes

    @property
    def shape(self):
        return self.blocks.shape

    @property
    def dtype(self):
        return np.dtype(self.blocks.dtype)

    def margins(self, W, exact=False):
        W = np.asarray(W, dtype=np.float64)
        out = np.empty((self.shape[0], W.shape[1]))
        for rows, Fb in self.blocks:
            out[rows] = (np.asarray(Fb @ W, dtype=np.float64) if sp.issparse(Fb)
                         else matmul(Fb, W, 1, exact))
        return out

    def gradient(self, V, grams=(), exact=False):
        """One pass over the blocks: each block's part of ``[F 1]^T V`` and of the Gram
        sums ``grams``."""
        V = np.asarray(V, dtype=np.float64)
        out = np.zeros((self.shape[1] + 1, V.shape[1]))
        grams = [self._gram(*request) for request in grams]
        for rows, Fb in self.blocks:
            out[:-1] += (np.asarray(Fb.T @ V[rows], dtype=np.float64) if sp.issparse(Fb)
                         else rmatmul(Fb, V[rows], 1, exact)[:-1])
            for add in grams:
                add(rows, Fb)
        out[-1] = V.sum(axis=0)
        return out

    def take(self, rows):
        rows = np.asarray(rows)
        if hasattr(self.blocks, "take"):
            return np.ascontiguousarray(_dense(self.blocks.take(rows)))
        taken = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        for block_rows, Fb in self.blocks:  # (one pass)
            lo, hi = np.searchsorted(ordered, [block_rows.start, block_rows.stop])
            if hi > lo:
                taken[order[lo:hi]] = _dense(Fb[ordered[lo:hi] - block_rows.start])
        return taken

    def every(self, stride):
        """The sample in memory (an :class:`ArrayRows` on the planned threads)."""
        return ArrayRows(self.take(np.arange(0, self.shape[0], stride)),
                         gather_bytes=self.gather_bytes)

    square = staticmethod(host_square)

    def add_gram(self, H, weights, rows, sign=1.0, threads=None, dtype=None):
        """One pass over the blocks (``threads`` is unused: a stream is read by one
        thread)."""
        if len(rows):
            add = self._gram(H, weights, rows, sign, threads, dtype)
            for block_rows, Fb in self.blocks:
                add(block_rows, Fb)
        return H

    def _gram(self, H, weights, rows, sign=1.0, threads=None, dtype=None):
        """``add(block_rows, F_block)``: the rows of the set within one block, scaled and
        added by :func:`_add_scaled` ``gather_bytes`` at a time."""
        m = self.shape[1]
        dtype = np.dtype(dtype or self.dtype)
        square = None if dtype == H.dtype else np.zeros((m, m), dtype=dtype)
        step = max(1, int(self.gather_bytes // (8 * max(m, 1))))
        rows = np.asarray(rows)

        def add(block_rows, Fb):
            start = block_rows.start
            lo, hi = np.searchsorted(rows, [start, block_rows.stop])
            for a in range(lo, hi, step):
                idx = rows[a:min(a + step, hi)]
                w = weights[idx]
                root = np.sqrt(w).astype(dtype)
                G = np.ascontiguousarray(_dense(Fb[idx - start]), dtype=dtype)
                G *= root[:, None]
                _add_scaled(H, G, root, w, sign, square)

        return add


def _dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A)


class NamespaceRows(_InProcess):
    """The rows of a dense array of an array-API namespace, on its device (a GPU's memory).

    Every product with the n rows runs on the device, and so do the solver's squares
    (``square``: the Hessians, their Gram sums, factorizations and solves); what crosses
    to the host are the solver's per-row vectors (margins, weights: n x k float64, as for a
    Dask cluster's rows) and its m-sized ones (gradients, directions). The device computes
    the margins and gradients in its widest float (float32 rows a chunk at a time), the
    Gram sums' products in the precision asked, and the squares in its widest float.

    Parameters
    ----------
    F : array of shape (n, m)
    backend : :class:`~sparsekernel.compute.Backend`
    gather_bytes : int or float
        Rows gathered at a time into a Gram sum (and a solver's copies of rows).
    """

    def __init__(self, F, backend, gather_bytes=GATHER_BYTES):
        self.F, self.backend = F, backend
        self.gather_bytes = gather_bytes

    @property
    def shape(self):
        return tuple(int(s) for s in self.F.shape)

    @property
    def dtype(self):
        return np.dtype(dtype_name(self.F.dtype))

    def _wide_chunks(self):
        """Row slices of F and each one in the device's widest float, ``gather_bytes`` of
        that copy at a time: margins and gradients accumulate there, as on the host
        (:func:`~sparsekernel.compute.matmul`)."""
        xp, wide = self.backend.xp, self.backend.widest_float()
        n, m = self.shape
        if self.F.dtype == wide:
            yield slice(0, n), self.F
            return
        step = max(1, int(self.gather_bytes // (8 * max(m, 1))))
        for start in range(0, n, step):
            rows = slice(start, min(n, start + step))
            yield rows, xp.astype(self.F[rows, :], wide)

    def margins(self, W, exact=False):
        # (always as exact as the device's widest float allows; one transfer to the host)
        xp = self.backend.xp
        Wd = self.backend.asarray(np.asarray(W, dtype=np.float64), self.backend.widest_float())
        parts = [F @ Wd for _, F in self._wide_chunks()]
        out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return np.asarray(to_numpy(out), dtype=np.float64)

    def gradient(self, V, grams=(), exact=False):
        V = np.asarray(V, dtype=np.float64)
        Vd = self.backend.asarray(V, self.backend.widest_float())
        FtV = None
        for rows, F in self._wide_chunks():
            part = F.T @ Vd[rows, :]
            FtV = part if FtV is None else FtV + part
        out = np.vstack([np.asarray(to_numpy(FtV), dtype=np.float64), V.sum(axis=0)])
        for request in grams:
            self.add_gram(*request)
        return out

    def _rows(self, rows):
        idx = self.backend.asarray(np.asarray(rows, dtype=np.int64))
        return self.backend.xp.take(self.F, idx, axis=0)

    def take(self, rows):
        return np.ascontiguousarray(to_numpy(self._rows(rows)))

    def every(self, stride):
        return NamespaceRows(self.F[::stride, :], self.backend, self.gather_bytes)

    def square(self, size, diagonal=0.0):
        xp, wide = self.backend.xp, self.backend.widest_float()
        if diagonal:
            return xp.eye(size, dtype=wide, device=self.backend.device) * diagonal
        return xp.zeros((size, size), dtype=wide, device=self.backend.device)

    def add_gram(self, H, weights, rows, sign=1.0, threads=None, dtype=None):
        """``H += sign [F 1]_rows^T diag(w) [F 1]_rows`` on the lower triangle of the
        device's square H (:meth:`square`), ``gather_bytes`` of rows at a time: products in
        ``dtype`` (default the rows'; float64 where the device has it when asked), sums in
        H's precision."""
        rows = np.asarray(rows)
        if not len(rows):
            return H
        xp, m = self.backend.xp, self.F.shape[1]
        wide = np.dtype(dtype or self.dtype).itemsize == 8
        dt = self.backend.widest_float() if wide else xp.float32
        w = np.asarray(weights, dtype=np.float64)[rows]
        step = max(1, int(self.gather_bytes // ((8 if wide else 4) * max(m, 1))))
        gram, border = None, None  # the chunks' sums, in H's precision
        for start in range(0, len(rows), step):
            root = self.backend.asarray(np.sqrt(w[start:start + step]), dt)
            G = xp.astype(self._rows(rows[start:start + step]), dt) * xp.reshape(root, (-1, 1))
            part = xp.astype(G.T @ G, H.dtype)
            if gram is None:
                gram = part
            else:
                gram += part
            part = xp.astype(xp.reshape(root, (1, -1)) @ G, H.dtype)[0, :]
            border = part if border is None else border + part  # (m values)
        H[:m, :m] += sign * xp.tril(gram)
        H[m, :m] += sign * border
        H[m, m] += sign * float(w.sum())
        return H


def _add_scaled(H, G, root, w, sign, square):
    """``H += sign [G/root root]^T [G/root root]`` for rows G already scaled by ``root``
    (= sqrt of their weights ``w``): ``syrk`` straight into the float64 H
    (:func:`~sparsekernel.compute.syrk_lower`), or through the float32 ``square`` a chunk
    at a time (so the sums stay float64), and the bias border by a product with ``root``."""
    m = G.shape[1]
    if square is None:
        syrk_lower(H, G, sign)
    else:  # overwritten a chunk at a time (its upper triangle, never written, stays 0)
        H[:m, :m] += syrk_lower(square, G, sign, beta=0.0)
    H[m, :m] += sign * (root @ G)
    H[m, m] += sign * w.sum()
