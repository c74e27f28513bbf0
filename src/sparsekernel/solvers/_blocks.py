"""Row blocks of a feature matrix: the protocol a streamed provider reads.

Solvers see their rows through a provider (:mod:`._rows`); :class:`~._rows.BlockRows` reads
rows that come ``for rows, F_block in blocks``, and never learns where the blocks come from:
a stored array or CSR matrix (:class:`ArrayBlocks`) or features recomputed on the fly from a
kernel (built in ``sparsekernel.features``). Anything with ``shape``, ``dtype`` and that
iteration protocol works; an optional ``take(indices)`` returning those rows as an array
saves a pass when a solver samples rows.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._constants import BLOCK_BYTES

__all__ = ["ArrayBlocks", "as_row_blocks"]


class ArrayBlocks:
    """Row blocks of a stored dense array or CSR matrix (views, no copies of the data)."""

    def __init__(self, F, block_rows=None):
        self.F = F
        n, m = F.shape
        self.block_rows = block_rows or max(1, min(n, BLOCK_BYTES // (8 * max(m, 1))))

    @property
    def shape(self):
        return self.F.shape

    @property
    def dtype(self):
        return self.F.dtype

    def take(self, indices):
        """The rows ``indices`` as an array (a copy)."""
        return self.F[indices]

    def __iter__(self):
        n = self.F.shape[0]
        for start in range(0, n, self.block_rows):
            rows = slice(start, min(start + self.block_rows, n))
            yield rows, self.F[rows]


def as_row_blocks(F):
    """Wrap an array or CSR matrix in :class:`ArrayBlocks`; pass row-block objects through."""
    if isinstance(F, np.ndarray) or sp.issparse(F):
        return ArrayBlocks(F)
    if hasattr(F, "shape") and hasattr(F, "__iter__"):
        return F
    raise TypeError(f"Expected an array, a CSR matrix or a row-block object; got {type(F)}.")
