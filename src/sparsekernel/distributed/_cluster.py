"""Where the map step runs: the user's Dask cluster, or an embedded in-process one.

Dask (an optional extra) is imported on use only, so ``import sparsekernel`` works without it.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["import_distributed", "is_dask_collection", "n_threads", "open_client"]

_MISSING = (
    "{what} needs Dask's distributed scheduler, which is not installed. Install the optional "
    "extra: pip install 'sparsekernel[distributed]' (that is dask[distributed])."
)


def import_distributed(what):
    """Import and return ``distributed``; a clear ImportError naming the extra otherwise."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(_MISSING.format(what=what)) from exc
    return distributed


def is_dask_collection(obj):
    """True for dask arrays / dataframes, decided without importing dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


def n_threads(n_jobs):
    """scikit-learn's convention: None is 1, -1 all cores, -2 all but one, ..."""
    if n_jobs is None:
        return 1
    return max(1, n_jobs if n_jobs > 0 else (os.cpu_count() or 1) + 1 + n_jobs)


@contextlib.contextmanager
def open_client(client, n_jobs, what):
    """Yield a ``distributed.Client`` for one fit.

    ``client`` is a Client (used as is and left open), a scheduler address such as
    ``'tcp://10.0.0.5:8786'`` (connected for the fit, then disconnected; the cluster keeps
    running), or None: an in-process LocalCluster with ``n_jobs`` threads, started for the fit
    and closed afterwards (it starts in a few tens of milliseconds). Neither connection
    becomes Dask's default client, so the caller's own Dask work is not redirected.
    """
    distributed = import_distributed(what)
    if isinstance(client, distributed.Client):
        yield client
        return
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(distributed.LocalCluster(
                n_workers=1, threads_per_worker=n_threads(n_jobs), processes=False,
                dashboard_address=None))
        yield stack.enter_context(distributed.Client(client, set_as_default=False))
