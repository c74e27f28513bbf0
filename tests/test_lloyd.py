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


def test_rows_split_over_the_threads_give_the_one_thread_centres(monkeypatch):
    """A set smaller than one block of distances is still split, a block per thread (so
    no core idles on pendigits-sized data), without changing the centres."""
    from sparsekernel.basis import _lloyd

    X, _ = make_blobs(n_samples=1001, centers=6, n_features=4, random_state=2)
    monkeypatch.setattr(_lloyd, "planned_threads", lambda: 1)
    one = lloyd(X, 9, 5, np.random.RandomState(0))
    seen = []
    monkeypatch.setattr(_lloyd, "planned_threads", lambda: 3)
    monkeypatch.setattr(_lloyd, "map_threads",
                        lambda fn, blocks, n: seen.append(len(blocks)) or list(map(fn, blocks)))
    three = lloyd(X, 9, 5, np.random.RandomState(0))
    assert seen and all(b == 3 for b in seen)
    np.testing.assert_allclose(three, one, rtol=1e-12, atol=1e-12)


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
