"""SVMlight / LIBSVM text files, plain or compressed (.gz, .bz2, .xz)."""

from __future__ import annotations

import gzip
import io
import itertools
import lzma
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ..utils import Interval, Options, validate_params
from ._paths import open_binary

__all__ = ["SvmlightChunks", "load_svmlight_path", "load_svmlight_paths"]

_CONSTRAINTS = {
    "n_features": [None, Interval("int", 1, None, closed="left")],
    "zero_based": [Options(True, False, "auto")],
}
_PARSE_ERRORS = (ValueError, EOFError, lzma.LZMAError, gzip.BadGzipFile)


def _existing_file(path):
    """``path`` as a Path: TypeError unless it is a path, FileNotFoundError unless a file."""
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or os.PathLike. Got {path!r} instead.")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"SVMlight/LIBSVM file not found: '{path}'.")
    return path


def _read_one(path, dtype, zero_based):
    """Parse one file; ``zero_based="auto"`` reads raw indices (resolved by the caller)."""
    path = _existing_file(path)
    with open_binary(path) as f:
        return (path, *_parse(path, f, dtype, True if zero_based == "auto" else zero_based))


def _parse(path, source, dtype, zero_based=True):
    """``load_svmlight_file`` on a binary stream; a corrupt file's error names ``path``."""
    try:
        X, y = load_svmlight_file(source, dtype=dtype, zero_based=zero_based)
    except _PARSE_ERRORS as exc:
        raise ValueError(f"Could not read '{path}' as an SVMlight/LIBSVM file: {exc}") from exc
    return sp.csr_matrix(X), np.asarray(y, dtype=np.float64)


def _with_columns(X, n_columns):
    """The same CSR arrays viewed with ``n_columns`` columns (no copy)."""
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_columns), copy=False)


def load_svmlight_paths(paths, n_features=None, dtype=np.float64, zero_based="auto"):
    """Load several SVMlight/LIBSVM files with one common number of features.

    Use it for train/validation/test files that must line up column by column, e.g.
    ``ijcnn1.tr``, ``ijcnn1.val`` and ``ijcnn1.t`` (test files often never use the last
    feature index).

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        The files. A ``.gz``, ``.bz2`` or ``.xz`` suffix means compressed (gzip, bzip2,
        xz/LZMA); any other suffix is read as plain text.
    n_features : int or None, default=None
        Number of columns of every returned matrix. ``None`` uses the largest number of
        features found over all files.
    dtype : numpy dtype, default=np.float64
        Dtype of the feature matrices.
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. ``"auto"`` follows scikit-learn: the files are
        taken as one-based (LIBSVM) unless some file uses index 0 or has no feature at all.

    Returns
    -------
    datasets : list of (X, y)
        For each file, ``X`` a ``scipy.sparse.csr_matrix`` of shape ``(n_rows, n_features)``
        in ``dtype`` and ``y`` a float64 array of shape ``(n_rows,)``.

    Raises
    ------
    FileNotFoundError
        A file does not exist (the message names it).
    ValueError
        A file is malformed (the message names it and quotes scikit-learn's message), or
        ``n_features`` is smaller than the number of features of a file.

    Examples
    --------
    >>> folder = find_shared_data("ijcnn1")  # doctest: +SKIP
    >>> (Xtr, ytr), (Xte, yte) = load_svmlight_paths(
    ...     [folder / "ijcnn1.tr.xz", folder / "ijcnn1.t.xz"])  # doctest: +SKIP
    """
    if isinstance(paths, str | bytes | os.PathLike):
        raise TypeError(
            "paths must be a sequence of file paths (use load_svmlight_path for one file). "
            f"Got {paths!r} instead."
        )
    validate_params(
        "load_svmlight_paths", _CONSTRAINTS, {"n_features": n_features, "zero_based": zero_based}
    )
    raw = [_read_one(p, dtype, zero_based) for p in paths]
    if zero_based == "auto" and all(X.nnz and X.indices.min() > 0 for _, X, _ in raw):
        raw = [(p, _shift_columns(p, X, False), y) for p, X, y in raw]  # one-based
    widest = max((X.shape[1] for _, X, _ in raw), default=0)
    common = widest if n_features is None else n_features
    out = []
    for path, X, y in raw:
        if X.shape[1] > common:
            raise ValueError(
                f"n_features={n_features} is smaller than the {X.shape[1]} features found in "
                f"'{path}'."
            )
        out.append((_with_columns(X, common), y))
    return out


