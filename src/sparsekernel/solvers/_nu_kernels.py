"""Compiled loop of the nu-SVM dual solver (numba): the SMO steps on one working set.

Each step depends on the previous one through the gradient, so it cannot be vectorized;
:mod:`.nu` owns the working sets, the products with all rows and the stopping test.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["smo_working_set"]

#: Curvature taken for a pair whose two rows have the same features (Q_ii + Q_jj - 2 Q_ij
#: is then 0 and the step is set by the bounds alone).
_TAU = 1e-12


@njit(cache=True)
def smo_working_set(Q, G, alpha, upper, group, n_groups, tol, max_steps):
    """SMO on ``min 1/2 a^T Q a + p^T a`` over the working set's duals, ``0 <= a <= upper``
    and the sum of each group's duals fixed: each step moves mass, within one group, from
    the largest gradient among its duals that can decrease to the smallest among those that
    can increase (the maximal violating pair of the group that violates most), by the exact
    minimizer along that pair within the bounds. Stops when no group's two gradients differ
    by more than ``tol``. ``G`` (the gradient Q a + p, with the other rows' part) and
    ``alpha`` are updated in place; returns the steps taken."""
    q = G.shape[0]
    g_down = np.empty(n_groups)
    g_up = np.empty(n_groups)
    i_down = np.empty(n_groups, dtype=np.int64)
    i_up = np.empty(n_groups, dtype=np.int64)
    for step in range(max_steps):
        for g in range(n_groups):
            g_down[g], g_up[g] = -np.inf, np.inf
            i_down[g], i_up[g] = -1, -1
        for t in range(q):
            g = group[t]
            if alpha[t] > 0.0 and G[t] > g_down[g]:
                g_down[g], i_down[g] = G[t], t
            if alpha[t] < upper[t] and G[t] < g_up[g]:
                g_up[g], i_up[g] = G[t], t
        best, i, j = tol, -1, -1
        for g in range(n_groups):
            if i_down[g] >= 0 and i_up[g] >= 0 and g_down[g] - g_up[g] > best:
                best, i, j = g_down[g] - g_up[g], i_down[g], i_up[g]
        if i < 0:
            return step
        eta = Q[i, i] + Q[j, j] - 2.0 * Q[i, j]
        delta = (G[i] - G[j]) / max(eta, _TAU)
        delta = min(delta, alpha[i], upper[j] - alpha[j])
        alpha[i] -= delta
        alpha[j] += delta
        for t in range(q):
            G[t] += delta * (Q[t, j] - Q[t, i])
    return max_steps
