"""ReducedKernelPCA / SIR / CCA: known answers (full KernelPCA, linear SIR, linear CCA)."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.cross_decomposition import CCA
from sklearn.datasets import make_circles
from sklearn.decomposition import PCA, KernelPCA
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

from sparsekernel import (
    ReducedFeatures,
    ReducedKernelCCA,
    ReducedKernelPCA,
    ReducedKernelSIR,
    SmoothSVC,
)
from sparsekernel.basis import BasisResult, BasisSelector, RandomBasis
from sparsekernel.decomposition._ksir import slice_labels
from sparsekernel.io import load, save
from sparsekernel.utils import MemoryBudgetError

from .conftest import read_only

_RNG = np.random.default_rng(0)
X_TRAIN, X_NEW = read_only(_RNG.normal(size=(80, 3)), _RNG.normal(size=(25, 3)))


def _assert_equal_up_to_sign(actual, desired, atol):
    signs = np.sign(np.sum(actual * desired, axis=0))
    np.testing.assert_allclose(actual * signs, desired, atol=atol)


def _linear_sir(X, labels, J, k):
    """Textbook SIR on X: Sigma_b beta = lambda Sigma_x beta, beta^T Sigma_x beta = I."""
    mu, n = X.mean(axis=0), X.shape[0]
    means = np.array([X[labels == j].mean(axis=0) for j in range(J)]) - mu
    Sb = (means.T * (np.bincount(labels, minlength=J) / n)) @ means
    vals, vecs = la.eigh(Sb, np.cov(X.T, bias=True))
    return vals[::-1][:k], vecs[:, ::-1][:, :k], mu


# ---------------------------------------------------------------- ReducedKernelPCA


@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.3}),
                                            ("poly", {"gamma": 0.5, "degree": 2,
                                                            "coef0": 1.0})])
def test_kpca_with_z_equal_x_equals_sklearn_kernel_pca(kernel, params):
    ref = KernelPCA(4, kernel=kernel, eigen_solver="dense", **params).fit(X_TRAIN)
    est = ReducedKernelPCA(4, kernel=kernel, basis=X_TRAIN, **params).fit(X_TRAIN)
    for X in (X_TRAIN, X_NEW):
        _assert_equal_up_to_sign(est.transform(X), ref.transform(X), atol=1e-6)
    np.testing.assert_allclose(est.explained_variance_, ref.eigenvalues_ / len(X_TRAIN),
                               rtol=1e-8)


def test_kpca_n_basis_none_is_sklearn_kernel_pca():
    """n_basis=None is the exact form: every training row is a basis point."""
    ref = KernelPCA(3, kernel="rbf", gamma=0.3, eigen_solver="dense").fit(X_TRAIN)
    est = ReducedKernelPCA(3, gamma=0.3, n_basis=None, basis="kmeans").fit(X_TRAIN)
    np.testing.assert_array_equal(est.basis_, X_TRAIN)
    np.testing.assert_array_equal(est.basis_indices_, np.arange(len(X_TRAIN)))
    _assert_equal_up_to_sign(est.transform(X_NEW), ref.transform(X_NEW), atol=1e-6)


@pytest.mark.parametrize("est", [ReducedKernelPCA(n_basis=None), ReducedKernelSIR(n_basis=None),
                                 ReducedKernelCCA(n_basis=None)], ids=lambda e: type(e).__name__)
def test_n_basis_none_is_refused_past_the_memory_budget(est):
    est = clone(est).set_params(memory_budget=8 * 30**2)  # n = 40 rows need 40x40 (or 80x80)
    with pytest.raises(MemoryBudgetError,
                       match=r"needs about .* KiB \(.*m x m matrices .*\) beyond its input, "
                             r"above memory_budget=7.03 KiB; n_basis=None makes every one of "
                             r"the n=40 rows a basis function"):
        est.fit(X_TRAIN[:40], _Y)


def test_kpca_random_basis_of_all_rows_is_the_full_kernel():
    ref = KernelPCA(3, kernel="rbf", gamma=0.3, eigen_solver="dense").fit(X_TRAIN)
    est = ReducedKernelPCA(3, gamma=0.3, n_basis=1.0, random_state=0).fit(X_TRAIN)
    _assert_equal_up_to_sign(est.transform(X_NEW), ref.transform(X_NEW), atol=1e-6)


def test_kpca_reduced_method_is_pca_of_reduced_kernel_features():
    """Eqs. (36)-(37): principal components of the columns of K(X, Z)."""
    feats = ReducedFeatures(gamma=0.3, n_basis=20, random_state=0).fit(X_TRAIN)
    ref = PCA(5, svd_solver="full").fit(feats.transform(X_TRAIN))
    est = ReducedKernelPCA(5, gamma=0.3, n_basis=20, method="reduced",
                           random_state=0).fit(X_TRAIN)
    _assert_equal_up_to_sign(est.transform(X_NEW), ref.transform(feats.transform(X_NEW)),
                             atol=1e-10)
    n = len(X_TRAIN)
    np.testing.assert_allclose(est.explained_variance_, ref.explained_variance_ * (n - 1) / n)
    np.testing.assert_allclose(est.explained_variance_ratio_, ref.explained_variance_ratio_)


def test_kpca_blocks_and_csr_give_the_same_answer():
    base = ReducedKernelPCA(3, gamma=0.3, n_basis=15, random_state=0)
    ref = base.fit(X_TRAIN).transform(X_NEW)
    tiny = base.set_params(memory_budget=20_000).fit(X_TRAIN)  # its plan ~10 KiB: small blocks
    _assert_equal_up_to_sign(tiny.transform(X_NEW), ref, atol=1e-12)
    csr = base.fit(sp.csr_matrix(X_TRAIN))
    _assert_equal_up_to_sign(csr.transform(sp.csr_matrix(X_NEW)), ref, atol=1e-12)


def test_kpca_whiten_gives_unit_variance_scores():
    est = ReducedKernelPCA(3, gamma=0.3, n_basis=20, whiten=True, random_state=0)
    Z = est.fit_transform(X_TRAIN)
    np.testing.assert_allclose(Z.var(axis=0), 1.0, rtol=1e-8)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-10)


def test_kpca_integer_weights_equal_repeated_rows():
    w = np.arange(len(X_TRAIN)) % 3  # 0, 1 and 2 copies
    est = ReducedKernelPCA(3, gamma=0.3, basis=X_TRAIN[:10])
    weighted = est.fit(X_TRAIN, sample_weight=w).transform(X_NEW)
    repeated = est.fit(np.repeat(X_TRAIN, w, axis=0)).transform(X_NEW)
    _assert_equal_up_to_sign(weighted, repeated, atol=1e-10)


# ---------------------------------------------------------------- ReducedKernelSIR


def _sir_data(n=300, d=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    y = X[:, 0] ** 3 + np.sin(X[:, 1]) + 0.1 * rng.normal(size=n)
    return X, y, rng


def test_ksir_linear_kernel_equals_linear_sir_regression():
    X, y, rng = _sir_data()
    labels, J = slice_labels(y, 10)
    vals, beta, mu = _linear_sir(X, labels, J, 4)
    Z = rng.normal(size=(5, 5))  # any invertible basis: SIR is affine invariant
    est = ReducedKernelSIR(4, n_slices=10, kernel="linear", basis=Z, ridge=0.0).fit(X, y)
    np.testing.assert_allclose(est.eigenvalues_, vals, rtol=1e-8)
    Xn = rng.normal(size=(30, 5))
    _assert_equal_up_to_sign(est.transform(Xn), (Xn - mu) @ beta, atol=1e-6)
    assert est.classes_ is None


def test_ksir_linear_kernel_equals_linear_sir_classes():
    X, y, _ = _sir_data()
    yc = np.digitize(y, [-1.0, 1.0])  # three classes
    vals, beta, mu = _linear_sir(X, yc, 3, 2)
    est = ReducedKernelSIR(kernel="linear", basis=np.eye(5), ridge=0.0).fit(X, yc)
    assert est.components_.shape == (2, 5)  # J - 1 directions by default
    np.testing.assert_allclose(est.eigenvalues_, vals, rtol=1e-8)
    _assert_equal_up_to_sign(est.transform(X), (X - mu) @ beta, atol=1e-6)
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])


def test_slice_labels_follow_the_toolbox():
    y = np.r_[5.0, 1.0, 3.0, 2.0, 4.0, 0.0, 6.0]
    labels, J = slice_labels(y, 3)  # sizes 3, 2, 2 (first n mod J slices one larger)
    assert J == 3
    np.testing.assert_array_equal(labels, [2, 0, 1, 0, 1, 0, 2])
    assert slice_labels(y, 30)[1] == 7


def test_ksir_directions_are_covariance_orthonormal():
    X, y, _ = _sir_data()
    Z = ReducedKernelSIR(n_slices=8, gamma=0.2, n_basis=40, ridge=0.0,
                         random_state=0).fit_transform(X, y)
    np.testing.assert_allclose(np.cov(Z.T, bias=True), np.eye(Z.shape[1]), atol=1e-6)


def test_ksir_pipeline_with_linear_ssvm_separates_circles():
    X, y = make_circles(400, factor=0.4, noise=0.05, random_state=0)
    linear = SmoothSVC(kernel="linear").fit(X, y).score(X, y)
    pipe = make_pipeline(ReducedKernelSIR(gamma=2.0, n_basis=30, random_state=0),
                         SmoothSVC(kernel="linear"))
    assert linear < 0.7 and pipe.fit(X, y).score(X, y) > 0.97


# ---------------------------------------------------------------- ReducedKernelCCA


def _two_views(n=400, seed=2):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, 2))
    X = np.hstack([L, rng.normal(size=(n, 2))]) @ rng.normal(size=(4, 4))
    Y = np.hstack([L + 0.5 * rng.normal(size=(n, 2)), rng.normal(size=(n, 1))]) @ rng.normal(
        size=(3, 3))
    return X, Y


def test_kcca_linear_kernel_equals_sklearn_cca_and_textbook():
    X, Y = _two_views()
    est = ReducedKernelCCA(3, kernel="linear", basis=(np.eye(4), np.eye(3)),
                           ridge=0.0).fit(X, Y)
    S = np.cov(np.hstack([X, Y]).T, bias=True)
    M = np.linalg.solve(S[:4, :4], S[:4, 4:] @ np.linalg.solve(S[4:, 4:], S[4:, :4]))
    textbook = np.sqrt(np.sort(np.linalg.eigvals(M).real)[::-1][:3])
    np.testing.assert_allclose(est.correlations_, textbook, atol=1e-6)
    xs, ys = CCA(3, scale=False, max_iter=5000, tol=1e-14).fit(X, Y).transform(X, Y)
    sk = [np.corrcoef(xs[:, k], ys[:, k])[0, 1] for k in range(3)]
    np.testing.assert_allclose(est.correlations_, sk, atol=1e-6)
    a, b = est.transform(X, Y)
    np.testing.assert_allclose([np.corrcoef(a[:, k], b[:, k])[0, 1] for k in range(3)],
                               est.correlations_, atol=1e-10)
    np.testing.assert_allclose(a.std(axis=0), 1.0, rtol=1e-8)


def test_kcca_ridge_keeps_correlations_below_one_for_large_bases():
    X, Y = _two_views(n=60)
    full = ReducedKernelCCA(1, n_basis=1.0, ridge=0.0, random_state=0).fit(X, Y)
    ridged = ReducedKernelCCA(1, n_basis=1.0, random_state=0).fit(X, Y)
    assert full.correlations_[0] > 0.99999
    assert ridged.correlations_[0] < 0.999


def test_kcca_random_basis_keeps_rows_paired():
    X, Y = _two_views(n=100)
    est = ReducedKernelCCA(n_basis=12, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(est.basis_, X[est.basis_indices_])
    np.testing.assert_array_equal(est.basis_y_, Y[est.basis_indices_])
    assert est.transform(X).shape == (100, 2) and est.fit_transform(X, Y).shape == (100, 2)


def test_kcca_nonlinear_dependence_found():
    rng = np.random.default_rng(0)
    t = rng.uniform(-1, 1, size=(500, 1))
    X = np.hstack([t, rng.normal(size=(500, 1))])
    Y = np.cos(2 * np.pi * t) + 0.1 * rng.normal(size=(500, 1))  # uncorrelated with t
    linear = ReducedKernelCCA(1, kernel="linear", basis=(np.eye(2), np.eye(1)),
                              ridge=0.0).fit(X, Y)
    kcca = ReducedKernelCCA(1, gamma=5.0, n_basis=50, random_state=0).fit(X, Y)
    assert linear.correlations_[0] < 0.3 and kcca.correlations_[0] > 0.85


# ---------------------------------------------------------------- shared behaviour


ESTIMATORS = [
    ReducedKernelPCA(2, n_basis=10, random_state=0),
    ReducedKernelSIR(n_basis=10, random_state=0),
    ReducedKernelCCA(n_basis=10, random_state=0),
]
_Y = np.arange(40) % 3


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_save_load_round_trip(est, tmp_path):
    X = X_TRAIN[:40]
    est = clone(est).fit(X, _Y)
    save(est, tmp_path / "m.skm")
    loaded = load(tmp_path / "m.skm")
    np.testing.assert_array_equal(loaded.transform(X_NEW), est.transform(X_NEW))


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("X, match", [
    (np.full((40, 3), np.nan), "NaN"),
    (np.full((40, 3), np.inf), "infinity"),
    (np.zeros(40), "1D"),
    (np.zeros((0, 3)), "0 sample"),
    (np.array([["a", "b", "c"]] * 40), "(?i)string|convert"),
])
def test_bad_X_raises(est, X, match):
    with pytest.raises(ValueError, match=match):
        est.fit(X, _Y[: len(X)] if len(X) else _Y[:0])


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("param, value, match", [
    ("gamma", -1.0, "'gamma' parameter .* Got -1.0"),
    ("n_basis", 41, "n_basis=41"),
    ("kernel", "cosine", "'kernel' parameter .* Got 'cosine'"),
    ("n_components", 0, "'n_components' parameter .* Got 0"),
])
def test_bad_params_raise(est, param, value, match):
    with pytest.raises(ValueError, match=match):
        clone(est).set_params(**{param: value}).fit(X_TRAIN[:40], _Y)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_wrong_n_features_at_transform_raises(est):
    est = clone(est).fit(X_TRAIN[:40], _Y)
    with pytest.raises(ValueError, match="4 features"):
        est.transform(np.zeros((5, 4)))


@pytest.mark.parametrize("est, param, value, match", [
    (ReducedKernelPCA(), "method", "exact", "'method' parameter .* Got 'exact'"),
    (ReducedKernelSIR(), "slicing", "quantile", "'slicing' parameter .* Got 'quantile'"),
    (ReducedKernelSIR(), "n_slices", 1, "'n_slices' parameter .* Got 1"),
    (ReducedKernelSIR(), "ridge", -1.0, "'ridge' parameter .* Got -1.0"),
    (ReducedKernelCCA(), "ridge", -1.0, "'ridge' parameter .* Got -1.0"),
    (ReducedKernelCCA(), "basis", np.eye(3), "'basis' parameter"),
    (ReducedKernelCCA(), "basis", (np.eye(3),), "pair"),
])
def test_bad_option_values_raise(est, param, value, match):
    with pytest.raises(ValueError, match=match):
        clone(est).set_params(**{param: value}).fit(X_TRAIN[:40], _Y)


def test_too_many_components_raise():
    with pytest.raises(ValueError, match="n_components=3"):
        ReducedKernelSIR(3, n_basis=10, random_state=0).fit(X_TRAIN[:40], _Y)  # J - 1 = 2
    with pytest.raises(ValueError, match="n_components=11"):
        ReducedKernelCCA(11, n_basis=10, random_state=0).fit(X_TRAIN[:40], _Y)


def test_ksir_one_class_and_bad_targets_raise():
    with pytest.raises(ValueError, match="one class"):
        ReducedKernelSIR().fit(X_TRAIN, np.ones(len(X_TRAIN)))
    with pytest.raises(ValueError, match="slicing='response'"):
        ReducedKernelSIR(slicing="classes").fit(X_TRAIN, X_TRAIN[:, 0])
    with pytest.raises(ValueError, match="y"):
        ReducedKernelSIR().fit(X_TRAIN, None)


def test_kcca_bad_second_view_raises():
    est = ReducedKernelCCA(n_basis=10, random_state=0)
    with pytest.raises(ValueError, match="requires y"):
        est.fit(X_TRAIN, None)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X_TRAIN, X_TRAIN[:10])
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X_TRAIN, np.full(len(X_TRAIN), np.nan))
    est.fit(X_TRAIN, X_TRAIN[:, :2])
    with pytest.raises(ValueError, match="y has 3 features"):
        est.transform(X_NEW, X_NEW)


_MEMORY_CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    from sparsekernel import {cls}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1_000_000, 20))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    est = {cls}(n_basis=500, random_state=0)
    est.fit(X, X[:, :5]) if {cls} .__name__.endswith("CCA") else est.fit(X, y)
    with open("/proc/self/status") as fh:
        peak = [int(line.split()[1]) for line in fh if line.startswith("VmHWM")][0]
    print(json.dumps({{"peak_mib": peak / 1024}}))
""")


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["ReducedKernelPCA", "ReducedKernelSIR", "ReducedKernelCCA"])
def test_fit_million_rows_under_2gb_peak(cls):
    """Acceptance: 10^6 x 20, n_basis=500 fits under 2 GB peak RSS (including the data)."""
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD.format(cls=cls)],
                         capture_output=True, text=True, check=True, timeout=1800)
    peak = json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"]
    assert peak < 2048, peak


