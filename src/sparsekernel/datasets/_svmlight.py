"""SVMlight / LIBSVM text files, plain or compressed (.gz, .bz2, .xz).

Feature indices are one-based, as LIBSVM writes them, unless ``zero_based=True``;
``'auto'`` switches to zero-based only when an index 0 occurs, with a warning naming the file
and line. Every parse error names the file and line. Files are untrusted: ``finite=True``
refuses NaN and infinite values, ``max_bytes`` / ``max_features`` bound what reading may hold
before it is allocated, and a NUL byte is always an error.
"""

from __future__ import annotations

import io
import itertools
import os
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ..utils import Interval, Options, validate_params
from ._paths import decompression_errors, open_binary

__all__ = ["SvmlightChunks", "load_svmlight_path", "load_svmlight_paths"]

_CONSTRAINTS = {
    "n_features": [None, Interval("int", 1, None, closed="left")],
    "zero_based": [Options(True, False, "auto")],
    "finite": ["boolean"],
    "max_features": [None, Interval("int", 1, None, closed="left")],
    "max_bytes": [None, Interval("int", 1, None, closed="left")],
}
_PARSE_ERRORS = (ValueError, OverflowError)
#: Lines per block when a file is re-read to find the line at fault.
_BLOCK_LINES = 10_000
_ONE_BASED_HINT = "pass zero_based=True if the file's indices start at 0"
#: Longest parser message quoted in an error (it may repeat a whole malformed line).
_MAX_MESSAGE = 200
#: Read size of a data file: ``max_bytes`` is exact to within this many bytes.
_READ_BUFFER = 2**16


class ReadLimitError(ValueError):
    """Reading a file would exceed ``max_bytes`` or ``max_features``; raised before it does.

    Attributes
    ----------
    path : pathlib.Path
    limit_name : {'max_bytes', 'max_features'}
    limit : int
    index : int or None
        The feature index as written in the file (``max_features``), or None.
    line : int or None
        The line holding ``index``, or None.
    """

    def __init__(self, message, path, limit_name, limit, index=None, line=None):
        super().__init__(message)
        self.path, self.limit_name, self.limit = path, limit_name, limit
        self.index, self.line = index, line


class FeatureIndexError(ValueError):
    """A file uses a feature index beyond the ``n_features`` it is read at.

    Attributes
    ----------
    path : pathlib.Path
    line : int
        The line holding ``index``.
    index : int
        The feature index as written in the file.
    n_features : int
    """

    def __init__(self, message, path, line, index, n_features):
        super().__init__(message)
        self.path, self.line, self.index, self.n_features = path, line, index, n_features


class _NotText(ValueError):
    """A NUL byte: the file is not text (and one 'line' of it could be the whole file)."""


#: Bytes sklearn's parser holds per row (label, row pointer) and per value (value, index).
_PARSED_BYTES = 16


class _CheckedStream(io.RawIOBase):
    """A binary stream over a data file that refuses NUL bytes and, with ``limit``, raises
    :class:`ReadLimitError` once reading holds more than ``limit`` bytes since it was opened
    or restarted: the text, or the parsed rows and values (``_PARSED_BYTES`` each, counted
    as newlines and colons), whichever is more."""

    def __init__(self, raw, path, limit, per_chunk):
        super().__init__()
        self._raw, self._path, self._limit, self._per_chunk = raw, path, limit, per_chunk
        self._offset = self._text = self._items = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        if b"\0" in data:
            position = self._offset + data.index(b"\0")
            raise _NotText(f"Could not read '{self._path}' as an SVMlight/LIBSVM file: byte "
                           f"{position} is a NUL byte, which no text file holds")
        self._offset += n
        if self._limit is not None:
            self._text += n
            self._items += data.count(b"\n") + data.count(b":")
            if max(self._text, _PARSED_BYTES * self._items) > self._limit:
                raise self._beyond_limit()
        return n

    def _beyond_limit(self):
        where = " in one chunk of lines" if self._per_chunk else ""
        return ReadLimitError(
            f"Could not read '{self._path}' as an SVMlight/LIBSVM file: reading it{where} takes "
            f"more than max_bytes={self._limit} bytes (its text, or {_PARSED_BYTES} bytes per "
            "row and per value parsed); pass a larger max_bytes",
            self._path, "max_bytes", self._limit)

    def restart(self):
        """Count from zero again (the next chunk of lines)."""
        self._text = self._items = 0

    def close(self):
        try:
            self._raw.close()
        finally:
            super().close()


