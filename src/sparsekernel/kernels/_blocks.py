"""Turn one memory budget into the row blocks of a kernel evaluation."""

from __future__ import annotations

__all__ = ["CACHE_BLOCK_BYTES", "iter_row_slices", "plan_block_rows"]

#: Target size of one block's output: element-wise passes over a block this size stay in
#: cache and reuse freed heap memory.
CACHE_BLOCK_BYTES = 8 * 2**20


def plan_block_rows(n_rows, n_cols, n_features, itemsize, memory_budget, per_pair=2.0):
    """Number of rows of X per block so that one block's working memory fits the budget.

    Parameters
    ----------
    n_rows : int
        Rows of X (the answer never exceeds it).
    n_cols : int
        Columns of the block, i.e. the number of centres m.
    n_features : int
        Features d (a dense copy of the X block may be made).
    itemsize : int
        Bytes per value of the working dtype.
    memory_budget : int
        Bytes allowed for one block.
    per_pair : float
        Values held per (row, centre) pair: the output plus the kernel's temporaries.

    Returns
    -------
    int
        Rows per block, at least 1 (a single row is always computed, even over budget). It
        is also capped near :data:`CACHE_BLOCK_BYTES` of output (but at least 256 rows when
        the budget allows), which is faster than one huge block.
    """
    bytes_per_row = itemsize * (per_pair * n_cols + n_features + 1)
    rows = int(memory_budget // max(bytes_per_row, 1))
    cache_rows = max(256, CACHE_BLOCK_BYTES // max(itemsize * n_cols, 1))
    return max(1, min(n_rows, rows, cache_rows))


def iter_row_slices(n_rows, block_rows):
    """Yield ``slice`` objects covering ``range(n_rows)`` in chunks of ``block_rows``."""
    for start in range(0, n_rows, block_rows):
        yield slice(start, min(start + block_rows, n_rows))
