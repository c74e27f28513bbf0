"""``sparsekernel scale``: svm-scale, with its options, output and range files.

As svm-scale: each feature is mapped linearly from its [min, max] over the file (implicit
zeros included) to [lower, upper]; a feature with min == max is dropped; only nonzero
results are written. The range file is svm-scale's, so it round-trips with LIBSVM's own.
Unlike svm-scale, NaN and infinite values (in the data or a range file) are refused with the
line, as ``train`` refuses them.
"""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..datasets._svmlight import _line_of_row
from ..utils import DEFAULT_MEMORY_BUDGET, format_bytes
from ._files import (
    BYTES_PER_FEATURE,
    input_file,
    memory_budget,
    output_file,
    read_data,
    require_standard_output,
    standard_output,
)
from ._options import UsageError

__all__ = ["Scaling", "add_parser", "read_range", "write_range"]


@dataclass
class Scaling:
    """What svm-scale applies: x to [lower, upper] from [fmin, fmax], y optionally."""

    lower: float
    upper: float
    fmin: np.ndarray  # per feature; column j is LIBSVM index j + 1
    fmax: np.ndarray
    y: tuple | None = None  # (y_lower, y_upper, y_min, y_max)


@dataclass
class RangeFile:
    """The content of a range file: each section is None when absent."""

    x: tuple | None  # (lower, upper)
    features: dict  # index -> (min, max)
    y: tuple | None  # (y_lower, y_upper, y_min, y_max)


def add_parser(subparsers):
    """Register the ``scale`` subcommand."""
    parser = subparsers.add_parser(
        "scale", help="scale a LIBSVM file's features to [lower, upper] (svm-scale)",
        description="Scale DATA_FILE as svm-scale does and write it to standard output in "
                    "LIBSVM format. Zeros stay implicit: only nonzero scaled values are "
                    "written.",
        usage="%(prog)s [options] DATA_FILE",
    )
    parser.add_argument("-l", type=_finite, default=-1.0, dest="lower", metavar="lower",
                        help="x scaling lower limit (default -1)")
    parser.add_argument("-u", type=_finite, default=1.0, dest="upper", metavar="upper",
                        help="x scaling upper limit (default +1)")
    parser.add_argument("-y", type=_finite, nargs=2, dest="y_limits",
                        metavar=("y_lower", "y_upper"),
                        help="y scaling limits (default: no y scaling)")
    parser.add_argument("-s", dest="save", metavar="save_filename",
                        help="save scaling parameters to save_filename")
    parser.add_argument("-r", dest="restore", metavar="restore_filename",
                        help="restore scaling parameters from restore_filename")
    parser.add_argument("--memory-budget", metavar="SIZE",
                        help="cap on the memory the data read into memory take, e.g. 512MB; "
                             f"default: the library's {format_bytes(DEFAULT_MEMORY_BUDGET)}")
    parser.add_argument("data_file", metavar="DATA_FILE", help="the data (- reads standard "
                        "input)")
    parser.set_defaults(run=run)


