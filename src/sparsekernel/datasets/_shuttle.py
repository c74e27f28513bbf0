"""Statlog Shuttle: UCI training file scaled like LIBSVM's ``shuttle.scale``, LIBSVM test file."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ._paths import COMPRESSED_SUFFIXES, open_binary, resolve_compressed
from ._svmlight import load_svmlight_path

__all__ = ["load_shuttle"]

_N_FEATURES = 9


def _find(directory, name):
    path = resolve_compressed(directory, name)
    if path is None:
        tried = ", ".join(f"'{name}{s}'" for s in COMPRESSED_SUFFIXES)
        raise FileNotFoundError(f"Shuttle file not found in '{directory}': looked for {tried}.")
    return path


def load_shuttle(directory):
    """Load the Statlog Shuttle data (7 classes) with LIBSVM's [-1, 1] scaling.

    The training set is the UCI file ``shuttle.trn`` (9 integer features then the class;
    comma- or whitespace-delimited), scaled feature-wise to ``[-1, 1]`` with
    ``x -> -1 + 2 (x - min) / (max - min)`` over the training min/max. This reproduces
    LIBSVM's ``shuttle.scale``. The test set is LIBSVM's ``shuttle.scale.t`` (already scaled
    with the same training min/max). Each file may be plain or ``.xz``/``.gz``/``.bz2``.

    Parameters
    ----------
    directory : str or os.PathLike
        Folder holding ``shuttle.trn[.xz]`` and ``shuttle.scale.t[.xz]``, e.g.
        ``find_shared_data("shuttle")``.

    Returns
    -------
    X_train : ndarray of shape (43500, 9)
        Scaled training features (float64), each column spanning exactly [-1, 1].
    y_train : ndarray of shape (43500,)
        Classes 1..7 (int64).
    X_test : ndarray of shape (14500, 9)
        Test features (float64, dense).
    y_test : ndarray of shape (14500,)
        Classes 1..7 (int64).

    Raises
    ------
    FileNotFoundError
        A file is missing (the message lists the names looked for).
    ValueError
        The training file does not have 10 columns.

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = load_shuttle(find_shared_data("shuttle"))  # doctest: +SKIP
    """
    directory = Path(directory)
    train_path = _find(directory, "shuttle.trn")
    test_path = _find(directory, "shuttle.scale.t")
    with open_binary(train_path) as f:
        text = f.read().replace(b",", b" ")
    table = np.loadtxt(io.BytesIO(text), dtype=np.float64, ndmin=2)
    if table.shape[1] != _N_FEATURES + 1:
        raise ValueError(
            f"'{train_path}' must have {_N_FEATURES} feature columns and a class column. "
            f"Got {table.shape[1]} columns instead."
        )
    X_raw, y_train = table[:, :_N_FEATURES], table[:, _N_FEATURES].astype(np.int64)
    lo, span = X_raw.min(axis=0), np.ptp(X_raw, axis=0)
    # Constant features become 0, like the entries svm-scale omits.
    X_train = 2 * np.divide(X_raw - lo, span, out=np.full(X_raw.shape, 0.5), where=span > 0) - 1
    X_test, y_test = load_svmlight_path(test_path, n_features=_N_FEATURES)
    return X_train, y_train, X_test.toarray(), y_test.astype(np.int64)
