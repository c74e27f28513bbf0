"""The zip container of a model file, read as untrusted input.

Everything a member declares is checked before it is believed: names, sizes and
compression from the zip directory before anything is decompressed, the JSON's size, depth
and value count before it is parsed, and each ``.npy`` header (dtype, shape, and the bytes
they imply against the member's size) before its array is allocated. Arrays are then filled
in place in bounded chunks, so a load holds each array once.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
import zipfile
import zlib

import numpy as np

from ..utils import format_bytes
from ._codec import ModelFormatError

__all__ = ["DEFAULT_MAX_BYTES", "MAX_JSON_DEPTH", "MAX_JSON_VALUES", "MAX_METADATA_BYTES",
           "METADATA", "SCHEMA", "check_array_dtype", "check_metadata_text", "check_npy_member",
           "open_archive", "read_array", "read_metadata", "zip_directory"]

METADATA = "metadata.json"
#: The object graph of a file in the ``"skops"`` container (docs/user_guide/model_files.md).
SCHEMA = "schema.json"
#: Default cap on the decompressed size of a whole model file (``load(max_bytes=...)``).
DEFAULT_MAX_BYTES = 4 * 2**30
#: Caps on metadata.json; arrays never live there, so honest files stay far below them.
MAX_METADATA_BYTES = 8 * 2**20
MAX_JSON_DEPTH = 64
MAX_JSON_VALUES = 500_000
_MAX_MEMBERS = 100_000
_MAX_NPY_HEADER = 10_000
_NPY_MAGIC = b"\x93NUMPY"
_NPY_LENGTH_BYTES = {(1, 0): 2, (2, 0): 4}  # .npy version: bytes of the header length
_READ_CHUNK = 2**20  # zipfile holds a few times this while inflating one read
#: dtype kinds an array member may have: bool, integers, floats, complex, unicode.
_ARRAY_KINDS = "biufcU"
# What a damaged archive or member raises inside zipfile, zlib and numpy's header parser.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
                NotImplementedError, OverflowError, SyntaxError, KeyError, TypeError)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def open_archive(fh, name):
    """``zipfile.ZipFile`` over the open binary file ``fh``; any damage is a ModelFormatError."""
    try:
        return zipfile.ZipFile(fh)
    except _READ_ERRORS as exc:
        raise ModelFormatError(
            f"{name!r} is not a sparsekernel model file: it is not a zip archive ({exc})."
        ) from None


def zip_directory(zf, max_bytes):
    """Return ``{member name: ZipInfo}`` once the directory passes every check.

    Checked from the headers alone: no duplicate, unexpected or path-escaping names (a
    leading '/', a '.' or '..' part, a backslash), no encryption, only
    stored or deflated members, metadata.json and schema.json within
    :data:`MAX_METADATA_BYTES`, and the declared decompressed sizes within ``max_bytes`` in
    total. (Which members a file may hold besides is up to its container.)
    """
    infos = zf.infolist()
    if len(infos) > _MAX_MEMBERS:
        raise ModelFormatError(f"the archive has {len(infos)} members (at most {_MAX_MEMBERS}).")
    members, total = {}, 0
    for info in infos:
        name = info.filename
        if name in members:
            raise ModelFormatError(f"member {name!r} appears twice in the archive.")
        _check_member_header(info, max_bytes)
        members[name] = info
        total += info.file_size
    if total > max_bytes:
        raise ModelFormatError(
            f"the members declare {format_bytes(total)} decompressed, above max_bytes="
            f"{format_bytes(max_bytes)}; pass a larger max_bytes to load a model this big."
        )
    return members


def _check_member_header(info, max_bytes):
    name = info.filename
    if name not in (METADATA, SCHEMA) and not name.endswith((".npy", ".npz")):
        raise ModelFormatError(
            f"unexpected member {name!r} (only {METADATA}, {SCHEMA}, .npy and .npz arrays).")
    if "\\" in name or any(part in ("", ".", "..") for part in name.split("/")):
        raise ModelFormatError(
            f"member {name[:100]!r} is not a plain relative path (no empty, '.' or '..' "
            "part, no backslash): model files are never extracted, and never name one.")
    if info.flag_bits & 0x1:
        raise ModelFormatError(f"member {name!r} is encrypted.")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ModelFormatError(
            f"member {name!r} uses compression method {info.compress_type}; model files use "
            f"deflate ({zipfile.ZIP_DEFLATED}) or none."
        )
    limit = MAX_METADATA_BYTES if name in (METADATA, SCHEMA) else max_bytes
    if info.file_size > limit:
        raise ModelFormatError(
            f"member {name!r} declares {format_bytes(info.file_size)} decompressed, above "
            f"the limit of {format_bytes(limit)}."
        )


def read_metadata(zf, info):
    """Parse metadata.json or schema.json (already size-checked) under the depth and
    value-count caps."""
    raw = _read_member(zf, info)
    name = info.filename
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{name} is not UTF-8: {exc}.") from None
    check_metadata_text(text, name)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ModelFormatError(f"malformed {name}: {exc}.") from None


def check_metadata_text(text, name=METADATA):
    """Refuse JSON nested deeper than :data:`MAX_JSON_DEPTH` or with more values than
    :data:`MAX_JSON_VALUES`, before the parser builds it (the same caps bind ``save``)."""
    if len(text) > MAX_METADATA_BYTES:
        raise ModelFormatError(
            f"{name} holds {format_bytes(len(text))}, above the limit of "
            f"{format_bytes(MAX_METADATA_BYTES)}."
        )
    skeleton = _JSON_STRING.sub('""', text)
    n_values = skeleton.count(",") + skeleton.count("[") + skeleton.count("{") + 1
    if n_values > MAX_JSON_VALUES:
        raise ModelFormatError(
            f"{name} holds about {n_values} values, more than {MAX_JSON_VALUES}; store "
            "large lists as numpy arrays."
        )
    brackets = np.frombuffer(_NOT_BRACKET.sub("", skeleton).encode("ascii"), dtype=np.uint8)
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1).astype(np.int32)
    depth = int(np.cumsum(steps).max()) if steps.size else 0
    if depth > MAX_JSON_DEPTH:
        raise ModelFormatError(
            f"{name} nests {depth} levels deep, more than {MAX_JSON_DEPTH}."
        )


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"key {duplicate!r} appears twice in one object")
    return dict(pairs)


def _no_constant(name):
    # JSON has no NaN or Infinity; the format tags non-finite floats instead.
    raise ValueError(f"{name} is not JSON (non-finite floats are stored as {{'__float__'}})")


def _read_member(zf, info):
    try:
        with zf.open(info) as fh:
            data = fh.read(info.file_size + 1)
    except _READ_ERRORS as exc:
        raise ModelFormatError(f"cannot read member {info.filename!r}: {exc}.") from None
    if len(data) != info.file_size:
        raise ModelFormatError(
            f"member {info.filename!r} holds {len(data)} bytes, not the {info.file_size} its "
            "header declares."
        )
    return data


def check_array_dtype(dtype, where):
    """Refuse object, structured, sub-array and empty-item dtypes, and kinds outside
    bool / int / float / complex / unicode."""
    if (dtype.hasobject or dtype.names is not None or dtype.subdtype is not None
            or dtype.kind not in _ARRAY_KINDS or dtype.itemsize == 0):
        raise ModelFormatError(
            f"{where} has dtype {dtype.str}; model arrays are bool, integer, float, complex "
            "or unicode (never objects or records)."
        )


def read_array(zf, info, dtype, shape):
    """Read the array member ``info``, which metadata.json lists with ``dtype`` and ``shape``.

    The header must agree with the listing, and the member's size with header plus data,
    before anything is allocated; the data are then read into the array in bounded chunks.
    """
    name = info.filename
    try:
        with zf.open(info) as fh:
            header_shape, fortran, header_dtype = _read_npy_header(fh)
            if header_dtype.str != dtype.str or list(header_shape) != shape:
                raise ModelFormatError(
                    f"array member {name!r} has dtype {header_dtype.str} and shape "
                    f"{list(header_shape)}, but {METADATA} lists {dtype.str} and {shape}."
                )
            nbytes = math.prod(shape) * dtype.itemsize
            if info.file_size != fh.tell() + nbytes:
                raise ModelFormatError(
                    f"array member {name!r} declares {format_bytes(nbytes)} of data "
                    f"({dtype.str}, shape {shape}), but the member holds "
                    f"{format_bytes(max(info.file_size - fh.tell(), 0))}."
                )
            flat = _read_data(fh, dtype, math.prod(shape), nbytes, name)
    except ModelFormatError:
        raise
    except _READ_ERRORS as exc:
        raise ModelFormatError(f"cannot read array member {name!r}: {exc}.") from None
    _check_values(flat, name)
    array = flat.reshape(shape, order="F" if fortran else "C")
    return array if dtype.isnative else array.astype(dtype.newbyteorder("="))


def check_npy_member(zf, info, extra_kinds=""):
    """Check an ``.npy`` member's header (dtype kind, shape) against the member's size,
    reading the header only: whoever reads the member next allocates no more than it holds.
    ``extra_kinds`` admits more dtype kinds (``"S"``: scipy's sparse format tag)."""
    name = info.filename
    try:
        with zf.open(info) as fh:
            shape, _, dtype = _read_npy_header(fh, extra_kinds)
            nbytes = math.prod(shape) * dtype.itemsize
            if info.file_size != fh.tell() + nbytes:
                raise ModelFormatError(
                    f"array member {name!r} declares {format_bytes(nbytes)} of data "
                    f"({dtype.str}, shape {list(shape)}), but the member holds "
                    f"{format_bytes(max(info.file_size - fh.tell(), 0))}.")
    except ModelFormatError:
        raise
    except _READ_ERRORS as exc:
        raise ModelFormatError(f"cannot read array member {name!r}: {exc}.") from None


def _read_npy_header(fh, extra_kinds=""):
    """``(shape, fortran_order, dtype)`` from the ``.npy`` header at ``fh``'s position,
    leaving ``fh`` at the data; ValueError if the header is not one ``numpy.save`` writes.

    Parsed here, not by numpy, whose parser lets damaged headers escape as other errors
    (a Python 2 fallback through :mod:`tokenize`) and takes what no writer produces (bool
    dimensions): version 1.0 or 2.0, a latin-1 dict literal of exactly ``descr`` (a dtype
    string), ``fortran_order`` (a bool) and ``shape`` (a tuple of non-negative ints).
    """
    magic = fh.read(8)
    if len(magic) != 8 or magic[:6] != _NPY_MAGIC:
        raise ValueError("it does not start with the .npy magic string")
    version = tuple(magic[6:])
    if version not in _NPY_LENGTH_BYTES:
        raise ValueError(f"unsupported .npy format version {version} (1.0 or 2.0 expected)")
    raw = fh.read(_NPY_LENGTH_BYTES[version])
    length = int.from_bytes(raw, "little")
    if len(raw) != _NPY_LENGTH_BYTES[version] or length > _MAX_NPY_HEADER:
        raise ValueError(f"its header declares {length} bytes (at most {_MAX_NPY_HEADER})")
    text = fh.read(length).decode("latin1")
    if len(text) != length:
        raise ValueError(f"its header ends after {len(text)} of {length} bytes")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. an invalid escape: no writer makes one
            header = ast.literal_eval(text)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, Warning):
        raise ValueError(f"its header is not a dict literal: {text[:100]!r}") from None
    if not (isinstance(header, dict) and set(header) == {"descr", "fortran_order", "shape"}):
        raise ValueError("its header is not a dict of exactly 'descr', 'fortran_order' and "
                         f"'shape': {text[:100]!r}")
    shape, fortran, descr = header["shape"], header["fortran_order"], header["descr"]
    if not (type(shape) is tuple and len(shape) <= 32
            and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"its shape {str(shape)[:60]} is not a tuple of non-negative ints")
    if type(fortran) is not bool:
        raise ValueError(f"its fortran_order {str(fortran)[:20]} is not a bool")
    dtype = _npy_dtype(descr)
    if not (dtype.kind in extra_kinds and dtype.itemsize and dtype.names is None):
        check_array_dtype(dtype, "an array member")
    return shape, fortran, dtype


