import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from sparsekernel.kernels import Kernel, plan_block_rows, resolve_gamma

KERNEL_ARGS = {
    "rbf": dict(gamma=0.3),
    "laplacian": dict(gamma=0.3),
    "polynomial": dict(gamma=0.3, degree=3, coef0=1.0),
    "linear": {},
    "sigmoid": dict(gamma=0.1, coef0=0.5),
}


def _data(rng, n=40, m=7, d=5):
    return rng.normal(size=(n, d)), rng.normal(size=(m, d))


@pytest.mark.parametrize("name", list(KERNEL_ARGS))
@pytest.mark.parametrize("fmt", ["dense", "csr_x", "csr_both"])
def test_kernel_matches_sklearn_pairwise(rng, name, fmt):
    X, Z = _data(rng)
    X[X < -0.5] = 0.0  # make the sparse formats genuinely sparse
    ref = pairwise_kernels(X, Z, metric=name, **KERNEL_ARGS[name])
    Xin = sp.csr_matrix(X) if fmt != "dense" else X
    Zin = sp.csr_matrix(Z) if fmt == "csr_both" else Z
    kw = KERNEL_ARGS[name]
    K = Kernel(name, gamma=kw.get("gamma", 1.0), degree=kw.get("degree", 3),
               coef0=kw.get("coef0", 0.0))(Xin, Zin)
    np.testing.assert_allclose(K, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(KERNEL_ARGS))
def test_kernel_float32_preserved_and_close(rng, name):
    X, Z = _data(rng)
    kw = KERNEL_ARGS[name]
    kern = Kernel(name, gamma=kw.get("gamma", 1.0), degree=kw.get("degree", 3),
                  coef0=kw.get("coef0", 0.0))
    K32 = kern(X.astype(np.float32), Z.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, kern(X, Z), rtol=2e-4, atol=2e-5)
    # Mixed precision computes in float64 rather than silently losing precision.
    assert kern(X.astype(np.float32), Z).dtype == np.float64


@pytest.mark.parametrize("name", list(KERNEL_ARGS))
def test_tiny_memory_budget_blocks_equal_one_block(rng, name):
    X, Z = _data(rng, n=53)
    kw = KERNEL_ARGS[name]
    make = lambda budget: Kernel(name, gamma=kw.get("gamma", 1.0),  # noqa: E731
                                 degree=kw.get("degree", 3), coef0=kw.get("coef0", 0.0),
                                 memory_budget=budget)
    tiny, big = make(64), make(2**30)
    assert tiny.block_rows(X, Z) == 1
    assert big.block_rows(X, Z) == X.shape[0]
    assert sum(1 for _ in tiny.blocks(X, Z)) == X.shape[0]
    # Same values up to BLAS summation order (one row per call vs one GEMM).
    np.testing.assert_allclose(tiny(X, Z), big(X, Z), rtol=1e-13, atol=1e-15)
    coef = rng.normal(size=(Z.shape[0], 3))
    np.testing.assert_allclose(tiny.apply(X, Z, coef), big(X, Z) @ coef, rtol=1e-12)


def test_plan_block_rows_respects_budget():
    from sparsekernel.kernels import CACHE_BLOCK_BYTES

    per_row = 8 * (2 * 1000 + 20 + 1)
    rows = plan_block_rows(10**6, 1000, 20, 8, memory_budget=2 * 2**20, per_pair=2.0)
    assert rows * per_row <= 2 * 2**20 < (rows + 1) * per_row  # budget-bound
    rows = plan_block_rows(10**6, 1000, 20, 8, memory_budget=2**30, per_pair=2.0)
    assert rows == CACHE_BLOCK_BYTES // (8 * 1000)  # cache-bound under a large budget
    assert plan_block_rows(10, 1000, 20, 8, memory_budget=2**40) == 10
    assert plan_block_rows(10, 1000, 20, 8, memory_budget=1) == 1


def test_per_centre_rbf_widths(rng):
    X, Z = _data(rng)
    gammas = np.linspace(0.1, 2.0, Z.shape[0])
    K = Kernel("rbf", gamma=gammas)(X, Z)
    for j, g in enumerate(gammas):
        np.testing.assert_allclose(K[:, j], pairwise_kernels(X, Z[j:j + 1], "rbf", gamma=g)[:, 0])
    with pytest.raises(ValueError, match="3 entries but Z has 7 rows"):
        Kernel("rbf", gamma=gammas[:3])(X, Z)
    with pytest.raises(ValueError, match="only supported for 'rbf'"):
        Kernel("laplacian", gamma=gammas)


