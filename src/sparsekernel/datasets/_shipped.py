"""Small real data sets shipped inside the package (``sparsekernel/datasets/data``)."""

from __future__ import annotations

import io
import lzma
from importlib.resources import files

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.utils import check_random_state

from ..utils import Interval, validate_params

__all__ = ["load_banana", "load_ripley"]

_N_BANANA = 5300


def _open_shipped(name):
    """A shipped ``.xz`` file as a decompressed in-memory binary stream (the files are small;
    reading them whole leaves no file handle open)."""
    data = (files("sparsekernel.datasets") / "data" / name).read_bytes()
    return io.BytesIO(lzma.decompress(data))


def _read_ripley(name):
    with _open_shipped(name) as f:
        table = np.loadtxt(f, skiprows=1, ndmin=2)
    return table[:, :2], table[:, 2].astype(np.int64)


def load_ripley():
    """Load Ripley's synthetic two-class data (``synth.tr`` / ``synth.te``, shipped).

    B. D. Ripley, "Neural networks and related methods for classification", JRSS B 56
    (1994); Pattern Recognition and Neural Networks (1996). Two features, two balanced
    classes generated from Gaussian mixtures.

    Returns
    -------
    X_train : ndarray of shape (250, 2)
    y_train : ndarray of shape (250,)
        Classes 0 / 1 (int64), 125 each.
    X_test : ndarray of shape (1000, 2)
    y_test : ndarray of shape (1000,)
        Classes 0 / 1 (int64), 500 each.

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = load_ripley()
    >>> Xtr.shape, Xte.shape
    ((250, 2), (1000, 2))
    """
    X_train, y_train = _read_ripley("synth.tr.xz")
    X_test, y_test = _read_ripley("synth.te.xz")
    return X_train, y_train, X_test, y_test


def load_banana(random_state=None, n_train=400):
    """Load the 5,300-point banana set (shipped) and split it at random.

    G. Rätsch's IDA benchmark (data from the ELENA project). Rätsch's protocol draws
    random splits of 400 training and 4,900 test points.

    Parameters
    ----------
    random_state : int, numpy RandomState or None, default=None
        Seed of the split, with scikit-learn semantics: ``None`` gives a different split at
        each call, an int a reproducible one.
    n_train : int, default=400
        Number of training rows, in ``[1, 5299]``; the remaining rows form the test set.

    Returns
    -------
    X_train : ndarray of shape (n_train, 2)
    y_train : ndarray of shape (n_train,)
        Labels -1.0 / +1.0 (float64).
    X_test : ndarray of shape (5300 - n_train, 2)
    y_test : ndarray of shape (5300 - n_train,)
        Labels -1.0 / +1.0 (float64).

    Raises
    ------
    ValueError
        ``n_train`` or ``random_state`` is invalid.

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = load_banana(random_state=0)
    >>> Xtr.shape, Xte.shape
    ((400, 2), (4900, 2))
    """
    validate_params(
        "load_banana",
        {
            "random_state": ["random_state"],
            "n_train": [Interval("int", 1, _N_BANANA - 1, closed="both")],
        },
        {"random_state": random_state, "n_train": n_train},
    )
    with _open_shipped("banana.all.txt.xz") as f:
        X, y = load_svmlight_file(f, n_features=2)
    X = X.toarray()
    order = check_random_state(random_state).permutation(X.shape[0])
    train, test = order[:n_train], order[n_train:]
    return X[train], y[train], X[test], y[test]
