"""Where the map step runs: the user's Dask cluster, or an embedded in-process one.

Dask (an optional extra) is imported on use only, so ``import sparsekernel`` works without it.
"""

from __future__ import annotations

import contextlib
import math
import os
import time

__all__ = ["NO_WORKER_GRACE", "gather", "import_distributed", "iter_completed", "n_threads",
           "open_client"]

#: Seconds the driver accepts a cluster without a worker before it gives up: long enough for
#: a nanny to restart a killed worker (about a second), short enough that a dead cluster is
#: reported while the user still waits at the prompt. ``timeout`` shortens it.
NO_WORKER_GRACE = 10.0
#: How often the driver looks for finished tasks, and for workers, while it waits.
_POLL = 0.05
_CHECK_WORKERS = 0.5

_MISSING = (
    "{what} needs Dask's distributed scheduler, which is not installed. Install the optional "
    "extra: pip install 'sparsekernel[distributed]' (that is dask[distributed])."
)


#: A cluster started for one fit serves no dashboard, and its scheduler's HTTP endpoint takes a
#: free port (by default it asks for 8787 and warns when another cluster holds it).
NO_DASHBOARD = {"dashboard_address": None, "scheduler_kwargs": {"dashboard_address": ":0"}}


def import_distributed(what):
    """Import and return ``distributed``; a clear ImportError naming the extra otherwise."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(_MISSING.format(what=what)) from exc
    return distributed


def n_threads(n_jobs):
    """scikit-learn's convention: None is 1, -1 all cores, -2 all but one, ..."""
    if n_jobs is None:
        return 1
    return max(1, n_jobs if n_jobs > 0 else (os.cpu_count() or 1) + 1 + n_jobs)


@contextlib.contextmanager
def open_client(client, n_jobs, what, timeout=None):
    """Yield a ``distributed.Client`` for one fit.

    ``client`` is a Client (used as is and left open), a scheduler address such as
    ``'tcp://10.0.0.5:8786'`` (connected for the fit, then disconnected; the cluster keeps
    running), or None: an in-process LocalCluster with ``n_jobs`` threads, started for the fit
    and closed afterwards (it starts in a few tens of milliseconds). Neither connection
    becomes Dask's default client, so the caller's own Dask work is not redirected.
    ``timeout`` (seconds or None) bounds the connection to a scheduler address.
    """
    distributed = import_distributed(what)
    if isinstance(client, distributed.Client):
        yield client
        return
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(distributed.LocalCluster(
                n_workers=1, threads_per_worker=n_threads(n_jobs), processes=False,
                **NO_DASHBOARD))
        options = {} if timeout is None else {"timeout": timeout}
        yield stack.enter_context(distributed.Client(client, set_as_default=False, **options))


#: What the messages advise and say was cancelled, for a fit and for a prediction.
_FIT = ("add workers, or lower n_parts or n_basis", "the fit was cancelled and the estimator "
        "is unchanged")
_PREDICT = ("add workers, or score fewer rows at a time", "the prediction was cancelled")


def iter_completed(client, futures, remaining, what, timeout=None, action="fit"):
    """Yield ``futures`` as they finish; raise when the cluster cannot run them.

    ``as_completed`` alone waits forever on a cluster whose workers are all gone, so the
    driver polls and raises a RuntimeError once the cluster has had no worker for
    ``min(NO_WORKER_GRACE, remaining)`` seconds or the scheduler connection is lost, and a
    TimeoutError when ``remaining`` seconds (None: no limit) have passed. The caller cancels
    the futures. ``what`` (the estimator's or function's name) starts every message, which
    quotes the user's ``timeout`` parameter (``remaining`` is what is left of it);
    ``action`` ('fit' or 'predict') says what was cancelled and what to change.
    """
    distributed = import_distributed(what)
    watch = _Watch(client, len(futures), remaining, what, timeout,
                   _FIT if action == "fit" else _PREDICT)
    pending = distributed.as_completed(futures, loop=client.loop)
    while not pending.is_empty():
        batch = pending.next_batch(block=False)
        for future in batch:
            watch.n_done += 1
            yield future
        if not batch:
            watch.check()
            time.sleep(_POLL)


def gather(client, futures, what, action="fit"):
    """``client.gather(futures)`` (a list), raising as :func:`iter_completed` does when the
    cluster cannot run them (no worker for NO_WORKER_GRACE seconds, or the scheduler gone).
    Waits for all of them at once, so a quick reduction returns as soon as it is done."""
    distributed = import_distributed(what)
    watch = _Watch(client, len(futures), None, what, None,
                   _FIT if action == "fit" else _PREDICT)
    with client.as_current():  # (wait's client: this one, not Dask's default)
        while True:
            try:
                distributed.wait(futures, timeout=_CHECK_WORKERS)
                break
            except TimeoutError:
                watch.check()
    try:
        return client.gather(futures)
    except distributed.client.FuturesCancelledError as exc:
        raise RuntimeError(
            f"{what}: the Dask cluster at {watch._address()} cancelled {watch._progress()} "
            "(their inputs were lost with the workers that held them, or the client "
            f"cancelled them); {watch.outcome}.") from exc


class _Watch:
    """The cluster's state while the driver waits, and the errors that end the wait."""

    def __init__(self, client, n_tasks, remaining, what, timeout, words=_FIT):
        self.client, self.n_tasks, self.what, self.user_timeout = client, n_tasks, what, timeout
        self.advice, self.outcome = words
        self.timeout = math.inf if remaining is None else float(remaining)
        self.grace = min(NO_WORKER_GRACE, self.timeout)
        self.start, self.checked = time.monotonic(), -math.inf
        self.no_worker_since, self.n_done = None, 0

    def check(self):
        now = time.monotonic()
        if now - self.checked < _CHECK_WORKERS and now - self.start < self.timeout:
            return
        self.checked = now
        if self.client.status != "running":
            raise RuntimeError(
                f"{self.what} lost its connection to the Dask scheduler at "
                f"{self._address()} (client status {self.client.status!r}) with "
                f"{self._progress()}. Check that the scheduler is running, then try again; "
                f"{self.outcome}.")
        n_workers = len(self.client.nthreads())
        if n_workers:
            self.no_worker_since = None
        elif self.no_worker_since is None:
            self.no_worker_since = now
        timed_out = now - self.start >= self.timeout
        if self.no_worker_since is not None and (now - self.no_worker_since >= self.grace
                                                 or timed_out):
            raise RuntimeError(
                f"{self.what} cannot run its tasks: the Dask cluster at {self._address()} "
                f"has had no worker for {now - self.no_worker_since:.1f} s, with "
                f"{self._progress()}. Start workers on the cluster (if they died, their logs "
                "say why, e.g. out of memory), or use an in-process cluster (MapReduceSVC's "
                f"client=None; for dask input, no default client); {self.outcome}.")
        if timed_out:
            raise TimeoutError(
                f"{self.what} waited timeout={self.user_timeout:g} s for the cluster, with "
                f"{self._progress()} and {n_workers} worker(s) at {self._address()}. Pass a "
                f"larger timeout (None: no limit), {self.advice}; {self.outcome}.")

    def _progress(self):
        return f"{self.n_done} of {self.n_tasks} tasks done"

    def _address(self):
        with contextlib.suppress(Exception):  # only for the message: never mask the error
            return str(self.client.scheduler.address)
        return "(address unknown)"