# ---------------------------------------------------------------- basis selectors


class RecordingBasis(BasisSelector):
    """Random rows (or, with ``rows=False``, copies that are not training rows); records the
    kernel each call receives."""

    def __init__(self, log=None, rows=True):
        self.log = log
        self.rows = rows

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self.log.append(kernel)
        res = RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)
        return res if self.rows else BasisResult(centers=res.centers.copy())


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_selector_receives_the_estimators_kernel(est):
    log = []
    est = clone(est).set_params(kernel="laplacian", gamma=0.3, basis=RecordingBasis(log))
    est.fit(X_TRAIN[:40], X_TRAIN[:40, :2] if isinstance(est, ReducedKernelCCA) else _Y)
    assert len(log) == 1  # KCCA: random rows of X are paired with the same rows of Y
    assert log[0].name == "laplacian" and log[0].gamma == 0.3 == est.gamma_
    assert est.basis_.shape == (10, 3)


def test_kcca_selector_runs_on_each_view_with_that_views_kernel():
    X, Y = _two_views(n=100)
    log = []
    est = ReducedKernelCCA(n_basis=12, basis=RecordingBasis(log, rows=False),
                           random_state=0).fit(X, 10 * Y)
    assert len(log) == 2 and est.basis_indices_ is None
    assert log[0].gamma == est.gamma_ and log[1].gamma == est.gamma_y_
    # gamma='scale' is resolved on each view
    assert est.gamma_ == pytest.approx(1 / (4 * X.var()))
    assert est.gamma_y_ == pytest.approx(1 / (3 * (10 * Y).var()))
    assert est.basis_.shape == (12, 4) and est.basis_y_.shape == (12, 3)


