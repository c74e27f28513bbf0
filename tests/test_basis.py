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
    assert resolve_n_basis("auto", 5000) == 603  # sqrt(n) log(n): no spectrum known
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


def test_effective_dimension_known_answers():
    """d_eff = sum(lam / (lam + ridge)): each eigenvalue equal to the ridge counts one half,
    a zero eigenvalue nothing; negative round-off counts as zero."""
    from sparsekernel.basis._base import effective_dimension

    assert effective_dimension([1.0, 1.0, 0.0], 1.0) == 1.0
    assert effective_dimension([3.0, -1e-12], 1.0) == 0.75
    lam = np.random.RandomState(0).exponential(size=50)
    K = np.diag(lam)
    assert np.isclose(effective_dimension(lam, 0.3),
                      np.trace(K @ np.linalg.inv(K + 0.3 * np.eye(50))))


def test_auto_n_basis_follows_the_effective_dimension():
    """'auto' sizes the basis for the fit's effective dimension: a kernel of low rank needs
    AUTO_MIN whatever C, a flat spectrum the cost cap, a smooth one something between that
    grows with C (the ridge 1 / C falls) and with n."""
    from sparsekernel.basis import auto_n_basis
    from sparsekernel.basis._base import AUTO_MIN, auto_cap
    from sparsekernel.kernels import Kernel

    rng = np.random.RandomState(0)
    n = 4000
    low_rank = rng.standard_normal((n, 3))  # a linear kernel of rank 3: d_eff <= 3
    assert auto_n_basis(low_rank, Kernel("linear"), 0, C=1e6) == AUTO_MIN
    rough = rng.standard_normal((n, 50))  # K ~ I: d_eff ~ n C / (C + 1), beyond the cap
    assert auto_n_basis(rough, Kernel("rbf", gamma=1.0), 0, C=1.0) == auto_cap(n, 50.0)
    smooth = rng.uniform(-1, 1, (n, 4))
    counts = [auto_n_basis(smooth, Kernel("rbf", gamma=1.0), 0, C=C) for C in (0.01, 1, 100)]
    assert AUTO_MIN <= counts[0] < counts[1] < counts[2] < auto_cap(n, 4.0)
    # a quarter of the rows: fewer directions resolved at the same C
    assert auto_n_basis(smooth[:1000], Kernel("rbf", gamma=1.0), 0, C=100) < counts[2]
    assert auto_n_basis(smooth[:80], Kernel("rbf", gamma=1.0), 0) == 80  # n <= AUTO_MIN


def test_auto_n_basis_extrapolates_from_the_sample():
    """On K = I the sample's effective dimension s / (1 + s/(nC)) grows with s, and the
    power law through its two sizes extrapolates it to about the full K's n C / (C + 1),
    never below (the curve saturates, the law does not); with a large C, to the cap."""
    import scipy.sparse as sp

    from sparsekernel.basis import auto_n_basis
    from sparsekernel.basis._base import AUTO_OVERSAMPLE, auto_cap
    from sparsekernel.kernels import Kernel

    n = 1500
    X = sp.identity(n, format="csr") * 10.0  # distinct far-apart rows: K(X, X) = I
    C = 0.1  # d_eff of the full K = n C / (C + 1) = 136.4
    expected = int(np.ceil(AUTO_OVERSAMPLE * n * C / (C + 1)))
    assert expected <= auto_n_basis(X, Kernel("rbf", gamma=1.0), 0, C=C) <= 1.2 * expected
    assert auto_n_basis(X, Kernel("rbf", gamma=1.0), 0, C=1e3) == min(n, auto_cap(n, 1.0))


def test_auto_fallback_and_cap():
    """Without a spectrum 'auto' takes sqrt(n) log(n) within [AUTO_MIN, cap]; the cap rises
    as sqrt(AUTO_COST n nnz) with the nonzeros of a row, not below AUTO_CAP, never past n."""
    from sparsekernel.basis._base import AUTO_CAP, auto_cap, auto_fallback

    assert auto_fallback(50) == 50 and auto_fallback(1000) == 219
    assert auto_fallback(10**6) == AUTO_CAP
    assert auto_cap(60000, 390.0) == 9675 and auto_cap(32561, 13.9) == AUTO_CAP
    assert auto_cap(500, 390.0) == 500


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 2 iterations
def test_estimators_size_auto_basis_for_their_own_C():
    """Every estimator passes its own C to 'auto' (classifier or regressor alike: the same
    count at the same C); a transformer, which has none, counts at C = 1."""
    from sparsekernel import ReducedKernelSIR, ReducedSVC, ReducedSVR
    from sparsekernel.basis import auto_n_basis
    from sparsekernel.basis._base import default_kernel

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (3000, 4))
    y = (np.sin(3 * X[:, 0]) + X[:, 1] ** 2 > 0.5).astype(int)
    kw = {"gamma": 1.0, "max_iter": 2, "random_state": 0}
    m = {C: ReducedSVC(C=C, **kw).fit(X, y).basis_.shape[0] for C in (0.1, 10.0)}
    assert m[0.1] < m[10.0]
    assert ReducedSVR(C=10.0, **kw).fit(X, y.astype(float)).basis_.shape[0] == m[10.0]
    sir = ReducedKernelSIR(n_components=1, gamma=1.0, random_state=0).fit(X, y)
    kern = default_kernel(X)
    kern.gamma = 1.0
    expected = auto_n_basis(X, kern, np.random.RandomState(0), C=1.0)
    assert sir.basis_.shape[0] == expected
