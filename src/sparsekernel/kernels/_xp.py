"""Kernel blocks K(X, Z) on an array-API namespace (:class:`~sparsekernel.compute.Backend`).

The same kernel functions as :mod:`._functions`, written against the array API standard so
that they run where the arrays live (a GPU's memory, through CuPy or PyTorch). Dense input
only. Blocks are planned from the kernel's memory budget alone: a device gains from large
blocks, without the CPU path's cache cap.
"""

from __future__ import annotations

import numpy as np

from ._blocks import plan_block_rows

__all__ = ["xp_apply", "xp_basis", "xp_block_rows", "xp_blocks", "xp_kernel"]

#: Values held per (row, centre) pair by each kernel's block: output and temporaries.
_PER_PAIR = {"rbf": 3.0, "laplacian": 4.0, "polynomial": 2.0, "linear": 1.0, "sigmoid": 2.0}


def _gamma(kernel, backend, dtype):
    if np.isscalar(kernel.gamma) or getattr(kernel.gamma, "ndim", 1) == 0:
        return float(kernel.gamma)
    return backend.asarray(kernel.gamma, dtype=dtype)


def xp_kernel(kernel, X, Z, backend, dtype=None):
    """K(X, Z) of one block, in ``dtype`` (default: X's), on ``backend``'s device.

    Parameters
    ----------
    kernel : Kernel
        Name and parameters (gamma resolved).
    X : array of shape (n, d)
    Z : array of shape (m, d)
    backend : Backend
    dtype : dtype of ``backend.xp``, optional
    """
    xp = backend.xp
    dtype = X.dtype if dtype is None else dtype
    name = kernel.name
    if name == "laplacian":  # sum_k |x_k - z_k|, one (n, m) slab per feature, in the widest
        wide = backend.widest_float()  # float (as the CPU path's distances), then ``dtype``
        Xw, Zw = xp.astype(X, wide), xp.astype(Z, wide)
        D = xp.zeros((X.shape[0], Z.shape[0]), dtype=wide, device=backend.device)
        for k in range(X.shape[1]):
            D += xp.abs(Xw[:, k:k + 1] - xp.reshape(Zw[:, k], (1, -1)))
        return xp.exp(xp.astype(D, dtype) * (-_gamma(kernel, backend, dtype)))
    X, Z = xp.astype(X, dtype), xp.astype(Z, dtype)
    G = X @ Z.T
    if name == "linear":
        return G
    if name == "polynomial":
        return (G * float(kernel.gamma) + float(kernel.coef0)) ** int(kernel.degree)
    if name == "sigmoid":
        return xp.tanh(G * float(kernel.gamma) + float(kernel.coef0))
    # rbf: ||x||^2 + ||z||^2 - 2 <x, z>, clipped at 0 (the expansion cancels)
    D = xp.reshape(xp.sum(X * X, axis=1), (-1, 1)) + xp.reshape(xp.sum(Z * Z, axis=1), (1, -1))
    D = xp.clip(D - 2.0 * G, min=0.0)
    gamma = _gamma(kernel, backend, dtype)
    if not isinstance(gamma, float):
        gamma = xp.reshape(gamma, (1, -1))
    return xp.exp(-gamma * D)


def xp_block_rows(kernel, n, m, d, itemsize):
    """Rows of X per block: as many as the kernel's memory budget holds."""
    per_row = itemsize * (_PER_PAIR[kernel.name] * m + d + 1)
    if not np.isfinite(kernel.memory_budget):
        return max(1, n)
    rows = int(kernel.memory_budget // max(per_row, 1))
    return max(1, min(n, rows)) if rows >= 1 else plan_block_rows(n, m, d, itemsize, 0)


def xp_blocks(kernel, X, Z, backend, dtype=None):
    """Yield ``(start, stop, K(X[start:stop], Z))`` for consecutive row blocks of X, one
    block at a time (the memory of one block, as the CPU path)."""
    n = X.shape[0]
    itemsize = 8 if (dtype or X.dtype) == backend.xp.float64 else 4
    rows = xp_block_rows(kernel, n, Z.shape[0], X.shape[1], itemsize)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        yield start, stop, xp_kernel(kernel, X[start:stop, :], Z, backend, dtype)


def xp_apply(kernel, X, Z, right, backend, dtype=None, out_dtype=None):
    """``K(X, Z) @ right`` block by block (the namespace's :meth:`Kernel.apply`): the n x m
    kernel is never held, only one block and the (n, k) result. ``dtype``: the precision
    of K and the product; ``out_dtype``: the result's, each block rounded to it."""
    def product(K):
        part = K @ right
        return part if out_dtype is None else backend.xp.astype(part, out_dtype)

    parts = [product(K) for _, _, K in xp_blocks(kernel, X, Z, backend, dtype)]
    return parts[0] if len(parts) == 1 else backend.xp.concat(parts, axis=0)


def xp_basis(backend, X, indices, centers):
    """The basis Z on X's device: X's rows ``indices`` when the basis is training rows (no
    copy through the host), else the host ``centers`` moved there in X's dtype."""
    if indices is not None:
        return backend.xp.take(X, backend.asarray(np.asarray(indices, dtype=np.int64)), axis=0)
    return backend.asarray(centers, dtype=X.dtype)
