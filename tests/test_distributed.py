"""MapReduceSVC (MRRSVM on Dask) and block-wise prediction."""

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, make_blobs, make_moons

from sparsekernel import ReducedSVC, SmoothSVC
from sparsekernel.basis import RandomBasis
from sparsekernel.distributed import MapReduceSVC, _mapreduce, _parts, parallel_predict
from sparsekernel.distributed._parts import deal, start_offsets

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

PARAMS = dict(gamma=2.0, C=10.0, n_basis=20, random_state=0)


def _mr(n_parts, **params):
    """MapReduceSVC with 20 basis functions per part (n_basis counts all of them)."""
    return MapReduceSVC(n_parts=n_parts, **{**PARAMS, "n_basis": 20 * n_parts, **params})


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(800, noise=0.15, random_state=0)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def _same_model(a, b, exact=True):
    for name in ("basis_", "part_coef_", "part_intercept_", "coef_", "intercept_"):
        u, v = (x.toarray() if sp.issparse(x) else x for x in (getattr(a, name), getattr(b, name)))
        if exact:
            np.testing.assert_array_equal(u, v, err_msg=name)
        else:
            np.testing.assert_allclose(u, v, rtol=1e-8, atol=1e-10, err_msg=name)


# ---------------------------------------------------------------- the deal into parts
def test_deal_gives_every_part_floor_or_ceil_of_each_class():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=1000)
    counts = np.bincount(codes)
    n_parts = 7
    part = deal(codes, 3, n_parts, start_offsets(counts[None], n_parts)[0], rng)
    table = np.array([[np.sum((part == p) & (codes == k)) for k in range(3)]
                      for p in range(n_parts)])
    assert np.all(table >= counts // n_parts) and np.all(table <= -(-counts // n_parts))
    sizes = table.sum(axis=1)
    assert sizes.max() - sizes.min() <= 1


def test_deal_over_blocks_is_as_balanced_as_one_deal():
    rng = np.random.default_rng(1)
    blocks = [rng.integers(0, 2, size=n) for n in (13, 40, 7, 29)]
    counts = np.array([np.bincount(b, minlength=2) for b in blocks])
    n_parts = 5
    offsets = start_offsets(counts, n_parts)
    parts = np.concatenate([deal(b, 2, n_parts, offsets[i], rng)
                            for i, b in enumerate(blocks)])
    codes = np.concatenate(blocks)
    total = counts.sum(axis=0)
    for k in range(2):
        per_part = np.bincount(parts[codes == k], minlength=n_parts)
        assert per_part.max() - per_part.min() <= 1 and per_part.sum() == total[k]


# ------------------------------------------------------------------ correctness
def test_one_part_equals_reduced_svc_then_linear_ssvm(moons):
    X, y = moons
    mr = _mr(1, final_C=3.0).fit(X, y)
    part = ReducedSVC(gamma=2.0, C=10.0, basis=mr.basis_).fit(X, y)
    np.testing.assert_allclose(mr.part_decision_function(X)[:, 0], part.decision_function(X),
                               rtol=1e-6, atol=1e-8)
    table = part.decision_function(mr.basis_)[:, None]
    final = SmoothSVC(kernel="linear", C=3.0).fit(table, _labels_of(mr.basis_, X, y))
    expected = final.decision_function(part.decision_function(X)[:, None])
    np.testing.assert_allclose(mr.decision_function(X), expected, rtol=1e-6, atol=1e-8)


def _labels_of(Z, X, y):
    """Labels of the rows of X equal to the rows of Z (the reduced set is training rows)."""
    idx = [int(np.flatnonzero((X == z).all(axis=1))[0]) for z in Z]
    return y[idx]


def test_same_random_state_gives_identical_models(moons):
    X, y = moons
    a = _mr(3).fit(X, y)
    b = _mr(3).fit(X, y)
    _same_model(a, b)
    c = _mr(3, random_state=1).fit(X, y)
    assert not np.array_equal(a.basis_, c.basis_)
    assert a.score(X, y) > 0.95 and a.part_n_samples_.sum() == len(y)
    assert np.ptp(a.part_n_samples_) <= 1


def test_dask_array_in_one_chunk_equals_numpy_and_many_chunks_stay_balanced(moons):
    X, y = moons
    ref = _mr(3).fit(X, y)
    one = _mr(3).fit(da.from_array(X, chunks=(800, 2)), da.from_array(y, chunks=800))
    _same_model(ref, one)
    four = _mr(3, n_jobs=2).fit(
        da.from_array(X, chunks=(200, 2)), da.from_array(y, chunks=200))
    assert four.score(X, y) > 0.95 and np.ptp(four.part_n_samples_) <= 1
    # Weights follow their rows through the deal (dask weights rechunked to X's chunks).
    ones = _mr(3).fit(
        da.from_array(X, chunks=(200, 2)), y, sample_weight=da.ones(len(y), chunks=400))
    _same_model(four, ones)
    heavy = _mr(3).fit(
        da.from_array(X, chunks=(200, 2)), y, sample_weight=np.where(y == 1, 3.0, 1.0))
    assert not np.allclose(heavy.coef_, four.coef_)


def test_libsvm_files_read_by_workers_equal_dask_chunks(moons, tmp_path):
    X, y = moons
    y_pm = np.where(y == 1, 1.0, -1.0)
    paths = []
    for i, rows in enumerate((slice(0, 500), slice(500, 800))):
        paths.append(tmp_path / f"part{i}.svm")
        dump_svmlight_file(X[rows], y_pm[rows], str(paths[-1]), zero_based=False)
    from_files = _mr(2).fit([str(p) for p in paths])
    chunks = _mr(2).fit(da.from_array(X, chunks=((500, 300), 2)),
                        da.from_array(y_pm, chunks=((500, 300),)))
    assert sp.issparse(from_files.basis_)
    _same_model(from_files, chunks, exact=False)
    with pytest.raises(ValueError, match="labels come from the files"):
        MapReduceSVC(n_parts=2).fit([str(p) for p in paths], y_pm)


def test_multiclass_is_one_vs_rest_on_all_part_scores():
    X, y = make_blobs(600, centers=3, cluster_std=1.0, random_state=0)
    labels = np.array(["a", "b", "c"])[y]
    mr = MapReduceSVC(n_parts=2, gamma=0.5, n_basis=30, random_state=0).fit(X, labels)
    assert mr.part_coef_.shape == (30, 6) and mr.coef_.shape == (3, 6)
    assert mr.decision_function(X).shape == (600, 3)
    assert set(mr.predict(X)) <= set(labels) and mr.score(X, labels) > 0.85


def test_n_basis_counts_every_basis_function_split_over_the_parts(moons):
    X, y = moons
    mr = MapReduceSVC(n_parts=3, n_basis=10, gamma=2.0, random_state=0).fit(X, y)
    assert mr.basis_.shape[0] == mr.n_support_ == 10
    np.testing.assert_array_equal(np.diff(mr.part_offsets_), [4, 3, 3])
    frac = MapReduceSVC(n_parts=3, n_basis=0.1, gamma=2.0, random_state=0).fit(X, y)
    assert frac.basis_.shape[0] == 80


class _Recording(RandomBasis):
    """Random rows; records the kernel of every call (the embedded cluster runs parts in
    this process, so the module-level list sees the workers' calls)."""

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        _KERNELS_SEEN.append(kernel)
        return super().select(X, y, n_basis=n_basis, random_state=random_state)


_KERNELS_SEEN = []


def test_parts_hand_their_selector_the_resolved_kernel(moons):
    X, y = moons
    _KERNELS_SEEN.clear()
    mr = MapReduceSVC(n_parts=2, kernel="laplacian", n_basis=20, basis=_Recording(),
                      random_state=0).fit(X, y)
    assert len(_KERNELS_SEEN) == 2
    for kernel in _KERNELS_SEEN:
        assert kernel.name == "laplacian" and kernel.gamma == mr.gamma_
    assert mr.gamma_ == pytest.approx(1 / (2 * X.var()))  # 'scale' resolved on all rows


def test_verbose_2_reports_parts_and_final_solves(moons, capfd):
    X, y = moons
    _mr(2, verbose=2).fit(X, y)
    err = capfd.readouterr().err
    assert "[MapReduceSVC] part 0 fitted" in err and "[MapReduceSVC] part 1 fitted" in err
    assert "[MapReduceSVC] solved" in err


def test_sparse_float32_input_and_sample_weight(moons):
    X, y = moons
    Xs = sp.csr_matrix(X.astype(np.float32))
    mr = _mr(2).fit(Xs, y, sample_weight=np.full(len(y), 2.0))
    assert sp.issparse(mr.basis_) and mr.basis_.dtype == np.float32
    assert mr.score(Xs, y) > 0.95


# ------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    ({"n_parts": 0}, "'n_parts' parameter"),
    ({"client": 3}, "'client' parameter"),
    ({"n_jobs": 0}, "'n_jobs' parameter"),
    ({"final_C": -1.0}, "'final_C' parameter"),
    ({"n_parts": 500}, "at least n_parts samples"),
    ({"basis": "kmeans"}, "not training rows"),
])
def test_bad_parameters_name_the_problem(moons, params, match):
    X, y = moons
    with pytest.raises(ValueError, match=match):
        MapReduceSVC(**{**PARAMS, "n_basis": 5, **params}).fit(X, y)


