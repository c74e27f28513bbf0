"""LowRankSVC: Proposition 2 against the foundation's solver, streaming, memory, persistence."""

import gzip
import pickle
import tracemalloc

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import make_blobs

from sparsekernel import LowRankSVC, ReducedSVC
from sparsekernel.basis import BasisSelector, RandomBasis
from sparsekernel.datasets import SvmlightChunks, make_checkerboard
from sparsekernel.io import load, save
from sparsekernel.kernels import rbf_kernel
from sparsekernel.solvers import SquaredSmoothHinge

from ._reference import reference_newton

GAMMA, C = 1.5, 4.0


@pytest.fixture(scope="module")
def board():
    X, y = make_checkerboard(600, noise=0.1, cells=2, random_state=0)
    return X, y


def _rkhs_objective(mu, b, X, y, Z):
    """The RSVM of the paper (eq. 21) in the family's scaling, with the squared hinge."""
    f = rbf_kernel(X, Z, GAMMA) @ mu + b
    v = np.maximum(0.0, 1.0 - y * f)
    return 0.5 * mu @ rbf_kernel(Z, Z, GAMMA) @ mu + 0.5 * b * b + 0.5 * C * v @ v


def test_lowrank_solves_the_rkhs_reduced_svm_exactly(board):
    """Proposition 2: with Z fixed, LowRankSVC = argmin of 1/2 mu^T K_ZZ mu + ... ."""
    X, y = board
    Z = X[::40]  # 15 landmarks, as basis='random' would draw them
    est = LowRankSVC(gamma=GAMMA, C=C, basis=Z, tol=1e-12, max_iter=100000).fit(X, y)
    assert sorted(map(tuple, est.basis_)) == sorted(map(tuple, Z))  # all kept, reordered
    Z = est.basis_  # the pivoted Cholesky map orders the landmarks by pivot
    mu = est.normalization_ @ est.coef_[0]
    b = est.intercept_[0]
    # (1) A reference Newton (exact squared hinge) on the features K(X, Z) M.
    F = rbf_kernel(X, Z, GAMMA) @ est.normalization_
    ref = reference_newton(F, y, SquaredSmoothHinge(np.inf), C=C, tol=1e-12)
    np.testing.assert_allclose(est.coef_[0], ref.coef, atol=1e-6)
    assert b == pytest.approx(ref.intercept, abs=1e-6)
    # (2) scipy on the RSVM problem in mu directly: the same optimum.
    obj = _rkhs_objective(mu, b, X, y, Z)
    sci = minimize(lambda z: _rkhs_objective(z[:-1], z[-1], X, y, Z), np.zeros(16),
                   method="BFGS", options={"gtol": 1e-8})
    assert obj == pytest.approx(sci.fun, rel=1e-7)
    assert obj == pytest.approx(ref.objective, rel=1e-9)
    np.testing.assert_allclose(est.decision_function(X), rbf_kernel(X, Z, GAMMA) @ mu + b,
                               atol=1e-8)


def test_reduced_svc_solves_a_different_problem(board):
    """ReducedSVC penalizes ||mu||^2, not mu^T K_ZZ mu: its solution is worse for eq. 21."""
    X, y = board
    Z = X[::40]
    low = LowRankSVC(gamma=GAMMA, C=C, basis=Z, tol=1e-12, max_iter=100000).fit(X, y)
    Z = low.basis_  # pivot order
    red = ReducedSVC(gamma=GAMMA, C=C, basis=Z, tol=1e-12).fit(X, y)
    mu_low = low.normalization_ @ low.coef_[0]
    obj_low = _rkhs_objective(mu_low, low.intercept_[0], X, y, Z)
    obj_red = _rkhs_objective(red.coef_[0], red.intercept_[0], X, y, Z)
    assert obj_low < obj_red * (1 - 1e-3)
    # ... and ReducedSVC is the same solver on K(X, Z) itself (the family's shared objective).
    ref = reference_newton(rbf_kernel(X, Z, GAMMA), y, SquaredSmoothHinge(np.inf), C=C,
                        tol=1e-12)
    np.testing.assert_allclose(red.coef_[0], ref.coef, atol=1e-6)


