"""Lloyd's k-means iterations on BLAS-3 products, for landmarks.

Landmarks need a few Lloyd iterations from random rows, nothing more, without the cost of
importing ``sklearn.cluster``. The distances of a row block to the centres are one product
``X_b Z^T`` (dense or CSR rows) on the planned threads, the new centres one sparse-indicator
product ``S X``; nothing larger than a block of distances is formed.

On an array-API namespace's device (a dense array of CuPy, PyTorch, ...) the start rows are
drawn on the host from the same generator, the distances are the same products, and the new
centres are sums of one-hot products ``onehot(labels_b)^T X_b`` block by block (the array
API has no scatter-add).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..compute import (
    dtype_name,
    map_threads,
    max_threads,
    namespace_of,
    planned_threads,
    row_slices,
    to_numpy,
)
from ..kernels._functions import squared_norms

__all__ = ["lloyd"]

#: Distances held at once per thread (bytes): the row blocks of the assignment step.
_BLOCK_BYTES = 16 * 2**20


def lloyd(X, n_clusters, max_iter, rng, block_bytes=_BLOCK_BYTES):
    """Centres after at most ``max_iter`` Lloyd iterations from ``n_clusters`` random rows.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d), or a dense array of an array-API namespace
        (then computed on its device, module docstring)
    n_clusters : int
        At most n.
    max_iter : int
        Iterations; stops early when no row changes cluster.
    rng : numpy.random.RandomState
    block_bytes : float, default=_BLOCK_BYTES
        Distances held at once per thread (a caller's memory plan may lower it).

    Returns
    -------
    ndarray, CSR matrix or array of X's namespace, of shape (n_clusters, d)
        Centres in X's dtype (float32 or float64): dense, or CSR for CSR rows whose dense
        centres would not fit in a block of distances (wide sparse data: a mean of sparse
        rows is as sparse as their union, while the dense loop holds about four m x d
        arrays). A cluster that loses every row keeps its previous centre.
    """
    device = not sp.issparse(X) and namespace_of(X) is not np
    xp = namespace_of(X) if device else np
    n, d = X.shape
    start = np.sort(rng.choice(n, n_clusters, replace=False))
    if device:
        centers = xp.take(X, _on_device(xp, start, X), axis=0)
    else:
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
        start = X[start]
        if sp.issparse(X) and 4.0 * n_clusters * d * np.dtype(dtype).itemsize > block_bytes:
            centers = sp.csr_matrix(start, dtype=dtype)
        else:
            centers = _dense(start, dtype)
    labels = None
    for _ in range(max_iter):
        new, dist = _assign(X, centers, block_bytes)
        if labels is not None and bool(xp.all(new == labels)):
            break
        labels = new
        centers = _means(X, labels, dist, centers, block_bytes)
    return centers


def _on_device(xp, a, like):
    """The host array ``a`` on the device of ``like``."""
    return xp.asarray(a, device=_device_of(like))


def _dense(A, dtype):
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=dtype)


def _assign(X, centers, block_bytes=_BLOCK_BYTES):
    """Index of the nearest centre of every row, and ||x - z||^2 - ||x||^2 there (the row's
    own norm is the same for every centre, so it is left out). On the host the blocks run
    on the planned threads; on a device one after another (the device is parallel)."""
    device = not sp.issparse(centers) and namespace_of(centers) is not np
    xp = namespace_of(centers) if device else np
    n, m = X.shape[0], centers.shape[0]
    itemsize = np.dtype(dtype_name(centers.dtype)).itemsize
    if device:  # a block's distances and their temporary
        z2 = xp.reshape(xp.sum(centers * centers, axis=1), (1, -1))
        minus_2zt, per_entry = -2.0 * centers.T, 2 * itemsize
    elif sp.issparse(centers):  # a block's product is sparse, then densified: about 3 copies
        z2 = squared_norms(centers, centers.dtype)
        minus_2zt, per_entry = (-2.0 * centers.T).tocsr(), 3 * itemsize
    else:
        z2 = squared_norms(centers, centers.dtype)
        minus_2zt, per_entry = np.ascontiguousarray(-2.0 * centers.T), itemsize
    step = max(1, int(block_bytes // (per_entry * max(m, 1))))
    # at most block_bytes of distances a block, and on the host at least a block for every
    # CPU (not every thread in force: the same blocks, so the same nearest centres, at any
    # thread count)
    blocks = row_slices(n, max(1 if device else max_threads(), -(-n // step)))

    def nearest(rows):
        D = X[rows, :] @ minus_2zt
        D = D.toarray() if sp.issparse(D) else D
        D += z2
        return xp.argmin(D, axis=1), xp.min(D, axis=1)

    parts = map_threads(nearest, blocks, 1 if device else planned_threads())
    concat = xp.concat if device else np.concatenate
    return concat([j for j, _ in parts]), concat([d for _, d in parts])


def _means(X, labels, dist, old, block_bytes=_BLOCK_BYTES):
    """Mean row of every cluster. A cluster left empty (duplicate rows among the random
    starts leave one) takes the row farthest from its centre instead, as scikit-learn's
    KMeans relocates them: a duplicate centre would be a landmark wasted."""
    if not sp.issparse(old) and namespace_of(old) is not np:
        return _device_means(X, labels, dist, old, block_bytes)
    n, m = X.shape[0], old.shape[0]
    S = sp.csr_matrix((np.ones(n, dtype=old.dtype), (labels, np.arange(n))), shape=(m, n))
    counts = np.bincount(labels, minlength=m)
    full = counts > 0
    empty = np.flatnonzero(~full)
    take = np.empty(0, dtype=np.intp)
    if empty.size:
        take = _farthest_rows(dist + squared_norms(X, np.float64), counts, labels, empty.size)
    if sp.issparse(old):
        return _sparse_means(S @ X, counts, old, X[take], empty)
    sums = _dense(S @ X, old.dtype)
    centers = old.copy()
    centers[full] = sums[full] / counts[full, None].astype(old.dtype)
    if take.size:
        centers[empty[:take.size]] = _dense(X[take], old.dtype)
    return centers


def _sparse_means(sums, counts, old, relocated, empty):
    """:func:`_means` on CSR centres: the scaled sums, previous rows for clusters left empty,
    the relocated rows for the first of them."""
    m = old.shape[0]
    scale = np.divide(1.0, counts, out=np.zeros(m), where=counts > 0).astype(old.dtype)
    order = np.arange(m)
    order[empty] = m + empty  # the previous centre ...
    order[empty[:relocated.shape[0]]] = 2 * m + np.arange(relocated.shape[0])  # ... or a row
    stacked = sp.vstack([sp.diags(scale) @ sums, old, relocated.astype(old.dtype)],
                        format="csr", dtype=old.dtype)
    return stacked[order]


def _device_means(X, labels, dist, old, block_bytes):
    """:func:`_means` on a device: the sums of one-hot products ``onehot(labels_b)^T X_b``
    block by block (the array API has no scatter-add); relocation as on the host."""
    xp = namespace_of(old)
    n, m = X.shape[0], old.shape[0]
    step = max(1, int(block_bytes // (2 * np.dtype(dtype_name(X.dtype)).itemsize * m)))
    classes = xp.reshape(_on_device(xp, np.arange(m), X), (1, -1))
    sums = xp.zeros_like(old)
    counts = xp.zeros((m,), dtype=X.dtype, device=_device_of(X))
    for start in range(0, n, step):
        b = slice(start, min(n, start + step))
        onehot = xp.astype(xp.reshape(labels[b], (-1, 1)) == classes, X.dtype)
        sums += onehot.T @ X[b, :]
        counts += xp.sum(onehot, axis=0)
    full = counts > 0
    centers = xp.where(xp.reshape(full, (-1, 1)),
                       sums / xp.reshape(xp.where(full, counts, xp.ones_like(counts)), (-1, 1)),
                       old)
    counts_host = to_numpy(counts).astype(np.int64)
    empty = np.flatnonzero(counts_host == 0)
    if not empty.size:
        return centers
    # relocated as in _means (rare: duplicate start rows), on the host
    far = to_numpy(dist).astype(np.float64) + to_numpy(xp.sum(X * X, axis=1)).astype(np.float64)
    take = _farthest_rows(far, counts_host, to_numpy(labels), empty.size)
    host = to_numpy(centers).copy()
    host[empty[:take.size]] = to_numpy(xp.take(X, _on_device(xp, take, X), axis=0))
    return _on_device(xp, host, X)


def _farthest_rows(far, counts, labels, k):
    """Sorted indices of the (at most) k rows with the largest squared distance ``far`` to
    their centre, never the only row of a cluster (which stays where it is)."""
    far = np.array(far, dtype=np.float64)
    far[counts[labels] == 1] = -np.inf
    return np.sort(np.argpartition(-far, min(k, len(far)) - 1)[:k])


def _device_of(a):
    import array_api_compat

    return array_api_compat.device(a)