@pytest.mark.parametrize("n_basis", [3, 0.004])  # 0.004 of 800 rows: 4 basis functions
@pytest.mark.parametrize("dask_input", [False, True])
def test_fewer_basis_functions_than_parts_are_refused_before_the_map(moons, n_basis,
                                                                       dask_input, capfd):
    X, y = moons
    if dask_input:
        X, y = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    with pytest.raises(ValueError, match=rf"n_parts=5 parts.*n_basis={n_basis!r} gives [34] "
                                         r"on 800 samples\. Raise n_basis or lower n_parts"):
        MapReduceSVC(**{**PARAMS, "n_basis": n_basis, "n_parts": 5}).fit(X, y)
    assert "ERROR" not in capfd.readouterr().err  # no part reached a worker


def test_one_class_and_wrong_width_are_rejected(moons):
    X, y = moons
    with pytest.raises(ValueError, match="at least 2 classes"):
        MapReduceSVC(n_parts=2).fit(X, np.zeros(len(y)))
    mr = _mr(2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        mr.predict(np.ones((3, 5)))


# ---------------------------------------------------------- clusters and prediction
def test_users_cluster_by_address_gives_the_embedded_result(moons):
    X, y = moons
    ref = _mr(3).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        by_address = _mr(3, client=cluster.scheduler_address).fit(X, y)
        with distributed.Client(cluster, set_as_default=False) as client:
            by_client = _mr(3, client=client).fit(X, y)
            assert client.status == "running"  # a user's client is left open
            # A fitted model travels to workers (parallel_predict): the Client pickles as
            # its address, and the estimator keeps its Client.
            restored = pickle.loads(pickle.dumps(by_client))
            assert restored.client == cluster.scheduler_address and by_client.client is client
    _same_model(ref, by_address, exact=False)
    _same_model(ref, by_client, exact=False)


def test_parallel_predict_matches_numpy_for_any_model(moons):
    X, y = moons
    Xd = da.from_array(X, chunks=(300, 1))
    red = ReducedSVC(**PARAMS).fit(X, y)
    np.testing.assert_array_equal(parallel_predict(red, Xd).compute(scheduler="sync"),
                                  red.predict(X))
    Xb, yb = make_blobs(300, centers=3, random_state=0)
    multi = ReducedSVC(n_basis=10, random_state=0).fit(Xb, yb)
    scores = parallel_predict(multi, da.from_array(Xb, chunks=(100, 2)), "decision_function")
    assert scores.shape == (300, 3)
    np.testing.assert_allclose(scores.compute(scheduler="sync"), multi.decision_function(Xb))
    mr = _mr(2).fit(X, y)
    np.testing.assert_allclose(mr.decision_function(Xd).compute(scheduler="sync"),
                               mr.decision_function(X))
    with pytest.raises(TypeError, match="dask array"):
        parallel_predict(red, X)
    with pytest.raises(ValueError, match="method"):
        parallel_predict(red, Xd, method="fit")


def test_parallel_predict_partition_function_keeps_the_index():
    pd = pytest.importorskip("pandas")
    from sparsekernel.distributed._predict import _apply_frame

    X, y = make_moons(60, random_state=0)
    model = ReducedSVC(n_basis=10, random_state=0).fit(X, y)
    frame = pd.DataFrame(X[10:20], index=np.arange(110, 120))
    out = _apply_frame(frame, model, "predict")
    assert list(out.index) == list(range(110, 120))
    np.testing.assert_array_equal(out.to_numpy(), model.predict(X[10:20]))


def test_save_load_round_trip(moons, tmp_path):
    from sparsekernel.io import load, save

    X, y = moons
    mr = _mr(2).fit(X, y)
    save(mr, tmp_path / "mr.skm")
    back = load(tmp_path / "mr.skm")
    np.testing.assert_array_equal(back.decision_function(X), mr.decision_function(X))


# --------------------------------------------------------------------- optional extra
_NO_DASK = textwrap.dedent("""
    import sys, importlib.abc
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("dask", "distributed"):
                raise ModuleNotFoundError(f"No module named {name!r}")
    sys.meta_path.insert(0, Block())
    import numpy as np
    import sparsekernel
    from sparsekernel import MapReduceSVC, ReducedSVC
    from sparsekernel.io import save, load
    from sklearn.datasets import make_moons
    X, y = make_moons(200, random_state=0)
    m = ReducedSVC(n_basis=20, random_state=0).fit(X, y)
    save(m, sys.argv[1]); assert (load(sys.argv[1]).predict(X) == m.predict(X)).all()
    try:
        MapReduceSVC(n_parts=2).fit(X, y)
    except ImportError as exc:
        assert "sparsekernel[distributed]" in str(exc), exc
    else:
        raise AssertionError("fit without dask did not raise")
    assert not [k for k in sys.modules if k.split(".")[0] in ("dask", "distributed")]
    print("ok")
""")


def test_package_works_without_dask(tmp_path):
    out = subprocess.run([sys.executable, "-c", _NO_DASK, str(tmp_path / "m.skm")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_import_does_not_import_dask():
    code = ("import sys, sparsekernel, sparsekernel.distributed; "
            "print([k for k in sys.modules if k.split('.')[0] in ('dask', 'distributed')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


# ----------------------------------------------------------------- fault tolerance
def _kill_first_worker_running(client, prefix, pids, deadline):
    """SIGKILL the process of the first worker found processing a task named prefix*."""
    while time.monotonic() < deadline:
        for address, keys in client.processing().items():
            if any(str(k).startswith(prefix) for k in keys):
                os.kill(pids[address], signal.SIGKILL)
                return address
        time.sleep(0.005)
    return None


def test_killed_worker_during_map_does_not_lose_the_fit():
    X, y = make_moons(12_000, noise=0.2, random_state=0)
    params = dict(n_parts=4, gamma=2.0, C=10.0, n_basis=1200, random_state=0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        pids = client.run(os.getpid)
        client.run(lambda: __import__("sparsekernel.svm"))  # warm imports: a fair race
        result = {}

        def fit():
            try:
                result["model"] = MapReduceSVC(client=client, **params).fit(X, y)
            except BaseException as exc:  # reported below
                result["error"] = exc

        worker = threading.Thread(target=fit)
        worker.start()
        killed = _kill_first_worker_running(client, "fit_part", pids, time.monotonic() + 30)
        map_running = worker.is_alive()
        worker.join(timeout=60)
        assert killed is not None, "no map task was seen running"
        assert map_running, "the fit ended before the worker was killed"
        assert "error" not in result, result.get("error")
        assert killed not in client.scheduler_info()["workers"]
        undisturbed = MapReduceSVC(client=client, **params).fit(X, y)
    _same_model(result["model"], undisturbed)


def test_parallel_predict_over_a_dask_dataframe_keeps_rows_and_index(moons):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")  # needs pyarrow
    X, y = moons
    frame = pd.DataFrame(X, columns=["a", "b"], index=np.arange(1000, 1000 + len(X)))
    ddf = dd.from_pandas(frame, npartitions=3)
    model = ReducedSVC(**PARAMS).fit(frame, y)  # fitted with feature names
    labels = parallel_predict(model, ddf).compute(scheduler="sync")
    assert list(labels.index) == list(frame.index)
    np.testing.assert_array_equal(labels.to_numpy(), model.predict(frame))
    scores = parallel_predict(model, ddf, "decision_function").compute(scheduler="sync")
    np.testing.assert_allclose(scores.to_numpy(), model.decision_function(frame))


# ------------------------------------------------------- a cluster that cannot run the fit
def _state(model):
    """The estimator's attribute bindings (what fit_transaction restores)."""
    return {k: id(v) for k, v in vars(model).items()}


@pytest.fixture
def one_worker_cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield cluster, client


def _close_workers(cluster, client, deadline=10.0):
    cluster.scale(0)
    end = time.monotonic() + deadline
    while client.nthreads() and time.monotonic() < end:
        time.sleep(0.05)
    assert not client.nthreads(), "the workers did not close"


def test_no_workers_before_fit_raises_within_timeout_and_keeps_the_model(
        moons, one_worker_cluster):
    cluster, client = one_worker_cluster
    X, y = moons
    model = _mr(2, client=client, timeout=2.0).fit(X, y)
    before, coef = _state(model), model.coef_.copy()
    _close_workers(cluster, client)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"MapReduceSVC cannot run its tasks: the Dask "
                       r"cluster .* no worker .*Start workers"):
        model.fit(X, y)
    assert time.monotonic() - started < 2.0 + 3.0
    assert _state(model) == before
    np.testing.assert_array_equal(model.coef_, coef)


def test_workers_gone_mid_fit_raise_a_clear_error(one_worker_cluster):
    cluster, client = one_worker_cluster
    X, y = make_moons(6000, noise=0.2, random_state=0)
    model = MapReduceSVC(n_parts=2, gamma=2.0, n_basis=600, client=client, timeout=3.0,
                         random_state=0)
    result = {}

    def fit():
        try:
            model.fit(X, y)
        except BaseException as exc:  # checked below
            result["error"] = exc

    worker = threading.Thread(target=fit)
    worker.start()
    end = time.monotonic() + 10
    while not any(client.processing().values()) and time.monotonic() < end:
        time.sleep(0.005)
    _close_workers(cluster, client)
    worker.join(timeout=15)
    assert not worker.is_alive(), "the fit still waits on a cluster without workers"
    assert "error" in result, "the map step finished before the workers closed"
    assert isinstance(result["error"], RuntimeError | TimeoutError), result["error"]
    assert "no worker" in str(result["error"]) or "timeout=3" in str(result["error"])
    assert not hasattr(model, "coef_")


def test_timeout_cancels_the_map_step(moons, one_worker_cluster, monkeypatch):
    cluster, client = one_worker_cluster
    X, y = moons
    real_fit_part = _parts.fit_part

    def slow_fit_part(*args):
        time.sleep(3.0)
        return real_fit_part(*args)

    monkeypatch.setattr(_parts, "fit_part", slow_fit_part)
    with pytest.raises(TimeoutError, match=r"waited timeout=0.5 s .*0 of 2 tasks done.*larger "
                       r"timeout \(None: no limit\)"):
        _mr(2, client=client, timeout=0.5).fit(X, y)


def test_ctrl_c_cancels_the_map_tasks_and_propagates(moons, one_worker_cluster, monkeypatch):
    cluster, client = one_worker_cluster
    X, y = moons
    cancelled = []
    monkeypatch.setattr(client, "cancel", lambda futures: cancelled.extend(futures))

    def interrupted(*args):
        raise KeyboardInterrupt
        yield  # a generator, as the real one

    monkeypatch.setattr(_mapreduce, "iter_completed", interrupted)
    model = _mr(2, client=client)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    assert len(cancelled) == 2 and vars(model) == vars(_mr(2, client=client))


@pytest.mark.parametrize("timeout", [0, -1.0, "10", float("inf")])
def test_bad_timeout_is_rejected(moons, timeout):
    with pytest.raises(ValueError, match="'timeout' parameter"):
        _mr(2, timeout=timeout).fit(*moons)
    model = ReducedSVC(**PARAMS).fit(*moons)
    with pytest.raises(ValueError, match="'timeout' parameter of parallel_predict"):
        parallel_predict(model, da.from_array(moons[0], chunks=(400, 2)), timeout=timeout)


def test_parallel_predict_on_a_client_computes_the_result(moons, one_worker_cluster):
    _, client = one_worker_cluster
    X, y = moons
    model = ReducedSVC(**PARAMS).fit(X, y)
    Xd = da.from_array(X, chunks=(300, 2))
    for where in (client, client.scheduler.address):
        labels = parallel_predict(model, Xd, client=where, timeout=30.0)
        assert isinstance(labels, np.ndarray)
        np.testing.assert_array_equal(labels, model.predict(X))


def test_parallel_predict_on_a_cluster_without_workers_raises_within_its_timeout(
        moons, one_worker_cluster):
    """The workers are gone: a lazy result's compute() would wait forever; with a client
    (or a timeout) the wait is watched, cancelled and reported."""
    cluster, client = one_worker_cluster
    X, y = moons
    model = ReducedSVC(**PARAMS).fit(X, y)
    Xd = da.from_array(X, chunks=(300, 2))
    _close_workers(cluster, client)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"parallel_predict cannot run its tasks: the Dask "
                       r"cluster .* no worker .*the prediction was cancelled"):
        parallel_predict(model, Xd, client=client, timeout=2.0)
    assert time.monotonic() - started < 2.0 + 3.0


def test_parallel_predict_timeout_cancels_a_slow_prediction(moons, one_worker_cluster,
                                                            monkeypatch):
    from sparsekernel.distributed import _predict

    _, client = one_worker_cluster
    X, y = moons
    model = ReducedSVC(**PARAMS).fit(X, y)
    real_apply = _predict._apply

    def slow_apply(*args):
        time.sleep(3.0)
        return real_apply(*args)

    monkeypatch.setattr(_predict, "_apply", slow_apply)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"parallel_predict waited timeout=0.5 s .*0 of 1 "
                       r"tasks done.*larger timeout \(None: no limit\).*prediction was "
                       r"cancelled"):
        parallel_predict(model, da.from_array(X, chunks=(400, 2)), client=client, timeout=0.5)
    assert time.monotonic() - started < 0.5 + 2.0


def test_parallel_predict_timeout_needs_a_cluster(moons):
    model = ReducedSVC(**PARAMS).fit(*moons)
    with pytest.raises(ValueError, match="no default client: pass client="):
        parallel_predict(model, da.from_array(moons[0], chunks=(400, 2)), timeout=5.0)


# ---------------------------------------------------- part errors in the user's parameters
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow the error reports
def test_part_errors_name_mapreducesvc_parameters(moons):
    X, y = moons
    with pytest.raises(ValueError, match=r"MapReduceSVC\(n_parts=2, kernel='rbf', gamma=1.0, "
                       r"C=10.0, n_basis=40, max_iter=100\) failed to fit part \d .*non-finite"):
        _mr(2, gamma=1.0).fit(X * 1e160, y)


@pytest.mark.parametrize("scale", [1e-160, 1e160])
def test_scale_gamma_of_extreme_features_is_reported_before_the_parts(moons, scale):
    X, y = moons
    # numpy arrays go through resolve_gamma (whose overflow message stands), dask arrays
    # through the blocks' moments: both must name gamma='scale' and the features' scale.
    for data in (X * scale, da.from_array(X * scale, chunks=400)):
        with pytest.raises(ValueError, match=r"gamma='scale'.*(Standardize|standardize)"):
            _mr(2, gamma="scale").fit(data, da.from_array(y, chunks=400)
                                      if isinstance(data, da.Array) else y)
