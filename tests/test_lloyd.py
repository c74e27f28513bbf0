"""The landmarks' Lloyd iterations (basis/_lloyd.py) against scikit-learn's KMeans."""

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sparsekernel.basis import KMeansBasis
from sparsekernel.basis._lloyd import lloyd


def _start(X, k, seed):
    """The rows lloyd starts from with RandomState(seed)."""
    return X[np.sort(np.random.RandomState(seed).choice(X.shape[0], k, replace=False))]


def test_same_centres_as_sklearn_kmeans_from_the_same_start():
    X, _ = make_blobs(n_samples=600, centers=8, n_features=5, random_state=0)
    ours = lloyd(X, 12, 10, np.random.RandomState(3))
    ref = KMeans(12, init=_start(X, 12, 3), n_init=1, max_iter=10, tol=0).fit(X)
    np.testing.assert_allclose(ours[np.lexsort(ours.T)],
                               ref.cluster_centers_[np.lexsort(ref.cluster_centers_.T)],
                               rtol=1e-10, atol=1e-10)


def test_csr_rows_give_the_dense_centres_and_dtypes_are_kept():
    X, _ = make_blobs(n_samples=300, centers=4, n_features=6, random_state=1)
    X[X < 0] = 0.0
    dense = lloyd(X, 7, 5, np.random.RandomState(0))
    sparse = lloyd(sp.csr_matrix(X), 7, 5, np.random.RandomState(0))
    np.testing.assert_allclose(sparse, dense, rtol=1e-10, atol=1e-12)
    assert lloyd(X.astype(np.float32), 7, 5, np.random.RandomState(0)).dtype == np.float32


def test_duplicate_starts_are_relocated_not_kept_twice():
    # 20 distinct rows, each repeated 10 times: random starts almost surely repeat a row,
    # whose copy then has no rows; it moves to a far row instead of staying a duplicate.
    rng = np.random.RandomState(0)
    X = np.repeat(rng.normal(size=(20, 3)), 10, axis=0)
    Z = lloyd(X, 15, 10, np.random.RandomState(1))
    assert len(np.unique(Z.round(12), axis=0)) == 15


def test_kmeans_basis_needs_no_sklearn_cluster_for_random_starts():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from sparsekernel.basis import KMeansBasis; "
            "KMeansBasis().select(np.random.rand(200, 3), n_basis=10, random_state=0); "
            "print('sklearn.cluster' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
    X = np.random.RandomState(0).rand(200, 3)
    Z = KMeansBasis(init="k-means++").select(X, n_basis=10, random_state=0).centers
    assert Z.shape == (10, 3)
