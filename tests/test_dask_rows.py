"""Rows on a Dask cluster: the provider over a dask array's chunks, and LowRankSVC fitted on
dask input being the in-memory model."""

import gc
import importlib

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from sklearn.datasets import make_classification  # noqa: E402

from sparsekernel import (  # noqa: E402
    LSSVC,
    LSSVR,
    KernelLogisticRegression,
    LowRankSVC,
    ReducedKernelPCA,
    ReducedSVC,
    ReducedSVR,
)
from sparsekernel.basis import FixedBasis  # noqa: E402
from sparsekernel.distributed._rows import DaskRows, row_chunks  # noqa: E402
from sparsekernel.solvers._rows import ArrayRows  # noqa: E402


def test_dask_input_without_a_client_runs_on_a_cluster_of_its_own():
    """(First in the module: before the module's client becomes the default one.)"""
    with pytest.raises(ValueError):
        distributed.default_client()
    X, y = make_classification(n_samples=300, n_features=4, random_state=3)
    params = dict(n_basis=20, basis=FixedBasis(X[:20]), gamma=0.5, tol=1e-10)
    model = LowRankSVC(**params).fit(da.from_array(X, chunks=100), y)
    np.testing.assert_allclose(model.decision_function(X),
                               LowRankSVC(**params).fit(X, y).decision_function(X),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError):  # the cluster it started is gone with the fit
        distributed.default_client()


