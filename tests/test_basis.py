import numpy as np
import pytest
import scipy.sparse as sp

from sparsekernel.basis import (
    FixedBasis,
    KMeansBasis,
    KMedoidsBasis,
    RandomBasis,
    make_basis_selector,
    resolve_n_basis,
)


@pytest.fixture
def data(rng):
    X = rng.normal(size=(300, 3))
    y = np.r_[np.zeros(290, int), np.ones(7, int), np.full(3, 2)]
    return X, y


def test_random_basis_rows_unique_and_reproducible(data):
    X, _ = data
    res = RandomBasis(stratify=False).select(X, n_basis=25, random_state=3)
    assert len(np.unique(res.indices)) == 25
    np.testing.assert_array_equal(res.centers, X[res.indices])
    again = RandomBasis(stratify=False).select(X, n_basis=25, random_state=3)
    np.testing.assert_array_equal(res.indices, again.indices)
    other = RandomBasis(stratify=False).select(X, n_basis=25, random_state=4)
    assert not np.array_equal(res.indices, other.indices)


def test_stratified_random_basis_keeps_rare_classes(data):
    X, y = data
    res = RandomBasis().select(X, y, n_basis=10, random_state=0)
    counts = np.bincount(y[res.indices], minlength=3)
    assert counts.sum() == 10
    assert np.all(counts >= 1)  # the 3-sample class is represented
    big = RandomBasis().select(X, y, n_basis=150, random_state=0)
    counts = np.bincount(y[big.indices], minlength=3)
    # proportional allocation: 290/300 of 150 = 145 (+/- the at-least-one adjustments)
    assert abs(counts[0] - 145) <= 2 and counts.sum() == 150


def test_kmeans_basis_dense_and_sparse(data):
    X, _ = data
    res = KMeansBasis(subsample=200).select(X, n_basis=12, random_state=0)
    assert res.centers.shape == (12, 3) and res.indices is None
    assert np.all(res.centers >= X.min(0)) and np.all(res.centers <= X.max(0))
    again = KMeansBasis(subsample=200).select(X, n_basis=12, random_state=0)
    np.testing.assert_array_equal(res.centers, again.centers)
    Xs = sp.csr_matrix(np.abs(X))
    res_s = KMeansBasis().select(Xs, n_basis=5, random_state=0)
    assert sp.issparse(res_s.centers) and res_s.centers.shape == (5, 3)
    res32 = KMeansBasis().select(X.astype(np.float32), n_basis=5, random_state=0)
    assert res32.centers.dtype == np.float32
    # as many clusters as rows: the rows themselves, so reduced with Z = X is the full model
    every = KMeansBasis().select(X[:40], n_basis=40, random_state=0)
    np.testing.assert_array_equal(every.indices, np.arange(40))
    np.testing.assert_array_equal(every.centers, X[:40])


def test_kmeans_centroids_reduce_quantization_error(data):
    X, _ = data
    km = KMeansBasis(subsample=None).select(X, n_basis=10, random_state=0).centers
    rnd = RandomBasis(stratify=False).select(X, n_basis=10, random_state=0).centers

    def distortion(Z):
        return ((X[:, None, :] - Z[None]) ** 2).sum(-1).min(1).mean()

    assert distortion(km) < distortion(rnd)


def test_fixed_basis_checks_features(data):
    X, _ = data
    res = FixedBasis(X[:4]).select(X)
    np.testing.assert_array_equal(res.centers, X[:4])
    with pytest.raises(ValueError, match="2 features but X has 3"):
        FixedBasis(np.ones((4, 2))).select(X)


def test_resolve_n_basis():
    assert resolve_n_basis("auto", 50) == 50
    assert resolve_n_basis("auto", 5000) == (283 + 708) // 2  # the middle of auto_bounds
    assert resolve_n_basis("auto", 5000, auto=300) == 300
    assert resolve_n_basis(7, 50) == 7
    assert resolve_n_basis(0.1, 55) == 6
    assert resolve_n_basis(1.0, 55) == 55
    with pytest.raises(ValueError, match="n_basis=60 .* \\(n_samples=50\\)"):
        resolve_n_basis(60, 50)
    for bad in (0, 1.5, -0.2, "many", True):
        with pytest.raises(ValueError, match="n_basis"):
            resolve_n_basis(bad, 50)


def test_make_basis_selector_dispatch(data):
    X, _ = data
    assert isinstance(make_basis_selector("random"), RandomBasis)
    assert isinstance(make_basis_selector("kmeans"), KMeansBasis)
    assert isinstance(make_basis_selector(X[:3]), FixedBasis)
    sel = KMeansBasis(max_iter=2)
    assert make_basis_selector(sel) is sel
    assert isinstance(make_basis_selector("kmedoids"), KMedoidsBasis)
    with pytest.raises(ValueError, match="'random', 'kmeans', 'kmedoids'.*Got 'kmedian'"):
        make_basis_selector("kmedian")
    with pytest.raises(TypeError, match="dict"):
        make_basis_selector({"a": 1})


