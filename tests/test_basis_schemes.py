"""IRSVM, systematic and clustering reduced sets (review section 3, Algorithms 1-3)."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from sparsekernel import ReducedFeatures, ReducedSVC, ReducedSVR
from sparsekernel.basis import (
    BASIS_SELECTORS,
    BasisResult,
    BasisSelector,
    ClusteringBasis,
    IncrementalBasis,
    IncrementalQR,
    SystematicBasis,
    make_basis_selector,
    oyang_hwang_width,
)
from sparsekernel.basis._systematic import _State, _strata_sample
from sparsekernel.io import load, save
from sparsekernel.kernels import Kernel


def _lstsq_residual(K, k):
    beta = np.linalg.lstsq(K, k, rcond=None)[0]
    return np.linalg.norm(K @ beta - k)


@pytest.fixture
def blobs(rng):
    X = np.r_[rng.normal(-2, 1, size=(150, 2)), rng.normal(2, 1, size=(150, 2))]
    y = np.r_[np.zeros(150, int), np.ones(150, int)]
    return X, y


def test_incremental_qr_distance_equals_lstsq_residual(rng):
    K = rng.normal(size=(40, 6))
    qr = IncrementalQR(40, 10)
    for j in range(K.shape[1]):
        cand = rng.normal(size=40) + K[:, : j] @ rng.normal(size=j)
        if j:
            assert qr.distance(cand)[0] == pytest.approx(_lstsq_residual(K[:, :j], cand),
                                                         rel=1e-10)
        qr.add(qr.residuals(K[:, j:j + 1])[:, 0])
    Q = qr.basis
    np.testing.assert_allclose(Q.T @ Q, np.eye(6), atol=1e-12)
    # A column already in the span is at distance ~0.
    assert qr.distance(K @ rng.normal(size=6))[0] < 1e-10


def test_incremental_basis_decisions_match_direct_least_squares(blobs):
    X, _ = blobs
    kern = Kernel("rbf", gamma=0.5)
    sel = IncrementalBasis(delta=0.3, max_rows=None, max_rejections=30)
    res = sel.select(X, n_basis=60, random_state=0, kernel=kern)
    K = kern(X, res.centers)
    # Every accepted column is farther than delta (relative) from the earlier ones ...
    for j in range(1, res.n_basis):
        r = _lstsq_residual(K[:, :j], K[:, j])
        assert r > 0.3 * np.linalg.norm(K[:, j])
    # ... and the last 30 candidates (rejected in a row) are within delta of the final span.
    assert res.info["stopped"] == "30 consecutive rejections"
    order = np.random.RandomState(0).permutation(X.shape[0])  # the selector's visiting order
    last = order[: res.info["n_candidates"]][-30:]
    assert not np.isin(last, res.indices).any()
    Kc = kern(X, X[last])
    for i in range(len(last)):
        assert _lstsq_residual(K, Kc[:, i]) <= 0.3 * np.linalg.norm(Kc[:, i])


def test_incremental_delta_zero_keeps_full_column_rank(rng):
    base = rng.normal(size=(25, 3))
    X = np.repeat(base, 4, axis=0)  # every point four times
    kern = Kernel("rbf", gamma=0.3)
    res = IncrementalBasis(delta=0.0, max_rows=None).select(X, n_basis=80, random_state=1,
                                                           kernel=kern)
    K = kern(X, res.centers)
    assert res.n_basis <= 25
    assert np.linalg.matrix_rank(K) == res.n_basis
    assert len(np.unique(res.centers, axis=0)) == res.n_basis  # no duplicate centre


def test_incremental_row_subsample_and_size_limit(blobs):
    X, _ = blobs
    res = IncrementalBasis(delta=0.01, max_rows=50).select(X, n_basis=20, random_state=0,
                                                          kernel=Kernel("rbf", gamma=2.0))
    assert res.n_basis == 20 and res.info["stopped"] == "n_basis reached"
    assert res.info["n_rows"] == 50
    np.testing.assert_array_equal(res.centers, X[res.indices])
    with pytest.raises(ValueError, match="delta must be in"):
        IncrementalBasis(delta=1.5).select(X, n_basis=5)


def test_strata_sample_takes_one_per_slice():
    order = np.arange(100, 110)
    picks = _strata_sample(order, 5, np.random.RandomState(0))
    assert [p // 2 for p in np.asarray(picks) - 100] == [0, 1, 2, 3, 4]
    assert len(_strata_sample(order[:3], 5, np.random.RandomState(0))) == 3


def test_systematic_basis_reaches_size_and_stops_at_threshold(blobs):
    X, y = blobs
    res = SystematicBasis(C=10.0).select(X, y, n_basis=30, random_state=0)
    assert res.n_basis == 30 and len(np.unique(res.indices)) == 30
    np.testing.assert_array_equal(res.centers, X[res.indices])
    history = res.info["validation_accuracy"]
    assert history[-1][0] == 30 and res.info["rounds"] == len(history) > 1
    early = SystematicBasis(accuracy_threshold=0.5).select(X, y, n_basis=30, random_state=0)
    assert early.n_basis == 4 and early.info["rounds"] == 1  # 2 per class, accurate enough


def test_systematic_adds_misclassified_points(rng):
    # One class inside a ring of the other: a 2-centre model misclassifies many points, and
    # the next points must be misclassified ones, one per stratum of sorted scores per class.
    r = np.r_[rng.uniform(0, 1, 200), rng.uniform(2, 3, 200)]
    t = rng.uniform(0, 2 * np.pi, 400)
    X = np.c_[r * np.cos(t), r * np.sin(t)]
    y = np.r_[np.zeros(200, int), np.ones(200, int)]
    sel = SystematicBasis(n_strata=3)
    fit, val = np.arange(400), np.empty(0, dtype=int)
    state = _State(Kernel("rbf", gamma=1.0), X, y, fit, val, y[val], 10, 2)
    state.add(np.array([0, 399]))
    sel._fit_round(state)
    margin, score = state.margins()
    new = sel._candidates(state, np.random.RandomState(0))
    assert len(new) == 6 and np.all(margin[new] < 0)
    for c in (0, 1):
        mis = np.flatnonzero((margin < 0) & (y == c))
        mis = mis[np.argsort(score[mis], kind="stable")]
        strata = np.array_split(mis, 3)
        picked = new[y[new] == c]
        assert sorted(next(k for k, s_ in enumerate(strata) if p in s_) for p in picked) == [
            0, 1, 2]


def test_systematic_needs_labels(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="needs class labels"):
        SystematicBasis().select(X, None, n_basis=5)


def test_oyang_width_matches_direct_evaluation_d2():
    dist = np.array([0.1, 0.2, 0.3, 0.5])
    d, n_r = 2, 4
    r_bar = (d + 1) / d * dist.mean()
    direct = 1.6210 * r_bar / ((n_r + 1) * math.gamma(d / 2 + 1)) ** (1 / d)
    assert oyang_hwang_width(dist, 2) == pytest.approx(direct, rel=1e-13)
    assert oyang_hwang_width(np.zeros(3), 2) == 0.0


def test_oyang_width_finite_for_d784():
    dist = np.full(10, 3.0)
    with pytest.raises(OverflowError):  # why the logs are needed
        math.gamma(784 / 2 + 1)
    sigma = oyang_hwang_width(dist, 784)
    assert np.isfinite(sigma) and sigma > 0
    r_bar = 785 / 784 * 3.0
    asymptotic = 1.6210 * r_bar * math.sqrt(2 * math.e / 784)  # sigma ~ beta Rbar sqrt(2e/d)
    assert sigma == pytest.approx(asymptotic, rel=0.05)


def test_clustering_one_cluster_per_class_is_class_mean(blobs):
    X, y = blobs
    res = ClusteringBasis(n_neighbors=7).select(X, y, n_basis=2, random_state=0)
    assert res.indices is None and res.gamma.shape == (2,)
    for c in (0, 1):
        Xc = X[y == c]
        centre = Xc.mean(axis=0)
        np.testing.assert_allclose(res.centers[c], centre, atol=1e-8)
        near = np.sort(np.linalg.norm(Xc - centre, axis=1))[:7]
        sigma = oyang_hwang_width(near, 2)
        assert res.gamma[c] == pytest.approx(1 / (2 * sigma**2), rel=1e-6)


def test_clustering_splits_classes_and_needs_rbf(blobs):
    X, y = blobs
    res = ClusteringBasis().select(X, y, n_basis=11, random_state=0)
    np.testing.assert_array_equal(res.info["clusters_per_class"], [6, 5])
    assert np.all(np.isfinite(res.gamma)) and np.all(res.gamma > 0)
    with pytest.raises(ValueError, match="kernel='rbf'"):
        ClusteringBasis().select(X, y, n_basis=4, kernel=Kernel("linear"))


@pytest.mark.parametrize("name", ["incremental", "systematic", "clustering"])
def test_registered_names_work_in_estimators(name, blobs):
    X, y = blobs
    assert isinstance(make_basis_selector(name), BASIS_SELECTORS[name])
    clf = ReducedSVC(C=10.0, n_basis=20, basis=name, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert clf.basis_.shape[0] == clf.coef_.shape[1] <= 20
    Xs = sp.csr_matrix(X.astype(np.float32))
    clf32 = clone(clf).fit(Xs, y)
    assert clf32.predict(Xs).shape == (300,)


def test_clustering_widths_reach_the_estimator(blobs):
    X, y = blobs
    clf = ReducedSVC(gamma=123.0, n_basis=10, basis="clustering", random_state=0).fit(X, y)
    sel = ClusteringBasis().select(X, y, n_basis=10, random_state=np.random.RandomState(0))
    assert clf.gamma_.shape == (10,)
    np.testing.assert_allclose(clf.gamma_, sel.gamma)
    reg = ReducedSVR(n_basis=8, basis="clustering", random_state=0).fit(X, X[:, 0])
    assert reg.gamma_.shape == (8,)
    feats = ReducedFeatures(n_basis=8, basis="clustering", random_state=0).fit(X)
    assert feats.transform(X).shape == (300, 8)


class _RecordingSelector(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        _RecordingSelector.seen = kernel
        return BasisResult(centers=X[:n_basis], indices=np.arange(n_basis))


class _OldSelector(BasisSelector):  # written before select() had a kernel argument
    def select(self, X, y=None, *, n_basis, random_state=None):
        return BasisResult(centers=X[:n_basis], indices=np.arange(n_basis))


def test_selectors_receive_the_resolved_kernel(blobs):
    X, y = blobs
    ReducedSVC(gamma="scale", n_basis=5, basis=_RecordingSelector()).fit(X, y)
    assert _RecordingSelector.seen.gamma == pytest.approx(1 / (2 * X.var()))
    assert ReducedSVC(n_basis=5, basis=_OldSelector()).fit(X, y).basis_.shape == (5, 2)


@pytest.mark.parametrize("basis", ["clustering", IncrementalBasis(delta=0.05)])
def test_new_bases_round_trip(basis, blobs, tmp_path):
    X, y = blobs
    clf = ReducedSVC(n_basis=12, basis=basis, random_state=0).fit(X, y)
    save(clf, tmp_path / "m.npz")
    back = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))


def test_clustering_warns_when_its_widths_vanish_in_high_dimensions(rng):
    """The Oyang-Hwang width shrinks like sqrt(2 e / d): in 300 dimensions the kernel is
    near zero at a centre's own members and the selector says so; in 2 it is not."""
    y = np.repeat([0, 1], 100)
    X_high = rng.normal(size=(200, 300)) + y[:, None]
    with pytest.warns(UserWarning, match="n_features=300"):
        ClusteringBasis().select(X_high, y, n_basis=10, random_state=0)
    X_low = rng.normal(size=(200, 2)) + y[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ClusteringBasis().select(X_low, y, n_basis=10, random_state=0)
    assert res.gamma.shape == (10,)
