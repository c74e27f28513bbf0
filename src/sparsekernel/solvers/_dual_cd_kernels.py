"""Compiled loops of the dual coordinate descent solver (numba; float32 and float64 rows).

Only the loops that cannot be vectorized live here: one epoch of coordinate updates (each
update depends on the previous one through ``w``) and row-wise margins without temporaries.
They never call back into Python; :mod:`.dual_cd` owns budgets, progress and interrupts.
Accumulation is always float64, whatever the dtype of the rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Reassociation lets LLVM vectorize the dot products; no-NaN/no-inf flags are left off
# because a zero diagonal (an all-zero row) must still behave.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}

__all__ = ["dcd_epoch", "row_margins", "weights_from_dual"]


@njit(cache=True, fastmath=_FASTMATH)
def _dot(row, w):
    s = 0.0
    for j in range(row.shape[0]):
        s += row[j] * w[j]
    return s


@njit(cache=True, fastmath=_FASTMATH)
def dcd_epoch(F, y, alpha, w, qd, diag, upper, index, active_size, bias,
              pg_max_old, pg_min_old):
    """One pass of Hsieh et al. (2008) Algorithm 3 over ``index[:active_size]``.

    ``w`` has m + 1 entries; ``w[m]`` is the bias, whose feature value is ``bias`` (0 or 1).
    Rows whose projected gradient shows they will stay at a bound are shrunk: swapped to the
    end of the active part of ``index``. Returns (active_size, PG max, PG min).
    """
    m = F.shape[1]
    pg_max = -np.inf
    pg_min = np.inf
    s = 0
    while s < active_size:
        i = index[s]
        row = F[i]
        a = alpha[i]
        u = upper[i]
        g = y[i] * (_dot(row, w) + bias * w[m]) - 1.0 + diag[i] * a
        pg = 0.0
        if a == 0.0:
            if g > pg_max_old:
                active_size -= 1
                index[s] = index[active_size]
                index[active_size] = i
                continue
            if g < 0.0:
                pg = g
        elif a >= u:
            if g < pg_min_old:
                active_size -= 1
                index[s] = index[active_size]
                index[active_size] = i
                continue
            if g > 0.0:
                pg = g
        else:
            pg = g
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        if pg != 0.0 and qd[i] > 0.0:
            new = min(max(a - g / qd[i], 0.0), u)
            d = (new - a) * y[i]
            alpha[i] = new
            for j in range(m):
                w[j] += d * row[j]
            w[m] += d * bias
        s += 1
    return active_size, pg_max, pg_min


@njit(cache=True, fastmath=_FASTMATH)
def row_margins(F, w, bias, out):
    """out[i] = F[i] . w[:m] + bias * w[m], accumulated in float64."""
    m = F.shape[1]
    for i in range(F.shape[0]):
        out[i] = _dot(F[i], w) + bias * w[m]
    return out


@njit(cache=True, fastmath=_FASTMATH)
def weights_from_dual(F, coef, bias, w):
    """w = sum_i coef_i [F_i, bias] (the primal point of a dual vector), in float64."""
    m = F.shape[1]
    w[:] = 0.0
    for i in range(F.shape[0]):
        c = coef[i]
        if c != 0.0:
            row = F[i]
            for j in range(m):
                w[j] += c * row[j]
            w[m] += c * bias
    return w