def test_auto_n_basis_follows_the_kernel_spectrum():
    """Smooth low-dimensional data need few basis functions, high-dimensional noise many:
    'auto' lands below, at the two ends of, and above sqrt(n) scaling."""
    from sparsekernel.basis import auto_n_basis
    from sparsekernel.basis._base import auto_bounds, auto_flat, auto_long_tail
    from sparsekernel.kernels import Kernel

    rng = np.random.RandomState(0)
    n = 4000
    low, high = auto_bounds(n)
    assert (low, high) == (253, 633)
    assert auto_flat(n) == 1139  # 18 sqrt(n)
    assert auto_flat(10**6) == 10000 and auto_flat(20000) == 1800 and auto_flat(900) == 540
    # a resolved long tail: 10 sqrt(n) up to the cap (ijcnn1: 2236 -> 1800), not below 4 sqrt(n)
    assert auto_long_tail(n) == high and auto_long_tail(15000) == 1225
    assert auto_long_tail(50000) == 1800 and auto_long_tail(10**6) == 4000
    sizes = [50, 900, 4000, 20000, 32000, 50000, 10**6, 10**7]
    assert all(auto_long_tail(k) <= auto_flat(k) for k in sizes)
    smooth = rng.uniform(-1, 1, (n, 2))
    # so smooth that a few directions hold 99.9 % of the sample's trace: the sqrt(n) floor
    # gives way to AUTO_RANK_FACTOR times that rank (not below AUTO_MIN)
    assert 100 <= auto_n_basis(smooth, Kernel("rbf", gamma=0.5), rng) < low
    wavy = rng.uniform(-1, 1, (n, 4))
    # 99 % of the trace in ~105 directions, 99.9 % in ~200 of 500: the count, raised to low
    assert auto_n_basis(wavy, Kernel("rbf", gamma=1.0), rng) == low
    # a classifier goes below that floor, to AUTO_CLASS_FACTOR times the count (~105)
    for_classes = auto_n_basis(wavy, Kernel("rbf", gamma=1.0), np.random.RandomState(1),
                               classifier=True)
    assert 150 <= for_classes < low
    assert auto_n_basis(wavy, Kernel("rbf", gamma=1.0), np.random.RandomState(1)) == low
    # narrower kernel: 99.9 % needs ~360 of the 500 sampled directions, a tail the sample
    # cannot resolve: the upper end
    assert auto_n_basis(wavy, Kernel("rbf", gamma=2.0), rng) == high == auto_long_tail(n)
    big = 50000  # sqrt(n) scaling past the cap
    wavy = rng.uniform(-1, 1, (big, 4))
    # 99.9 % needs ~400 of 500, 99 % ~275: a long tail, capped (10 sqrt(n) = 2237)
    assert auto_n_basis(wavy, Kernel("rbf", gamma=2.5), rng) == 1800
    # 99 % needs ~390 of 500 as well: nearly flat, not capped
    nearly_flat = rng.standard_normal((big, 8))
    assert auto_n_basis(nearly_flat, Kernel("rbf", gamma=0.2), rng) == auto_bounds(big)[1]
    rough = rng.standard_normal((n, 50))  # flat spectrum: beyond sqrt(n) scaling's range
    assert auto_n_basis(rough, Kernel("rbf", gamma=0.02), rng) == auto_flat(n)
    assert auto_bounds(50) == (50, 50)


def test_auto_cap_rises_with_the_cost_of_a_kernel_row():
    """The cap on an unresolved spectrum is sqrt(AUTO_COST n nnz), not below AUTO_CAP:
    sparse or low-dimensional rows keep 1800, dense high-dimensional rows get more."""
    import scipy.sparse as sp

    from sparsekernel.basis import auto_n_basis
    from sparsekernel.basis._base import auto_cap, auto_flat, auto_long_tail
    from sparsekernel.kernels import Kernel

    assert auto_cap(60000, 390.0) == 9675 and auto_cap(32561, 13.9) == 1800
    assert auto_flat(60000, 390.0) == 4410  # Fashion-MNIST: 18 sqrt(n), no longer 10 sqrt(n)
    assert auto_flat(60000) == 2450 and auto_flat(32561, 13.9) == 1805  # a9a keeps 10 sqrt(n)
    assert auto_long_tail(50000, 13.0) == 1800 == auto_long_tail(50000)  # ijcnn1
    assert auto_long_tail(50000, 100.0) == 2237  # 10 sqrt(n): a long tail never gets more
    rng = np.random.RandomState(0)
    n = 20000
    dense = rng.standard_normal((n, 50))  # flat, 50 nonzeros a row: cap sqrt(4 n 50) = 2000
    assert auto_n_basis(dense, Kernel("rbf", gamma=0.02), rng) == 2000
    rows = sp.random(n, 500, density=0.02, format="csr", random_state=rng)  # ~10 a row
    assert auto_n_basis(rows, Kernel("rbf", gamma=0.5), rng) == 1800


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 2 iterations
def test_classifiers_and_regressors_count_auto_basis_for_their_task():
    """A classifier gets the classifier's count; a regressor, and a transformer that is
    given labels (kernel SIR slices by them), the general one."""
    from sparsekernel import ReducedKernelSIR, ReducedSVC, ReducedSVR
    from sparsekernel.basis._base import auto_bounds

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (4000, 4))
    y = (np.sin(3 * X[:, 0]) + X[:, 1] ** 2 > 0.5).astype(int)
    low = auto_bounds(len(X))[0]
    clf = ReducedSVC(gamma=1.0, max_iter=2, random_state=0).fit(X, y)
    reg = ReducedSVR(gamma=1.0, max_iter=2, random_state=0).fit(X, y.astype(float))
    assert 150 <= clf.basis_.shape[0] < low == reg.basis_.shape[0]
    sir = ReducedKernelSIR(n_components=1, gamma=1.0, random_state=0).fit(X, y)
    assert sir.basis_.shape[0] == low
