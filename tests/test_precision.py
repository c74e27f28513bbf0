"""The precision policy of the Nystrom machines (sparsekernel.utils._numerics): landmarks are
dropped only when redundant in float64, float32 features are the float64 ones rounded, and
float32 and float64 input give the same model."""

import numpy as np
import pytest

from sparsekernel import (
    KernelLogisticRegression,
    LowRankSVC,
    NystromFeatures,
    ReducedKernelPCA,
)
from sparsekernel.datasets import make_checkerboard
from sparsekernel.features import nystrom_map
from sparsekernel.kernels import Kernel
from sparsekernel.utils import eigenvalue_floor, feature_dtype

GAMMA = 2.0  # on the 4 x 4 board in [0, 4)^2: K(Z, Z) of 300 landmarks is far below rank


def _board(n, seed):
    X, y = make_checkerboard(n, noise=0.05, cells=4, random_state=seed)
    return X, y


def _landmarks(seed, m=300):
    return _board(m, 100 + seed)[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_map_keeps_the_landmarks_float64_resolves_whatever_the_features_precision(seed):
    """The eigen map keeps eigenvalues above 10 eps64 (float32 features included), and the
    Cholesky map the same count of landmarks (its pivots follow the eigenvalues)."""
    Z = _landmarks(seed)
    kern = Kernel("rbf", gamma=GAMMA)
    lam = np.linalg.eigvalsh(kern(Z, Z))
    resolved = int(np.count_nonzero(lam > eigenvalue_floor(np.float64) * lam.max()))
    float32_only = int(np.count_nonzero(lam > eigenvalue_floor(np.float32) * lam.max()))
    assert float32_only < resolved - 50  # the old float32 floor dropped many of them
    eig = nystrom_map(kern, Z, method="eigh")
    chol = nystrom_map(kern, Z, method="cholesky")
    assert eig.n_components == resolved
    assert abs(chol.n_components - resolved) <= 0.05 * resolved


@pytest.mark.parametrize("seed", [0, 1])
def test_more_rows_never_drop_landmarks(seed, monkeypatch):
    """The same basis fitted on more rows of the same distribution keeps the same landmarks,
    also where the larger fit stores float32 features (FLOAT32_WORK lowered so that it
    does, as 10^6 rows would)."""
    Z = _landmarks(seed, 200)
    kept = {}
    for n in (500, 2000, 8000):
        if n == 8000:
            monkeypatch.setattr("sparsekernel.utils._numerics.FLOAT32_WORK", 1e6)
            assert feature_dtype(np.float64, n, 200) == np.float32
        X, y = _board(n, seed)
        est = LowRankSVC(gamma=GAMMA, C=100.0, basis=Z, random_state=0).fit(X, y)
        kept[n] = {tuple(z) for z in est.basis_}
    assert kept[500] == kept[2000] == kept[8000]
    assert len(kept[500]) >= 0.9 * len(Z)


def test_float32_features_are_the_float64_ones_rounded():
    """Stored in float32, the features equal the float64 features to float32 rounding, the
    columns of small eigenvalues too (a float32 product would bury them in the rounding of
    K(x, Z), amplified by lambda^(-1/2))."""
    Z = _landmarks(0)
    X, _ = _board(2000, 5)
    for method in ("cholesky", "eigh"):
        fmap = nystrom_map(Kernel("rbf", gamma=GAMMA), Z, method=method)
        F64 = fmap.transform(X)
        fmap.dtype = np.dtype(np.float32)
        F32 = fmap.transform(X)
        assert F32.dtype == np.float32 and F64.dtype == np.float64
        c = fmap.float32_columns()
        assert 0 < c < fmap.n_components  # both kinds of columns are exercised
        scale = np.abs(F64).max()  # (1 at most: ||F(x)||^2 <= k(x, x) = 1)
        err = np.abs(F32 - F64).max(axis=0) / scale
        assert err[c:].max() < 1e-6  # float64 products, rounded once
        # float32 products on the leading columns: eps32 amplified by lambda^(-1/2) at most
        eps32 = np.finfo(np.float32).eps
        bound = np.sqrt(fmap.Z.shape[0]) * eps32 / np.sqrt(eigenvalue_floor(np.float32))
        assert err[:c].max() < bound
        # The float32 product on every column is what the policy avoids: far worse.
        M32 = fmap.normalization.astype(np.float32)
        naive = (Kernel("rbf", gamma=GAMMA)(X.astype(np.float32), fmap.Z.astype(np.float32))
                 @ M32)
        assert (np.abs(naive - F64).max(axis=0) / scale)[c:].max() > 100 * err[c:].max()


def _same_model(a, b, X):
    np.testing.assert_array_equal(a.basis_indices_, b.basis_indices_)
    np.testing.assert_allclose(a.basis_, b.basis_, rtol=1e-6, atol=1e-6)
    da, db = a.decision_function(X), b.decision_function(X)
    np.testing.assert_allclose(db, da, atol=1e-3 * np.abs(da).max())
    assert np.mean(a.predict(X) == b.predict(X)) >= 0.999


@pytest.mark.parametrize("Estimator", [LowRankSVC, KernelLogisticRegression])
def test_float32_and_float64_input_give_the_same_model(Estimator):
    """The same landmarks drawn, the same ones kept, and the same model to float32
    rounding: float32 rows against float64 rows of the same values (the problem itself is
    ill-conditioned in the small directions, so rows perturbed by float32 rounding move
    those by more), and against the unrounded rows to the same predictions."""
    X, y = _board(3000, 7)
    X32 = X.astype(np.float32)
    params = dict(gamma=GAMMA, C=10.0, n_basis=250, basis="random", random_state=0, tol=1e-8)
    a = Estimator(**params).fit(X32.astype(np.float64), y)
    b = Estimator(**params).fit(X32, y)
    assert a.normalization_.dtype == b.normalization_.dtype == np.float64
    assert len(b.basis_) >= 240  # the float32 floor kept about 200 of these
    _same_model(a, b, X)
    c = Estimator(**params).fit(X, y)
    np.testing.assert_array_equal(c.basis_indices_, b.basis_indices_)
    assert np.mean(c.predict(X) == b.predict(X)) >= 0.995


def test_float32_features_reach_a_tight_tol():
    """Newton on float32 features refines with float64 products where its gradient stalls
    at their rounding: tol=1e-8 is reached in a few iterations (float32 products alone
    stalled above it and ran to max_iter), at the float64 features' solution."""
    X, y = _board(3000, 7)
    X32 = X.astype(np.float32)
    params = dict(gamma=GAMMA, C=10.0, n_basis=60, basis="random", random_state=0, tol=1e-8)
    b = LowRankSVC(**params).fit(X32, y)
    assert np.max(b.n_iter_) < 50
    a = LowRankSVC(**params).fit(X32.astype(np.float64), y)
    da = a.decision_function(X)
    np.testing.assert_allclose(b.decision_function(X), da, atol=1e-4 * np.abs(da).max())


def test_float32_and_float64_input_give_the_same_transformers():
    """NystromFeatures: the same number of components and the same kernel approximation
    F F^T (its columns of tiny eigenvalues rotate with rounding of the landmarks, the
    approximation does not); ReducedKernelPCA: the same leading components."""
    X, _ = _board(2000, 8)
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    params = dict(gamma=GAMMA, n_basis=250, basis="random", random_state=0)
    a, b = NystromFeatures(**params).fit(X64), NystromFeatures(**params).fit(X32)
    assert a.n_components_ == b.n_components_ >= 240
    Fa, Fb = a.transform(X64[:500]), b.transform(X32[:500])
    assert Fb.dtype == np.float32
    np.testing.assert_allclose(Fb @ Fb.T, Fa @ Fa.T, atol=1e-5)
    a = ReducedKernelPCA(n_components=5, **params).fit(X64)
    b = ReducedKernelPCA(n_components=5, **params).fit(X32)
    np.testing.assert_allclose(b.explained_variance_, a.explained_variance_, rtol=1e-4)
    Ta, Tb = a.transform(X64), b.transform(X32)
    assert Tb.dtype == np.float32
    np.testing.assert_allclose(np.abs(Tb), np.abs(Ta), atol=1e-4 * np.abs(Ta).max())


def test_auto_sizes_a_float32_fit_by_the_landmarks_float32_resolves(monkeypatch):
    """n_basis='auto' on a fit whose features are float32 (FLOAT32_WORK lowered so that a
    small one is) keeps the landmarks whose pivots float32 resolves; the same landmarks
    passed explicitly are all kept (float64's floor), and so are 'auto''s below
    FLOAT32_WORK."""
    X, y = _board(3000, 9)
    params = dict(gamma=GAMMA, C=100.0, random_state=0)
    full = LowRankSVC(n_basis="auto", **params).fit(X, y)
    drawn = len(full.basis_)
    monkeypatch.setattr("sparsekernel.utils._numerics.FLOAT32_WORK", 1e6)
    assert feature_dtype(np.float64, len(X), drawn) == np.float32
    auto = LowRankSVC(n_basis="auto", **params).fit(X, y)
    kern = Kernel("rbf", gamma=GAMMA)
    lam = np.linalg.eigvalsh(kern(full.basis_, full.basis_))
    rank32 = int(np.count_nonzero(lam > eigenvalue_floor(np.float32) * lam.max()))
    assert len(auto.basis_) < drawn and abs(len(auto.basis_) - rank32) <= 0.1 * rank32
    explicit = LowRankSVC(n_basis=drawn, **params).fit(X, y)
    assert len(explicit.basis_) == drawn
