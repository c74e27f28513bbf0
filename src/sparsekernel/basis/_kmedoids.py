"""k-medoids centres under the L1 distance (the LR-LSSVM initialisation)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

from ._base import BasisResult, BasisSelector, subsample_rows

__all__ = ["KMedoidsBasis", "kmedoids_l1"]


def _seed(X, n_basis, rng):
    """k-means++-style D^1 seeding: each next medoid drawn with probability ~ L1 distance."""
    n = X.shape[0]
    chosen = [int(rng.randint(n))]
    nearest = cdist(X, X[chosen], "cityblock")[:, 0]
    for _ in range(1, n_basis):
        total = nearest.sum()
        if total > 0:
            nxt = int(rng.choice(n, p=nearest / total))
        else:  # fewer distinct points than medoids: repeat one
            nxt = int(rng.randint(n))
        chosen.append(nxt)
        nearest = np.minimum(nearest, cdist(X, X[[nxt]], "cityblock")[:, 0])
    return np.array(chosen)


def kmedoids_l1(X, n_basis, max_iter=20, random_state=None):
    """Alternating (Voronoi-iteration) k-medoids with the L1 distance.

    Minimises ``sum_i min_k ||x_i - mu_k||_1`` over medoids ``mu_k`` that are rows of X
    (paper eq. 30): assign every row to its nearest medoid, move each medoid to the member
    with the smallest total L1 distance to its cluster, repeat until nothing changes.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_basis : int
    max_iter : int, default=20
    random_state : int, RandomState or None

    Returns
    -------
    medoids : ndarray of shape (n_basis,)
        Row indices of the medoids.
    labels : ndarray of shape (n,)
        Cluster of each row (position in ``medoids``).
    """
    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=np.float64)
    medoids = _seed(X, n_basis, rng)
    for _ in range(max_iter):
        labels = cdist(X, X[medoids], "cityblock").argmin(axis=1)
        new = medoids.copy()
        for k in range(n_basis):
            members = np.flatnonzero(labels == k)
            if members.size:
                new[k] = members[cdist(X[members], X[members], "cityblock").sum(1).argmin()]
        if np.array_equal(new, medoids):
            break
        medoids = new
    labels = cdist(X, X[medoids], "cityblock").argmin(axis=1)
    return medoids, labels


class KMedoidsBasis(BasisSelector):
    """k-medoids (L1 distance) on a random subsample: centres are actual training rows.

    More robust than k-means to unbalanced or heavy-tailed data (the LR-LSSVM paper's
    initialisation of its robust RBF centres).

    Parameters
    ----------
    max_iter : int, default=20
        Voronoi iterations.
    subsample : int or None, default=2000
        Rows clustered (at least ``n_basis``); each iteration costs O(n_sub^2 d / n_basis).
        None uses all rows.

    See Also
    --------
    KMeansBasis : Centroids (not necessarily rows), cheaper per iteration.
    RandomBasis : Random rows.
    """

    def __init__(self, *, max_iter=20, subsample=2000):
        self.max_iter = max_iter
        self.subsample = subsample

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        rng = check_random_state(random_state)
        rows = subsample_rows(X.shape[0], self.subsample, rng, n_basis)
        Xs = X[rows]
        Xs = Xs.toarray() if sp.issparse(Xs) else Xs
        medoids, _ = kmedoids_l1(Xs, n_basis, self.max_iter, rng)
        idx = rows[medoids]
        return BasisResult(centers=X[idx], indices=idx)
