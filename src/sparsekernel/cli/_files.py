"""What the commands read and write: untrusted data files within the memory budget, and
output files that appear only once complete.

Every command that reads a data file into memory (``train`` unless it streams, ``-v``,
``-b 1``, ``tune``, ``predict``, ``scale``) holds at most ``--memory-budget`` bytes while
reading (the text, or the parsed rows and values) and refuses NaN and infinite values,
naming the line. A feature index costs the per-feature arrays of what consumes it (column
statistics, transposed sparse indices, dense chunks), so an index beyond what the budget
allows is refused before anything of that width exists.

A command writes its output file last: what it prints goes out (flushed) before, and the
rename of the complete file into place is its commit point. An error or a Ctrl-C up to the
rename leaves no file (and an older one in place); from the rename on, Ctrl-C is ignored: the
command has done its work, and the exit status must say so (:func:`committed`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading

import numpy as np

from ..datasets import SvmlightChunks, load_svmlight_path
from ..datasets._svmlight import FeatureIndexError, ReadLimitError
from ..utils import format_bytes, parse_memory_budget

__all__ = ["BYTES_PER_FEATURE", "StandardOutputError", "committed", "end_command",
           "memory_budget", "output_file", "print_out", "read_chunks", "read_data",
           "standard_output", "start_command"]

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
        ``--n-features``; default: the largest index in the file.
    dtype : numpy dtype
    limit_width : bool
        Refuse a feature index whose per-feature arrays exceed ``budget`` (False where the
        width is cut to a model's anyway).
    streamed : str, optional
        How the command could stream the file instead, named when it is too big.

    Raises
    ------
    ValueError
        A malformed file, a NaN or infinite value (naming the line), an index beyond
        ``--n-features``, or a file beyond the budget (naming ``--memory-budget``).
    """
    max_features = max(budget // BYTES_PER_FEATURE, 1) if limit_width else None
    with _read_errors(budget, BYTES_PER_FEATURE, streamed=streamed):
        return load_svmlight_path(path, n_features=n_features, dtype=dtype, finite=True,
                                  max_features=max_features, max_bytes=budget)


class _CheckedChunks:
    """:class:`SvmlightChunks` whose errors name the command's options."""

    def __init__(self, chunks, budget, per_feature):
        self._chunks, self._budget, self._per_feature = chunks, budget, per_feature

    def __iter__(self):
        with _read_errors(self._budget, self._per_feature, self._chunks.chunk_size):
            yield from self._chunks


def read_chunks(path, chunk_size, n_features, dtype, budget):
    """Dense ``(X, y)`` chunks of ``path``, each within ``budget``, and the file's labels.

    A first pass reads the file once, sparse and a chunk at a time, for its largest feature
    index (the chunks' width, unless ``n_features`` is given: a later chunk may use an index
    the first did not) and its distinct labels (a classifier's classes, which the first
    chunk need not all hold); it also finds a malformed line before any chunk is fitted.
    Each dense chunk takes ``chunk_size`` values per feature, on top of the per-feature
    arrays of :func:`read_data`; the text of one chunk is capped at ``budget`` as well.

    Returns
    -------
    chunks : re-iterable of (X, y)
    labels : ndarray
        The sorted distinct labels of the file.
    """
    per_feature = BYTES_PER_FEATURE + chunk_size * np.dtype(dtype).itemsize
    options = dict(dtype=dtype, finite=True, max_features=max(budget // per_feature, 1),
                   max_bytes=budget)
    with _read_errors(budget, per_feature, chunk_size):
        _, width, labels = SvmlightChunks(path, chunk_size, n_features, **options).scan()
        chunks = SvmlightChunks(path, chunk_size, width or None, **options)
    return _CheckedChunks(chunks, budget, per_feature), labels


@contextlib.contextmanager
def _read_errors(budget, per_feature, chunk_size=None, streamed=None):
    """Reword the reader's limit and width errors in the command's options."""
    try:
        yield
    except ReadLimitError as exc:
        raise ValueError(_limit_message(exc, budget, per_feature, chunk_size, streamed)) \
            from None
    except FeatureIndexError as exc:
        raise ValueError(
            f"'{exc.path}' line {exc.line}: feature index {exc.index} is beyond --n-features "
            f"{exc.n_features}; pass a larger --n-features, or leave it out (default: the "
            "largest index in the file)") from None


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
    knob = _width_advice(exc.index, budget, per_feature, chunk_size)
    if exc.line is None:
        return f"--n-features {exc.index} needs {cost}, {limit}; {knob}"
    return (f"'{exc.path}' line {exc.line}: feature index {exc.index} needs {cost}, {limit}; "
            f"{knob}")


def _width_advice(index, budget, per_feature, chunk_size):
    """What makes ``index`` features fit ``budget``: fewer rows per dense chunk, while the
    per-feature arrays alone fit; else only a larger budget (or a smaller index)."""
    if chunk_size is None or index * BYTES_PER_FEATURE >= budget:
        return "raise --memory-budget if the index is right"
    itemsize = (per_feature - BYTES_PER_FEATURE) // chunk_size
    rows = (budget // index - BYTES_PER_FEATURE) // itemsize
    if rows < 1:
        return "raise --memory-budget if the index is right"
    return f"lower --chunk-size to {rows} or less, or raise --memory-budget"


class StandardOutputError(OSError):
    """Standard output cannot be written (a full disk): the message names it."""


@contextlib.contextmanager
def standard_output():
    """Yield ``sys.stdout`` to write to, and flush it at the end of the block, so that a
    failure to write (a full disk) comes out here, as a :class:`StandardOutputError` naming
    standard output, before the command commits a file. A closed pipe stays a
    ``BrokenPipeError`` (the reader went away: not an error of the command)."""
    try:
        yield sys.stdout
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is not None:  # not standard output's
            raise
        reason = exc.strerror or str(exc)
        raise StandardOutputError(f"cannot write to standard output: {reason}") from None


def print_out(*lines):
    """Print ``lines`` to standard output, one per line, flushed (:func:`standard_output`)."""
    with standard_output() as out:
        print(*lines, sep="\n", file=out)


class _Command:
    """The running command's commit: whether its output file is in place, and SIGINT's
    handler from before the commit ignored Ctrl-C (None: not changed)."""

    committed = False
    sigint = None


def start_command():
    """Forget any commit of an earlier command (the commands run one at a time)."""
    _Command.committed, _Command.sigint = False, None


def committed():
    """Whether the running command has put its output file in place: its last step, so
    the command has done its work, and a Ctrl-C after it exits 0, leaving the file.

    From the commit on, Ctrl-C (SIGINT) is ignored until :func:`end_command`, which a
    process's own command never calls: a Ctrl-C while the interpreter shuts down (tens of
    milliseconds with NumPy and scikit-learn loaded) would otherwise end it by SIGINT,
    status 130, with the file in place."""
    return _Command.committed


def end_command():
    """Give SIGINT back the handler it had before the commit (for a caller in Python, which
    goes on after the command)."""
    if _Command.sigint is not None:
        signal.signal(signal.SIGINT, _Command.sigint)
        _Command.sigint = None


def _ignore_interrupts():
    """Ignore Ctrl-C from here on (the commit), remembering SIGINT's handler for
    :func:`end_command`. Only the main thread can set a handler; elsewhere, or under a
    handler not set from Python (which could not be restored), nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _Command.sigint is None:
        _Command.sigint = previous


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
    a named pipe) is written in place, as LIBSVM's tools write it, never replaced. The
    rename (or the copy in place) is the command's commit, after which Ctrl-C is ignored
    (:func:`committed`): a command writes its output file last, once everything it prints
    is out.

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
        if in_place:  # Ctrl-C stays live: a pipe may block the copy until its reader comes
            _copy(tmp, path)
            _ignore_interrupts()
        else:  # the rename and its record: both or neither
            _ignore_interrupts()
            try:
                os.replace(tmp, target)
            except BaseException:
                end_command()
                raise
        _Command.committed = True
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
