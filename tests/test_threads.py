"""The process's worker pool behind ``map_threads``: order, nesting, failures, fork."""

import importlib
import multiprocessing
import threading

import pytest

from sparsekernel.compute import _threads
from sparsekernel.compute._threads import (
    blas_limit,
    blas_threads,
    map_balanced,
    map_threads,
    thread_plan,
)


def test_results_keep_order_and_threads_are_reused():
    names = set()

    def work(i):
        names.add(threading.current_thread().name)
        return i * i

    for _ in range(20):
        assert map_threads(work, range(9), 2) == [i * i for i in range(9)]
    # the caller and threads of the process's one pool, at most its size (which earlier
    # calls may have grown: newton_kernel's caller waits on two), not new ones per call
    workers = {n for n in names if n.startswith("sparsekernel")}
    assert 1 <= len(workers) <= _threads._POOL["size"]
    assert threading.current_thread().name in names


def test_nested_calls_run_serially_inside_a_worker():
    inner = map_threads(lambda i: map_threads(lambda j: i * j, range(4), 2), range(6), 2)
    assert inner == [[i * j for j in range(4)] for i in range(6)]


@pytest.mark.parametrize("mapper", [
    lambda fn, items: map_threads(fn, items, 2),
    # item 0 is the costliest: map_balanced starts it first
    lambda fn, items: map_balanced(fn, items, [200 - i for i in range(200)], 2),
], ids=["map_threads", "map_balanced"])
def test_a_failure_propagates_and_stops_handing_out_items(mapper):
    calls = []

    def work(i):
        calls.append(i)
        if i == 0:
            raise KeyError("first")
        threading.Event().wait(0.001)
        return i

    with pytest.raises(KeyError, match="first"):
        mapper(work, range(200))
    assert len(calls) < 200


def test_ctrl_c_in_the_callers_share_propagates_and_the_pool_survives():
    def work(i):
        if i == 2:  # item 2 is the calling thread's (items are dealt round-robin)
            raise KeyboardInterrupt
        return i

    with pytest.raises(KeyboardInterrupt):
        map_threads(work, range(10), 2)
    assert map_threads(lambda i: -i, range(5), 2) == [0, -1, -2, -3, -4]


def test_map_balanced_starts_the_costliest_first_on_pool_threads_only():
    started, lock = [], threading.Lock()
    costs = [3.0, 9.0, 1.0, 7.0, 5.0, 2.0]
    both = threading.Barrier(2, timeout=30)  # the first two run at once, on two threads

    def work(i):
        with lock:
            started.append((i, threading.current_thread().name))
        if i in (1, 3):
            both.wait()
        return 10 * i

    assert map_balanced(work, range(6), costs, 2) == [10 * i for i in range(6)]
    # two pool threads take items as they come free: the two costliest start first, the
    # cheapest last; the waiting caller runs none
    assert {i for i, _ in started[:2]} == {1, 3} and 2 in {i for i, _ in started[-2:]}
    assert all(name.startswith("sparsekernel") for _, name in started)
    assert map_balanced(lambda i: -i, range(3), [1, 1, 1], 1) == [0, -1, -2]  # serial


def test_map_balanced_ctrl_c_in_the_waiting_caller_stops_the_workers(monkeypatch):
    import time

    done, started = [], threading.Event()

    def work(i):
        started.set()
        time.sleep(0.01)
        done.append(i)

    workers = []

    def interrupted_wait(fn, items, n):
        # The workers' shares on a plain thread (map_threads from a foreign thread would
        # restore the BLAS limit out of order), the waiting caller interrupted.
        workers.append(threading.Thread(target=lambda: [fn(t) for t in list(items)[1:]]))
        workers[0].start()
        started.wait(5)
        raise KeyboardInterrupt  # as Ctrl-C would

    monkeypatch.setattr(_threads, "map_threads", interrupted_wait)
    with pytest.raises(KeyboardInterrupt):
        map_balanced(work, range(50), [1.0] * 50, 2)
    workers[0].join(5)
    assert not workers[0].is_alive() and len(done) <= 2


def _child_sum():
    return sum(map_threads(lambda i: i, range(10), 2))


def test_the_pool_is_rebuilt_in_a_forked_child():
    # The child inherits the parent's pool object but none of its threads: without the
    # rebuild the submitted item would wait forever.
    map_threads(lambda i: i, range(4), 2)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply_async(_child_sum).get(timeout=60) == 45


def test_blas_limit_follows_the_innermost_limit_and_is_restored():
    # spd_cholesky picks its routine from it (one BLAS thread: LAPACK without the GIL).
    assert blas_limit() is None
    with thread_plan():
        assert blas_limit() == 1
        with blas_threads(2):
            assert blas_limit() == 2
            with pytest.raises(RuntimeError), blas_threads(0):  # (at least one thread)
                assert blas_limit() == 1
                raise RuntimeError
            assert blas_limit() == 2
        assert blas_limit() == 1
    assert blas_limit() is None


def test_the_plan_and_the_blas_limit_follow_the_work_onto_pool_threads():
    """Context-local, not process-global: pool threads see the limit and the plan of the
    code that handed them the work, and another context (a thread of the caller's own)
    does not."""
    with thread_plan() as n:
        seen = map_threads(lambda _: (blas_limit(), _threads.planned_threads()), range(4), 2)
        assert seen == [(1, n)] * 4
        other = []
        thread = threading.Thread(target=lambda: other.append(blas_limit()))
        thread.start()
        thread.join()
        assert other == [None]
    assert map_threads(lambda _: blas_limit(), range(4), 2) == [1] * 4  # (held for the call)
    assert blas_limit() is None


