"""Prediction of any fitted model over a dask array or dataframe, block by block."""

from __future__ import annotations

import numpy as np

from ._cluster import is_dask_collection

__all__ = ["parallel_predict"]

_METHODS = ("predict", "decision_function", "predict_proba", "transform",
            "part_decision_function")


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


def parallel_predict(model, X, method="predict"):
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
    method : {'predict', 'decision_function', 'predict_proba', 'transform', \
'part_decision_function'}, default='predict'

    Returns
    -------
    dask.array.Array or dask.dataframe.Series / DataFrame
        Lazy result with the same row chunks (partitions) as ``X``: 1-D for one value per
        row, 2-D otherwise. Call ``.compute()`` on it (on the cluster of your choice).

    Examples
    --------
    >>> import dask.array as da                                    # doctest: +SKIP
    >>> Xd = da.from_array(X_test, chunks=(100_000, -1))            # doctest: +SKIP
    >>> labels = parallel_predict(model, Xd).compute()              # doctest: +SKIP
    """
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
    if width is None:
        return X.map_blocks(_apply, model, method, dtype=dtype, drop_axis=1)
    return X.map_blocks(_apply, model, method, dtype=dtype, chunks=(X.chunks[0], (width,)))
