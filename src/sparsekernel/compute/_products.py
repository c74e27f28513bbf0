"""Products of a tall feature matrix, split by rows over the planned threads.

The solvers on explicit features (``newton_ovr``, ``logistic``) run BLAS on one thread
(:mod:`sparsekernel.compute`) and parallelize their n-row products here instead.
"""

from __future__ import annotations

import numpy as np

from ._lapack import syrk_lower
from ._threads import map_threads, row_slices

__all__ = ["gram", "matmul", "rmatmul", "split_rows"]

#: Below this many multiply-adds a product runs on the calling thread (handing it to threads
#: would cost more than it saves).
_PARALLEL_MIN_WORK = 2e6


def split_rows(n, work, n_threads, width=1):
    """Row slices for ``n_threads`` threads, or one slice when the work is small. Beyond two
    slices each is at least ``width`` rows tall: a Gram sum over m columns (``width = m``)
    fills an m x m square per slice, so on many cores its squares never hold more than the
    rows summed (two slices are always allowed: one square beside the result)."""
    parts = n_threads if work >= _PARALLEL_MIN_WORK else 1
    return row_slices(n, min(parts, max(2, n // max(1, int(width)))))


def rmatmul(F, V, n_threads):
    """[F 1]^T V in F's dtype (a float64 V would upcast all of F), summed over row slices."""
    V = V.astype(F.dtype, copy=False)
    parts = split_rows(F.shape[0], F.size * V.shape[1], n_threads)
    FtV = sum(map_threads(lambda s: F[s].T @ V[s], parts, len(parts)))
    return np.vstack([np.asarray(FtV, dtype=np.float64), V.sum(axis=0, dtype=np.float64)])


def matmul(F, W, n_threads):
    """F W (float64 out), row slices on the threads."""
    W = W.astype(F.dtype, copy=False)
    out = np.empty((F.shape[0], W.shape[1]))
    parts = split_rows(F.shape[0], F.size * W.shape[1], n_threads)

    def run(s):
        out[s] = F[s] @ W

    map_threads(run, parts, len(parts))
    return out


def gram(F, n_threads):
    """``F^T F`` (float64, both triangles): ``syrk`` on row slices of F over the threads,
    each into a square of its own, summed, then the lower triangle mirrored."""
    F = np.ascontiguousarray(F, dtype=np.float64)
    n, m = F.shape
    parts = split_rows(n, float(n) * m * m, n_threads, width=m)
    squares = map_threads(lambda s: syrk_lower(np.zeros((m, m)), F[s]), parts, len(parts))
    G = squares[0]
    for other in squares[1:]:
        G += other
    step = 256
    for start in range(0, m, step):  # (blocks: no m-square temporary)
        stop = min(start + step, m)
        G[start:stop, stop:] = G[stop:, start:stop].T
        block = G[start:stop, start:stop]
        block[np.triu_indices(stop - start, 1)] = block.T[np.triu_indices(stop - start, 1)]
    return G
