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


def test_wide_csr_rows_keep_csr_centres_equal_to_the_dense_ones():
    """Dense centres that would not fit a block of distances stay CSR (a mean of sparse rows
    is as sparse as their union): the same centres, empty clusters relocated alike."""
    X, _ = make_blobs(n_samples=300, centers=4, n_features=40, random_state=2)
    X[X < 4] = 0.0  # sparse rows, and duplicate all-zero rows that leave clusters empty
    Xs = sp.csr_matrix(X)
    dense = lloyd(Xs, 9, 5, np.random.RandomState(0))
    wide = lloyd(Xs, 9, 5, np.random.RandomState(0), block_bytes=4 * 9 * 40 * 8 - 1)
    assert sp.issparse(wide) and not sp.issparse(dense)
    np.testing.assert_allclose(wide.toarray(), dense, rtol=1e-10, atol=1e-12)
    assert wide.nnz < np.count_nonzero(X)


def test_rows_split_a_block_per_cpu_give_the_same_centres_on_any_thread_count(monkeypatch):
    """A set smaller than one block of distances is still split, a block per CPU (so no
    core idles on pendigits-sized data), and the blocks do not depend on the threads in
    force: one thread or three compute the same blocks, so the same centres, bit for bit."""
    from sparsekernel.basis import _lloyd

    X, _ = make_blobs(n_samples=1001, centers=6, n_features=4, random_state=2)
    monkeypatch.setattr(_lloyd, "max_threads", lambda: 3)
    seen, real_map = [], _lloyd.map_threads
    monkeypatch.setattr(_lloyd, "map_threads", lambda fn, blocks, n: seen.append(
        (len(blocks), n)) or real_map(fn, blocks, n))
    centres = []
    for threads in (1, 3):
        monkeypatch.setattr(_lloyd, "planned_threads", lambda t=threads: t)
        centres.append(lloyd(X, 9, 5, np.random.RandomState(0)))
    assert seen and {b for b, _ in seen} == {3} and {n for _, n in seen} == {1, 3}
    np.testing.assert_array_equal(centres[1], centres[0])


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