def _npy_dtype(descr):
    # Model arrays are never records, so descr is the dtype string numpy.save writes.
    if type(descr) is not str:
        raise ValueError(f"its descr {str(descr)[:60]} is not a dtype string")
    try:
        return np.dtype(descr)
    except Exception:  # noqa: BLE001 - numpy's dtype parser raises several kinds
        raise ValueError(f"its descr {descr[:60]!r} is not a dtype") from None


def _read_data(fh, dtype, count, nbytes, name):
    flat = np.empty(count, dtype=dtype)
    view = flat.view(np.uint8)
    done = 0
    while done < nbytes:
        chunk = fh.read(min(_READ_CHUNK, nbytes - done))
        if not chunk:
            raise ModelFormatError(f"array member {name!r} ends after {done} of {nbytes} "
                                   "data bytes.")
        view[done:done + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
        done += len(chunk)
    return flat


def _check_values(flat, name):
    """Bytes numpy would accept but no writer produces: bools other than 0/1, code points
    outside Unicode (they fail later, far from the file)."""
    if flat.dtype.kind == "b" and np.any(flat.view(np.uint8) > 1):
        raise ModelFormatError(f"array member {name!r} holds bool bytes other than 0 and 1.")
    if flat.dtype.kind == "U":
        points = flat.view(np.dtype(np.uint32).newbyteorder(flat.dtype.byteorder))
        if np.any((points > 0x10FFFF) | ((points >= 0xD800) & (points <= 0xDFFF))):
            raise ModelFormatError(f"array member {name!r} holds invalid unicode code points.")