def _open_text(path, max_bytes, per_chunk=False):
    """``path`` opened for binary reading (decompressed), checked by :class:`_CheckedStream`."""
    checked = _CheckedStream(open_binary(path), path, max_bytes, per_chunk)
    return io.BufferedReader(checked, _READ_BUFFER)


def _existing_file(path):
    """``path`` as a Path: TypeError unless it is a path, FileNotFoundError unless a file."""
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or os.PathLike. Got {path!r} instead.")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"SVMlight/LIBSVM file not found: '{path}'.")
    return path


def _parse_bytes(source, dtype):
    """scikit-learn's parser on a binary stream, indices as written (index 0 allowed)."""
    X, y = load_svmlight_file(source, dtype=dtype, zero_based=True)
    return sp.csr_matrix(X), np.asarray(y, dtype=np.float64)


def _read_raw(path, dtype, max_bytes=None):
    """``(X, y)`` of one file with raw indices; an error names the file and line at fault."""
    try:
        with _open_text(path, max_bytes) as fh:
            return _parse_bytes(fh, dtype)
    except (ReadLimitError, _NotText):
        raise
    except _PARSE_ERRORS + decompression_errors(path) as exc:
        raise _located_error(path, dtype, exc) from None


def _error_text(path, line, message):
    return f"Could not read '{path}' as an SVMlight/LIBSVM file: line {line}: {message}"


def _error(path, line, message):
    return ValueError(_error_text(path, line, message))


def _located_error(path, dtype, exc):
    """The error of a failed parse, located by re-reading the file block by block (the
    parser reports no position)."""
    try:
        for first, lines in _line_blocks(path):
            try:
                _parse_bytes(io.BytesIO(b"".join(lines)), dtype)
            except _PARSE_ERRORS:
                offset, message = _first_bad_line(lines, dtype)
                return _error(path, first + offset, message)
    except ValueError as located:  # a damaged compressed stream, located by _line_blocks
        return located
    return ValueError(f"Could not read '{path}' as an SVMlight/LIBSVM file: {exc}")


def _line_blocks(path, n_lines=_BLOCK_LINES, max_bytes=None):
    """Yield ``(number of the first line, lines)`` for consecutive blocks of ``n_lines``
    (each of at most about ``max_bytes`` bytes, if set)."""
    errors, first = decompression_errors(path), 1
    with _open_text(path, max_bytes, per_chunk=True) as fh:
        while True:
            fh.raw.restart()
            lines = []
            try:
                lines.extend(itertools.islice(fh, n_lines))  # keeps the lines read on error
            except errors as exc:
                raise _error(path, first + len(lines), f"cannot decompress: {exc}") from None
            if not lines:
                return
            yield first, lines
            first += len(lines)


def _first_bad_line(lines, dtype):
    """``(index, message)`` of the first line of ``lines`` the parser refuses, by bisection
    (each refusal is about one line: a label, an index, a value, their order)."""
    lo, hi, message = 0, len(lines), "unreadable lines"
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _parse_bytes(io.BytesIO(b"".join(lines[lo:mid])), dtype)
            lo = mid
        except _PARSE_ERRORS as exc:
            hi, message = mid, str(exc)
    try:
        _parse_bytes(io.BytesIO(lines[lo]), dtype)
    except _PARSE_ERRORS as exc:
        message = str(exc)
    if len(message) > _MAX_MESSAGE:  # the parser may quote a whole (huge) token
        message = message[:_MAX_MESSAGE - 3] + "..."
    return lo, f"{message} ({_excerpt(lines[lo])})"


