"""NystromFeatures: exactness with Z = X, eigenvalue floor, duplicates, blocks, dtypes."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from sparsekernel import NystromFeatures
from sparsekernel.kernels import polynomial_kernel, rbf_kernel


def _data(n=50, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_nystrom_with_all_points_reproduces_the_kernel():
    X = _data()
    F = NystromFeatures(gamma=0.3, basis=X).fit(X).transform(X)
    np.testing.assert_allclose(F @ F.T, rbf_kernel(X, X, 0.3), atol=1e-8)


def test_nystrom_rank_deficient_kernel_drops_null_directions():
    # A degree-2 polynomial kernel in 3-D has rank 10: the 40 landmarks give 10 features,
    # and the Nystrom map is still exact.
    X = _data(40)
    est = NystromFeatures(kernel="polynomial", gamma=1.0, degree=2, coef0=1.0, basis=X).fit(X)
    assert est.n_components_ == 10
    F = est.transform(X)
    np.testing.assert_allclose(F @ F.T, polynomial_kernel(X, X, 1.0, 2, 1.0), atol=1e-8)


def test_nystrom_duplicate_landmarks_are_harmless():
    X = _data(30)
    Z = np.vstack([X, X[:10], X[:10]])
    est = NystromFeatures(gamma=0.5, basis=Z).fit(X)
    assert est.n_components_ == 30 and np.all(np.isfinite(est.normalization_))
    F = est.transform(X)
    np.testing.assert_allclose(F @ F.T, rbf_kernel(X, X, 0.5), atol=1e-8)


def test_nystrom_approximation_matches_the_formula_on_new_points():
    X, Y = _data(60, seed=1), _data(20, seed=2)
    est = NystromFeatures(gamma=0.4, n_basis=15, basis="random", random_state=0).fit(X)
    Z = est.basis_
    expected = rbf_kernel(Y, Z, 0.4) @ np.linalg.pinv(rbf_kernel(Z, Z, 0.4)) @ rbf_kernel(
        Z, Y, 0.4)
    F = est.transform(Y)
    np.testing.assert_allclose(F @ F.T, expected, atol=1e-8)
    assert np.all(np.diff(est.eigenvalues_) <= 0)


def test_nystrom_blocks_sparse_and_float32_agree():
    X = _data(300, 4, seed=3)
    ref = NystromFeatures(gamma=0.5, n_basis=25, random_state=0).fit(X)
    # The plan on 25 landmarks takes ~33 KiB: the rest leaves kernel blocks of a few rows.
    tiny = NystromFeatures(gamma=0.5, n_basis=25, random_state=0, memory_budget=40_000).fit(X)
    np.testing.assert_allclose(tiny.transform(X), ref.transform(X), atol=1e-12)
    np.testing.assert_allclose(ref.transform(sp.csr_matrix(X)), ref.transform(X), atol=1e-10)
    F32 = ref.transform(X.astype(np.float32))
    assert F32.dtype == np.float32
    np.testing.assert_allclose(F32, ref.transform(X), atol=1e-3)


def test_nystrom_kmeans_landmarks_beat_random_on_clustered_data():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 0.3, size=(200, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    K = rbf_kernel(X, X, 1.0)
    err = {}
    for basis in ("kmeans", "random"):
        F = NystromFeatures(gamma=1.0, n_basis=12, basis=basis, random_state=0).fit_transform(X)
        err[basis] = np.linalg.norm(F @ F.T - K)
    assert err["kmeans"] < err["random"]


@pytest.mark.parametrize("params, match", [({"rcond": -1.0}, "rcond"),
                                           ({"basis": "nope"}, "basis"),
                                           ({"n_basis": 500}, "n_basis")])
def test_nystrom_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        NystromFeatures(**params).fit(_data())


# ---------------------------------------------------------------- Cholesky whitening
def _maps(X, Z, gamma=0.5, kernel="rbf", **kw):
    from sparsekernel.features import nystrom_map
    from sparsekernel.kernels import Kernel

    kern = Kernel(kernel, gamma=gamma, **kw)
    return (nystrom_map(kern, Z, method="cholesky"), nystrom_map(kern, Z, method="eigh"))


def test_cholesky_map_is_the_eigen_map_rotated():
    X = _data(80, seed=5)
    chol, eig = _maps(X, X[:25])
    assert chol.triangular and chol.eigenvalues is None
    assert sorted(chol.selected) == list(range(25))  # well conditioned: every landmark kept
    np.testing.assert_array_equal(chol.Z, X[:25][chol.selected])
    Fc, Fe = chol.transform(X), eig.transform(X)
    # Same Gram (the Nystrom approximation) and Fc = Fe R with R orthogonal.
    np.testing.assert_allclose(Fc @ Fc.T, Fe @ Fe.T, atol=1e-9)
    R = np.linalg.lstsq(Fe, Fc, rcond=None)[0]
    np.testing.assert_allclose(R.T @ R, np.eye(25), atol=1e-6)
    # The triangular product in place gives the same features as a dense product.
    np.testing.assert_allclose(rbf_kernel(X, chol.Z, 0.5) @ chol.normalization, Fc,
                               atol=1e-10)
    np.testing.assert_allclose(np.tril(chol.normalization, -1), 0.0)


def test_cholesky_map_with_all_points_reproduces_the_kernel_in_blocks():
    from sparsekernel.features import nystrom_map
    from sparsekernel.kernels import Kernel

    X = _data(60, seed=6)
    fmap = nystrom_map(Kernel("rbf", gamma=0.3, memory_budget=3000), X, method="cholesky")
    F = fmap.transform(X)  # tiny budget: many blocks, each multiplied in place
    np.testing.assert_allclose(F @ F.T, rbf_kernel(X, X, 0.3), atol=1e-8)
    np.testing.assert_allclose(fmap.transform(sp.csr_matrix(X)), F, atol=1e-10)
    F32 = fmap.transform(X.astype(np.float32))
    assert F32.dtype == np.float32


def test_cholesky_map_keeps_only_independent_landmarks():
    # Duplicates are dropped, and a degree-2 polynomial kernel in 3-D (rank 10) keeps
    # exactly 10 of 40 landmarks; both maps stay exact on the data.
    X = _data(30, seed=7)
    chol, eig = _maps(X, np.vstack([X, X[:10], X[:10]]))
    assert len(chol.selected) == 30 == eig.n_components
    F = chol.transform(X)
    np.testing.assert_allclose(F @ F.T, rbf_kernel(X, X, 0.5), atol=1e-8)
    X = _data(40)
    chol, eig = _maps(X, X, gamma=1.0, kernel="polynomial", degree=2, coef0=1.0)
    assert chol.n_components == len(chol.selected) == eig.n_components == 10
    F = chol.transform(X)
    np.testing.assert_allclose(F @ F.T, polynomial_kernel(X, X, 1.0, 2, 1.0), atol=1e-8)


def test_cholesky_map_of_an_indefinite_kernel_is_exact_on_its_landmarks():
    X = _data(40, seed=8)
    chol, eig = _maps(X, X, gamma=2.0, kernel="sigmoid", coef0=-1.0)
    assert np.linalg.eigvalsh(eig.kernel(X, X)).min() < -1e-3  # really indefinite
    Zr = chol.Z
    F = chol.transform(Zr)
    assert np.all(np.isfinite(chol.transform(X)))
    np.testing.assert_allclose(F @ F.T, chol.kernel(Zr, Zr), atol=1e-8)


def test_nystrom_feature_names_and_pandas_output():
    """One name per output column, n_components_ of them (10 of 40 landmarks here), and
    set_output gives DataFrames with those columns, in a pipeline too."""
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    X = _data(40)
    est = NystromFeatures(kernel="polynomial", gamma=1.0, degree=2, coef0=1.0, basis=X)
    with pytest.raises(NotFittedError):
        est.get_feature_names_out()
    names = est.fit(X).get_feature_names_out()
    assert list(names) == [f"nystromfeatures{i}" for i in range(10)]
    out = est.set_output(transform="pandas").transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    np.testing.assert_array_equal(out.to_numpy(), est.set_output(transform="default")
                                  .transform(X))
    Xdf = pd.DataFrame(X, columns=["a", "b", "c"])
    pipe = make_pipeline(NystromFeatures(gamma=0.3, n_basis=15, random_state=0), Ridge())
    pipe.set_output(transform="pandas").fit(Xdf, X[:, 0])
    assert list(pipe[0].transform(Xdf).columns) == [f"nystromfeatures{i}" for i in range(15)]
    assert list(pipe[:-1].get_feature_names_out()) == list(pipe[0].get_feature_names_out())


@pytest.mark.parametrize("m", [1, 5, 256, 257, 600])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_upper_product_is_the_triangular_product_in_place(m, dtype):
    """B M for upper-triangular M, column panels right to left (one panel, several, and a
    last panel shorter than the rest)."""
    from sparsekernel.features._nystrom import upper_product

    rng = np.random.default_rng(m)
    M = np.triu(rng.standard_normal((m, m))).astype(dtype)
    B = rng.standard_normal((7, m)).astype(dtype)
    expected = B.astype(np.float64) @ M.astype(np.float64)
    out = upper_product(B, M)
    assert out is B and B.dtype == dtype
    np.testing.assert_allclose(B, expected, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 * np.sqrt(m) if dtype == np.float32 else 1e-10)
