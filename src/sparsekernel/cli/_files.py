"""What the commands read and write: untrusted data files within the memory budget, and
output files that appear only once complete.

Reading a data file into memory holds at most ``--memory-budget`` bytes (the text, or the
parsed rows and values), refuses NaN and infinite values, and refuses a feature index whose
per-feature arrays exceed the budget before anything of that width exists. A data file named
``-`` is standard input; it and any stream are copied into a temporary file first
(:func:`input_file`), since the readers read a file more than once.

A command writes its output file last; the rename of the complete file into place is its
commit point, after which Ctrl-C is ignored (:func:`committed`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from ..datasets import SvmlightChunks, load_svmlight_path
from ..datasets._paths import COMPRESSED_SUFFIXES, decompression_errors, open_binary
from ..datasets._svmlight import FeatureIndexError, ReadLimitError
from ..utils import format_bytes, parse_memory_budget

__all__ = ["BYTES_PER_FEATURE", "STDIN", "StandardOutputError", "committed", "end_command",
           "input_file", "memory_budget", "output_file", "print_out", "read_chunks",
           "read_data", "require_standard_output", "standard_output", "start_command"]

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

    A first pass reads the file for its largest feature index (the chunks' width, unless
    ``n_features`` is given) and its distinct labels, and finds a malformed line before any
    chunk is fitted. Each dense chunk takes ``chunk_size`` values per feature, on top of
    the per-feature arrays of :func:`read_data`.

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


#: The data file name that reads standard input, and how errors name it.
STDIN, _STDIN_NAME = "-", "<stdin>"
#: Bytes read at a time when a data file is checked or copied.
_BLOCK = 2**20
_BARE_CR = re.compile(rb"\r(?!\n)")


@contextlib.contextmanager
def input_file(name, limit=None):
    """Yield a path from which the readers can read the data file ``name``, checked.

    ``-`` (standard input) and a stream (a named pipe) can be read only once: they are
    copied into a temporary file first (at most ``limit`` bytes), removed at the end of the
    block; errors raised in the block name ``name``, not the copy.

    Parameters
    ----------
    name : str
        The data file as given on the command line.
    limit : int, optional
        Bytes of text past which reading into memory is refused anyway: neither the copy
        nor the check reads further. None: the whole file (a streamed model).

    Raises
    ------
    ValueError
        Text that scikit-learn's parser would read otherwise than LIBSVM's tools
        (:func:`check_text`), or standard input closed.
    """
    if not _read_once(name):
        check_text(name, name, limit)
        yield name
        return
    shown = _STDIN_NAME if name == STDIN else name
    suffix = Path(name).suffix.lower() if name != STDIN else ""
    suffix = suffix if suffix in COMPRESSED_SUFFIXES else ""
    fd, tmp = tempfile.mkstemp(prefix="sparsekernel-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as copy:
            _copy_at_most(name, copy, None if suffix else limit)
        check_text(tmp, tmp, limit)
        yield tmp
    except ValueError as exc:
        if tmp not in str(exc):
            raise
        raise ValueError(str(exc).replace(tmp, shown)) from None
    except OSError as exc:
        if exc.filename != tmp:
            raise
        raise OSError(exc.errno, exc.strerror, shown) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _read_once(name):
    """Whether ``name`` is standard input or a stream (a pipe, a character device, a
    socket), which can be read only once."""
    if name == STDIN:
        return True
    try:
        mode = os.stat(name).st_mode
    except (OSError, ValueError):
        return False  # the reader names a missing file
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _copy_at_most(name, out, limit):
    """Copy standard input (``-``) or the stream ``name`` into ``out``, at most ``limit``
    bytes (None: all)."""
    if name == STDIN:
        if sys.stdin is None:
            raise ValueError("standard input is closed, and the data file '-' reads it; "
                             "give a file name, or redirect standard input from a file")
        source = contextlib.nullcontext(sys.stdin.buffer)
    else:
        source = open(name, "rb")
    total = 0
    with source as data:
        while limit is None or total < limit:
            block = data.read(_BLOCK if limit is None else min(_BLOCK, limit - total))
            if not block:
                break
            out.write(block)
            total += len(block)


def check_text(path, name, limit=None):
    """Refuse a data file whose text scikit-learn's parser reads otherwise than LIBSVM's
    tools: a ``_`` in a number (Python reads ``1_000`` as 1000; svm-train refuses it,
    svm-scale reads 1), and a carriage return without a line feed (a file with classic Mac
    line endings is one line to both, which the parser refuses without saying why).

    Parameters
    ----------
    path : str
        The file to read (decompressed by its suffix).
    name : str
        The file as errors name it.
    limit : int, optional
        Read at most about this many bytes of text.

    Raises
    ------
    ValueError
        Naming the file, the line and the text at fault. A missing file, a NUL byte or a
        damaged compressed stream ends the check quietly: the reader reports them.
    """
    if not os.path.isfile(path):
        return
    scan = _TextScan(name)
    try:
        with open_binary(path) as fh:
            while limit is None or scan.total < limit:
                block = fh.read(_BLOCK)
                if not block or not scan.feed(block):
                    break
    except decompression_errors(path):
        return
    scan.end()


class _TextScan:
    """:func:`check_text` block by block: the line count, and whether the last line of
    the blocks so far is in a comment or ended with a carriage return."""

    def __init__(self, name):
        self.name, self.line, self.total = name, 1, 0
        self.comment = self.cr = False
        self.tail = b""  # the start of the last line so far, quoted by an error

    def feed(self, block):
        """Check one block; False at a NUL byte (not text: the reader says so)."""
        if b"\0" in block:
            return False
        if self.cr and not block.startswith(b"\n"):
            self._bare_cr(self.tail, self.line)
        bare = _BARE_CR.search(block)
        if bare is not None and bare.end() < len(block):
            start = block.rfind(b"\n", 0, bare.start()) + 1
            self._bare_cr((self.tail if start == 0 else b"") + block[start:start + 60],
                          self.line + block.count(b"\n", 0, start))
        self._underscores(block)
        last = block.rfind(b"\n")
        self.comment = (self.comment and last < 0) or b"#" in block[last + 1:]
        self.tail = ((self.tail if last < 0 else b"") + block[last + 1:last + 61])[:60]
        self.cr = block.endswith(b"\r")
        self.line += block.count(b"\n")
        self.total += len(block)
        return True

    def end(self):
        if self.cr:
            self._bare_cr(self.tail, self.line)

    def _underscores(self, block):
        pos = block.find(b"_")
        while pos >= 0:
            start = block.rfind(b"\n", 0, pos) + 1
            if not (b"#" in block[start:pos] or (start == 0 and self.comment)):
                line = self.line + block.count(b"\n", 0, pos)
                raise self._error(line, "expected numbers as LIBSVM's tools read them, without "
                                        "'_' (Python reads 1_000 as 1000, svm-train refuses "
                                        f"it), got {_token(block, pos)!r}")
            end = block.find(b"\n", pos)
            pos = -1 if end < 0 else block.find(b"_", end)

    def _bare_cr(self, text, line):
        """Raise the error of a bare CR on ``line``, which starts with ``text``."""
        text = text[:60].decode("ascii", "backslashreplace")
        raise self._error(line, "a carriage return (CR) without a line feed: expected lines "
                                f"that end in LF or CR LF, got {text!r} (classic Mac line "
                                "endings: convert them, e.g. with tr '\\r' '\\n')")

    def _error(self, line, message):
        return ValueError(f"Could not read '{self.name}' as an SVMlight/LIBSVM file: line "
                          f"{line}: {message}")


def _token(block, pos):
    """The whitespace-separated field of ``block`` around ``pos``, as text."""
    start = max(block.rfind(c, 0, pos) for c in (b" ", b"\t", b"\n")) + 1
    ends = [e for e in (block.find(c, pos) for c in (b" ", b"\t", b"\r", b"\n")) if e >= 0]
    return block[start:min(ends, default=len(block))][:60].decode("ascii", "backslashreplace")


def require_standard_output(command, what, remedy):
    """Refuse to start a command that prints ``what`` when standard output is closed
    (``>&-``): there is nowhere to print it, and a command that printed nothing would
    have done only part of its work."""
    if sys.stdout is None:
        raise ValueError(f"standard output is closed, and {command} prints {what} there; "
                         f"{remedy}")


class StandardOutputError(OSError):
    """Standard output cannot be written (a full disk): the message names it."""


@contextlib.contextmanager
def standard_output():
    """Yield ``sys.stdout`` to write to, and flush it at the end of the block, so that a
    failure to write (a full disk) comes out here, as a :class:`StandardOutputError` naming
    standard output, before the command commits a file. A closed pipe stays a
    ``BrokenPipeError`` (the reader went away: not an error of the command). A closed
    standard output (``>&-``) is a :class:`StandardOutputError` as well."""
    if sys.stdout is None:
        raise StandardOutputError("cannot write to standard output: it is closed")
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

    A regular file (or a new one) is replaced by a rename (a symbolic link is followed). A
    path that exists and is not a regular file (``/dev/null``, a named pipe) is written in
    place, never replaced. The rename (or the copy) is the command's commit, after which
    Ctrl-C is ignored (:func:`committed`).

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
