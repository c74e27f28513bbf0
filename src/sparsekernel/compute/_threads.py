"""Threads are planned like memory: the library decides them, once, from what it may use.

* Dense work on an m x m system with m up to a few thousand runs better on one BLAS thread:
  OpenBLAS's threads spin between short calls, and against other processes. Independent
  sub-problems (the classes of one-vs-rest) therefore run side by side on Python threads
  that each call one-thread BLAS (which releases the GIL), and n-row products are split by
  rows the same way.
* The thread budget is what the process may use *now*: the CPUs of its affinity mask,
  capped by the BLAS limit in force (joblib's or Dask's workers, a caller's
  ``threadpool_limits``), so a fit nested inside them never oversubscribes the cores.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager

__all__ = ["LONE_SOLVE_MIN", "blas_limit", "blas_threads", "drain_queue", "imap_threads",
           "map_balanced", "map_threads", "max_threads", "planned_threads", "row_slices",
           "split_threads", "thread_budget", "thread_plan"]

_CONTROLLER = []
#: The thread count planned by the outermost fit or predict of this context (None outside).
_PLANNED = contextvars.ContextVar("sparsekernel_planned_threads", default=None)
#: The BLAS thread limit of the innermost :func:`blas_threads` of this context (None
#: outside one), carried onto the pool's threads with the work (:func:`_run_shared`).
_BLAS_LIMIT = contextvars.ContextVar("sparsekernel_blas_limit", default=None)
#: Size of a lone SPD system (one with no other to factor beside it) from which it is
#: factored and solved on every planned thread through BLAS's own threads
#: (:func:`split_threads`); below it BLAS's threads synchronize more than they compute.
LONE_SOLVE_MIN = 3000


def _controller():
    """One ThreadpoolController for the process (building one scans the loaded libraries):
    created once SciPy's BLAS is loaded, so both OpenBLAS builds are seen."""
    if not _CONTROLLER:
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _cpu_count():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def max_threads():
    """The most threads a plan of this process can give: its CPUs, the bound of
    :func:`thread_budget` whatever BLAS limit is in force.

    Work is *partitioned* from this, never from the plan in force (:func:`planned_threads`
    only says how many threads take the pieces), so the pieces and their rounding are the
    same at any thread count: a greedy step (an argmax, a pivot, a reduced-set selection)
    would otherwise turn a rounding difference into another model.
    """
    return _cpu_count()


def thread_budget():
    """Threads this process may use now: its CPUs, within the BLAS limit in force."""
    limits = [lib.num_threads for lib in _controller().select(user_api="blas").lib_controllers]
    return max(1, min([_cpu_count(), *limits]))


@contextmanager
def thread_plan():
    """Plan the threads of one fit or predict: BLAS on one thread, and the budget of
    :func:`thread_budget` for the library's own threads (:func:`planned_threads`). Nested
    plans keep the outer one."""
    if _PLANNED.get() is not None:
        yield _PLANNED.get()
        return
    n = thread_budget()
    token = _PLANNED.set(n)
    try:
        with blas_threads(1):
            yield n
    finally:
        _PLANNED.reset(token)


def planned_threads():
    """Threads the library may run side by side now (the plan in force, else the budget)."""
    n = _PLANNED.get()
    return thread_budget() if n is None else n


@contextmanager
def blas_threads(n):
    """Hold every BLAS library loaded to ``n`` threads (no-op when none is loaded)."""
    n = max(1, int(n))
    if _BLAS_LIMIT.get() == n:  # (already in force here: no library call)
        yield
        return
    blas = _controller().select(user_api="blas")
    token = _BLAS_LIMIT.set(n)
    try:
        if not blas.lib_controllers:
            yield
            return
        with blas.limit(limits=n):
            yield
    finally:
        _BLAS_LIMIT.reset(token)


def blas_limit():
    """The BLAS thread count set by the innermost :func:`blas_threads` of this context (as
    inside every fit's :func:`thread_plan`: 1), or None outside them (then unknown)."""
    return _BLAS_LIMIT.get()


def split_threads(n_tasks, threads, size=0):
    """How ``n_tasks`` independent systems of ``size`` unknowns share ``threads`` threads:
    ``(side, inner, blas)``.

    At least as many systems as threads: side by side (``side = threads``), each with one
    thread for its products and one BLAS thread for its factorization. Fewer: one after
    another (``side = 1``), each with every thread for its row products (``inner``) and,
    from LONE_SOLVE_MIN unknowns, for its factorization through BLAS's threads (``blas``);
    a pool thread cannot hand out work again, so a system side by side never gets more
    than one.
    """
    threads = max(1, int(threads))
    if n_tasks >= threads:
        return threads, 1, 1
    return 1, threads, threads if size >= LONE_SOLVE_MIN else 1