@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_matches_sklearn_svc(rng, sparse):
    X = rng.normal(scale=3.0, size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    Xin = sp.csr_matrix(X) if sparse else X
    assert resolve_gamma("scale", Xin) == pytest.approx(SVC(gamma="scale").fit(Xin, y)._gamma)
    assert resolve_gamma("auto", Xin) == pytest.approx(0.25)


def test_resolve_gamma_rejects_bad_values():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="-1"):
        resolve_gamma(-1.0, X)
    with pytest.raises(ValueError, match="'wide'"):
        resolve_gamma("wide", X)
    assert resolve_gamma("scale", X) == 1.0  # zero variance falls back as in scikit-learn


def test_unknown_kernel_name_is_named_in_error():
    with pytest.raises(ValueError, match="'cosine'.*'rbf'"):
        Kernel("cosine")


@pytest.mark.parametrize("per_centre", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_rbf_gradient_wrt_basis_matches_finite_differences(rng, per_centre, sparse):
    X, Z = _data(rng, n=30, m=4, d=3)
    gamma = np.array([0.2, 0.5, 0.9, 0.4]) if per_centre else 0.4
    G = rng.normal(size=(Z.shape[0], X.shape[0]))
    kern = Kernel("rbf", gamma=gamma, memory_budget=512)  # several blocks
    Xin = sp.csr_matrix(X) if sparse else X

    def loss(Zv):
        # gamma is per centre, i.e. per column of K(X, Z).
        return float(np.sum(G.T * Kernel("rbf", gamma=gamma)(X, Zv)))

    grad = kern.gradient_basis(Z, Xin, G)
    fd = np.zeros_like(Z)
    h = 1e-6
    for idx in np.ndindex(*Z.shape):
        Zp, Zm = Z.copy(), Z.copy()
        Zp[idx] += h
        Zm[idx] -= h
        fd[idx] = (loss(Zp) - loss(Zm)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_gradient_basis_only_for_rbf(rng):
    X, Z = _data(rng)
    with pytest.raises(NotImplementedError, match="'polynomial'"):
        Kernel("polynomial").gradient_basis(Z, X, np.ones((7, 40)))


def test_overflowing_inputs_give_a_clear_error_naming_the_cause():
    """Features near 1e160 overflow the squared distances: say so, not 'eigenvalues did not
    converge' or an all-NaN decision."""
    import warnings

    from sparsekernel import LowRankSVC, ReducedSVC

    X = np.random.RandomState(0).rand(60, 3) * 1e160
    y = np.arange(60) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"gamma=.scale.*overflows.*e\+159.*Standardize"):
            ReducedSVC(n_basis=10).fit(X, y)
        with pytest.raises(ValueError,
                           match=r"'rbf' kernel \(gamma=1.0\).*non-finite.*Standardize"):
            LowRankSVC(gamma=1.0, n_basis=10).fit(X, y)
        with pytest.raises(ValueError, match="non-finite"):
            Kernel("rbf", gamma=1.0)(np.array([[1e200]]), np.array([[1e200]]))


def test_blocks_are_balanced_over_the_threads_and_never_larger_than_planned():
    from sparsekernel.kernels._kernel import _balanced

    for n, planned in [(3498, 3022), (43500, 3022), (7494, 1000), (600, 600)]:
        rows = _balanced(n, planned, 2)
        n_blocks = -(-n // rows)
        assert rows <= planned and n_blocks % 2 == 0, (n, planned, rows)
        assert n - (n_blocks - 1) * rows >= rows - n_blocks  # the last block is not a stub
    assert _balanced(300, 300, 2) == 300  # too small to split
    assert _balanced(10000, 5000, 1) == 5000


def test_sparse_landmarks_made_dense_only_when_small(rng):
    """Sparse centres (k-means on sparse data) are used dense when they fit an eighth of the
    budget; the kernel is the same either way."""
    from sparsekernel.kernels._functions import dense_landmarks

    X = sp.random(300, 40, density=0.1, format="csr", random_state=0)
    Z = sp.random(20, 40, density=0.5, format="csr", random_state=1)
    assert isinstance(dense_landmarks(Z), np.ndarray)
    assert sp.issparse(dense_landmarks(Z, memory_budget=8 * 20 * 40 * 8 - 1))
    for budget in (2**30, 8 * 20 * 40 * 8 - 1):
        K = Kernel("rbf", gamma=0.3, memory_budget=budget)(X, Z)
        np.testing.assert_allclose(K, pairwise_kernels(X, Z, metric="rbf", gamma=0.3),
                                   rtol=1e-12, atol=1e-14)


def test_float32_rbf_from_float64_keeps_the_distances_in_float64(rng):
    """dtype=float32 on float64 data: only the exponential is float32. Points far from the
    origin and close to each other make float32 squared distances cancel to noise; the
    mixed form stays within float32 rounding of the float64 kernel."""
    X = 1000.0 + 0.1 * rng.normal(size=(60, 4))
    Z = X[::6] + 0.05 * rng.normal(size=(10, 4))
    kern = Kernel("rbf", gamma=2.0)
    ref = kern(X, Z)
    assert ref.min() < 0.5 < ref.max()  # the kernel is not flat on these points
    mixed = np.empty(ref.shape, dtype=np.float32)
    kern.map_blocks(X, Z, lambda rows, K: None, out=mixed)
    np.testing.assert_allclose(mixed, ref, rtol=2e-6, atol=1e-7)
    single = kern(X.astype(np.float32), Z.astype(np.float32))
    assert np.abs(single - ref).max() > 1e-2  # what the float32 expansion would give
    coef = rng.normal(size=(10, 2))
    applied = kern.apply(X, Z, coef, dtype=np.float32)
    assert applied.dtype == np.float64
    np.testing.assert_allclose(applied, ref @ coef, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["polynomial", "linear", "sigmoid", "laplacian"])
def test_float32_blocks_of_other_kernels_are_rounded_float64_ones(rng, name):
    X, Z = _data(rng)
    kern = Kernel(name, **KERNEL_ARGS[name])
    K = kern.apply(X, Z, np.eye(Z.shape[0]), dtype=np.float32)
    np.testing.assert_allclose(K, kern(X, Z).astype(np.float32), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(KERNEL_ARGS))
@pytest.mark.parametrize("fmt", ["dense", "csr", "float32"])
@pytest.mark.parametrize("budget", [None, 2000])
def test_gram_of_x_with_itself_is_exactly_symmetric_and_the_full_product(rng, name, fmt,
                                                                            budget):
    """K(X, X) (Z the same object) is computed on and below the diagonal and mirrored:
    scikit-learn's values, exactly symmetric, for one block or many (a tiny budget)."""
    X = rng.normal(size=(600, 6))
    X[X < -0.8] = 0.0
    ref = pairwise_kernels(X, metric=name, **KERNEL_ARGS[name])
    Xin = {"dense": X, "csr": sp.csr_matrix(X), "float32": X.astype(np.float32)}[fmt]
    kw = KERNEL_ARGS[name]
    kern = Kernel(name, gamma=kw.get("gamma", 1.0), degree=kw.get("degree", 3),
                  coef0=kw.get("coef0", 0.0), memory_budget=budget)
    K = kern(Xin, Xin)
    assert K.dtype == (np.float32 if fmt == "float32" else np.float64)
    np.testing.assert_array_equal(K, K.T)
    tol = dict(rtol=1e-5, atol=1e-5) if fmt == "float32" else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(K, ref, **tol)
    if name in ("rbf", "laplacian"):  # a point's distance to itself is exactly 0
        np.testing.assert_array_equal(np.diagonal(K), 1.0)


def test_gram_with_per_centre_widths_has_a_unit_diagonal(rng):
    """K(Z, Z) with one width per centre (not the mirrored Gram path): its diagonal is
    exactly 1 too, whatever the rounding of the distance expansion."""
    Z = rng.normal(size=(200, 5)) * 30.0  # large norms: the expansion cancels in rounding
    K = Kernel("rbf", gamma=rng.uniform(0.001, 0.01, 200))(Z, Z)
    np.testing.assert_array_equal(np.diagonal(K), 1.0)


def test_gram_of_overflowing_inputs_names_the_cause():
    X = np.full((5, 2), 1e200)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="non-finite"):
        Kernel("polynomial", gamma=1.0, degree=3)(X, X)


@pytest.mark.parametrize("n", [300, 1200, 5000])
def test_blocks_and_their_rounding_do_not_depend_on_the_threads_in_force(rng, monkeypatch, n):
    """Blocks are planned from the CPUs, not from the plan in force, so every row of
    K(X, Z) @ coef (whose last bits depend on the block a BLAS product is given) comes out
    the same on one thread or on several: a greedy step downstream (reduced-set selection)
    then makes the same choices."""
    from sparsekernel.kernels import _kernel

    X, Z = rng.normal(size=(n, 12)), rng.normal(size=(180, 12))
    coef, coefs = rng.normal(size=180), rng.normal(size=(180, 3))
    kern = Kernel("rbf", gamma=0.05, memory_budget=2**20)  # several blocks
    monkeypatch.setattr(_kernel, "max_threads", lambda: 4)
    out = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(_kernel, "planned_threads", lambda t=threads: t)
        out.append((kern.apply(X, Z, coef), kern.apply(X, Z, coefs), kern(X, Z), kern(X, X)))
    for got in out[1:]:
        for a, b in zip(got, out[0], strict=True):
            np.testing.assert_array_equal(a, b)


def test_feature_scale_warning_past_the_ratio(rng):
    import warnings

    from sparsekernel import FeatureScaleWarning
    from sparsekernel.kernels import FEATURE_SCALE_RATIO

    X = rng.normal(size=(500, 4))
    X /= X.std(axis=0)  # unit standard deviations
    ok = X * np.array([1.0, 1.0, 1.0, 0.9 * FEATURE_SCALE_RATIO])
    wide = X * np.array([1.0, 1.0, 1.0, 1.1 * FEATURE_SCALE_RATIO])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        resolve_gamma("scale", ok)
        resolve_gamma("auto", wide * 100)  # only 'scale' warns: it claims to adapt
        resolve_gamma(0.1, wide * 100)
        constant = np.c_[ok, np.full(500, 7.0)]  # a constant column has no scale to compare
        resolve_gamma("scale", constant)
    for data in (wide, sp.csr_matrix(wide)):  # (dense columns: the scales are the stds)
        with pytest.warns(FeatureScaleWarning, match=r"more than 10\^2 \(from 1 to 330;"
                                                     r".*StandardScaler"):
            assert resolve_gamma("scale", data) == pytest.approx(1 / (4 * wide.var()))


def _pixels(rng, n=3000, side=12):
    """Fashion-MNIST-like images: pixels in [0, 1], lit inside a centred blob of random
    size with a faint rim, so the border pixels are almost always 0 (a corner is lit once,
    faintly: a standard deviation of 2e-4) while the centre's are about 0.3."""
    grid = np.hypot(*np.meshgrid(np.arange(side) - side / 2 + 0.5,
                                 np.arange(side) - side / 2 + 0.5)).ravel()
    radius = rng.uniform(2.0, side / 2 + 0.6, size=(n, 1))
    lit = grid < radius
    X = np.where(lit, rng.uniform(0.2, 1.0, size=(n, grid.size)), 0.0)
    faint = ~lit & (grid < radius + 1.0) & (rng.random((n, grid.size)) < 0.05)
    X = np.where(faint, rng.uniform(0.0, 0.05, size=X.shape), X)
    X[rng.integers(n), 0] = 0.01
    return X


def test_feature_scale_warning_ignores_near_empty_pixels_and_flags_units(rng):
    """Pixels in [0, 1] whose border columns are almost always 0 (standard deviations over
    1000 times apart, which standardizing would blow up): no warning. One column in units
    1000 times the others', dense or in sparse rows: a warning."""
    import warnings

    from sparsekernel import FeatureScaleWarning
    from sparsekernel.kernels import FEATURE_SCALE_RATIO
    from sparsekernel.kernels._kernel import _column_scales

    X = _pixels(rng)
    stds = X.std(axis=0)
    assert stds[stds > 0].max() / stds[stds > 0].min() > 1000  # (a rule on the stds fires)
    assert _column_scales(X).max() < FEATURE_SCALE_RATIO / 4 * _column_scales(X)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        resolve_gamma("scale", X)
        resolve_gamma("scale", sp.csr_matrix(X))
    np.testing.assert_allclose(_column_scales(sp.csr_matrix(X)), _column_scales(X),
                               rtol=1e-12)
    units = X.copy()
    units[:, 78] *= 1000.0  # a centre pixel in other units
    for data in (units, sp.csr_matrix(units)):
        with pytest.warns(FeatureScaleWarning, match=r"scales differ by a factor of more "):
            resolve_gamma("scale", data)
    dense = rng.normal(size=(500, 4)) * np.array([1.0, 1.0, 1.0, 1000.0])
    with pytest.warns(FeatureScaleWarning):
        resolve_gamma("scale", dense)


@pytest.mark.slow
def test_fashion_mnist_pixels_raise_no_feature_scale_warning():
    """The real pixels (all 60,000 training images, scaled to [0, 1])."""
    import gzip
    import warnings

    from sparsekernel import FeatureScaleWarning
    from sparsekernel.datasets import find_shared_data

    folder = find_shared_data("fashion_mnist")
    if folder is None:
        pytest.skip("shared data folder 'fashion_mnist' not found (set SPARSEKERNEL_DATA)")
    with gzip.open(folder / "train-images-idx3-ubyte.gz") as f:
        X = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784) / 255.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        resolve_gamma("scale", X)


def test_feature_scale_warning_ignores_rare_binary_columns(rng):
    """A 0/1 column set in 1 row of 2,000 has standard deviation ~0.022: 22 times below a
    column of 0.5, not a scale the kernel cannot see."""
    import warnings

    from sparsekernel import FeatureScaleWarning
    from sparsekernel.kernels._kernel import _column_stds

    X = (rng.random((2000, 30)) < 0.5).astype(float)
    X[:, 0] = 0.0
    X[17, 0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        resolve_gamma("scale", sp.csr_matrix(X))
    np.testing.assert_allclose(_column_stds(sp.csr_matrix(X)), X.std(axis=0), rtol=1e-12)