def _excerpt(line):
    text = line.rstrip(b"\r\n")
    return repr(text if len(text) <= 60 else text[:57] + b"...")


def _data_lines(lines):
    """Indices in ``lines`` of the lines that hold a row (not blank, not only a comment)."""
    return [i for i, line in enumerate(lines) if line.split(b"#", 1)[0].split()]


def _row_of(X, pos):
    """The row of CSR ``X`` holding stored entry ``pos``."""
    return int(np.searchsorted(X.indptr, pos, side="right") - 1)


def _first_row_with_zero(X):
    """The first row of CSR ``X`` (raw indices) using feature index 0, or None."""
    if not X.nnz:
        return None
    pos = int(np.argmin(X.indices))  # the first minimum, so the first row using it
    return _row_of(X, pos) if X.indices[pos] == 0 else None


def _line_of_row(path, row):
    """Line number of data row ``row`` of a file (re-read: only errors and warnings ask)."""
    seen = 0
    for first, lines in _line_blocks(path):
        rows = _data_lines(lines)
        if row < seen + len(rows):
            return first + rows[row - seen]
        seen += len(rows)
    return None


def _zero_index_line(path, X):
    row = _first_row_with_zero(X)
    return None if row is None else _line_of_row(path, row)


def _one_based(path, X, line_of_zero, hint=_ONE_BASED_HINT):
    """X with its raw one-based indices shifted to 0; an index 0 is an error."""
    if line_of_zero is not None:
        raise _error(path, line_of_zero, f"feature index 0 in a one-based (LIBSVM) file; "
                                         f"{hint}")
    X.indices -= 1
    return _with_columns(X, max(X.shape[1] - 1, 0))


def _with_columns(X, n_columns):
    """The same CSR arrays viewed with ``n_columns`` columns (no copy)."""
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_columns), copy=False)


def _warn_zero_based(path, line):
    warnings.warn(f"'{path}' uses feature index 0 (line {line}): zero_based='auto' reads "
                  "the indices as zero-based. Pass zero_based=True or False to decide.",
                  UserWarning, stacklevel=4)


def _resolve_zero_based(raw, zero_based):
    """Apply the convention to every ``(path, X, y)``; ``'auto'`` looks at all files.

    Returns the shifted ``raw`` and whether it is zero-based.
    """
    if zero_based == "auto":
        zero_based = False
        for path, X, _ in raw:
            line = _zero_index_line(path, X)
            if line is not None:
                _warn_zero_based(path, line)
                zero_based = True
                break
    if zero_based:
        return raw, True
    return [(p, _one_based(p, X, _zero_index_line(p, X)), y) for p, X, y in raw], False


def _first_wide_entry(X, n_columns):
    """``(row, column)`` of the first stored entry of CSR ``X`` in a column >= n_columns."""
    pos = int(np.argmax(X.indices >= n_columns))
    return _row_of(X, pos), int(X.indices[pos])


def _too_wide(path, line, column, n_features, zero_based):
    """The error for a file using a column (0-based ``column``) past ``n_features``."""
    index = column if zero_based else column + 1  # as written in the file
    return FeatureIndexError(
        _error_text(path, line, f"feature index {index} is beyond n_features={n_features}; "
                                "pass a larger n_features"), path, line, index, n_features)


def _beyond_max_features(path, line, column, max_features, zero_based):
    """The error for a file using a column (0-based ``column``) past ``max_features``."""
    index = column if zero_based else column + 1  # as written in the file
    return ReadLimitError(
        _error_text(path, line, f"feature index {index} is beyond max_features={max_features}; "
                                "pass a larger max_features"),
        path, "max_features", max_features, index, line)


def _check_max_features(path, n_features, max_features):
    """Refuse an ``n_features`` above ``max_features`` before anything is read."""
    if None not in (n_features, max_features) and n_features > max_features:
        raise ReadLimitError(
            f"Could not read '{path}' at n_features={n_features}: above max_features="
            f"{max_features}", path, "max_features", max_features, n_features)


