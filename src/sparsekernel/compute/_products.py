"""Products of a tall feature matrix, split by rows over the planned threads.

The row slices are planned from the CPUs (:func:`split_rows`) and sums over them are added
in slice order (:func:`imap_threads`), so every product is the same to the bit on any
thread count.
"""

from __future__ import annotations

import numpy as np

from ._lapack import syrk_lower
from ._threads import imap_threads, map_threads, max_threads, row_slices

__all__ = ["gram", "matmul", "mirror_lower", "rmatmul", "split_rows"]

#: Below this many multiply-adds a product runs on the calling thread (handing it to threads
#: would cost more than it saves).
_PARALLEL_MIN_WORK = 2e6

#: The fewest rows of a slice: a Gram sum's slice beyond the first fills a square of its
#: own, whose allocation and addition would cost more than a few rows' products.
_SLICE_MIN_ROWS = 128


def split_rows(n, work, width=1):
    """Row slices of an n-row product: one when the work is small, else one per CPU
    (:func:`max_threads`, never the threads in force). Each slice has at least ``width``
    rows (a Gram sum over m columns fills an m x m square per slice beyond the first, which
    costs as much as m rows' products) and at least ``_SLICE_MIN_ROWS``."""
    parts = max_threads() if work >= _PARALLEL_MIN_WORK else 1
    return row_slices(n, max(1, min(parts, n // max(1, int(width)), n // _SLICE_MIN_ROWS)))


#: Bytes of the float64 copy of float32 rows that :func:`matmul` and :func:`rmatmul` take
#: at a time when ``exact``: small enough to stay in a core's cache between the copy and
#: its product.
_UPCAST_BYTES = 2**19
#: Rows of float32 products summed in float32 before their sum joins the float64 total
#: (:func:`rmatmul`): the rounding of a float32 sum grows with its length, and a few
#: thousand rows keep it near the rounding of the products themselves at BLAS-3 speed.
_FLOAT32_SUM_ROWS = 1024


def rmatmul(F, V, n_threads, exact=False):
    """[F 1]^T V (float64), summed over row slices. Float32 rows multiply in float32 (V
    rounded to it), ``_FLOAT32_SUM_ROWS`` rows at a time, and those sums add up in
    float64: the solvers' gradients are these sums over all n rows, and one float32 sum
    that long would set a floor on the gradient far above the products' rounding (the
    precision policy, :ref:`precision`). ``exact``: the rows taken in float64 a chunk at a
    time, as :func:`matmul`'s."""
    V = np.asarray(V, dtype=np.float64)
    Vf = V.astype(F.dtype, copy=False)
    parts = split_rows(F.shape[0], F.size * V.shape[1])

    def part(s):
        if F.dtype == np.float64:
            return F[s].T @ V[s]
        out = np.zeros((F.shape[1], V.shape[1]))
        if exact:
            for rows, chunk in _float64_chunks(F, s):
                out += chunk.T @ V[rows]
            return out
        for start in range(s.start, s.stop, _FLOAT32_SUM_ROWS):
            rows = slice(start, min(start + _FLOAT32_SUM_ROWS, s.stop))
            out += F[rows].T @ Vf[rows]
        return out

    FtV = sum(imap_threads(part, parts, n_threads))
    return np.vstack([np.asarray(FtV, dtype=np.float64), V.sum(axis=0, dtype=np.float64)])


def matmul(F, W, n_threads, exact=False):
    """F W (float64 out), row slices on the threads, in F's dtype (W rounded to it): each
    entry sums only m products, so float32 rounding stays near the stored features'.
    ``exact``: float32 rows taken in float64 a cache-sized chunk at a time, for margins as
    exact as float64 features give (float32 margins updated step after step drift)."""
    if exact and F.dtype != np.float64:
        return _upcast_matmul(F, np.asarray(W, dtype=np.float64), n_threads)
    W = W.astype(F.dtype, copy=False)
    out = np.empty((F.shape[0], W.shape[1]))
    parts = split_rows(F.shape[0], F.size * W.shape[1])

    def run(s):
        out[s] = F[s] @ W

    map_threads(run, parts, n_threads)
    return out


def _upcast_matmul(F, W, n_threads):
    out = np.empty((F.shape[0], W.shape[1]))

    def run(s):
        for rows, chunk in _float64_chunks(F, s):
            np.matmul(chunk, W, out=out[rows])

    map_threads(run, split_rows(F.shape[0], F.size * W.shape[1]), n_threads)
    return out


def _float64_chunks(F, s):
    """Yield ``(rows, F[rows] in float64)`` over the row slice ``s``, ``_UPCAST_BYTES`` at a
    time, into one reused buffer (each chunk is overwritten by the next)."""
    step = max(1, _UPCAST_BYTES // (8 * max(F.shape[1], 1)))
    buf = np.empty((min(step, s.stop - s.start), F.shape[1]))
    for start in range(s.start, s.stop, step):
        rows = slice(start, min(start + step, s.stop))
        chunk = buf[:rows.stop - rows.start]
        chunk[...] = F[rows]
        yield rows, chunk


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
    return mirror_lower(G)


def mirror_lower(G):
    """Copy the lower triangle of the square G onto its upper one, in place (what
    :func:`syrk_lower` leaves unwritten), a block at a time: no m-square temporary.
    Returns G."""
    m, step = len(G), 256
    for start in range(0, m, step):
        stop = min(start + step, m)
        G[start:stop, stop:] = G[stop:, start:stop].T
        block = G[start:stop, start:stop]
        block[np.triu_indices(stop - start, 1)] = block.T[np.triu_indices(stop - start, 1)]
    return G