@pytest.fixture(scope="module")
def client():
    """Two in-process workers of one thread, as Dask's default client."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.mark.parametrize(("store", "keep"), [(True, 0.0), (False, 0.0), (False, np.inf)],
                         ids=["stored", "recomputed", "recomputed-sample-kept"])
def test_the_dask_provider_gives_the_array_providers_sums(client, rng, store, keep):
    """Over uneven chunks (one of a single row), features kept on the workers or recomputed
    by every task (a sample's kept when they fit ``keep``), the solver's per-row state
    beside the chunks answers as the in-memory one: a first test that moves the margins
    to iterates (with the gradient at zero), a test with its Gram requests (float64 and
    float32 products), a Gram sum alone (and a kept Hessian's update by the rows that
    changed side), the line search's terms, the step, the loss; and rows taken in any
    order, a chunk-wise reduction, and every stride-th row as a provider of its own
    (sliced on the workers), with its state."""
    from sparsekernel.solvers.newton_ovr import HingeRows

    X = rng.normal(size=(203, 6))
    Xd = da.from_array(X, chunks=((60, 1, 80, 62), (6,)))
    rows = DaskRows(client, row_chunks(Xd), np.tanh, 6, np.float64, store, keep=keep)
    ref = ArrayRows(np.tanh(X), threads=1)
    assert rows.shape == ref.shape == (203, 6)
    assert (rows.every(7)._fmap is None) == (store or keep > 0)  # (features, not X rows)
    # A warm start's sample is sized to the features the workers keep of it.
    assert rows.keep_rows == (np.inf if store else keep / (6 * 8))
    Y = np.where(rng.random((203, 2)) < 0.5, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, 203)
    state, ref_state = rows.state(HingeRows, Y, w), ref.state(HingeRows, Y, w)

    def same(op, *args, tol=1e-12):
        got, want = state(op, *args), ref_state(op, *args)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            if a is None or b is None:  # (a test's gradient at zero, when not asked)
                assert a is None and b is None
            elif isinstance(a, list):  # (the squares of a test's Gram requests)
                for x, y in zip(a, b, strict=True):
                    np.testing.assert_allclose(np.tril(x), np.tril(y), rtol=tol, atol=tol)
            else:
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        return got

    Z = 0.3 * rng.normal(size=(7, 2))
    both = np.array([0, 1])
    same("test", both, 2.0, [-1, -1], False, [], Z)  # margins, and the gradient at zero
    for dtype in (np.float64, np.float32):
        same("test", both, 2.0, [-1, -1], False, [(0, None, dtype), (1, None, dtype)],
             tol=1e-12 if dtype == np.float64 else 1e-5)
    H, H_ref = state.gram(np.eye(7), 1, None, 2.0), ref_state.gram(np.eye(7), 1, None, 2.0)
    np.testing.assert_allclose(np.tril(H), np.tril(H_ref), rtol=1e-12, atol=1e-12)
    keep = ([0], [0])  # problem 0 keeps a Hessian summed over its present active rows
    D = 0.2 * rng.normal(size=(7, 2))
    same("direction", D, 2.0, keep)
    same("line", np.array([[0.5, 2.0]]), np.array([[1.0, np.nan]]), 2.0)
    same("advance", np.array([0.7, 1.3]))
    same("test", both, 2.0, [0, -1], False, [])
    H, H_ref = state.gram(H.copy(), 0, 0, 2.0), ref_state.gram(H_ref.copy(), 0, 0, 2.0)
    np.testing.assert_allclose(np.tril(H), np.tril(H_ref), rtol=1e-12, atol=1e-12)
    same("loss", 2.0)
    picked = np.array([202, 0, 60, 61, 5, 150])
    np.testing.assert_array_equal(rows.take(picked), np.tanh(X)[picked])
    total = rows.reduce(_column_sums, np.add, w)
    np.testing.assert_allclose(total, w @ np.tanh(X), rtol=1e-12)
    for stride in (1, 7, 61):
        sub, sub_ref = state.every(stride), ref_state.every(stride)
        assert sub.shape == sub_ref.shape == (len(range(0, 203, stride)), 6)
        sub("refresh", Z, False)
        sub_ref("refresh", Z, False)
        np.testing.assert_allclose(sub("loss", 2.0), sub_ref("loss", 2.0), rtol=1e-12)
        np.testing.assert_array_equal(sub.rows.take([0, sub.shape[0] - 1]),
                                      np.tanh(X)[[0, (sub.shape[0] - 1) * stride]])
        sub.close()
    state.close()
    rows.close()


def _column_sums(F, w):
    return w @ F


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lowrank_on_a_dask_array_is_the_in_memory_model(client, n_classes, rng):
    """Same basis, gamma and weights: the decision values of the fit on dask input equal
    the in-memory fit's, and prediction on a dask array is a lazy dask array of the same
    labels."""
    X, y = make_classification(n_samples=1200, n_features=8, n_informative=5,
                               n_classes=n_classes, random_state=0)
    sw = rng.uniform(0.5, 2.0, len(y))
    params = dict(n_basis=80, basis=FixedBasis(X[::15]), gamma=0.2, C=10.0, tol=1e-10,
                  random_state=0)
    ref = LowRankSVC(**params).fit(X, y, sample_weight=sw)
    Xd, yd = da.from_array(X, chunks=(300, 4)), da.from_array(y, chunks=300)
    model = LowRankSVC(**params).fit(Xd, yd, sample_weight=da.from_array(sw, chunks=300))
    a, b = ref.decision_function(X), model.decision_function(X)
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6 * np.abs(a).max())
    np.testing.assert_array_equal(model.classes_, ref.classes_)
    lazy = model.predict(Xd)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), ref.predict(X))
    assert isinstance(model.decision_function(Xd), da.Array)


def _nbytes(value):
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(map(_nbytes, value))
    return 0 if value is None else 64


@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0}])
def test_newton_on_a_cluster_keeps_every_per_row_value_on_the_workers(client, monkeypatch,
                                                                      class_weight):
    """Labels, weights and the solver's per-row state stay with the chunks: the provider
    has no per-row members (margins, gradient, add_gram: n x k values each way), the
    largest result it gathers is the same at n and 4n rows (a gradient and k
    (m + 1)^2 squares at most), class weights come from a reduction over the chunks, and
    the model is the in-memory one."""
    from sparsekernel.distributed import _rows

    # (the provider has no per-row members: n x k values cannot cross)
    assert not any(hasattr(DaskRows, member) for member in ("margins", "gradient", "add_gram"))
    largest, gather = [], _rows.gather

    def recording(client, futures, what):
        out = gather(client, futures, what)
        largest[-1] = max(largest[-1], max(map(_nbytes, out)))
        return out

    monkeypatch.setattr(_rows, "gather", recording)
    m = 40
    for n in (2000, 8000):
        X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=3,
                                   random_state=1)
        params = dict(n_basis=m, basis=FixedBasis(X[:m]), gamma=0.3, C=10.0, tol=1e-10,
                      class_weight=class_weight)
        largest.append(0)
        model = LowRankSVC(**params).fit(da.from_array(X, chunks=(1000, -1)),
                                         da.from_array(y, chunks=1000))
        ref = LowRankSVC(**params).fit(X, y)
        a = ref.decision_function(X)
        np.testing.assert_allclose(model.decision_function(X), a, rtol=1e-6,
                                   atol=1e-6 * np.abs(a).max())
    assert largest[0] == largest[1] <= 8 * 3 * (m + 2) ** 2  # (k = 3 squares, a gradient)


@pytest.mark.parametrize("Estimator", [ReducedSVC, ReducedSVR])
def test_reduced_svm_on_a_dask_array_is_the_in_memory_model(client, Estimator, rng):
    """ReducedSVC and ReducedSVR (newton_ovr, the squared hinge or the exact
    epsilon-insensitive loss) on K(X_p, Z) kept on the workers, with their per-row state:
    the in-memory model, for the same
    basis and gamma."""
    # (the provider has no per-row members: n x k values cannot cross)
    assert not any(hasattr(DaskRows, member) for member in ("margins", "gradient", "add_gram"))
    X, y = make_classification(n_samples=900, n_features=6, n_classes=3, n_informative=4,
                               random_state=7)
    if Estimator is ReducedSVR:
        y = X @ rng.normal(size=6) + 0.1 * rng.normal(size=len(X))
    sw = rng.uniform(0.5, 2.0, len(X))
    params = dict(n_basis=40, basis=FixedBasis(X[::20][:40]), gamma=0.2, C=10.0, tol=1e-10)
    ref = Estimator(**params).fit(X, y, sample_weight=sw)
    model = Estimator(**params).fit(da.from_array(X, chunks=(200, -1)), y,
                                    sample_weight=da.from_array(sw, chunks=200))
    fn = "decision_function" if Estimator is ReducedSVC else "predict"
    a, b = getattr(ref, fn)(X), getattr(model, fn)(X)
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6 * np.abs(a).max())
    with pytest.raises(ValueError, match="n_basis=None"):
        Estimator(n_basis=None).fit(da.from_array(X, chunks=200), y)


@pytest.mark.parametrize("Estimator", [LSSVC, LSSVR])
def test_reduced_lssvm_on_a_dask_array_is_the_in_memory_model(client, Estimator, rng):
    """The reduced LS-SVM: each chunk's moments summed on the workers give the in-memory
    solution, and partial_fit continues from them as from a fit in memory."""
    X, y = make_classification(n_samples=800, n_features=6, n_classes=3, n_informative=4,
                               random_state=8)
    if Estimator is LSSVR:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
    sw = rng.uniform(0.5, 2.0, len(X))
    params = dict(n_basis=40, basis=FixedBasis(X[::20]), gamma=0.2, C=10.0)
    ref = Estimator(**params).fit(X, y, sample_weight=sw)
    model = Estimator(**params).fit(da.from_array(X, chunks=(150, -1)),
                                    da.from_array(y, chunks=150), sample_weight=sw)
    fn = "decision_function" if Estimator is LSSVC else "predict"
    a = getattr(ref, fn)(X)
    np.testing.assert_allclose(getattr(model, fn)(X), a, rtol=1e-6,
                               atol=1e-6 * np.abs(a).max())
    ref.partial_fit(X[:100], y[:100])
    model.partial_fit(X[:100], y[:100])
    np.testing.assert_allclose(getattr(model, fn)(X), getattr(ref, fn)(X), rtol=1e-6,
                               atol=1e-6 * np.abs(a).max())


@pytest.mark.parametrize("method", ["nystrom", "reduced"])
def test_reduced_kpca_on_a_dask_array_is_the_in_memory_transform(client, method, rng):
    """Each chunk's moments accumulated by its worker and merged: the in-memory components
    (up to each one's sign), and a lazy transform of a dask array."""
    X = rng.normal(size=(700, 5)) + 3.0  # an offset: the merge must not cancel
    sw = rng.uniform(0.5, 2.0, len(X))
    params = dict(n_components=4, n_basis=30, basis=FixedBasis(X[:30]), method=method)
    ref = ReducedKernelPCA(**params).fit(X, sample_weight=sw)
    model = ReducedKernelPCA(**params).fit(da.from_array(X, chunks=(130, -1)),
                                           sample_weight=da.from_array(sw, chunks=130))
    a, b = ref.transform(X), model.transform(X)
    signs = np.sign(np.sum(a * b, axis=0))
    np.testing.assert_allclose(b * signs, a, rtol=1e-6, atol=1e-6 * np.abs(a).max())
    np.testing.assert_allclose(model.explained_variance_, ref.explained_variance_, rtol=1e-8)
    lazy = model.transform(da.from_array(X, chunks=(130, -1)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), b, rtol=1e-12, atol=1e-12)
    assert model.gamma_ == pytest.approx(ref.gamma_, rel=1e-12)


def test_nystrom_features_fit_on_a_dask_array_give_the_in_memory_map(client, rng):
    """NystromFeatures fits a dask array through the same input as the machines: gamma
    from every row, landmarks on the sample (all rows here, in order), the rows' numbers
    as basis_indices_; the map and the features are the in-memory ones."""
    from sparsekernel import NystromFeatures

    X = rng.normal(size=(900, 5))
    params = dict(n_basis=40, basis="random", random_state=3)
    ref = NystromFeatures(**params).fit(X)
    model = NystromFeatures(**params).fit(da.from_array(X, chunks=(250, -1)))
    assert model.gamma_ == pytest.approx(ref.gamma_, rel=1e-12)
    np.testing.assert_array_equal(model.basis_indices_, ref.basis_indices_)
    np.testing.assert_allclose(model.normalization_, ref.normalization_, rtol=1e-10,
                               atol=1e-12 * np.abs(ref.normalization_).max())
    np.testing.assert_allclose(model.transform(X), ref.transform(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["NystromFeatures", "ReducedFeatures", "ReducedKernelSIR",
                                  "ReducedKernelCCA"])
def test_transformers_transform_dask_input_lazily(client, name, rng):
    """Every transformer fitted in memory maps a dask array block by block: a lazy dask
    array, equal to the in-memory transform."""
    import sparsekernel

    X = rng.normal(size=(400, 4))
    y = X[:, :1] ** 2 + 0.1 * rng.normal(size=(400, 1))
    est = getattr(sparsekernel, name)(n_basis=30, random_state=0)
    if name.startswith("ReducedKernel"):
        est.set_params(n_components=2)
        est.fit(X, y if name == "ReducedKernelCCA" else y.ravel())
    else:
        est.fit(X)
    lazy = est.transform(da.from_array(X, chunks=(150, -1)))
    assert isinstance(lazy, da.Array) and lazy.chunks[0] == (150, 150, 100)
    np.testing.assert_allclose(lazy.compute(), est.transform(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_logistic_regression_on_a_dask_array_is_the_in_memory_model(client,
                                                                          n_classes):
    """The logistic Newton solver on the workers' features: the in-memory probabilities,
    binary and multinomial (its exact block Hessian summed chunk by chunk)."""
    X, y = make_classification(n_samples=900, n_features=6, n_informative=4,
                               n_classes=n_classes, random_state=9)
    params = dict(n_basis=40, basis=FixedBasis(X[:40]), gamma=0.2, C=10.0, tol=1e-10)
    ref = KernelLogisticRegression(**params).fit(X, y)
    model = KernelLogisticRegression(**params).fit(da.from_array(X, chunks=(200, -1)), y)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), rtol=1e-6,
                               atol=1e-9)
    proba = model.predict_proba(da.from_array(X, chunks=(200, -1)))
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-6, atol=1e-9)


def test_lowrank_on_csr_chunks_is_the_in_memory_model(client):
    """Chunks that are CSR matrices: the same model as the CSR fit in memory, gamma='scale'
    from the sparse entries' moments."""
    import scipy.sparse as sp

    X, y = make_classification(n_samples=500, n_features=12, random_state=5)
    X[np.abs(X) < 0.8] = 0.0
    Xs = sp.csr_matrix(X)
    params = dict(n_basis=30, basis=FixedBasis(X[:30]), C=5.0, tol=1e-10)
    ref = LowRankSVC(**params).fit(Xs, y)
    model = LowRankSVC(**params).fit(da.from_array(Xs, chunks=(130, 12), asarray=False), y)
    assert model.gamma_ == pytest.approx(ref.gamma_, rel=1e-12)
    np.testing.assert_allclose(model.decision_function(Xs), ref.decision_function(Xs),
                               rtol=1e-6, atol=1e-8)


def test_lowrank_on_a_dask_dataframe_keeps_its_column_names(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = make_classification(n_samples=600, n_features=5, random_state=1)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    params = dict(n_basis=40, basis=FixedBasis(X[:40]), gamma=0.3, C=5.0, tol=1e-10)
    ref = LowRankSVC(**params).fit(frame, y)
    model = LowRankSVC(**params).fit(dd.from_pandas(frame, npartitions=3),
                                     dd.from_pandas(pd.Series(y), npartitions=3))
    np.testing.assert_array_equal(model.feature_names_in_, ref.feature_names_in_)
    np.testing.assert_allclose(model.decision_function(frame), ref.decision_function(frame),
                               rtol=1e-6, atol=1e-8)


def test_features_over_the_per_worker_budget_are_recomputed_to_the_same_model(client,
                                                                            monkeypatch):
    """memory_budget is per worker: with features larger than half of it, the workers keep
    the X chunks and recompute the features in every task; the model is the same."""
    from sparsekernel.distributed import _rows

    stored = []
    init = _rows.DaskRows.__init__

    def spy(self, *args, **kwargs):
        stored.append(args[5])
        init(self, *args, **kwargs)

    monkeypatch.setattr(_rows.DaskRows, "__init__", spy)
    X, y = make_classification(n_samples=4000, n_features=5, random_state=10)
    params = dict(n_basis=60, basis=FixedBasis(X[:60]), gamma=0.3, C=10.0, tol=1e-10)
    Xd = da.from_array(X, chunks=(500, -1))
    kept = LowRankSVC(**params).fit(Xd, y)
    recomputed = LowRankSVC(**params, memory_budget="1MB").fit(Xd, y)  # shares ~1 MB
    assert stored == [True, False]
    np.testing.assert_allclose(recomputed.decision_function(X), kept.decision_function(X),
                               rtol=1e-10, atol=1e-12)


def test_auto_sizes_the_basis_for_all_the_rows_not_the_sample(client, monkeypatch):
    """n_basis='auto' chosen on the sample is extrapolated to every row, as in memory (the
    sample's own rows alone would ask for far fewer basis functions)."""
    from sparsekernel.distributed import _rows

    monkeypatch.setattr(_rows, "DASK_SAMPLE", 1500)
    X, y = make_classification(n_samples=8000, n_features=8, n_informative=6, random_state=0)
    params = dict(C=100.0, basis="random", random_state=0)
    on_dask = LowRankSVC(**params).fit(da.from_array(X, chunks=(2000, -1)), y)
    m_dask = on_dask.basis_.shape[0]
    m_memory = LowRankSVC(**params).fit(X, y).basis_.shape[0]
    m_sample = LowRankSVC(**params).fit(X[:1500], y[:1500]).basis_.shape[0]
    assert abs(m_dask - m_memory) <= 0.1 * m_memory < m_memory - m_sample


def test_up_to_the_sample_size_a_seed_draws_the_in_memory_landmarks(client):
    """With at most DASK_SAMPLE rows the sample is every row, in order: a named basis with
    the same random_state draws the in-memory fit's landmarks, so the model is the same."""
    X, y = make_classification(n_samples=1500, n_features=6, n_informative=4, random_state=5)
    params = dict(n_basis=40, basis="random", gamma=0.3, C=10.0, tol=1e-10, random_state=7)
    ref = LowRankSVC(**params).fit(X, y)
    model = LowRankSVC(**params).fit(da.from_array(X, chunks=(400, -1)), y)
    np.testing.assert_array_equal(model.basis_indices_, ref.basis_indices_)
    a = ref.decision_function(X)
    np.testing.assert_allclose(model.decision_function(X), a, rtol=0,
                               atol=1e-6 * np.abs(a).max())


def test_the_landmark_sample_is_uniform_over_the_chunks():
    """Beyond DASK_SAMPLE rows the sample is a uniform draw from all the rows: every chunk,
    whatever its size, gives rows in proportion to its length (within five binomial
    standard deviations), and the rows returned are X's at the sampled indices."""
    from sparsekernel.distributed._rows import sample_rows

    X = np.arange(40_000, dtype=float).reshape(-1, 2)  # row i holds 2i, 2i + 1
    sizes = (1_000, 9_000, 4_000, 6_000)
    y = da.from_array(np.arange(20_000.0), chunks=(sizes,))
    ids, rows, labels = sample_rows(da.from_array(X, chunks=(sizes, -1)), 2_000,
                                    random_state=0, y=y)
    assert len(ids) == 2_000 == len(np.unique(ids))
    np.testing.assert_array_equal(rows, X[ids])
    np.testing.assert_array_equal(labels, ids)
    counts = np.histogram(ids, bins=np.r_[0, np.cumsum(sizes)])[0]
    share = np.array(sizes) / sum(sizes)
    spread = 5 * np.sqrt(2_000 * share * (1 - share))
    assert (np.abs(counts - 2_000 * share) < spread).all(), counts


def test_gamma_scale_comes_from_every_row_and_the_basis_from_the_rows(client):
    """gamma='scale' is the full data's (a reduction, not the sample's), and the landmarks
    chosen on the sample are rows of X at ``basis_indices_``."""
    X, y = make_classification(n_samples=900, n_features=6, random_state=2)
    X[:450] *= 3.0  # the first chunks alone would give another scale
    Xd = da.from_array(X, chunks=(150, -1))
    model = LowRankSVC(n_basis=30, basis="random", C=1.0, random_state=0).fit(Xd, y)
    assert model.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()), rel=1e-10)
    np.testing.assert_array_equal(X[model.basis_indices_], model.basis_)


def test_dask_input_bad_cases_name_what_is_wrong(client):
    X, y = make_classification(n_samples=200, n_features=4, random_state=4)
    Xd = da.from_array(X, chunks=50)
    with pytest.raises(ValueError, match="loss='squared_hinge'.*loss='hinge'"):
        LowRankSVC(loss="hinge", n_basis=10).fit(Xd, y)
    with pytest.raises(ValueError, match="200 rows but y has 199"):
        LowRankSVC(n_basis=10).fit(Xd, y[:-1])
    model = LowRankSVC(n_basis=10)
    with pytest.raises(ValueError):
        model.fit(Xd, y[:-1])
    assert not hasattr(model, "coef_")  # a failed fit leaves the estimator as it was


def _fit_in_thread(model, *args):
    """Start ``model.fit(*args)`` in a thread: ``(thread, result)``, where ``result`` gets
    the fitted "model" or the "error" the fit raised."""
    import threading

    result = {}

    def fit():
        try:
            result["model"] = model.fit(*args)
        except BaseException as exc:  # reported by the caller
            result["error"] = exc

    thread = threading.Thread(target=fit)
    thread.start()
    return thread, result


def test_a_worker_killed_during_the_fit_gives_the_same_model():
    """The chunk features a killed worker held are recomputed from the collection's graph
    and its tasks rerun: the fit completes, and it is the undisturbed fit."""
    import os
    import signal
    import time

    X, y = make_classification(n_samples=20_000, n_features=10, n_informative=6,
                               n_classes=3, random_state=6)
    params = dict(n_basis=300, basis=FixedBasis(X[:300]), gamma=0.1, C=10.0, tol=1e-8)
    Xd, yd = da.from_array(X, chunks=(2500, -1)), da.from_array(y, chunks=2500)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        client.run(lambda: __import__("sparsekernel.distributed._rows"))
        thread, result = _fit_in_thread(LowRankSVC(**params), Xd, yd)
        killed, deadline = None, time.monotonic() + 60
        while killed is None and time.monotonic() < deadline and thread.is_alive():
            for address, keys in client.processing().items():
                if any(str(k).startswith("_state_op") for k in keys):
                    os.kill(pids[address], signal.SIGKILL)
                    killed = address
                    break
            time.sleep(0.002)
        running = thread.is_alive()
        thread.join(timeout=120)
        assert killed is not None and running, "no solver pass was seen running"
        assert "error" not in result, result.get("error")
        undisturbed = LowRankSVC(**params).fit(Xd, yd)
    np.testing.assert_allclose(result["model"].decision_function(X),
                               undisturbed.decision_function(X), rtol=1e-10, atol=1e-10)


def test_scale_gamma_from_chunks_does_not_cancel_an_offset(rng):
    import scipy.sparse as sp

    from sparsekernel.distributed._rows import scale_gamma

    X = rng.normal(size=(500, 3)) * 0.01 + 1e4
    expected = 1.0 / (3 * X.var())
    assert scale_gamma(da.from_array(X, chunks=(77, -1))) == pytest.approx(expected, rel=1e-9)
    S = sp.random(400, 6, density=0.2, format="csr", random_state=0)
    expected = 1.0 / (6 * S.toarray().var())
    got = scale_gamma(da.from_array(S, chunks=(90, -1), asarray=False))
    assert got == pytest.approx(expected, rel=1e-12)


def test_libsvm_files_read_by_the_workers_fit_the_in_memory_model(client, tmp_path):
    """Each file one CSR chunk read where it is used, the width the largest index of any
    file: the model of the rows loaded in memory."""
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file

    from sparsekernel.distributed import read_libsvm

    X, y = make_classification(n_samples=600, n_features=7, random_state=11)
    X[np.abs(X) < 0.5] = 0.0
    X[:200, -1] = 0.0  # the first file never uses the last feature
    paths = []
    for i, rows in enumerate((slice(0, 200), slice(200, 450), slice(450, 600))):
        paths.append(tmp_path / f"part{i}.libsvm")
        dump_svmlight_file(X[rows], y[rows], str(paths[-1]), zero_based=False)
    Xd, yd = read_libsvm(paths)
    assert Xd.shape == (600, 7) and Xd.chunks[0] == (200, 250, 150)
    params = dict(n_basis=30, basis=FixedBasis(X[:30]), gamma=0.3, C=5.0, tol=1e-10)
    model = LowRankSVC(**params).fit(Xd, yd)
    ref = LowRankSVC(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="n_features=5, but .*part0"):
        read_libsvm(paths, n_features=5)


def test_a_cluster_without_workers_ends_the_fit_with_a_clear_error(monkeypatch):
    """The cluster's only worker gone during a gradient pass (scaled to zero): the fit ends
    with an error naming the missing workers within the grace period, not a wait without
    end, and the estimator is as it was."""
    import time

    from sparsekernel.distributed import _cluster

    monkeypatch.setattr(_cluster, "NO_WORKER_GRACE", 2.0)
    X, y = make_classification(n_samples=20_000, n_features=10, random_state=6)
    params = dict(n_basis=300, basis=FixedBasis(X[:300]), gamma=0.1, C=10.0, tol=1e-8)
    Xd, yd = da.from_array(X, chunks=(2500, -1)), da.from_array(y, chunks=2500)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        model = LowRankSVC(**params)
        thread, result = _fit_in_thread(model, Xd, yd)
        gone, deadline = False, time.monotonic() + 60
        while not gone and time.monotonic() < deadline and thread.is_alive():
            if any(str(k).startswith("_state_op") for keys in client.processing().values()
                   for k in keys):
                cluster.scale(0)
                gone = True
            time.sleep(0.002)
        thread.join(timeout=60)
        assert gone and not thread.is_alive()
    assert isinstance(result.get("error"), RuntimeError), result
    assert "no worker" in str(result["error"]) and "LowRankSVC" in str(result["error"])
    assert not hasattr(model, "coef_")


def test_an_interrupted_fit_cancels_its_tasks_and_leaves_the_estimator(client, monkeypatch):
    """Ctrl-C during a Dask fit (a KeyboardInterrupt between Newton steps): the estimator
    is as it was and the cluster holds none of the fit's features or tasks."""
    import time

    newton_ovr = importlib.import_module("sparsekernel.solvers.newton_ovr")

    X, y = make_classification(n_samples=2000, n_features=6, random_state=2)
    Xd = da.from_array(X, chunks=(500, -1))
    model = LowRankSVC(n_basis=40, basis=FixedBasis(X[:40]), gamma=0.2).fit(X, y)
    before = model.coef_.copy()

    def interrupt(self, todo, D):
        raise KeyboardInterrupt

    def keys(dask_scheduler):
        return set(dask_scheduler.tasks)

    gc.collect()  # (futures of earlier tests in reference cycles: not this fit's)
    earlier = client.run_on_scheduler(keys)
    monkeypatch.setattr(newton_ovr._Newton, "step", interrupt)
    with pytest.raises(KeyboardInterrupt):
        model.fit(Xd, y)
    np.testing.assert_array_equal(model.coef_, before)
    deadline = time.monotonic() + 10
    while left := client.run_on_scheduler(keys) - earlier:
        assert time.monotonic() < deadline, f"tasks left on the cluster: {sorted(left)[:5]}"
        time.sleep(0.05)


def _unaligned(a):
    """A copy of ``a`` whose data starts one byte off its itemsize's alignment (as an array
    received inside a message frame may)."""
    buf = np.empty(a.nbytes + 64, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + 1
    out = np.frombuffer(buf[start:start + a.nbytes], dtype=a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_chunks_received_unaligned_give_the_same_sums(rng):
    """A chunk (or the state's targets and an iterate) that arrives unaligned is
    multiplied as the aligned one is, to the last bit: where a chunk travelled does not
    change the model."""
    from sparsekernel.distributed import _rows
    from sparsekernel.solvers.newton_ovr import HingeRows

    F = rng.normal(size=(3000, 40)).astype(np.float32)
    Y = np.where(rng.random((3000, 2)) < 0.5, 1.0, -1.0)
    Z = rng.normal(size=(41, 2))
    results = []
    for chunk, targets, iterate in ((F, Y, Z), (_unaligned(F), _unaligned(Y), _unaligned(Z))):
        state = _rows._new_state(targets, None, HingeRows)
        state = _rows._state_op(chunk, state, None, "test",
                                (np.array([0, 1]), 3.0, [-1, -1], False,
                                 [(0, None, np.float32)], iterate), True, 40)
        results.append((state.f, state.result[0], state.result[2][0], state.result[3]))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