def _first_nonfinite(X, y, zero_based):
    """``(row, what)`` of the first row holding a NaN or infinite value or label, or None."""
    found = []
    bad = ~np.isfinite(X.data)
    if bad.any():
        pos = int(np.argmax(bad))
        index = int(X.indices[pos]) + (0 if zero_based else 1)
        found.append((_row_of(X, pos), f"feature {index} is {X.data[pos]}"))
    bad = ~np.isfinite(y)
    if bad.any():
        row = int(np.argmax(bad))
        found.append((row, f"the label is {y[row]}"))
    return min(found, default=None)


def _check_finite(path, X, y, zero_based, line_of_row):
    """Raise a ValueError naming the line of the first NaN or infinite value or label."""
    first = _first_nonfinite(X, y, zero_based)
    if first is None:
        return
    row, what = first
    note = (f" (a value beyond the range of {X.dtype}, such as 1e400, reads as inf)"
            if "inf" in what else "")
    raise _error(path, line_of_row(row), f"{what}; expected a finite number{note}")


def load_svmlight_paths(paths, n_features=None, dtype=np.float64, zero_based=False, *,
                        finite=False, max_features=None, max_bytes=None):
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
    zero_based : bool or "auto", default=False
        Whether feature indices start at 0. False (LIBSVM's convention): they start at 1 and
        an index 0 is an error naming its file and line. ``"auto"``: one-based unless some
        file uses index 0, in which case every file is read zero-based, with a warning
        naming the first such file and line.
    finite : bool, default=False
        Refuse NaN and infinite values and labels (a value beyond the dtype's range, such
        as ``1e400``, reads as inf): a ValueError names the file and line.
    max_features : int or None, default=None
        Cap on the number of columns: a file naming a larger feature index (or a larger
        ``n_features``) raises a ``ValueError`` naming the file and line. ``None``: no cap.
    max_bytes : int or None, default=None
        Cap on what reading one file holds: its (decompressed) text, or the parsed rows and
        values (16 bytes each), whichever is more. ``None``: no cap. (A NUL byte is an
        error either way.)

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
        A file is malformed, uses index 0 in one-based mode, holds a non-finite value with
        ``finite=True``, or uses a feature index beyond ``n_features`` (a
        ``FeatureIndexError``) or ``max_features`` (a ``ReadLimitError``, as is a file beyond
        ``max_bytes``); the message names the file and the line.

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
    validate_params("load_svmlight_paths", _CONSTRAINTS, {
        "n_features": n_features, "zero_based": zero_based, "finite": finite,
        "max_features": max_features, "max_bytes": max_bytes})
    raw = []
    for path in paths:
        path = _existing_file(path)
        _check_max_features(path, n_features, max_features)
        raw.append((path, *_read_raw(path, dtype, max_bytes)))
    raw, zero_based = _resolve_zero_based(raw, zero_based)
    for path, X, y in raw:
        _check_rows(path, X, y, zero_based, max_features, finite)
    widest = max((X.shape[1] for _, X, _ in raw), default=0)
    common = widest if n_features is None else n_features
    out = []
    for path, X, y in raw:
        if X.shape[1] > common:
            row, column = _first_wide_entry(X, common)
            raise _too_wide(path, _line_of_row(path, row), column, n_features, zero_based)
        out.append((_with_columns(X, common), y))
    return out


def _check_rows(path, X, y, zero_based, max_features, finite, line_of_row=None):
    """Apply ``max_features`` and ``finite`` to one parsed file or chunk."""
    line_of_row = line_of_row or (lambda row: _line_of_row(path, row))
    if max_features is not None and X.shape[1] > max_features:
        row, column = _first_wide_entry(X, max_features)
        raise _beyond_max_features(path, line_of_row(row), column, max_features, zero_based)
    if finite:
        _check_finite(path, X, y, zero_based, line_of_row)


def load_svmlight_path(path, n_features=None, dtype=np.float64, zero_based=False, *,
                       finite=False, max_features=None, max_bytes=None):
    """Load one SVMlight/LIBSVM file, plain or compressed (:func:`load_svmlight_paths`).

    Parameters
    ----------
    path : str or os.PathLike
        The file (``.gz``, ``.bz2``, ``.xz``: compressed).
    n_features : int or None, default=None
        Number of columns of ``X``; ``None``: the largest feature index of the file.
    dtype : numpy dtype, default=np.float64
    zero_based : bool or "auto", default=False
        As in :func:`load_svmlight_paths`: one-based (LIBSVM) unless True.
    finite : bool, default=False
        Refuse NaN and infinite values and labels (the error names the line).
    max_features, max_bytes : int or None, default=None
        Caps on the columns and on the text read, as in :func:`load_svmlight_paths`.

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
        The file is malformed, its indices do not fit ``zero_based``, ``n_features`` or
        ``max_features``, or it holds a non-finite value with ``finite=True`` (the message
        names the file and the line), or it exceeds ``max_bytes``.

    Examples
    --------
    >>> X, y = load_svmlight_path("shared/data/a9a/a9a.xz", n_features=123)  # doctest: +SKIP
    """
    ((X, y),) = load_svmlight_paths([_existing_file(path)], n_features=n_features, dtype=dtype,
                                    zero_based=zero_based, finite=finite,
                                    max_features=max_features, max_bytes=max_bytes)
    return X, y


class SvmlightScan(NamedTuple):
    """What one pass over a SVMlight/LIBSVM file found (:meth:`SvmlightChunks.scan`)."""

    n_rows: int
    #: The chunks' ``n_features`` when set, else the largest feature index of the file
    #: (0 when no row has a feature).
    n_features: int
    #: The distinct labels (targets), sorted, as float64.
    labels: np.ndarray


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
        chunk with a larger index then raises a ValueError naming its line (:meth:`scan`
        finds the file's largest index in one pass).
    dtype : numpy dtype, default=np.float64
        Dtype of ``X``.
    zero_based : bool or "auto", default=False
        Whether feature indices start at 0; False (LIBSVM's convention) makes an index 0 an
        error naming its line. "auto" decides on the first chunk (with a warning if
        zero-based).
    dense : bool, default=True
        Yield dense C-contiguous arrays (else CSR matrices).
    finite : bool, default=False
        Refuse NaN and infinite values and labels (the error names the line).
    max_features : int or None, default=None
        Cap on the number of columns, checked on each chunk before it is made dense.
        ``None``: no cap.
    max_bytes : int or None, default=None
        Cap on what reading one chunk of lines holds (as in :func:`load_svmlight_paths`).
        ``None``: no cap.

    Raises
    ------
    TypeError
        ``path`` is not a path.
    FileNotFoundError
        The file does not exist.
    ValueError
        A bad ``chunk_size``, ``n_features`` or ``zero_based`` (at construction), or a
        malformed file (while iterating; the message names the file and line). An index
        beyond ``n_features`` is a ``FeatureIndexError`` (with the index and the line as
        attributes).

    Examples
    --------
    >>> chunks = SvmlightChunks("huge.libsvm", chunk_size=20000)  # doctest: +SKIP
    >>> clf = LowRankSVC(n_passes=2).fit_stream(chunks)  # doctest: +SKIP

    See Also
    --------
    load_svmlight_path : A whole file in memory.
    sparsekernel.LowRankSVC.fit_stream : Fits on chunks such as these.
    sklearn.datasets.load_svmlight_file : scikit-learn's reader, a whole file at once.
    """

    def __init__(self, path, chunk_size, n_features=None, dtype=np.float64, zero_based=False,
                 dense=True, *, finite=False, max_features=None, max_bytes=None):
        self.path = _existing_file(path)
        validate_params("SvmlightChunks", {
            "chunk_size": [Interval("int", 1, None, closed="left")], **_CONSTRAINTS,
        }, {"chunk_size": chunk_size, "n_features": n_features, "zero_based": zero_based,
            "finite": finite, "max_features": max_features, "max_bytes": max_bytes})
        _check_max_features(self.path, n_features, max_features)
        self.chunk_size, self.n_features, self.dtype = chunk_size, n_features, dtype
        self.zero_based, self.dense = zero_based, dense
        self.finite, self.max_features, self.max_bytes = finite, max_features, max_bytes

    def __iter__(self):
        n_features = self.n_features
        for X, y, zero_based, line_of_row in self._sparse_chunks():
            n_features = X.shape[1] if n_features is None else n_features
            self._check_width(X, n_features, zero_based, line_of_row)
            X = _with_columns(X, n_features)
            yield (X.toarray() if self.dense else X), y

    def scan(self):
        """Read the file once, a chunk at a time, for its width and its labels.

        For a consumer that must know them before the first chunk. Each chunk is parsed and
        checked as iteration does, so a bad line anywhere in the file is reported before any
        chunk is consumed; the pass holds one sparse chunk and the distinct labels.

        Returns
        -------
        SvmlightScan
            ``(n_rows, n_features, labels)``: the number of rows; ``n_features`` if set,
            else the largest feature index of the file (0 if no row has a feature); the
            sorted distinct labels.

        Raises
        ------
        ValueError
            As iteration does: a malformed line, an index beyond ``n_features``,
            ``max_features`` or ``max_bytes`` (naming the file and the line).

        Examples
        --------
        >>> chunks = SvmlightChunks("huge.libsvm", chunk_size=20000)  # doctest: +SKIP
        >>> n_rows, n_features, labels = chunks.scan()  # doctest: +SKIP
        >>> chunks = SvmlightChunks("huge.libsvm", 20000, n_features=n_features)  # doctest: +SKIP
        >>> clf = LowRankSVC().fit_stream(chunks, classes=labels)  # doctest: +SKIP
        """
        n_rows, width, labels = 0, 0, np.empty(0)
        for X, y, zero_based, line_of_row in self._sparse_chunks():
            if self.n_features is not None:
                self._check_width(X, self.n_features, zero_based, line_of_row)
            n_rows, width = n_rows + len(y), max(width, X.shape[1])
            labels = np.union1d(labels, y)
        n_features = width if self.n_features is None else self.n_features
        return SvmlightScan(n_rows, n_features, labels)

    def _sparse_chunks(self):
        """Yield ``(X, y, zero_based, line_of_row)`` per chunk of lines: ``X`` a CSR matrix
        as wide as the chunk's largest index (shifted when one-based), checked for
        ``max_features`` and ``finite``; ``line_of_row(row)`` the file's line of a row."""
        path, zero_based = self.path, self.zero_based
        for first, lines in _line_blocks(path, self.chunk_size, self.max_bytes):
            X, y = self._parse(first, lines)

            def line_of_row(row, lines=lines, first=first):
                return first + _data_lines(lines)[row]  # worked out only for a message

            zero = _first_row_with_zero(X)
            if zero_based == "auto":  # decided once, on the first chunk
                zero_based = zero is not None
                if zero_based:
                    _warn_zero_based(path, line_of_row(zero))
            if not zero_based:
                hint = (_ONE_BASED_HINT if self.zero_based is False else "zero_based='auto' "
                        "chose one-based at the first chunk; " + _ONE_BASED_HINT)
                X = _one_based(path, X, None if zero is None else line_of_row(zero), hint)
            _check_rows(path, X, y, zero_based, self.max_features, self.finite, line_of_row)
            yield X, y, zero_based, line_of_row

    def _check_width(self, X, n_features, zero_based, line_of_row):
        """Raise :class:`FeatureIndexError` if ``X`` uses a column past ``n_features``."""
        if X.shape[1] > n_features:
            row, column = _first_wide_entry(X, n_features)
            raise _too_wide(self.path, line_of_row(row), column, n_features, zero_based)

    def _parse(self, first, lines):
        try:
            return _parse_bytes(io.BytesIO(b"".join(lines)), self.dtype)
        except _PARSE_ERRORS:
            offset, message = _first_bad_line(lines, self.dtype)
            raise _error(self.path, first + offset, message) from None

    def __repr__(self):
        return f"SvmlightChunks({os.fspath(self.path)!r}, chunk_size={self.chunk_size})"