def map_threads(fn, items, n_threads=None):
    """``[fn(item) for item in items]`` on up to ``n_threads`` threads of one-thread BLAS.

    ``n_threads`` defaults to :func:`planned_threads`. The calling thread takes part and the
    others come from one pool kept for the process (:func:`_pool`), since starting threads
    per call would cost as much as a short product. Items are dealt round-robin
    (:func:`_run_shared`). A call from inside a pool thread runs serially. Exceptions
    (KeyboardInterrupt included) propagate from the first failing item once the other
    threads have stopped taking items; results keep the order of ``items``.
    """
    items = list(items)
    n_threads = planned_threads() if n_threads is None else n_threads
    n_threads = max(1, min(int(n_threads), len(items)))
    if n_threads == 1 or getattr(_WORKER, "active", False):
        return [fn(item) for item in items]
    if _PLANNED.get() is None:  # outside a plan, hold BLAS to one thread for this call
        with blas_threads(1):
            return _run_shared(fn, items, n_threads)
    return _run_shared(fn, items, n_threads)


def imap_threads(fn, items, n_threads=None):
    """``fn(item)`` for each item, yielded in the order of ``items``, computed
    ``n_threads`` at a time by :func:`map_threads`.

    For a sum over pieces planned independently of the threads (:func:`split_rows`): added
    as they come, the pieces are summed in one order whatever the thread count, so the sum
    is the same to the bit, and at most ``n_threads`` of them are held at once.
    """
    items = list(items)
    n_threads = planned_threads() if n_threads is None else max(1, int(n_threads))
    for start in range(0, len(items), n_threads):
        yield from map_threads(fn, items[start:start + n_threads], n_threads)


def map_balanced(fn, items, costs, n_threads=None):
    """:func:`map_threads` for items of unequal cost: the costliest first, each to whichever
    thread is free (longest-processing-time-first: the last items to finish are small).

    The items run through :func:`drain_queue` (pool threads only, the caller waiting);
    results keep the order of ``items``.
    """
    items = list(items)
    n_threads = planned_threads() if n_threads is None else n_threads
    n_threads = max(1, min(int(n_threads), len(items)))
    if n_threads == 1 or getattr(_WORKER, "active", False):
        return [fn(item) for item in items]
    results = [None] * len(items)

    def step(i):
        results[i] = fn(items[i])
        return False

    drain_queue(step, sorted(range(len(items)), key=lambda i: -costs[i]), n_threads)
    return results


def drain_queue(step, items, n_threads):
    """Run ``step(item)`` for the items of a queue, each taken by whichever thread is free;
    ``step`` returns True to put its item back at the end (a problem with iterations left).

    The schedule depends on timing, so the items run on pool threads only and the caller
    waits: the calls it makes itself, where a Ctrl-C lands, are the same in every run (the
    rule of :func:`map_threads`). A failure, Ctrl-C in the waiting caller included, stops
    the other threads at their next item and propagates. One thread: in the caller, in
    order.
    """
    waiting, lock, failed = deque(items), threading.Lock(), []

    def work(t):
        while t and not failed:  # (t = 0: the caller, which only waits)
            with lock:
                if not waiting:
                    return
                item = waiting.popleft()
            try:
                again = step(item)
            except BaseException:
                failed.append(True)
                raise
            if again:
                with lock:
                    waiting.append(item)

    shares = range(1, 2) if n_threads == 1 else range(n_threads + 1)
    try:
        map_threads(work, shares, len(shares))
    except BaseException:  # (a Ctrl-C in the waiting caller: the others stop too)
        failed.append(True)
        raise


_WORKER = threading.local()
_POOL = {}
_POOL_LOCK = threading.Lock()


def _pool(n_workers):
    """The process's worker threads (at least ``n_workers``), rebuilt after a fork, whose
    child inherits no threads."""
    with _POOL_LOCK:
        if _POOL.get("pid") != os.getpid() or _POOL.get("size", 0) < n_workers:
            _POOL.update(pid=os.getpid(), size=n_workers, executor=ThreadPoolExecutor(
                n_workers, thread_name_prefix="sparsekernel",
                initializer=setattr, initargs=(_WORKER, "active", True)))
        return _POOL["executor"]


def _run_shared(fn, items, n_threads):
    """Thread t of the caller (t = 0) and ``n_threads - 1`` pool threads takes the items
    t, t + n_threads, ...: a fixed share, so the calls the caller makes (and a Ctrl-C can
    stop) are the same in every run."""
    results, errors = [None] * len(items), []

    def runner(t):
        for i in range(t, len(items), n_threads):
            if errors:
                return
            try:
                results[i] = fn(items[i])
            except BaseException as exc:  # re-raised in the caller, first failure wins
                errors.append(exc)

    # Each pool thread runs in a copy of the caller's context: the plan and the BLAS limit
    # in force follow the work (a context can be entered by one thread at a time).
    futures = [_pool(n_threads - 1).submit(contextvars.copy_context().run, runner, t)
               for t in range(1, n_threads)]
    try:
        runner(0)
    finally:  # a failure stops the others at their next item (``errors`` is set)
        wait(futures)
    if errors:
        raise errors[0]
    return results


def row_slices(n, parts):
    """``parts`` contiguous slices covering range(n) (fewer when n is smaller)."""
    parts = max(1, min(int(parts), n))
    bounds = [n * i // parts for i in range(parts + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
