"""Locating data files: the shared data folder and optionally compressed files."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zlib
from pathlib import Path

__all__ = ["find_shared_data"]

#: Suffixes tried, in this order, after a base file name (``""`` is the plain file).
COMPRESSED_SUFFIXES = ("", ".xz", ".gz", ".bz2")

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
# What reading a damaged compressed stream raises: gzip.BadGzipFile and bz2's "Invalid data
# stream" are OSErrors, a truncated stream is an EOFError.
_DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def open_binary(path):
    """Open ``path`` for binary reading, decompressing by its suffix (.gz, .bz2, .xz)."""
    path = Path(path)
    return _OPENERS.get(path.suffix.lower(), open)(path, "rb")


def decompression_errors(path):
    """The exceptions that mean ``path``'s compressed data are damaged (none for a plain
    file, whose OSErrors are real input/output errors)."""
    return _DECOMPRESSION_ERRORS if Path(path).suffix.lower() in _OPENERS else ()


def resolve_compressed(directory, name):
    """Return ``directory / (name + suffix)`` for the first suffix that exists, else None."""
    for suffix in COMPRESSED_SUFFIXES:
        candidate = Path(directory) / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _search_upward(start):
    for folder in (start, *start.parents):
        candidate = folder / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def find_shared_data(*parts):
    """Locate the project's shared benchmark data folder (nothing is ever downloaded).

    The folder is, in order of precedence:

    1. the environment variable ``SPARSEKERNEL_DATA`` when it is set and non-empty (it is then
       the only place looked at);
    2. the first directory ``shared/data`` found by walking up from the current working
       directory, then from the location of this module (a checkout at ``/work/main`` finds
       ``/work/shared/data``).

    Parameters
    ----------
    *parts : str or os.PathLike
        Path components appended to the data folder, e.g. ``find_shared_data("shuttle")``.

    Returns
    -------
    path : pathlib.Path or None
        The data folder joined with ``parts``, or ``None`` when the folder or the joined path
        does not exist (so that tests can skip cleanly on a fresh clone without data).

    Examples
    --------
    >>> folder = find_shared_data("raetsch_banana")
    >>> folder is None or folder.is_dir()
    True
    """
    env = os.environ.get("SPARSEKERNEL_DATA", "")
    if env:
        root = Path(env).expanduser()
        root = root if root.is_dir() else None
    else:
        root = _search_upward(Path.cwd().resolve()) or _search_upward(
            Path(__file__).resolve().parent
        )
    if root is None:
        return None
    path = root.joinpath(*parts)
    return path if path.exists() else None