def test_rank_tolerance_keeps_float32_singular_covariances_stable():
    """12 linear-kernel basis points in 5-d: a rank-5 covariance. float32 kernel blocks give
    its null space eigenvalues of ~eps32^2, which the rank tolerance (not the 10 eps floor)
    must treat as zero, or whitening blows the noise up into the directions."""
    X, y, _ = _sir_data(n=5000)
    X = X + 3.0
    kw = dict(n_slices=10, kernel="linear", n_basis=12, ridge=0.0, random_state=0)
    ref = ReducedKernelSIR(4, **kw).fit(X, y)
    got = ReducedKernelSIR(4, **kw).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(got.eigenvalues_, ref.eigenvalues_, rtol=1e-3)
    np.testing.assert_allclose(got.transform(X.astype(np.float32)).std(axis=0), 1.0, rtol=1e-3)


def test_reduced_features_names_and_pandas_output():
    """One name per basis point, and set_output gives DataFrames with those columns, in a
    pipeline too."""
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import Ridge

    feats = ReducedFeatures(gamma=0.3, n_basis=20, random_state=0)
    with pytest.raises(NotFittedError):
        feats.get_feature_names_out()
    names = feats.fit(X_TRAIN).get_feature_names_out()
    assert list(names) == [f"reducedfeatures{i}" for i in range(20)]
    out = feats.set_output(transform="pandas").transform(X_NEW)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    np.testing.assert_array_equal(out.to_numpy(), feats.set_output(transform="default")
                                  .transform(X_NEW))
    Xdf = pd.DataFrame(X_TRAIN, columns=[f"x{j}" for j in range(X_TRAIN.shape[1])])
    pipe = make_pipeline(ReducedFeatures(gamma=0.3, n_basis=12, random_state=0), Ridge())
    pipe.set_output(transform="pandas").fit(Xdf, X_TRAIN[:, 0])
    assert list(pipe[0].transform(Xdf).columns) == [f"reducedfeatures{i}" for i in range(12)]
    assert list(pipe[:-1].get_feature_names_out()) == list(pipe[0].get_feature_names_out())
