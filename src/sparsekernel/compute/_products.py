"""Products of a tall feature matrix, split by rows over the planned threads.

The solvers on explicit features (``newton_ovr``, ``logistic``) run BLAS on one thread
(:mod:`sparsekernel.compute`) and parallelize their n-row products here instead. The row
slices are planned from the CPUs (:func:`split_rows`) and sums over them are added in slice
order (:func:`imap_threads`), so every product is the same to the bit on any thread count.
"""

from __future__ import annotations

import numpy as np

from ._lapack import syrk_lower
from ._threads import imap_threads, map_threads, max_threads, row_slices

__all__ = ["gram", "matmul", "rmatmul", "split_rows"]

#: Below this many multiply-adds a product runs on the calling thread (handing it to threads
#: would cost more than it saves).
_PARALLEL_MIN_WORK = 2e6

#: The fewest rows of a slice: a Gram sum's slice beyond the first fills a square of its
#: own, whose allocation and addition would cost more than a few rows' products.
_SLICE_MIN_ROWS = 128


def split_rows(n, work, width=1):
    """Row slices of an n-row product: one when the work is small, else one per CPU
    (:func:`max_threads`), never per thread in force, so a sum over them added in their
    order comes out the same on any thread count. Each slice is at least ``width`` rows
    tall: a Gram sum over m columns (``width = m``) fills an m x m square per slice beyond
    the first, which costs as much as m rows' products, so a sum of fewer than 2 m rows (a
    Newton step's rows entering or leaving the active set) stays one slice. Every slice
    has at least ``_SLICE_MIN_ROWS`` rows."""
    parts = max_threads() if work >= _PARALLEL_MIN_WORK else 1
    return row_slices(n, max(1, min(parts, n // max(1, int(width)), n // _SLICE_MIN_ROWS)))


#: Bytes of the float64 copy of float32 rows that :func:`matmul` and :func:`rmatmul` take at
#: a time: small enough to stay in a core's cache between the copy and its product.
_UPCAST_BYTES = 2**18


def _upcast_chunks(F, rows):
    """Yield ``(sub, F[sub] in float64)`` over ``rows`` (a slice of F's rows), a cache-sized
    chunk at a time, into one reused buffer."""
    step = max(1, _UPCAST_BYTES // (8 * max(F.shape[1], 1)))
    buf = np.empty((min(step, rows.stop - rows.start), F.shape[1]))
    for start in range(rows.start, rows.stop, step):
        sub = slice(start, min(start + step, rows.stop))
        chunk = buf[:sub.stop - sub.start]
        chunk[...] = F[sub]
        yield sub, chunk


def rmatmul(F, V, n_threads):
    """[F 1]^T V (float64), summed over row slices. float32 rows are taken in float64 a
    chunk at a time (:func:`_upcast_chunks`): the solvers' gradients are these sums, and
    float32 accumulation over many rows would set a floor on the gradient that the
    solution cannot pass (float32 products, float64 accumulation: the precision policy of
    :ref:`precision`)."""
    V = np.asarray(V, dtype=np.float64)
    parts = split_rows(F.shape[0], F.size * V.shape[1])

    def part(s):
        if F.dtype == np.float64:
            return F[s].T @ V[s]
        return sum(chunk.T @ V[sub] for sub, chunk in _upcast_chunks(F, s))

    FtV = sum(imap_threads(part, parts, n_threads))
    return np.vstack([np.asarray(FtV, dtype=np.float64), V.sum(axis=0, dtype=np.float64)])


def matmul(F, W, n_threads):
    """F W (float64 out), row slices on the threads; float32 rows are taken in float64 a
    chunk at a time, as in :func:`rmatmul` (the solvers' margins)."""
    W = np.asarray(W, dtype=np.float64)
    out = np.empty((F.shape[0], W.shape[1]))
    parts = split_rows(F.shape[0], F.size * W.shape[1])

    def run(s):
        if F.dtype == np.float64:
            out[s] = F[s] @ W
            return
        for sub, chunk in _upcast_chunks(F, s):
            np.matmul(chunk, W, out=out[sub])

    map_threads(run, parts, n_threads)
    return out


def gram(F, n_threads):
    """``F^T F`` (float64, both triangles): ``syrk`` on row slices of F over the threads,
    each into a square of its own, summed in slice order, then the lower triangle
    mirrored."""
    F = np.ascontiguousarray(F, dtype=np.float64)
    n, m = F.shape
    parts = split_rows(n, float(n) * m * m, width=m)
    squares = imap_threads(lambda s: syrk_lower(np.zeros((m, m)), F[s]), parts, n_threads)
    G = next(squares)
    for other in squares:
        G += other
    step = 256
    for start in range(0, m, step):  # (blocks: no m-square temporary)
        stop = min(start + step, m)
        G[start:stop, stop:] = G[stop:, start:stop].T
        block = G[start:stop, start:stop]
        block[np.triu_indices(stop - start, 1)] = block.T[np.triu_indices(stop - start, 1)]
    return G
