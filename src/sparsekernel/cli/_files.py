"""What the commands read and write: untrusted data files within the memory budget, and
output files that appear only once complete.

Every command that reads a data file into memory (``train`` unless it streams, ``-v``,
``-b 1``, ``tune``, ``predict``, ``scale``) holds at most ``--memory-budget`` bytes while
reading (the text, or the parsed rows and values) and refuses NaN and infinite values,
naming the line. A feature index costs the per-feature arrays of what consumes it (column
statistics, transposed sparse indices, dense chunks), so an index beyond what the budget
allows is refused before anything of that width exists.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import tempfile

import numpy as np

from ..datasets import SvmlightChunks, load_svmlight_path
from ..datasets._svmlight import ReadLimitError
from ..utils import format_bytes, parse_memory_budget

__all__ = ["BYTES_PER_FEATURE", "memory_budget", "output_file", "read_chunks", "read_data"]

#: What one feature costs the commands' consumers, in bytes: a few float64 vectors of the
#: feature count (column minima and maxima, scales, variances) and a sparse transpose's index
#: pointer. An index above ``budget // BYTES_PER_FEATURE`` is refused.
BYTES_PER_FEATURE = 64


def memory_budget(value):
    """``--memory-budget`` in bytes; None gives the library's default."""
    return parse_memory_budget(value)


def read_data(path, budget, *, n_features=None, dtype=np.float64, limit_width=True,
              streamed=None):
    """``(X, y)`` of a LIBSVM file read into memory, within ``budget``.

    Parameters
    ----------
    path : str
    budget : int
        Bytes: the cap on the text read and, with ``limit_width``, on the per-feature arrays.
    n_features : int, optional
    dtype : numpy dtype
    limit_width : bool
        Refuse a feature index whose per-feature arrays exceed ``budget`` (False where the
        width is cut to a model's anyway).
    streamed : str, optional
        How the command could stream the file instead, named when it is too big.

    Raises
    ------
    ValueError
        A malformed file, a NaN or infinite value (naming the line), or a file beyond the
        budget (naming ``--memory-budget``).
    """
    max_features = max(budget // BYTES_PER_FEATURE, 1) if limit_width else None
    try:
        return load_svmlight_path(path, n_features=n_features, dtype=dtype, finite=True,
                                  max_features=max_features, max_bytes=budget)
    except ReadLimitError as exc:
        raise ValueError(_limit_message(exc, budget, BYTES_PER_FEATURE, streamed=streamed)) \
            from None


class _CheckedChunks:
    """:class:`SvmlightChunks` whose limit errors name ``--memory-budget``."""

    def __init__(self, chunks, budget, per_feature):
        self._chunks, self._budget, self._per_feature = chunks, budget, per_feature

    def __iter__(self):
        try:
            yield from self._chunks
        except ReadLimitError as exc:
            raise ValueError(_limit_message(exc, self._budget, self._per_feature,
                                            self._chunks.chunk_size)) from None


def read_chunks(path, chunk_size, n_features, dtype, budget):
    """A re-iterable of dense ``(X, y)`` chunks of ``path``, each within ``budget``.

    Each dense chunk takes ``chunk_size`` values per feature, on top of the per-feature
    arrays of :func:`read_data`; the text of one chunk is capped at ``budget`` as well.
    """
    per_feature = BYTES_PER_FEATURE + chunk_size * np.dtype(dtype).itemsize
    try:
        chunks = SvmlightChunks(path, chunk_size, n_features, dtype, finite=True,
                                max_features=max(budget // per_feature, 1), max_bytes=budget)
    except ReadLimitError as exc:
        raise ValueError(_limit_message(exc, budget, per_feature, chunk_size)) from None
    return _CheckedChunks(chunks, budget, per_feature)


def _limit_message(exc, budget, per_feature, chunk_size=None, streamed=None):
    """The CLI's words for a :class:`ReadLimitError`."""
    limit = f"above --memory-budget {format_bytes(budget)}"
    if exc.limit_name == "max_bytes":
        what = "its text, or 16 bytes per row and per value parsed"
        if chunk_size is not None:
            return (f"'{exc.path}': reading one chunk (at most {chunk_size} lines) takes more "
                    f"than {format_bytes(budget)} ({what}), {limit}; lower --chunk-size or "
                    "raise --memory-budget")
        alternative = f", or stream the file with {streamed}" if streamed else ""
        return (f"'{exc.path}': reading it into memory takes more than "
                f"{format_bytes(budget)} ({what}), {limit}; raise --memory-budget{alternative}")
    what = (f"a dense chunk of {chunk_size} rows and " if chunk_size is not None else "")
    cost = f"{format_bytes(exc.index * per_feature)} for {what}per-feature arrays"
    knob = "lower --chunk-size or raise --memory-budget" if chunk_size else \
        "raise --memory-budget if the index is right"
    if exc.line is None:
        return f"--n-features {exc.index} needs {cost}, {limit}; {knob}"
    return (f"'{exc.path}' line {exc.line}: feature index {exc.index} needs {cost}, {limit}; "
            f"{knob}")


def _in_place(path):
    """Whether ``path`` exists and is not a regular file (a device, a pipe): written in
    place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    return not stat.S_ISREG(mode)


@contextlib.contextmanager
def output_file(path):
    """Yield a temporary path to write ``path``'s content to; it becomes ``path`` only when
    the block completes, so a failure or a Ctrl-C leaves nothing behind.

    A regular file (or a new one) is replaced by a rename (a symbolic link is followed, and
    stays a link). A path that exists and is not a regular file (``/dev/null``, ``/dev/full``,
    a named pipe) is written in place, as LIBSVM's tools write it, never replaced.

    Raises
    ------
    IsADirectoryError
        ``path`` is a directory (checked before anything is written).
    """
    in_place = _in_place(path)
    if in_place:
        fd, tmp = tempfile.mkstemp(suffix=".tmp")
        os.close(fd)
    else:  # next to the target: the same file system, so the rename is atomic
        target = os.path.realpath(path)
        tmp = f"{target}.{secrets.token_hex(4)}.tmp"
    try:
        try:
            yield tmp
        except OSError as exc:  # name the path given, not the temporary one
            if exc.filename is None or not os.fspath(exc.filename).startswith(tmp):
                raise
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        if in_place:
            _copy(tmp, path)
        else:
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _copy(source, path):
    """Copy the file ``source`` into ``path``; an error names ``path``."""
    try:
        with open(source, "rb") as data, open(path, "wb") as out:
            shutil.copyfileobj(data, out)
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
