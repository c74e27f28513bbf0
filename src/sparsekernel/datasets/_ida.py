"""Rätsch's IDA benchmark splits (``.asc`` files: whitespace-separated floats)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..utils import Interval, validate_params
from ._paths import COMPRESSED_SUFFIXES, open_binary, resolve_compressed

__all__ = ["load_ida"]


def _read_asc(path, dtype, ndmin):
    with open_binary(path) as f:
        return np.loadtxt(f, dtype=dtype, ndmin=ndmin)


def load_ida(directory, name, split=1, dtype=np.float64):
    """Load one train/test realisation of Rätsch's IDA benchmark (banana, heart, ...).

    The four files ``{name}_train_data_{split}.asc``, ``{name}_train_labels_{split}.asc``,
    ``{name}_test_data_{split}.asc`` and ``{name}_test_labels_{split}.asc`` are read from
    ``directory``, each either plain or with a ``.xz``, ``.gz`` or ``.bz2`` suffix.

    Parameters
    ----------
    directory : str or os.PathLike
        Folder holding the files, e.g. ``find_shared_data("raetsch_banana")``.
    name : str
        Data set name as in the file names, e.g. ``"banana"``.
    split : int, default=1
        Index of the realisation (Rätsch published 100, numbered from 1).
    dtype : numpy dtype, default=np.float64
        Dtype of the feature matrices.

    Returns
    -------
    X_train : ndarray of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,)
        Labels -1.0 / +1.0 (float64).
    X_test : ndarray of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,)
        Labels -1.0 / +1.0 (float64).

    Raises
    ------
    FileNotFoundError
        Some file is missing; the message lists every name looked for.
    ValueError
        Bad ``split``, or the files disagree (row counts, feature counts, labels not +-1).

    Examples
    --------
    >>> folder = find_shared_data("raetsch_banana")  # doctest: +SKIP
    >>> Xtr, ytr, Xte, yte = load_ida(folder, "banana")  # doctest: +SKIP
    >>> Xtr.shape, Xte.shape  # doctest: +SKIP
    ((400, 2), (4900, 2))
    """
    validate_params(
        "load_ida", {"split": [Interval("int", 1, None, closed="left")]}, {"split": split}
    )
    directory = Path(directory)
    stems = [
        f"{name}_{part}_{kind}_{split}.asc"
        for part in ("train", "test")
        for kind in ("data", "labels")
    ]
    found = [resolve_compressed(directory, stem) for stem in stems]
    missing = [stem for stem, path in zip(stems, found, strict=True) if path is None]
    if missing:
        tried = "/".join(repr(s) for s in COMPRESSED_SUFFIXES)
        raise FileNotFoundError(
            f"IDA data set {name!r} split {split}: missing {missing} in '{directory}' "
            f"(looked for each name with the suffixes {tried})."
        )
    out = []
    for data_path, label_path in (found[:2], found[2:]):
        X = _read_asc(data_path, dtype, ndmin=2)
        y = _read_asc(label_path, np.float64, ndmin=1).ravel()
        if X.shape[0] != y.shape[0]:
            raise ValueError(
                f"'{data_path}' has {X.shape[0]} rows but '{label_path}' has {y.shape[0]} labels."
            )
        if not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError(f"'{label_path}' must hold labels -1/1. Got {np.unique(y)} instead.")
        out += [X, y]
    if out[0].shape[1] != out[2].shape[1]:
        raise ValueError(
            f"Train and test data of {name!r} split {split} have {out[0].shape[1]} and "
            f"{out[2].shape[1]} features."
        )
    return tuple(out)
