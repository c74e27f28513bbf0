"""Uniform-design tables, their discrepancy, the nested UD points and the search box.

Huang, Lee, Lin & Huang, "Model selection for support vector machines via uniform design",
CSDA 52 (2007) 335-346 (search box and nested stages: section 5), and the authors' toolbox
(``hibiscus.m``, which holds the tables).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..kernels import resolve_gamma
from ..kernels._functions import squared_norms

__all__ = ["UD_TABLES", "SearchBoundaryWarning", "check_search_boundary",
           "centered_l2_discrepancy", "gamma_search_range", "min_squared_distance", "ud_points"]


def _table(rows):
    t = np.array(rows, dtype=np.int64)
    t.flags.writeable = False
    return t


#: The authors' 2-D uniform designs (hibiscus.m), verbatim: columns are levels of
#: (log2 C, log2 gamma), row 0 is the centre run.
UD_TABLES = {
    5: _table([[3, 3], [1, 2], [2, 5], [4, 1], [5, 4]]),
    9: _table([[5, 5], [1, 4], [7, 8], [2, 7], [3, 2], [9, 6], [8, 3], [6, 1], [4, 9]]),
    13: _table([[7, 7], [5, 4], [12, 3], [2, 11], [9, 10], [6, 13], [3, 2], [11, 12],
                [13, 8], [10, 5], [1, 6], [4, 9], [8, 1]]),
}

#: exp(-gamma rho) must lie in [_K_LOW, _K_HIGH] for the closest pair (paper section 5).
_K_LOW, _K_HIGH = 0.150, 0.999


def centered_l2_discrepancy(table):
    """Hickernell's centred L2-discrepancy CD2 of a U-type design.

    Parameters
    ----------
    table : array-like of shape (n, s)
        Levels 1..n per column; the points are ``u = (level - 0.5) / n``.

    Returns
    -------
    float
        CD2 (the square root of the usual closed form).
    """
    t = np.asarray(table, dtype=np.float64)
    n, s = t.shape
    a = np.abs((t - 0.5) / n - 0.5)
    term1 = (13.0 / 12.0) ** s
    term2 = 2.0 / n * np.prod(1 + a / 2 - a**2 / 2, axis=1).sum()
    u = (t - 0.5) / n
    pair = (1 + a[:, None, :] / 2 + a[None, :, :] / 2
            - np.abs(u[:, None, :] - u[None, :, :]) / 2)
    term3 = np.prod(pair, axis=2).sum() / n**2
    return float(np.sqrt(term1 - term2 + term3))


def ud_points(table, low, high, stage=1, center=None, keep_inside=True):
    """Map a UD table onto a box in log2 space (hibiscus.m ``UDSample``).

    ``points = (T - 1) / (n - 1) / 2^(stage-1) * L + (c - L / 2^stage)`` with ``L = high -
    low``: stage 1 spans [low, high] around its midpoint; stage 2 spans a box of half the
    width around ``center``. Row 0 of every table lands on the centre.

    With ``keep_inside``, a stage-2 box that would stick out of [low, high] keeps its size
    but its centre is moved the least needed to stay inside (it still contains ``center``).

    Parameters
    ----------
    table : ndarray of shape (n, 2)
        Levels, e.g. ``UD_TABLES[13]``.
    low, high : array-like of shape (2,)
        The stage-1 box in log2 (C, gamma).
    stage : {1, 2}
    center : array-like of shape (2,), optional
        Centre of the box; default the midpoint of [low, high].
    keep_inside : bool, default=True
        Shift the box into [low, high]; False maps it around ``center`` unclipped, as in
        the paper and the authors' toolbox.

    Returns
    -------
    ndarray of shape (n, 2)
        Points in log2 (C, gamma).
    """
    t = np.asarray(table, dtype=np.float64)
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    span = high - low
    c = _box_center(low, high, stage, center) if keep_inside else (
        (low + high) / 2 if center is None else np.asarray(center, dtype=np.float64))
    n = t.shape[0]
    return (t - 1) / (n - 1) / 2.0 ** (stage - 1) * span + (c - span / 2.0**stage)


def _box_center(low, high, stage=2, center=None):
    """Centre of the stage-``stage`` box around ``center`` (default the midpoint of
    [low, high]), clipped per axis so that the box of half-width ``(high - low) / 2^stage``
    lies inside [low, high]."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if center is None:
        return (low + high) / 2
    half = (high - low) / 2.0**stage
    return np.clip(np.asarray(center, dtype=np.float64), low + half, high - half)


class SearchBoundaryWarning(UserWarning):
    """The best point of a search lies on the edge of its search box.

    The true optimum may lie outside the box: widen the range named in the message.

    See Also
    --------
    UniformDesignSearchCV : The search that warns.
    check_search_boundary : The test, on any best point and box.
    """


#: Range parameter of UniformDesignSearchCV per axis of ``search_box_``.
_RANGE_NAMES = ("C_range", "gamma_range")


def _boundary_message(name, range_name, value, lo, hi, side):
    # Suggest half the box's width again on the side of the optimum (log2 scale).
    extra = (hi - lo) / 2
    new = (lo - extra, hi) if side == "lower" else (lo, hi + extra)
    way = "downward" if side == "lower" else "upward"
    return (f"The best {name} = {2.0**value:.4g} lies on the {side} edge of the search box "
            f"[{2.0**lo:.4g}, {2.0**hi:.4g}]: the optimum may lie outside it. Widen "
            f"{range_name} {way}, e.g. {range_name}=({2.0**new[0]:.4g}, {2.0**new[1]:.4g}).")


