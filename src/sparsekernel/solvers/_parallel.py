"""Products of a tall feature matrix, split by rows over the planned threads.

The solvers on explicit features (``newton_ovr``, ``logistic``) run BLAS on one thread
(:mod:`sparsekernel.utils._threads`) and parallelize their n-row products here instead.
"""

from __future__ import annotations

import numpy as np

from ..utils._threads import map_threads, row_slices

__all__ = ["matmul", "rmatmul", "split_rows"]

#: Below this many multiply-adds a product runs on the calling thread (threads cost ~50 us).
_PARALLEL_MIN_WORK = 2e6


def split_rows(n, work, n_threads):
    """Row slices for ``n_threads`` threads, or one slice when the work is small."""
    return row_slices(n, n_threads if work >= _PARALLEL_MIN_WORK else 1)


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
