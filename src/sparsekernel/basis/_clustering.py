"""Clustering RSVM (Jen & Lee 2004; review Algorithm 3)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.utils import check_random_state

from ..kernels import resolve_gamma
from ..kernels._functions import squared_norms
from ._base import BasisResult, BasisSelector, subsample_rows

__all__ = ["ClusteringBasis", "oyang_hwang_width"]

#: delta * sqrt(pi) of the review's eq. (29); the source of the constant is not confirmed.
OYANG_BETA = 1.6210
#: Width floor (fraction of the RMS radius): near-duplicate members give gamma ~ 1e14 otherwise.
_SIGMA_FLOOR = 1e-3
#: Kernel value at a centre's nearest members below which the widths are reported unusable.
_MIN_REACH = 1e-2


def oyang_hwang_width(distances, n_features, beta=OYANG_BETA):
    """Gaussian width sigma of a centre from its n_r nearest points (review eqs. 29-30).

    ``sigma = beta Rbar / ((n_r + 1) Gamma(d/2 + 1))^(1/d)`` with
    ``Rbar = (d + 1)/d * mean(distances)``, n_r = ``len(distances)``, d = ``n_features``.
    Evaluated in logs with ``lgamma``: Gamma(d/2 + 1) overflows a double from d = 342 on,
    while the d-th root is moderate (about sqrt(d / (2e)) for large d).

    Parameters
    ----------
    distances : array-like of shape (n_r,)
        Euclidean (not squared) distances of the n_r nearest points to the centre.
    n_features : int
        Dimension d.
    beta : float, default=1.6210
        The constant delta sqrt(pi) of eq. (29).

    Returns
    -------
    float
        sigma for the kernel exp(-||x - c||^2 / (2 sigma^2)), i.e. gamma = 1 / (2 sigma^2);
        0.0 when every distance is zero.
    """
    distances = np.asarray(distances, dtype=np.float64)
    d, n_r = int(n_features), len(distances)
    if n_r == 0 or d < 1:
        raise ValueError(f"oyang_hwang_width needs at least one distance and n_features >= 1;"
                         f" got {n_r} distances and n_features={n_features!r}.")
    r_bar = (d + 1) / d * distances.mean()
    if r_bar <= 0:
        return 0.0
    log_sigma = np.log(beta) + np.log(r_bar) - (np.log(n_r + 1) + gammaln(d / 2 + 1)) / d
    return float(np.exp(log_sigma))


def _distances(X, c):
    """||x_i - c|| for the rows of X (dense or CSR) and one dense centre c.

    Dense rows are differenced directly, so a centroid equal to a point is at distance
    exactly 0; for CSR the expansion's rounding (relative to the norms) is cut to 0.
    """
    if not sp.issparse(X):
        return np.linalg.norm(np.asarray(X, dtype=np.float64) - c, axis=1)
    sq_x = squared_norms(X, np.float64)
    sq = sq_x - 2 * np.asarray(X @ c).ravel() + c @ c
    sq[sq <= 1e-12 * (sq_x + c @ c)] = 0.0
    return np.sqrt(sq)


def _rms_radius(X):
    """sqrt(mean ||x - mean(X)||^2): the data scale that floors the widths."""
    mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    sq = squared_norms(X, np.float64).mean() - mean @ mean
    return float(np.sqrt(max(sq, 0.0)))


def _equal_counts(sizes, n_basis):
    """k per group as equal as possible (the paper's k per class), capped at group sizes."""
    counts = np.zeros(len(sizes), dtype=int)
    left = n_basis
    while left > 0:
        open_ = np.flatnonzero(counts < sizes)
        if not len(open_):
            break
        share = max(1, left // len(open_))
        for g in open_:
            add = min(share, sizes[g] - counts[g], left)
            counts[g] += add
            left -= add
            if left == 0:
                break
    return counts


class ClusteringBasis(BasisSelector):
    """Class-wise k-means centroids as basis points, each with its own RBF width.

    For classifiers, ``n_basis`` centres are split equally between the classes (as the
    paper's k per class; a class smaller than its share gives the rest to the others) and
    k-means runs within each class; for regression, on all rows. Each centroid c gets the
    Oyang-Hwang width sigma(c) (:func:`oyang_hwang_width`) from the ``n_neighbors`` members
    of its cluster nearest to c (all members when the cluster is smaller), and the kernel
    column ``exp(-gamma_c ||x - c||^2)`` with ``gamma_c = 1 / (2 sigma(c)^2)``. The widths
    are returned in ``BasisResult.gamma`` and replace the estimator's ``gamma``; only the
    'rbf' kernel supports them.

    Parameters
    ----------
    n_neighbors : int, default=10
        n_r, the cluster members used to estimate the radius.
    beta : float, default=1.6210
        The constant of eq. (29) (delta sqrt(pi) in the review).
    max_iter : int, default=20
        Lloyd iterations of each k-means.
    subsample : int or None, default=20000
        Rows clustered in total (a uniformly random subset of all rows, each class then
        clustered on its share); None uses all.

    Notes
    -----
    A one-point cluster has no radius, and one whose nearest members coincide with the
    centroid (duplicates) gets sigma at rounding level; any sigma below 1e-3 times the RMS
    distance of the rows to their mean is replaced by the median of the others (by
    gamma='scale' if there are none). With clusters of a few points the formula gives
    density-estimation bandwidths, far narrower than a good SVM gamma; prefer
    ``n_basis`` well below n.

    See Also
    --------
    KMeansBasis : Centres of all the rows together, one shared width.
    oyang_hwang_width : The per-centre width rule.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 3).
    .. [2] Y.-J. Oyang and S.-C. Hwang, "An efficient learning algorithm for function
       approximation with radial basis function networks", Proceedings of the International
       Conference on Neural Information Processing (ICONIP), 2002.
    """

    def __init__(self, *, n_neighbors=10, beta=OYANG_BETA, max_iter=20, subsample=20000):
        self.n_neighbors = n_neighbors
        self.beta = beta
        self.max_iter = max_iter
        self.subsample = subsample

    def _check(self, kernel):
        if kernel is not None and kernel.name != "rbf":
            raise ValueError("ClusteringBasis estimates per-centre RBF widths; it needs "
                             f"kernel='rbf', not {kernel.name!r}.")
        if int(self.n_neighbors) < 1 or not self.beta > 0:
            raise ValueError("ClusteringBasis: n_neighbors must be a positive int and beta "
                             f"positive. Got n_neighbors={self.n_neighbors!r}, "
                             f"beta={self.beta!r}.")

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self._check(kernel)
        rng = check_random_state(random_state)
        n = X.shape[0]
        groups = np.zeros(n, dtype=int) if y is None else np.unique(y, return_inverse=True)[1]
        rows = subsample_rows(n, self.subsample, rng, n_basis)
        g_sub = groups[rows]
        sizes = np.bincount(g_sub, minlength=groups.max() + 1)
        counts = _equal_counts(sizes, n_basis)
        centers, sigmas, radii = [], [], []
        for g, k in enumerate(counts):
            if k == 0:
                continue
            c, s, r = self._cluster(X[rows[g_sub == g]], int(k), rng)
            centers.append(c)
            sigmas.append(s)
            radii.append(r)
        centers, sigma = np.vstack(centers), np.concatenate(sigmas)
        gamma = self._gamma(sigma, X[rows])
        _check_reach(gamma, np.concatenate(radii), X)
        centers = centers.astype(X.dtype, copy=False)
        Z = sp.csr_matrix(centers) if sp.issparse(X) else centers
        info = {"sigma": sigma, "clusters_per_class": counts}
        return BasisResult(centers=Z, gamma=gamma, info=info)

    def _cluster(self, Xg, k, rng):
        from sklearn.cluster import KMeans  # deferred: it loads half of scikit-learn

        km = KMeans(n_clusters=k, n_init=1, max_iter=self.max_iter,
                    random_state=rng.randint(np.iinfo(np.int32).max))
        labels = km.fit_predict(Xg)
        C = np.asarray(km.cluster_centers_, dtype=np.float64)
        d = Xg.shape[1]
        sigma, radius = np.zeros(k), np.zeros(k)
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(k + 1))
        for j in range(k):
            members = Xg[order[bounds[j]:bounds[j + 1]]]
            if members.shape[0] < 2:  # one point has no radius: fall back (see _gamma)
                continue
            dist = _distances(members, C[j])
            near = np.sort(dist)[: self.n_neighbors]
            sigma[j] = oyang_hwang_width(near, d, self.beta)
            radius[j] = near.mean()
        return C, sigma, radius

    def _gamma(self, sigma, X):
        """gamma_c = 1 / (2 sigma_c^2), unusable widths replaced (class Notes)."""
        scale = _rms_radius(X)
        ok = np.isfinite(sigma) & (sigma > _SIGMA_FLOOR * scale)
        if not ok.any():
            return np.full(len(sigma), resolve_gamma("scale", X))
        sigma = np.where(ok, sigma, np.median(sigma[ok]))
        sigma = np.maximum(sigma, _SIGMA_FLOOR * scale)
        return 1.0 / (2.0 * sigma**2)


def _check_reach(gamma, radius, X):
    """Warn when the widths leave each centre's kernel near zero at its own nearest members.

    The Oyang-Hwang width shrinks with the dimension d like sqrt(2 e / d) times the members'
    radius (it is a density-estimation bandwidth for d-dimensional volumes): with hundreds
    of features exp(-gamma_c r_c^2) can be near zero and every prediction the same class,
    while with a few dozen it stays of order one.
    """
    has = radius > 0
    if not has.any():
        return
    reach = float(np.median(np.exp(-gamma[has] * radius[has] ** 2)))
    if reach < _MIN_REACH:
        warnings.warn(
            f"basis='clustering': the per-centre widths (Oyang-Hwang) leave the kernel at "
            f"{reach:.2g} (median over centres) at a centre's own nearest cluster members, "
            f"so the model can hardly vary between centres. The width formula assumes "
            f"low-dimensional data (here n_features={X.shape[1]}); use basis='kmeans' or "
            "'random', which keep the estimator's gamma.", UserWarning, stacklevel=4)