def _finite(text):
    """A finite float (-l, -u, -y)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def run(args):
    """Read, compute or restore the scaling, write the scaled rows, then save the scaling."""
    if not args.upper > args.lower or (args.y_limits and not args.y_limits[1] > args.y_limits[0]):
        raise UsageError("inconsistent lower/upper specification")
    if args.save and args.restore:
        raise UsageError("cannot use -r and -s simultaneously")
    require_standard_output("scale", "the scaled data", "redirect it to a file: sparsekernel "
                            "scale [options] DATA_FILE > scaled_file")
    budget = memory_budget(args.memory_budget)
    restored = read_range(args.restore, budget) if args.restore else None
    with input_file(args.data_file, budget + 1) as path:
        X, y = read_data(path, budget)
        width = max([X.shape[1], *(restored.features if restored else ())])
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
        X.sort_indices()
        scaling = _scaling(X, y, args)
        if restored is not None:
            _restore(scaling, restored, args)
        scaled = _scaled(X, y, scaling)
        _check_scaled(path, X, y, scaling, scaled)
    # The range file is put in place last, once the scaled data are out (flushed).
    with output_file(args.save) if args.save else nullcontext() as range_file:
        if range_file is not None:
            write_range(range_file, scaling)
        with standard_output() as out:
            new_nonzeros = _write_scaled(out, X, scaled, scaling)
        if new_nonzeros > X.nnz:
            print(f"WARNING: original #nonzeros {X.nnz}\n"
                  f"       > new      #nonzeros {new_nonzeros}\n"
                  "If feature values are non-negative and sparse, use -l 0 rather than the "
                  "default -l -1", file=sys.stderr)
    return 0


def _scaling(X, y, args):
    """The scaling fitted on the file itself."""
    if X.shape[0]:
        fmin = X.min(axis=0).toarray().ravel()  # sparse min/max count the implicit zeros
        fmax = X.max(axis=0).toarray().ravel()
    else:
        fmin = fmax = np.zeros(X.shape[1])
    y_part = None
    if args.y_limits and len(y):
        y_part = (*args.y_limits, float(y.min()), float(y.max()))
    return Scaling(args.lower, args.upper, fmin, fmax, y_part)


def _restore(scaling, restored, args):
    """Replace what the range file defines; features it lacks are dropped, with a warning."""
    if restored.y is not None:
        scaling.y = restored.y
    if restored.x is None:
        return
    scaling.lower, scaling.upper = restored.x
    listed = np.zeros(len(scaling.fmin), dtype=bool)
    for index, (low, high) in restored.features.items():
        scaling.fmin[index - 1], scaling.fmax[index - 1] = low, high
        listed[index - 1] = True
    for j in np.flatnonzero(~listed & (scaling.fmin != scaling.fmax)):
        print(f"WARNING: feature index {j + 1} appeared in file {args.data_file} was not seen "
              f"in the scaling factor file {args.restore}. The feature is scaled to 0.",
              file=sys.stderr)
        scaling.fmin[j] = scaling.fmax[j] = 0.0


def _scale(values, low, high, lower, upper):
    """svm-scale's map, including its exact ends (value == min -> lower, == max -> upper).

    Where its formula overflows on the way (limits, ranges or values near the largest
    float), the same map is computed on halved operands, which stay finite whenever the
    value lies in its range; a value far outside a restored range can still map beyond
    the largest float (inf, refused by :func:`_check_scaled`).
    """
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):  # min == max: dropped by the caller
        out = lower + (upper - lower) * (values - low) / (high - low)
        over = ~np.isfinite(out)
        if over.any():
            v, lo, hi = (np.broadcast_to(a, out.shape)[over] / 2 for a in (values, low, high))
            out[over] = 2 * (lower / 2 + (upper / 2 - lower / 2) * ((v - lo) / (hi - lo)))
    out = np.where(values == high, upper, out)
    return np.where(values == low, lower, out)


def _scaled(X, y, s):
    """``(data, zero, targets)``: the scaled stored values of ``X``, the scaled 0 of each
    feature (written where a row lacks a feature it does not map to 0) and the labels."""
    zero = _scale(np.zeros(len(s.fmin)), s.fmin, s.fmax, s.lower, s.upper)
    data = _scale(X.data, s.fmin[X.indices], s.fmax[X.indices], s.lower, s.upper)
    targets = y if s.y is None else _scale(y, s.y[2], s.y[3], s.y[0], s.y[1])
    return data, zero, targets


def _check_scaled(path, X, y, s, scaled):
    """Refuse a scaled value beyond the largest float (a value far outside its restored
    range), naming the line of the first row holding one, before anything is written."""
    data, zero, targets = scaled
    active = s.fmin != s.fmax
    found = []  # (row, what, (min, max, lower, upper))
    bad = np.flatnonzero(~np.isfinite(data) & active[X.indices])
    if bad.size:
        pos, j = bad[0], X.indices[bad[0]]
        row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
        found.append((row, f"feature {j + 1} = {X.data[pos]:.17g}",
                      (s.fmin[j], s.fmax[j], s.lower, s.upper)))
    for j in np.flatnonzero(~np.isfinite(zero) & active):
        rows = _rows_without(X, j)
        if rows.size:
            found.append((int(rows[0]), f"feature {j + 1} = 0 (left out of the line)",
                          (s.fmin[j], s.fmax[j], s.lower, s.upper)))
    bad = np.flatnonzero(~np.isfinite(targets))
    if bad.size:
        found.append((int(bad[0]), f"the label {y[bad[0]]:.17g}", (s.y[2], s.y[3], *s.y[:2])))
    if not found:
        return
    row, what, (low, high, lower, upper) = min(found, key=lambda f: f[0])
    where = ("has no image: a range of zero width maps only its own value" if low == high
             else "lies beyond the largest float")
    raise ValueError(
        f"'{path}' line {_line_of_row(Path(path), row)}: {what}, mapped from [{low:.17g}, "
        f"{high:.17g}] to [{lower:.17g}, {upper:.17g}], {where}; expected values that the "
        "range maps to finite numbers (a value far outside a range restored with -r)")


def _rows_without(X, j):
    """The rows of CSR ``X`` that hold no entry in column ``j``."""
    has = np.zeros(X.shape[0], dtype=bool)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    has[rows[X.indices == j]] = True
    return np.flatnonzero(~has)


def _write_scaled(out, X, scaled, s):
    """Write the scaled rows as svm-scale prints them; return the number of nonzeros."""
    data, zero, targets = scaled
    active = s.fmin != s.fmax
    zero_columns = np.flatnonzero(active & (zero != 0))  # written in every row lacking them
    count = 0
    for i in range(X.shape[0]):
        rows = slice(X.indptr[i], X.indptr[i + 1])
        columns, values = X.indices[rows], data[rows]
        if zero_columns.size:
            merged = np.union1d(columns, zero_columns)
            merged_values = zero[merged]
            merged_values[np.searchsorted(merged, columns)] = values
            columns, values = merged, merged_values
        keep = active[columns] & (values != 0)
        items = zip((columns[keep] + 1).tolist(), values[keep].tolist(), strict=True)
        out.write(f"{targets[i]:.17g} " + "".join(f"{j}:{v:g} " for j, v in items) + "\n")
        count += int(keep.sum())
    return count


def write_range(path, s):
    """Write svm-scale's range file (``-s``)."""
    lines = []
    if s.y is not None:
        lines += ["y", f"{s.y[0]:.17g} {s.y[1]:.17g}", f"{s.y[2]:.17g} {s.y[3]:.17g}"]
    lines += ["x", f"{s.lower:.17g} {s.upper:.17g}"]
    lines += [f"{j + 1} {s.fmin[j]:.17g} {s.fmax[j]:.17g}"
              for j in np.flatnonzero(s.fmin != s.fmax)]
    with open(path, "w", encoding="ascii") as out:
        out.write("\n".join(lines) + "\n")


