"""Prediction of any fitted model over a dask array or dataframe, block by block."""

from __future__ import annotations

import contextlib

import numpy as np

from ..utils import Interval, is_dask_collection, validate_params
from ._cluster import import_distributed, iter_completed, open_client

__all__ = ["parallel_predict"]

_METHODS = ("predict", "decision_function", "predict_proba", "predict_log_proba",
            "transform", "part_decision_function")


def _apply(block, model, method):
    return getattr(model, method)(block)


def _apply_frame(frame, model, method):
    import pandas as pd

    out = np.asarray(getattr(model, method)(frame))
    return (pd.Series if out.ndim == 1 else pd.DataFrame)(out, index=frame.index)


def _probe(model, method):
    """Apply the model to one row of zeros: the output's dtype and number of columns."""
    row = np.zeros((1, model.n_features_in_))
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        import pandas as pd

        row = pd.DataFrame(row, columns=names)
    out = np.asarray(getattr(model, method)(row))
    return out.dtype, (None if out.ndim == 1 else out.shape[1])


def parallel_predict(model, X, method="predict", *, client=None, timeout=None):
    """Apply a fitted model's ``method`` to every block of a dask array or dataframe.

    Prediction with a small model is embarrassingly parallel: each block (chunk of rows) is
    scored where it lies, and the model itself (kilobytes to a few megabytes) is the only
    thing sent to the workers. Works for every sparsekernel estimator, and for any fitted
    scikit-learn estimator.

    Parameters
    ----------
    model : fitted estimator
    X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
        Rows to score; a dask array is rechunked to whole rows (one chunk across features).
    method : {'predict', 'decision_function', 'predict_proba', 'predict_log_proba', \
'transform', 'part_decision_function'}, default='predict'
    client : None, str or distributed.Client, default=None
        Where to compute the result now, watched as ``MapReduceSVC`` watches its map step:
        a Client, or a scheduler address ('tcp://host:8786', connected for the call). None
        with ``timeout`` None returns the lazy result instead, for the caller to compute;
        None with a ``timeout`` computes on Dask's default client (the one ``.compute()``
        would use), which must exist.
    timeout : float or None, default=None
        Seconds the computation may wait for the cluster before its tasks are cancelled and
        a TimeoutError is raised, as ``MapReduceSVC``'s ``timeout``. None sets no limit; a
        cluster that has had no worker for 10 s (or ``timeout`` if shorter), or a lost
        scheduler connection, raises a RuntimeError either way, where a lazy result's
        ``.compute()`` would wait forever.

    Returns
    -------
    dask.array.Array or dask.dataframe.Series / DataFrame, or ndarray / pandas object
        Lazy result with the same row chunks (partitions) as ``X``: 1-D for one value per
        row, 2-D otherwise; call ``.compute()`` on it (on the cluster of your choice). With
        ``client`` or ``timeout``, the computed values (NumPy, or pandas for a dataframe).

    Raises
    ------
    RuntimeError
        With ``client`` or ``timeout``: the cluster has no worker, or the scheduler is
        unreachable.
    TimeoutError
        With ``timeout``: the result was not computed within ``timeout`` seconds.

    Examples
    --------
    >>> import dask.array as da                                    # doctest: +SKIP
    >>> Xd = da.from_array(X_test, chunks=(100_000, -1))            # doctest: +SKIP
    >>> labels = parallel_predict(model, Xd).compute()              # doctest: +SKIP
    >>> labels = parallel_predict(model, Xd, client="tcp://host:8786",
    ...                           timeout=600)                      # doctest: +SKIP
    """
    validate_params("parallel_predict",
                    {"timeout": [None, Interval("real", 0, None, closed="neither")]},
                    {"timeout": timeout})
    lazy = _lazy_predict(model, X, method)
    if client is None and timeout is None:
        return lazy
    return _compute_watched(lazy, client, timeout)


def _compute_watched(lazy, client, timeout):
    """``lazy`` computed on ``client`` (None: Dask's default client) within ``timeout``
    seconds, with the cluster watched (``_cluster.iter_completed``); the task is cancelled
    on any error, Ctrl-C included, which propagates."""
    distributed = import_distributed("parallel_predict")
    if client is None:
        try:
            client = distributed.default_client()
        except ValueError as exc:
            raise ValueError(
                "parallel_predict with a timeout computes on a Dask cluster, and there is no "
                "default client: pass client= (a distributed.Client or a scheduler address), "
                "or compute the lazy result yourself (timeout=None)."
            ) from exc
    with open_client(client, None, "parallel_predict", timeout) as connected:
        future = connected.compute(lazy)
        try:
            for _ in iter_completed(connected, [future], timeout, "parallel_predict", timeout,
                                    action="predict"):
                pass
            return future.result()
        except BaseException:
            if connected.status == "running":  # (a lost scheduler would not answer)
                with contextlib.suppress(Exception):  # the error being raised matters more
                    connected.cancel([future])
            raise


def _lazy_predict(model, X, method):
    """The lazy, block-wise result of ``model.method`` on the dask collection X."""
    if method not in _METHODS or not hasattr(model, method):
        raise ValueError(f"method must be one of {_METHODS} that {type(model).__name__} "
                         f"implements. Got {method!r} instead.")
    if not is_dask_collection(X):
        raise TypeError(f"parallel_predict needs a dask array or dataframe. Got "
                        f"{type(X).__name__} instead; call model.{method}(X) directly.")
    dtype, width = _probe(model, method)
    if hasattr(X, "map_partitions"):  # a dask DataFrame
        import pandas as pd

        meta = (pd.Series([], dtype=dtype) if width is None else
                pd.DataFrame({j: pd.Series([], dtype=dtype) for j in range(width)}))
        return X.map_partitions(_apply_frame, model, method, meta=meta)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    X = X.rechunk({1: -1})
    # ``meta`` given: dask would otherwise call the model on an empty block to infer it.
    if width is None:
        return X.map_blocks(_apply, model, method, dtype=dtype, drop_axis=1,
                            meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(_apply, model, method, dtype=dtype, chunks=(X.chunks[0], (width,)),
                        meta=np.empty((0, width), dtype=dtype))
