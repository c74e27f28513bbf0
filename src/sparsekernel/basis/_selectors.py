"""Built-in selectors: uniform random rows (optionally stratified), k-means, a fixed array."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state

from ..compute import max_threads, namespace_of, to_numpy
from ._base import BasisResult, BasisSelector, subsample_rows
from ._lloyd import _BLOCK_BYTES, lloyd

__all__ = ["FixedBasis", "KMeansBasis", "RandomBasis"]


def _stratified_counts(y, n_basis):
    """Per-class counts proportional to class sizes, every class at least once when possible."""
    classes, sizes = np.unique(y, return_counts=True)
    exact = n_basis * sizes / sizes.sum()
    counts = np.floor(exact).astype(int)
    if n_basis >= len(classes):
        counts = np.maximum(counts, 1)
    # Largest remainders first, then trim any excess created by the at-least-one rule.
    order = np.argsort(-(exact - counts), kind="stable")
    i = 0
    while counts.sum() < n_basis:
        c = order[i % len(order)]
        if counts[c] < sizes[c]:
            counts[c] += 1
        i += 1
    while counts.sum() > n_basis:
        c = int(np.argmax(counts))
        counts[c] -= 1
    return classes, counts


class RandomBasis(BasisSelector):
    """Uniformly random training rows, as in the original RSVM.

    Parameters
    ----------
    stratify : bool, default=True
        Draw from each class in proportion to its size, with at least one centre per class
        (so rare classes are represented). Only classifiers pass labels to selectors, so this
        has no effect for regression.

    See Also
    --------
    KMeansBasis : Centres that cover the data (k-means centroids).
    SystematicBasis : Rows chosen to reduce the training error, round by round.

    References
    ----------
    .. [1] Y.-J. Lee and O. L. Mangasarian, "RSVM: Reduced support vector machines",
       Proceedings of the SIAM International Conference on Data Mining, 2001.
    """

    def __init__(self, *, stratify=True):
        self.stratify = stratify

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        rng = check_random_state(random_state)
        n = X.shape[0]
        if self.stratify and y is not None:
            classes, counts = _stratified_counts(y, n_basis)
            parts = [
                rng.choice(np.flatnonzero(y == c), size=k, replace=False)
                for c, k in zip(classes, counts, strict=True)
                if k > 0
            ]
            idx = np.concatenate(parts)
        else:
            idx = rng.choice(n, size=n_basis, replace=False)
        idx = np.sort(idx)
        return BasisResult(centers=X[idx], indices=idx)


def _distance_bytes(kernel):
    """Distances each thread of Lloyd's assignment step may hold: at most ``_BLOCK_BYTES``,
    and, with the estimator's kernel, together a quarter of its memory budget (the
    selection runs before the fit's own arrays exist; the rest covers the clustered rows,
    labels and sums)."""
    if kernel is None:
        return _BLOCK_BYTES
    return max(1.0, min(_BLOCK_BYTES, kernel.memory_budget / (4 * max_threads())))


class KMeansBasis(BasisSelector):
    """k-means centroids of a random subsample (the LLSVM choice of landmarks).

    A few Lloyd iterations from random rows on at most ``subsample`` rows: the centres only
    need to cover the data, not to converge. With ``init='random'`` the iterations are the
    package's own BLAS-3 loop, with 'k-means++' scikit-learn's ``KMeans``. Random rows are
    the default start because k-means++ adds m sequential distance passes for the same test
    error after the Lloyd iterations.

    Parameters
    ----------
    max_iter : int, default=5
        Lloyd iterations (the centres need not converge).
    subsample : int or None, default=20000
        Rows used for clustering (at least ``n_basis``); None uses all rows.
    init : {'random', 'k-means++'}, default='random'
        Random rows (then our Lloyd iterations), or k-means++ (scikit-learn's KMeans).

    See Also
    --------
    KMedoidsBasis : Training rows at the centre of their clusters.
    ClusteringBasis : Class-wise centres with a width each.
    sklearn.cluster.KMeans : The k-means of ``init='k-means++'``.

    References
    ----------
    .. [1] K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up kernel SVM on limited
       resources: A low-rank linearization approach", Proceedings of the 15th
       International Conference on Artificial Intelligence and Statistics (AISTATS), 2012.
    """

    def __init__(self, *, max_iter=5, subsample=20000, init="random"):
        self.max_iter = max_iter
        self.subsample = subsample
        self.init = init

    @property
    def supports_array_api(self):
        """Whether :meth:`select` computes on X's device for X of an array-API namespace
        (the package's own Lloyd iterations of ``init='random'``; not scikit-learn's
        k-means++)."""
        return self.init == "random"

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        rng = check_random_state(random_state)
        rows = subsample_rows(X.shape[0], self.subsample, rng, n_basis)
        if not sp.issparse(X) and namespace_of(X) is not np:  # on X's device
            from array_api_compat import device

            xp = namespace_of(X)
            X = xp.take(X, xp.asarray(rows, device=device(X)), axis=0)
            if n_basis >= X.shape[0]:
                return BasisResult(centers=X, indices=rows)
            return BasisResult(centers=lloyd(X, n_basis, self.max_iter, rng,
                                             _distance_bytes(kernel)))
        if n_basis >= X.shape[0]:  # as many clusters as rows: the rows are the centres
            return BasisResult(centers=X[rows], indices=rows)
        if self.init == "random":
            centers = lloyd(X[rows], n_basis, self.max_iter, rng,
                            _distance_bytes(kernel)).astype(X.dtype, copy=False)
        else:
            centers = self._sklearn_kmeans(X[rows], n_basis, rng).astype(X.dtype, copy=False)
        return BasisResult(centers=sp.csr_matrix(centers) if sp.issparse(X) else centers)

    def _sklearn_kmeans(self, X, n_basis, rng):
        from sklearn.cluster import KMeans  # deferred: it loads half of scikit-learn

        km = KMeans(
            n_clusters=n_basis, init=self.init, n_init=1, max_iter=self.max_iter,
            random_state=rng.randint(np.iinfo(np.int32).max),
        )
        # KMeans may warn about fewer distinct points than clusters; duplicates then appear
        # and the feature maps downstream tolerate them.
        return km.fit(X).cluster_centers_


class FixedBasis(BasisSelector):
    """A user-given array of centres (``n_basis`` is then its number of rows).

    Parameters
    ----------
    centers : array-like or CSR matrix of shape (m, d)

    See Also
    --------
    BasisSelector : The interface of every selector.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsekernel import ReducedSVC
    >>> from sparsekernel.basis import FixedBasis
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = ReducedSVC(basis=FixedBasis(X[[0, 3]])).fit(X, [0, 0, 1, 1])
    >>> clf.basis_.shape
    (2, 1)
    """

    def __init__(self, centers):
        self.centers = centers

    def select(self, X, y=None, *, n_basis=None, random_state=None, kernel=None):
        # Centres of an array-API namespace (X's, under dispatch) are chosen on the host as
        # the other selectors' are; the fitted model then moves to X's namespace.
        Z = check_array(to_numpy(self.centers), accept_sparse="csr",
                        dtype=[np.float64, np.float32], input_name="basis")
        if Z.shape[1] != X.shape[1]:
            raise ValueError(
                f"The basis array has {Z.shape[1]} features but X has {X.shape[1]}."
            )
        Z = Z.astype(X.dtype, copy=False)
        if sp.issparse(X) and not sp.issparse(Z):
            Z = sp.csr_matrix(Z)
        return BasisResult(centers=Z)