def test_lowrank_stream_multi_pass_converges_to_in_memory_fit(board):
    X, y = board
    kw = dict(gamma=GAMMA, C=C, n_basis=20, basis="random", random_state=0, tol=1e-8)
    full = LowRankSVC(**kw, max_iter=10000).fit(X, y)
    stream = LowRankSVC(**kw, chunk_size=100, n_passes=15).fit_stream((X, y))
    np.testing.assert_array_equal(stream.basis_, LowRankSVC(**kw, chunk_size=100).fit_stream(
        (X, y)).basis_)
    # Landmarks come from the first chunk when streaming: compare on equal landmarks.
    full = LowRankSVC(**{**kw, "basis": stream.basis_}, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(stream.coef_, full.coef_, atol=2e-3)
    np.testing.assert_allclose(stream.intercept_, full.intercept_, atol=2e-3)


def test_lowrank_streamed_fit_matches_the_in_memory_fit(board):
    # The path a fit over memory_budget takes (tests/test_memory_budget.py checks that it
    # does): block minimization over chunks, here with enough passes to converge.
    X, y = board
    kw = dict(gamma=GAMMA, C=C, basis=X[::30], random_state=0, tol=1e-8, chunk_size=150,
              n_passes=20)  # the same 20 landmarks (fit_stream picks its own on chunk 1)
    big = LowRankSVC(**kw).fit(X, y)
    small = LowRankSVC(**kw).fit_stream((X, y))
    assert hasattr(small, "_sbm") and not hasattr(big, "_sbm")
    np.testing.assert_allclose(small.coef_, big.coef_, atol=2e-3)


def test_lowrank_file_array_iterable_and_partial_fit_sources_agree(board, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = board
    path = tmp_path / "board.libsvm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    kw = dict(gamma=GAMMA, C=C, n_basis=10, basis="random", random_state=0, chunk_size=200)
    a = LowRankSVC(**kw).fit_stream((X, y))
    b = LowRankSVC(**kw).fit_stream(SvmlightChunks(path, 200, n_features=2))
    c = LowRankSVC(**kw).fit_stream(iter([(X[i:i + 200], y[i:i + 200])
                                          for i in range(0, 600, 200)]))
    d = LowRankSVC(**kw)
    for i in range(0, 600, 200):
        d.partial_fit(X[i:i + 200], y[i:i + 200])
    for other in (b, c, d):
        np.testing.assert_allclose(other.coef_, a.coef_, atol=1e-10)
    assert d.n_rows_seen_ == 600


def test_lowrank_streaming_never_allocates_n_by_m():
    """n = 60,000 rows, k = 50 landmarks, chunks of 500: the n x k features would be 24 MB."""
    n, k, chunk = 60_000, 50, 500

    def chunks():
        for i in range(n // chunk):
            yield make_checkerboard(chunk, noise=0.2, random_state=i)

    est = LowRankSVC(gamma=2.0, C=1.0, n_basis=k, basis="random", chunk_size=chunk,
                     random_state=0, memory_budget="256KB", max_iter=20)
    tracemalloc.start()
    est.fit_stream(chunks())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < n * k * 8 / 8, f"peak {peak / 2**20:.1f} MiB"
    X, y = make_checkerboard(2000, random_state=99)
    assert est.score(X, y) > 0.8


def test_lowrank_multiclass_ovr_and_partial_fit_classes():
    X, y = make_blobs(300, centers=3, cluster_std=1.0, random_state=0)
    est = LowRankSVC(n_basis=20, C=10.0, random_state=0).fit(X, y)
    assert est.coef_.shape == (3, est.normalization_.shape[1])
    assert est.decision_function(X).shape == (300, 3) and est.score(X, y) > 0.9
    part = LowRankSVC(n_basis=20, C=10.0, random_state=0)
    part.partial_fit(X[:100][y[:100] != 2], y[:100][y[:100] != 2], classes=[0, 1, 2])
    part.partial_fit(X[100:], y[100:])
    assert list(part.classes_) == [0, 1, 2] and part.score(X, y) > 0.9


def test_lowrank_float32_and_hinge_loss(board):
    X, y = board
    est = LowRankSVC(gamma=GAMMA, C=C, n_basis=30, loss="hinge", random_state=0)
    est.fit(X.astype(np.float32), y)
    assert est.basis_.dtype == np.float32
    assert est.score(X, y) > 0.85


def test_lowrank_round_trips_through_io(board, tmp_path):
    X, y = board
    est = LowRankSVC(gamma=GAMMA, n_basis=15, random_state=0).fit(X, y)
    save(est, tmp_path / "m.skm")
    back = load(tmp_path / "m.skm")
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_lowrank_stream_errors(board):
    X, y = board
    with pytest.raises(ValueError, match="re-iterable"):
        LowRankSVC(n_passes=2).fit_stream(iter([(X, y)]))
    y_bad = y.copy()
    y_bad[-1] = 7.0
    with pytest.raises(ValueError, match="7"):
        LowRankSVC(n_basis=5, chunk_size=300).fit_stream((X, y_bad))
    with pytest.raises(ValueError, match="features"):
        LowRankSVC(n_basis=5).fit_stream([(X, y), (np.ones((5, 3)), np.ones(5))])
    with pytest.raises(ValueError, match="empty"):
        LowRankSVC().fit_stream([])
    with pytest.raises(TypeError, match="SvmlightChunks"):
        LowRankSVC().fit_stream("board.libsvm")
    with pytest.raises(ValueError, match="loss"):
        LowRankSVC(loss="log").fit(X, y)


def test_cholesky_and_eigh_whitening_fit_the_same_model(board):
    X, y = board
    kw = dict(gamma=GAMMA, C=C, n_basis=40, basis="random", random_state=0, tol=1e-10,
              max_iter=100000)
    chol = LowRankSVC(**kw).fit(X, y)
    eig = LowRankSVC(whitening="eigh", **kw).fit(X, y)
    assert chol.eigenvalues_ is None and eig.eigenvalues_ is not None
    np.testing.assert_allclose(chol.decision_function(X), eig.decision_function(X),
                               atol=1e-5)
    # The map rebuilt from the fitted attributes (used by partial_fit) is triangular again
    # and its features equal K(X, Z) normalization_.
    F = chol._map().transform(X)
    np.testing.assert_allclose(F, rbf_kernel(X, chol.basis_, GAMMA) @ chol.normalization_,
                               atol=1e-9)


def test_unknown_whitening_is_rejected_by_name(board):
    X, y = board
    with pytest.raises(ValueError, match=r"whitening.*'qr'"):
        LowRankSVC(whitening="qr").fit(X, y)


def test_cholesky_whitening_subsets_basis_indices_and_per_centre_widths(board):
    X, y = board
    Z = np.vstack([X[:20], X[:20]])  # duplicates: half of the landmarks are redundant
    est = LowRankSVC(gamma=GAMMA, C=C, basis=Z).fit(X, y)
    assert est.basis_.shape == (20, 2) and est.normalization_.shape == (20, 20)
    Xd, yd = np.vstack([X[:150], X[:150]]), np.r_[y[:150], y[:150]]
    est = LowRankSVC(gamma=GAMMA, C=C, n_basis=200, basis="random", random_state=0).fit(Xd, yd)
    assert len(est.basis_) <= 150  # rows drawn twice are kept once
    np.testing.assert_array_equal(est.basis_, Xd[est.basis_indices_])
    est = LowRankSVC(C=C, n_basis=30, basis="clustering", random_state=0).fit(X, y)
    assert np.ndim(est.gamma_) == 1 and len(est.gamma_) == len(est.basis_)


def test_lowrank_file_chunks_are_re_iterable_for_several_passes(board, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = board
    path = tmp_path / "board.libsvm.gz"
    with gzip.open(path, "wb") as fh:
        dump_svmlight_file(X, y, fh, zero_based=False)
    kw = dict(gamma=GAMMA, C=C, n_basis=10, basis="random", random_state=0, chunk_size=150,
              n_passes=3)
    a = LowRankSVC(**kw).fit_stream((X, y))
    b = LowRankSVC(**kw).fit_stream(SvmlightChunks(path, 150, n_features=2))
    np.testing.assert_allclose(b.coef_, a.coef_, atol=1e-10)
    assert b.n_rows_seen_ == 600


def test_lowrank_rcond_is_a_parameter_and_changes_the_kept_components(board):
    X, y = board
    est = LowRankSVC(gamma=0.05, C=C, n_basis=60, basis="random", random_state=0,
                     whitening="eigh")
    assert est.get_params()["rcond"] == "auto"
    r_auto = est.fit(X, y).normalization_.shape[1]
    est.set_params(rcond=1e-4)
    r_floor = est.fit(X, y).normalization_.shape[1]
    assert r_floor < r_auto and len(est.eigenvalues_) == r_floor
    assert est.eigenvalues_.min() > 1e-4 * est.eigenvalues_.max()
    chol = LowRankSVC(gamma=0.05, C=C, n_basis=60, basis="random", random_state=0,
                      rcond=1e-4).fit(X, y)
    assert len(chol.basis_) < 60 and len(chol.basis_indices_) == len(chol.basis_)
    with pytest.raises(ValueError, match="rcond"):
        LowRankSVC(rcond=-1.0).fit(X, y)


class _RecordingBasis(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self.kernel_ = kernel
        return RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)


def test_lowrank_selector_receives_the_estimators_kernel(board):
    X, y = board
    rec = _RecordingBasis()
    est = LowRankSVC(kernel="laplacian", gamma=0.3, n_basis=10, basis=rec,
                     random_state=0).fit(X, y)
    assert rec.kernel_.name == "laplacian" and rec.kernel_.gamma == 0.3 == est.gamma_
    rec = _RecordingBasis()
    est = LowRankSVC(n_basis=10, basis=rec, random_state=0).fit_stream((X, y))
    assert rec.kernel_.name == "rbf" and rec.kernel_.gamma == est.gamma_


def _same_state(est, before):
    assert vars(est).keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())


def test_lowrank_failed_stream_keeps_the_previous_model(board, monkeypatch):
    """Ctrl-C in the third block step, or a bad label in the last chunk, after a three-class
    fit: the error propagates and the three-class model stays whole (never the new map with
    the old coefficients, nor two classes with three coefficient rows)."""
    from sparsekernel.solvers import SelectiveBlockMinimization

    X3, y3 = make_blobs(300, centers=3, random_state=0)
    est = LowRankSVC(n_basis=10, random_state=0, chunk_size=100).fit_stream((X3, y3))
    before, pred = dict(vars(est)), est.predict(X3)
    X, y = board
    y_bad = y.copy()
    y_bad[-1] = 7.0
    with pytest.raises(ValueError, match="7"):
        est.fit_stream((X, y_bad))
    _same_state(est, before)
    original, calls = SelectiveBlockMinimization.step, []

    def step(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SelectiveBlockMinimization, "step", step)
    with pytest.raises(KeyboardInterrupt):
        est.fit_stream((X, y))
    _same_state(est, before)
    assert est.n_rows_seen_ == 300 and len(est.classes_) == 3 == est.coef_.shape[0]
    np.testing.assert_array_equal(est.predict(X3), pred)


def test_lowrank_interrupted_partial_fit_step_changes_nothing(monkeypatch):
    """Ctrl-C inside a step (after the first of three class problems was solved): the block
    solver's state is copied on write, so redoing the step gives the uninterrupted model."""
    import sparsekernel.solvers.block_minimization as bm

    X, y = make_blobs(400, centers=3, cluster_std=2.0, random_state=1)
    kw = dict(n_basis=15, random_state=0, chunk_size=100)
    ref, est = LowRankSVC(**kw), LowRankSVC(**kw)
    for i in range(0, 400, 100):
        ref.partial_fit(X[i:i + 100], y[i:i + 100], classes=[0, 1, 2])
    est.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    est.partial_fit(X[100:200], y[100:200])
    before, sbm = dict(vars(est)), est._sbm
    saved = {k: v.copy() for k, v in vars(sbm).items() if isinstance(v, np.ndarray)}
    original, calls = bm.dual_cd, []

    def dual_cd(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(bm, "dual_cd", dual_cd)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[200:300], y[200:300])
    _same_state(est, before)
    assert all(np.array_equal(getattr(sbm, k), v) for k, v in saved.items())
    assert est.n_rows_seen_ == 200
    monkeypatch.undo()
    est.partial_fit(X[200:300], y[200:300]).partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert est.n_rows_seen_ == ref.n_rows_seen_ == 400


def test_lowrank_partial_fit_continues_a_stream_and_a_loaded_stream(board, tmp_path):
    """partial_fit continues the block minimization of fit_stream; a loaded streamed model
    (no solver state saved) continues from its weights with the rows seen frozen, close to
    the model in memory, and counts on from its rows."""
    X, y = board
    kw = dict(gamma=GAMMA, C=C, n_basis=10, basis="random", random_state=0, chunk_size=200)
    streamed = LowRankSVC(**kw).fit_stream((X[:400], y[:400]))
    save(streamed, tmp_path / "m.skm")
    chunked = LowRankSVC(**kw)
    for i in range(0, 600, 200):
        chunked.partial_fit(X[i:i + 200], y[i:i + 200])
    streamed.partial_fit(X[400:], y[400:])
    np.testing.assert_allclose(streamed.coef_, chunked.coef_, atol=1e-10)
    assert streamed.n_rows_seen_ == 600
    loaded = load(tmp_path / "m.skm")
    assert loaded.n_rows_seen_ == 400 and not hasattr(loaded, "_sbm")
    loaded.partial_fit(X[400:], y[400:])
    assert loaded.n_rows_seen_ == 600 and loaded.score(X, y) > 0.8
    assert np.corrcoef(loaded.decision_function(X), streamed.decision_function(X))[0, 1] > 0.9


def _flat_binary(n, seed):
    """Many binary features (a flat spectrum): n_basis='auto' solves the kernel machine on
    every row (normalization_ None)."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 60)) < 0.3).astype(float)
    return X, (X[:, :5].sum(axis=1) + rng.standard_normal(n) > 1.8).astype(int)


def _two_sets(path):
    """(params, A, B): data sets A and B of one distribution, and LowRankSVC parameters
    whose fit on A is the exact machine on every row ('all_rows') or a Nystrom model."""
    if path == "all_rows":
        return dict(C=10.0, random_state=0), _flat_binary(300, 0), _flat_binary(300, 1)
    X, y = make_checkerboard(1000, noise=0.1, cells=2, random_state=0)
    return (dict(gamma=GAMMA, C=C, n_basis=40, random_state=0), (X[:500], y[:500]),
            (X[500:], y[500:]))


def _margins(est, X, y):
    """min over the one-vs-rest problems of y_k f_k(x), per row."""
    d = est.decision_function(X)
    Y = np.where(np.asarray(y)[:, None] == est.classes_, 1.0, -1.0)
    return Y[:, 1] * d if d.ndim == 1 else (Y * d).min(axis=1)


@pytest.mark.parametrize("whitening", ["cholesky", "eigh"])
def test_lowrank_exact_machine_is_re_expressed_on_the_whitened_map_of_its_support(whitening):
    """The exact machine f = K(x, S) a + b with penalty a^T K_SS a, put on the whitened
    Nystrom map of S with w = M^T K(Z, S) a: the same decision values, and ||w||^2 the same
    RKHS norm, so partial_fit continues the same model and the same objective."""
    X, y = _flat_binary(300, 0)
    est = LowRankSVC(C=10.0, whitening=whitening, random_state=0).fit(X, y)
    assert est.normalization_ is None
    fmap, W, attrs = est._continuation()
    F = fmap.transform(X)
    np.testing.assert_allclose(F @ W.T + est.intercept_, est.decision_function(X)[:, None],
                               rtol=1e-10, atol=1e-10)
    a = est.coef_[0]
    K_SS = rbf_kernel(est.basis_, est.basis_, est.gamma_)
    assert W[0] @ W[0] == pytest.approx(a @ K_SS @ a, rel=1e-9)
    assert attrs["normalization_"] is fmap.normalization and est.normalization_ is None
    assert set(map(tuple, attrs["basis_"])) <= set(map(tuple, est.basis_))


@pytest.mark.parametrize("path", ["all_rows", "nystrom"])
def test_lowrank_partial_fit_after_fit_continues_the_fitted_model(path, tmp_path):
    """After fit on A, partial_fit starts from the fitted weights with A's duals frozen
    (freeze rule): rows all outside the margin leave the model where it was; streaming B
    brings it towards the fit on A + B; a small one-class-heavy chunk leaves it ranking A
    nearly as the fit does (a solver restarted from that chunk alone does not)."""
    from sklearn.metrics import roc_auc_score

    params, (XA, yA), (XB, yB) = _two_sets(path)
    fitted = LowRankSVC(**params).fit(XA, yA)
    assert (fitted.normalization_ is None) == (path == "all_rows")
    dA = fitted.decision_function(XA)
    scale = np.abs(dA).max()

    # Rows of A beyond the margin: zero duals, the model does not move.
    far = _margins(fitted, XA, yA) > 1.0 + 1e-6
    assert 5 <= far.sum() < len(yA)
    still = pickle.loads(pickle.dumps(fitted)).partial_fit(XA[far], yA[far])
    assert still.normalization_ is not None  # the exact machine is now on its Nystrom map
    np.testing.assert_allclose(still.decision_function(XA), dA, rtol=0, atol=1e-9 * scale)
    np.testing.assert_array_equal(still.predict(XB), fitted.predict(XB))
    assert still.n_rows_seen_ == far.sum() and list(still.classes_) == list(fitted.classes_)
    if path == "nystrom":  # the same map and weights
        np.testing.assert_array_equal(still.basis_, fitted.basis_)
        np.testing.assert_allclose(still.coef_, fitted.coef_, rtol=0, atol=1e-12 * scale)

    # B streamed in chunks: closer to the fit on A + B, better on B.
    both = LowRankSVC(**params).fit(np.vstack([XA, XB]), np.r_[yA, yB])
    moved = pickle.loads(pickle.dumps(fitted))
    for i in range(0, len(yB), 150):
        moved.partial_fit(XB[i:i + 150], yB[i:i + 150])
    assert moved.n_rows_seen_ == len(yB)
    ref = both.decision_function(XB)
    corr = [np.corrcoef(e.decision_function(XB), ref)[0, 1] for e in (fitted, moved)]
    assert corr[1] > corr[0] + 0.005, corr
    auc_B = [roc_auc_score(yB, e.decision_function(XB)) for e in (fitted, moved)]
    assert auc_B[1] > auc_B[0] + 0.01, auc_B

    # Eight rows of one class, two of the other: A is still ranked as the fit ranks it,
    # unlike the same block solver on the same map restarted from that chunk alone.
    idx = np.r_[np.flatnonzero(yB == fitted.classes_[1])[:8],
                np.flatnonzero(yB == fitted.classes_[0])[:2]]
    heavy = pickle.loads(pickle.dumps(fitted)).partial_fit(XB[idx], yB[idx])
    fmap = heavy._map()
    alone = heavy._new_solver(fmap)
    alone.step(fmap.transform(XB[idx]), np.where(yB[idx] == heavy.classes_[1], 1.0, -1.0)[:, None])
    auc = {"fit": roc_auc_score(yA, dA),
           "heavy": roc_auc_score(yA, heavy.decision_function(XA)),
           "alone": roc_auc_score(yA, fmap.transform(XA) @ alone.coef[0] + alone.intercept[0])}
    assert auc["heavy"] > auc["fit"] - 0.04 and auc["heavy"] > auc["alone"] + 0.05, auc
    assert np.corrcoef(heavy.decision_function(XA), dA)[0, 1] > 0.9


@pytest.mark.parametrize("path", ["all_rows", "nystrom"])
def test_lowrank_loaded_model_continues_as_the_fitted_one(path, tmp_path):
    """A model loaded from a file continues exactly as the one in memory (the continuation
    needs only the saved weights and map), and the continued model saves and loads."""
    params, (XA, yA), (XB, yB) = _two_sets(path)
    fitted = LowRankSVC(**params).fit(XA, yA)
    save(fitted, tmp_path / "fit.skm")
    loaded = load(tmp_path / "fit.skm")
    assert not hasattr(loaded, "n_rows_seen_")
    for est in (fitted, loaded):
        est.partial_fit(XB[:150], yB[:150]).partial_fit(XB[150:], yB[150:])
    np.testing.assert_array_equal(loaded.basis_, fitted.basis_)
    np.testing.assert_array_equal(loaded.normalization_, fitted.normalization_)
    np.testing.assert_allclose(loaded.coef_, fitted.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(loaded.intercept_, fitted.intercept_, rtol=1e-12, atol=1e-14)
    assert loaded.n_rows_seen_ == fitted.n_rows_seen_ == len(yB)
    save(loaded, tmp_path / "continued.skm")
    again = load(tmp_path / "continued.skm")
    np.testing.assert_array_equal(again.decision_function(XB), loaded.decision_function(XB))


def test_lowrank_partial_fit_after_fit_keeps_its_classes_and_refuses_changes():
    """classes_ come from fit; a label outside them, other classes or another number of
    features raise, and leave the model as it was; the same classes are accepted."""
    X, y = make_blobs(300, centers=3, cluster_std=2.0, random_state=1)
    for params in (dict(), dict(n_basis=15)):
        est = LowRankSVC(random_state=0, **params).fit(X[:200], y[:200])
        before = dict(vars(est))
        with pytest.raises(ValueError, match="Label 7 is not one of the classes"):
            est.partial_fit(X[200:], np.r_[y[200:-1], 7])
        with pytest.raises(ValueError, match=r"classes=\[0, 1, 2, 3\] differs"):
            est.partial_fit(X[200:], y[200:], classes=[0, 1, 2, 3])
        with pytest.raises(ValueError, match="features"):
            est.partial_fit(X[200:, :1], y[200:])
        _same_state(est, before)
        est.partial_fit(X[200:], y[200:], classes=[2, 0, 1])
        assert list(est.classes_) == [0, 1, 2] and est.coef_.shape[0] == 3
        assert est.n_rows_seen_ == 100 and est.score(X, y) > 0.8


def test_float32_model_predicts_in_float64(board):
    """Fitted on float32 input, the model keeps M in float64 and evaluates K(X, Z) mu + b in
    float64 (mu = M coef^T resolves small eigenvalues, which float32 kernel values would
    cancel): decisions on float64 and float32 input equal that expansion."""
    X, y = board
    X32 = X.astype(np.float32)
    est = LowRankSVC(gamma=GAMMA, C=C, n_basis=60, random_state=0).fit(X32, y)
    assert est.normalization_.dtype == np.float64
    mu = est.normalization_ @ est.coef_[0]
    ref = rbf_kernel(X, est.basis_.astype(np.float64), GAMMA) @ mu + est.intercept_[0]
    scores = est.decision_function(X)
    assert scores.dtype == np.float64
    np.testing.assert_allclose(scores, ref, rtol=1e-9, atol=1e-9)
    ref32 = rbf_kernel(X32.astype(np.float64), est.basis_.astype(np.float64), GAMMA) @ mu
    np.testing.assert_allclose(est.decision_function(X32), ref32 + est.intercept_[0],
                               rtol=1e-9, atol=1e-9)


def test_expansion_formed_once_per_fit_and_following_coef():
    """Prediction reuses mu = M coef^T formed at the end of the fit, and forms it again when
    coef_ is replaced or changed in place; predicting changes nothing in the estimator."""
    X, y = make_blobs(300, centers=3, n_features=4, random_state=0)
    clf = LowRankSVC(n_basis=40, gamma=0.5, random_state=0).fit(X, y)
    mu = clf.normalization_ @ clf.coef_.T
    K = rbf_kernel(X, clf.basis_, clf.gamma_)
    np.testing.assert_allclose(clf.decision_function(X), K @ mu + clf.intercept_, rtol=1e-10,
                               atol=1e-12)
    assert clf._expansion_coef() is clf._expansion[2]  # the kept one, no product
    before = dict(clf.__dict__)
    clf.predict(X)
    assert clf.__dict__.keys() == before.keys()
    assert all(clf.__dict__[k] is v for k, v in before.items())
    clf.coef_[0] *= -1.0  # in place
    np.testing.assert_allclose(clf.decision_function(X)[:, 0], -(K @ mu[:, 0]) +
                               clf.intercept_[0], rtol=1e-10, atol=1e-12)
    clf.coef_ = np.zeros_like(clf.coef_)  # replaced
    np.testing.assert_allclose(clf.decision_function(X), np.broadcast_to(clf.intercept_,
                                                                         (300, 3)))
    clf.fit(X[:200], y[:200])  # a new fit keeps its own
    assert clf._expansion_coef() is clf._expansion[2]


def test_binary_fit_at_verbose_1_says_what_auto_chose_and_shows_progress(capfd):
    """A binary problem is one sub-problem: its bar shows as a multiclass fit's does, after
    the line saying how many basis functions n_basis='auto' chose."""
    X, y = make_checkerboard(1500, random_state=0)
    LowRankSVC(verbose=1, random_state=0).fit(X, y)
    err = capfd.readouterr().err
    assert "[LowRankSVC] n_basis='auto' chose m=" in err and "n_samples=1500" in err
    assert "LowRankSVC:" in err and "/1 [" in err  # the tqdm bar over the one problem,
    assert "it=" in err  # with the Newton iterations as they come
    LowRankSVC(random_state=0).fit(X, y)
    assert capfd.readouterr().err == ""


def test_verbose_says_how_many_of_the_auto_basis_functions_the_model_keeps(capsys):
    import re

    from sklearn.datasets import make_moons

    X, y = make_moons(300, noise=0.05, random_state=0)  # smooth 2-D: dependent landmarks
    clf = LowRankSVC(verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    chosen = int(re.search(r"n_basis='auto' chose m=(\d+)", err).group(1))
    kept = re.search(r"kept the numerically independent basis functions m=(\d+) of=(\d+)", err)
    assert kept is not None, err
    assert int(kept.group(2)) == chosen > int(kept.group(1)) == clf.basis_.shape[0]


def test_verbose_says_how_many_rows_the_exact_machine_keeps(capsys):
    """'auto' taking every row solves the exact machine, which keeps its support rows as the
    basis: the note says how many, the count the model evaluates."""
    import re

    X, y = _flat_binary(300, 0)
    clf = LowRankSVC(C=10.0, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "n_basis='auto' chose m=300 n_samples=300 all_rows=True" in err
    kept = re.search(r"kept its support rows as the basis m=(\d+) of=300", err)
    assert kept is not None, err
    assert int(kept.group(1)) == clf.basis_.shape[0] < 300