def load_svmlight_path(path, n_features=None, dtype=np.float64, zero_based="auto"):
    """Load one SVMlight/LIBSVM file, plain or compressed (:func:`load_svmlight_paths`).

    Parameters
    ----------
    path : str or os.PathLike
        The file (``.gz``, ``.bz2``, ``.xz``: compressed).
    n_features : int or None, default=None
        Number of columns of ``X``; ``None``: the largest feature index of the file.
    dtype : numpy dtype, default=np.float64
    zero_based : bool or "auto", default="auto"
        As in :func:`load_svmlight_paths`.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        Features in ``dtype``.
    y : ndarray of shape (n_rows,)
        Targets as float64.

    Raises
    ------
    FileNotFoundError
        The file does not exist (the message names it).
    ValueError
        The file is malformed (the message names it and quotes scikit-learn's message).

    Examples
    --------
    >>> X, y = load_svmlight_path("shared/data/a9a/a9a.xz", n_features=123)  # doctest: +SKIP
    """
    ((X, y),) = load_svmlight_paths([_existing_file(path)], n_features=n_features, dtype=dtype,
                                    zero_based=zero_based)
    return X, y


class SvmlightChunks:
    """A SVMlight/LIBSVM file as a re-iterable source of ``(X, y)`` chunks.

    Every ``iter()`` reopens the file and reads it from the start, ``chunk_size`` lines at a
    time, so it serves consumers that make several passes; only one chunk is in memory at
    once. Iteration yields ``X`` (ndarray or CSR matrix of shape (rows, n_features), in
    ``dtype``) and ``y`` (float64 ndarray of shape (rows,)).

    Parameters
    ----------
    path : str or os.PathLike
        The file; ``.gz``, ``.bz2`` and ``.xz`` files are decompressed on the fly.
    chunk_size : int
        Lines (rows) per chunk, at least 1.
    n_features : int or None, default=None
        Number of columns. ``None`` takes the largest index of the first chunk; a later
        chunk with a larger index then raises a ValueError (pass ``n_features`` for files
        whose first rows do not use every feature).
    dtype : numpy dtype, default=np.float64
        Dtype of ``X`` (float32 halves the memory and time of what consumes it).
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0. "auto" decides on the first chunk (one-based,
        as LIBSVM, unless index 0 occurs there) and keeps that choice for every chunk.
    dense : bool, default=True
        Yield dense C-contiguous arrays (else CSR matrices).

    Raises
    ------
    TypeError
        ``path`` is not a path.
    FileNotFoundError
        The file does not exist.
    ValueError
        A bad ``chunk_size``, ``n_features`` or ``zero_based`` (at construction), or a
        malformed file (while iterating).

    Examples
    --------
    >>> chunks = SvmlightChunks("huge.libsvm", chunk_size=20000)  # doctest: +SKIP
    >>> clf = LowRankSVC(n_passes=2).fit_stream(chunks)  # doctest: +SKIP
    """

    def __init__(self, path, chunk_size, n_features=None, dtype=np.float64, zero_based="auto",
                 dense=True):
        self.path = _existing_file(path)
        validate_params("SvmlightChunks", {
            "chunk_size": [Interval("int", 1, None, closed="left")], **_CONSTRAINTS,
        }, {"chunk_size": chunk_size, "n_features": n_features, "zero_based": zero_based})
        self.chunk_size, self.n_features, self.dtype = chunk_size, n_features, dtype
        self.zero_based, self.dense = zero_based, dense

    def __iter__(self):
        path, n_features, zero_based = self.path, self.n_features, self.zero_based
        with open_binary(path) as fh:
            while lines := list(itertools.islice(fh, self.chunk_size)):
                X, y = _parse(path, io.BytesIO(b"".join(lines)), self.dtype)  # raw indices
                if zero_based == "auto":
                    zero_based = not (X.nnz and X.indices.min() > 0)
                X = _shift_columns(path, X, zero_based)
                n_features = X.shape[1] if n_features is None else n_features
                if X.shape[1] > n_features:
                    raise ValueError(
                        f"'{path}' has feature index {X.shape[1]} beyond n_features="
                        f"{n_features} (fixed by the first chunk or given); pass n_features."
                    )
                X = _with_columns(X, n_features)
                yield (X.toarray() if self.dense else X), y

    def __repr__(self):
        return f"SvmlightChunks({os.fspath(self.path)!r}, chunk_size={self.chunk_size})"


def _shift_columns(path, X, zero_based):
    if zero_based:
        return X
    if X.nnz and X.indices.min() == 0:
        raise ValueError(f"'{path}' uses feature index 0 in a one-based (LIBSVM) file.")
    X.indices -= 1
    return _with_columns(X, max(X.shape[1] - 1, 0))