def read_range(path, budget=None):
    """Read a range file written by ``-s`` or by LIBSVM's svm-scale.

    Parameters
    ----------
    path : str
    budget : int, optional
        Bytes (default: the library's memory budget): the file may hold at most this much,
        and its feature indices at most what :data:`BYTES_PER_FEATURE` per feature allows.

    Returns
    -------
    RangeFile

    Raises
    ------
    ValueError
        A malformed line, a NaN or infinite number, or a file beyond the budget (the
        message names the file and the line number).
    """
    budget = memory_budget(budget)
    data = _read_at_most(path, budget + 1)
    if len(data) > budget:
        raise ValueError(f"'{path}' holds more than {format_bytes(budget)}, above "
                         f"--memory-budget {format_bytes(budget)}: not a range file")
    try:
        lines = data.decode("ascii").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"'{path}' is not a range file: byte {exc.start} is not ASCII") from None
    y_part, start = None, 0
    if lines and lines[0].strip() == "y":
        y_part, start = (*_numbers(path, lines, 1, 2), *_numbers(path, lines, 2, 2)), 3
    if start >= len(lines) or lines[start].strip() != "x":
        return RangeFile(None, {}, y_part)
    features, max_index = {}, max(budget // BYTES_PER_FEATURE, 1)
    for k in range(start + 2, len(lines)):
        if lines[k].strip():
            index, low, high = _numbers(path, lines, k, 3)
            if index != int(index) or not 1 <= index <= max_index:
                raise ValueError(f"'{path}' line {k + 1}: expected a feature index from 1 to "
                                 f"{max_index} (what --memory-budget {format_bytes(budget)} "
                                 f"allows), got {lines[k].split()[0]!r}")
            features[int(index)] = (low, high)
    return RangeFile(tuple(_numbers(path, lines, start + 1, 2)), features, y_part)


def _read_at_most(path, size, block=2**20):
    """The first ``size`` bytes of ``path`` (fewer if it is shorter), read block by block:
    ``read(size)`` would allocate ``size`` bytes however short the file."""
    blocks, total = [], 0
    with open(path, "rb") as fh:
        while total < size:
            data = fh.read(min(block, size - total))
            if not data:
                break
            blocks.append(data)
            total += len(data)
    return b"".join(blocks)


def _numbers(path, lines, k, count):
    """The ``count`` finite numbers on line ``k`` (0-based) of a range file."""
    fields = lines[k].split() if k < len(lines) else []
    try:
        if len(fields) != count or any("_" in f for f in fields):  # float() reads 1_0 as 10
            raise ValueError
        numbers = [float(f) for f in fields]
    except ValueError:
        raise ValueError(f"'{path}' line {k + 1}: expected {count} numbers, got "
                         f"{' '.join(fields)!r}") from None
    if not all(map(math.isfinite, numbers)):
        raise ValueError(f"'{path}' line {k + 1}: expected {count} finite numbers, got "
                         f"{' '.join(fields)!r}")
    return numbers