@pytest.mark.parametrize(("tasks", "threads", "size", "expected"), [
    (1, 1, 10_000, (1, 1, 1)),       # one thread: nothing to split
    (3, 2, 1_800, (2, 1, 1)),        # dna's classes on 2 cores: side by side
    (26, 4, 1_800, (4, 1, 1)),       # letter on 4: side by side, one BLAS thread each
    (1, 2, 1_800, (1, 2, 1)),        # a lone system below LONE_SOLVE_MIN: products only
    (1, 16, 4_000, (1, 16, 16)),     # a lone large system: BLAS's threads factor it
    (3, 16, 1_800, (1, 16, 1)),      # few classes on many cores: one after another
    (10, 64, 5_000, (1, 64, 64)),
    (64, 64, 5_000, (64, 1, 1)),     # as many classes as cores: side by side
])
def test_split_threads_states_the_plan_for_many_cores(tasks, threads, size, expected):
    assert _threads.split_threads(tasks, threads, size) == expected
    side, inner, blas = expected
    assert side * inner <= max(threads, 1) and blas in (1, inner)


@pytest.mark.parametrize("cpus", [2, 16, 64])
def test_gram_squares_never_outweigh_the_rows_they_sum(cpus, monkeypatch):
    """Each slice of a Gram sum beyond the first fills an m x m square of its own: slices
    are at least m rows tall, so the squares hold at most what F holds (a few rows
    entering a Newton step's active set are one slice), and the sum is the same whatever
    the split."""
    import numpy as np

    from sparsekernel.compute import _products

    monkeypatch.setattr(_products, "max_threads", lambda: cpus)
    n, m = 1_000, 300
    parts = _products.split_rows(n, n * m * m, width=m)
    assert len(parts) == min(cpus, n // m)
    assert all(p.stop - p.start >= m for p in parts)
    assert len(parts) * m * m <= n * m
    assert len(_products.split_rows(2 * m - 1, 2 * m * m * m, width=m)) == 1  # (< 2 m rows)
    assert len(_products.split_rows(2 * m, 2 * m * m * m, width=m)) == 2
    F = np.random.default_rng(0).standard_normal((n, m))
    calls = []
    syrk = _products.syrk_lower
    monkeypatch.setattr(_products, "syrk_lower", lambda H, G: calls.append(len(G)) or syrk(H, G))
    np.testing.assert_allclose(_products.gram(F, cpus), F.T @ F, rtol=1e-10, atol=1e-9)
    assert sum(calls) == n and len(calls) == len(parts)


def test_imap_threads_keeps_order_and_holds_a_batch_at_a_time():
    """Results come in the order of the items, computed n_threads at a time: the next
    batch starts only once the consumer has taken the previous one."""
    started, taken = [], []

    def work(i):
        started.append(i)
        return i

    for i in _threads.imap_threads(work, range(7), 3):
        taken.append(i)
        assert max(started) < 3 * (i // 3 + 1)  # (nothing beyond this batch has started)
    assert taken == list(range(7))


def test_products_are_the_same_to_the_bit_on_any_thread_count(monkeypatch):
    """The slices of every row product are planned from the CPUs (here 4), never from the
    threads in force, and their sums are added in slice order: Gram sums, [F 1]^T V and
    F W come out identical on 1, 2, 3 and 4 threads, float64 and float32 rows alike."""
    import numpy as np

    from sparsekernel.compute import _products, gram, matmul, rmatmul
    from sparsekernel.solvers._rows import ArrayRows

    monkeypatch.setattr(_products, "max_threads", lambda: 4)
    rng = np.random.default_rng(0)
    n, m = 3_001, 150
    w = rng.random(n)
    rows = np.flatnonzero(rng.random(n) < 0.7)
    V, W = rng.standard_normal((n, 3)), rng.standard_normal((m, 3))
    for dtype in (np.float64, np.float32):
        F = rng.standard_normal((n, m)).astype(dtype)
        outs = []
        for threads in (1, 2, 3, 4):
            H = ArrayRows(F, threads=threads).add_gram(np.eye(m + 1), w, rows, dtype=dtype)
            outs.append((H, gram(F, threads), rmatmul(F, V, threads), matmul(F, W, threads)))
        assert len(_products.split_rows(len(rows), len(rows) * m * m, width=m)) == 4
        for other in outs[1:]:
            for a, b in zip(outs[0], other, strict=True):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("dtype", "rtol"), [("float64", 1e-10), ("float32", 1e-5)])
def test_a_lone_system_factored_on_blas_threads_agrees_to_its_precision(dtype, rtol,
                                                                        monkeypatch):
    """The one exception to the same model to the bit (compute's docstring): a lone Newton
    system from LONE_SOLVE_MIN unknowns (lowered here to reach it on small data) is factored
    on BLAS's threads. The models on 1 and 2 threads then agree to the stated share of the
    largest decision value, float32 features to 1e-5, float64 ones to 1e-10."""
    import numpy as np
    from sklearn.datasets import make_classification
    from threadpoolctl import threadpool_limits

    from sparsekernel import LowRankSVC
    newton_ovr = importlib.import_module("sparsekernel.solvers.newton_ovr")

    monkeypatch.setattr(_threads, "LONE_SOLVE_MIN", 50)
    limits = []
    monkeypatch.setattr(newton_ovr, "blas_threads",
                        lambda n: limits.append(n) or _threads.blas_threads(n))
    X, y = make_classification(2000, 8, n_informative=6, n_redundant=0, random_state=0)
    X = X.astype(dtype)
    outputs = []
    for n_threads in (1, 2):
        with threadpool_limits(n_threads):
            est = LowRankSVC(n_basis=150, C=100.0, random_state=0).fit(X, y)
            outputs.append(est.decision_function(X))
    assert 2 in limits  # (the factorization ran on two BLAS threads)
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=0,
                               atol=rtol * np.abs(outputs[0]).max())