def check_search_boundary(search, *, tol=0.01, warn=True, stacklevel=2):
    """Warn when the best (C, gamma) of a fitted search sits on the edge of its search box.

    Both coordinates are compared in log2 with the stage-1 box ``search.search_box_``.

    Parameters
    ----------
    search : UniformDesignSearchCV
        A fitted search (one without ``best_params_``, e.g. ``refit=False`` with several
        metrics, has no best point and is never flagged).
    tol : float, default=0.01
        Distance from an edge, as a fraction of the box's width in log2, that counts as on
        the edge. Stage-2 points lie at least 1/16 of the width apart, so the default flags
        only points on the edge itself.
    warn : bool, default=True
        Emit one :class:`SearchBoundaryWarning` per edge hit; False only returns them.
    stacklevel : int, default=2
        Passed to :func:`warnings.warn` (2: the caller of this function).

    Returns
    -------
    list of (str, str)
        ``(range parameter, 'lower' or 'upper')`` per edge hit, e.g.
        ``[('C_range', 'upper')]``; empty for an interior optimum.
    """
    best = getattr(search, "best_params_", None)
    if best is None:
        return []
    names = tuple(search.param_names)
    hits = []
    for axis, (name, range_name) in enumerate(zip(names, _RANGE_NAMES, strict=True)):
        lo, hi = search.search_box_[axis]
        value = math.log2(best[name])
        margin = tol * (hi - lo)
        side = "lower" if value <= lo + margin else "upper" if value >= hi - margin else None
        if side is None:
            continue
        hits.append((range_name, side))
        if warn:
            warnings.warn(_boundary_message(name, range_name, value, lo, hi, side),
                          SearchBoundaryWarning, stacklevel=stacklevel)
    return hits


#: Half-width, in octaves of gamma, of the default ('scale') search box.
SCALE_OCTAVES = 5.0


def min_squared_distance(X, max_samples=3000, random_state=None):
    """rho: the smallest nonzero squared distance between rows of X (of a random subset).

    Duplicate rows (distance 0) are not distinct pairs and are skipped. Memory is O(b *
    n_sub) with blocks of b rows; nothing n-by-n is formed beyond the subset.

    Returns
    -------
    rho : float
    n_used : int
        Rows the minimum was taken over (``min(n, max_samples)``).
    """
    n = X.shape[0]
    if max_samples is not None and n > max_samples:
        rows = np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))
        X = X[rows]
    X = X.astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    norms = squared_norms(X, np.float64)
    scale = max(float(norms.max()), 1e-300)
    best = np.inf
    step = max(1, 2**22 // max(X.shape[0], 1))
    for start in range(0, X.shape[0], step):
        blk = X[start:start + step]
        G = blk @ X.T
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        D = norms[start:start + step, None] + norms[None, :] - 2 * G
        # Rounding leaves ~eps * scale where the distance is really zero.
        D = D[D > 1e-10 * scale]
        if D.size:
            best = min(best, float(D.min()))
    if not np.isfinite(best):
        raise ValueError("Cannot set the gamma search range: all rows of X are identical.")
    return best, X.shape[0]


def _toolbox_distance(X):
    """hibiscus.m's k: the smallest nonzero (unsquared) distance of a row to the mean row."""
    mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    sq = squared_norms(X, np.float64) - 2 * np.asarray(X @ mean).ravel() + mean @ mean
    sq = sq[sq > 1e-12 * max(float(sq.max()), 1e-300)]
    if not sq.size:
        raise ValueError("Cannot set the gamma search range: all rows of X are identical.")
    return float(np.sqrt(sq.min()))


def gamma_search_range(X, max_samples=3000, random_state=None, mode="scale"):
    """log2 gamma bounds of the search box.

    ``mode='scale'`` (the default of :class:`UniformDesignSearchCV`): ``SCALE_OCTAVES``
    octaves either side of scikit-learn's ``gamma='scale'``, 1 / (d var(X)). ``'paper'``:
    the paper's 0.150 <= exp(-gamma rho) <= 0.999 (Huang et al. 2007, section 5), rho the
    smallest nonzero squared distance between rows; on a random subset of ``n_used`` of the n rows
    both bounds are multiplied by ``(n / n_used)^(2 / (4 + d))``, the paper's correction for
    the larger minimum distance of a subset. ``'toolbox'`` reproduces hibiscus.m, which puts
    the smallest nonzero distance of a row to the mean row in place of rho.

    'scale' is the default because rho follows the two closest rows, not the data's spread:
    on continuous data with near-duplicate rows the paper's box lies far above every useful
    gamma.

    Returns
    -------
    ndarray of shape (2,)
        [log2 gamma_low, log2 gamma_high].
    """
    if mode == "scale":
        centre = math.log2(resolve_gamma("scale", X))
        return np.array([centre - SCALE_OCTAVES, centre + SCALE_OCTAVES])
    if mode == "toolbox":
        rho, factor = _toolbox_distance(X), 1.0
    else:
        rho, n_used = min_squared_distance(X, max_samples, random_state)
        factor = (X.shape[0] / n_used) ** (2.0 / (4.0 + X.shape[1]))
    return np.log2([-math.log(_K_HIGH) / rho * factor, -math.log(_K_LOW) / rho * factor])
