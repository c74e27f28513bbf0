"""``save`` and ``load``: the zip container, its metadata and its checks."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import secrets
import zipfile

import numpy as np

from ..compute import holds_namespace_arrays, model_to_numpy
from ..utils import format_bytes, parse_memory_budget
from ._codec import (
    ModelFormatError,
    UnsupportedValueError,
    decode,
    encode,
    instantiate,
    saved_params,
)
from ._container import (
    DEFAULT_MAX_BYTES,
    METADATA,
    check_array_dtype,
    check_metadata_text,
    open_archive,
    read_array,
    read_metadata,
    zip_directory,
)
from ._nested import CONTAINER, check_saveable, load_nested, needs_nested, write_nested
from ._registry import allowed_classes, check_params
from ._spec import FittedStateError, check_fitted_state, fitted_names, is_fitted_name, probe

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "allowed_classes", "load", "save"]

FORMAT_NAME = "sparsekernel-model"
#: Version of the file layout written by :func:`save`; :func:`load` reads versions up to it.
FORMAT_VERSION = 1
_METADATA = METADATA


def save(model, path):
    """Write a (fitted or unfitted) estimator to ``path`` in the sparsekernel model format.

    Parameters
    ----------
    model : estimator
        An instance of an estimator class exported by ``sparsekernel`` (``__all__``), or a
        composite model of the allowed scikit-learn classes (:doc:`/user_guide/model_files`).
    path : str or path-like
        Destination file, conventionally with the ``.skm`` extension. It is replaced only
        once the whole model has been written.

    Raises
    ------
    ModelFormatError
        If the model holds a class the format does not allow, a parameter or fitted
        attribute holds a value the format cannot store (the message names it and its
        type), or the fitted state is not what the class's ``fit`` produces (so
        :func:`load` would refuse the file).

    Notes
    -----
    A model fitted under ``array_api_dispatch`` on a device (PyTorch, CuPy arrays) is saved
    from a host copy: the file holds NumPy arrays, the model in memory is left as it is, and
    :func:`load` returns a NumPy model
    (:func:`sparsekernel.compute.model_to_namespace` moves it back).
    """
    if holds_namespace_arrays(model):
        model = model_to_numpy(copy.deepcopy(model))
    registry = allowed_classes()
    if needs_nested(model, registry):
        check_saveable(model)
        _write_atomically(path, lambda fh: write_nested(model, fh, _nested_header(model)))
        return
    metadata, arrays = _encode_model(model, registry)
    text = json.dumps(metadata, indent=1, allow_nan=False)
    try:
        check_metadata_text(text)
    except ModelFormatError as exc:
        raise ModelFormatError(f"Cannot save the {type(model).__name__}: {exc}") from None
    _write_atomically(path, lambda fh: _write_native(fh, text, arrays))


def _write_atomically(path, write):
    """``write(fh)`` into a file next to ``path``, renamed over it only once complete, so a
    failed save never leaves a half-written file. (Not tempfile.mkstemp: its 0600 mode would
    make every saved model private.) A path that exists and is not a regular file (a device,
    a pipe) is written in place, never replaced."""
    if os.path.exists(path) and not os.path.isfile(path):
        buffer = io.BytesIO()
        write(buffer)
        with open(path, "wb") as fh:
            fh.write(buffer.getbuffer())
        return
    tmp = f"{os.fsdecode(path)}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb+") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        # The temporary file is gone when open failed, or when the interrupt came after the
        # rename (the model is then saved): the original exception propagates either way.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _write_native(fh, text, arrays):
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_METADATA, text)
        for key, array in arrays.items():
            with zf.open(f"{key}.npy", "w", force_zip64=array.nbytes > 2**30) as member:
                np.save(member, array, allow_pickle=False)


def _nested_header(model):
    import skops

    return {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
            "library_version": _library_version(), "class": type(model).__name__,
            "container": CONTAINER, "skops_version": skops.__version__}


def _encode_model(model, registry):
    cls_name = type(model).__name__
    if registry.get(cls_name) is not type(model):
        raise ModelFormatError(
            f"Cannot save a {type(model).__qualname__}: only the estimators exported by "
            f"sparsekernel can be saved ({', '.join(sorted(registry))})."
        )
    try:
        check_params(model)
        check_fitted_state(model)
    except FittedStateError as exc:
        raise ModelFormatError(f"Cannot save the {cls_name}: {exc}.") from None
    except ModelFormatError as exc:
        raise ModelFormatError(f"Cannot save the {cls_name}: {exc}") from None
    arrays = {}
    params = {
        name: _encode_named(model, "parameter", name, value, arrays, registry)
        for name, value in saved_params(type(model), model.get_params(deep=False)).items()
    }
    attributes = {
        name: _encode_named(model, "fitted attribute", name, vars(model)[name], arrays, None)
        for name in fitted_names(model)
    }
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": _library_version(),
        "class": cls_name,
        "params": params,
        "attributes": attributes,
        "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape)} for k, a in arrays.items()},
    }
    return metadata, arrays


def _encode_named(model, kind, name, value, arrays, registry):
    section = "params" if kind == "parameter" else "attributes"
    try:
        return encode(value, f"{section}/{name}", arrays, registry)
    except UnsupportedValueError as exc:
        raise ModelFormatError(
            f"Cannot save the {kind} {name!r} of {type(model).__name__} "
            f"(type {type(value).__name__}): {exc}."
        ) from None


def _library_version():
    import sparsekernel

    return getattr(sparsekernel, "__version__", "unknown")


def load(path, *, max_bytes=DEFAULT_MAX_BYTES):
    """Read an estimator written by :func:`save`, treating the file as untrusted.

    Loading never executes code from the file, and checks the whole model before returning
    it (:doc:`/user_guide/model_files`): sizes before decompressing or allocating, every
    member, and the fitted state against what the class's ``fit`` produces.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.
    max_bytes : int, float or str, default=4 GiB
        Cap on the decompressed size of the whole file, the arrays inside a composite
        model's ``.npz`` members included, checked from the zip headers before anything is
        read (a number of bytes or a string such as ``'16GB'``; ``float('inf')`` for no
        cap). Peak memory of a native-layout load stays near the size of the arrays it
        returns.

    Returns
    -------
    estimator
        A new estimator with the saved parameters and public fitted attributes.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (other errors opening it propagate as well).
    ModelFormatError
        If the file is not a sparsekernel model file, was written by a newer format version,
        exceeds ``max_bytes``, or is damaged or inconsistent in any way; the message names
        the member at fault.
    """
    limit = parse_memory_budget(DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
                                "max_bytes")
    name = os.fspath(path)
    with open(path, "rb") as fh, open_archive(fh, name) as zf:
        try:
            return _load_archive(fh, zf, limit)
        except ModelFormatError as exc:
            raise ModelFormatError(f"Cannot load {name!r}: {exc}") from None


def _load_archive(fh, zf, limit):
    members = zip_directory(zf, limit)
    if _METADATA not in members:
        raise ModelFormatError(f"it is not a sparsekernel model file: it has no {_METADATA}.")
    metadata = read_metadata(zf, members[_METADATA])
    _check_header(metadata)
    container = metadata.get("container", "native")
    if container == CONTAINER:
        return load_nested(fh, zf, members, metadata, limit)
    if container != "native":
        raise ModelFormatError(f"unknown container {_short(container)} in {_METADATA} "
                               f"(expected 'native' or {CONTAINER!r}).")
    foreign = [n for n in members if not n.endswith(".npy") and n != _METADATA]
    if foreign:
        raise ModelFormatError(f"unexpected member {foreign[0]!r} (only {_METADATA} and .npy "
                               "arrays).")
    registry = allowed_classes()
    cls = _model_class(metadata, registry)
    reader = _ArrayReader(zf, members, _section(metadata, "arrays"))
    params = {p: decode(v, reader, registry) for p, v in _section(metadata, "params").items()}
    model = instantiate(cls, params)
    check_params(model)
    attributes = _section(metadata, "attributes")
    for name, node in attributes.items():
        _check_attribute_name(cls, name)
        setattr(model, name, decode(node, reader, registry))
    reader.check_all_used()
    _check_loaded_state(model, attributes)
    return model


def _check_header(metadata):
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        found = metadata.get("format") if isinstance(metadata, dict) else type(metadata).__name__
        raise ModelFormatError(
            f"it is not a sparsekernel model file: expected format {FORMAT_NAME!r} in "
            f"{_METADATA}, got {_short(found)}."
        )
    _check_version(metadata)


def _check_loaded_state(model, attributes):
    try:
        symbols = check_fitted_state(model)
    except FittedStateError as exc:
        raise ModelFormatError(f"{exc}{_members_of(attributes.get(exc.attribute))}.") from None
    if symbols:
        try:
            probe(model, symbols)
        except Exception as exc:  # noqa: BLE001 - whatever a crafted model raises is its fault
            raise ModelFormatError(
                f"the {type(model).__name__} fails on a zero input row: "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            ) from None


def _members_of(node):
    """' (members ...)' for the array members a metadata node refers to, or ''."""
    keys = []

    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("__array__"), str):
                keys.append(f"'{value['__array__']}.npy'")
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(node)
    if not keys:
        return f" (stored in {_METADATA})" if node is not None else ""
    return f" (member{'s' if len(keys) > 1 else ''} {', '.join(keys)})"


def _check_version(metadata):
    version = metadata.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and 1 <= version:
        if version <= FORMAT_VERSION:
            return
        raise ModelFormatError(
            f"The model file has format version {version} (written by sparsekernel "
            f"{_short(metadata.get('library_version', 'unknown'))}), but this sparsekernel "
            f"({_library_version()}) reads format versions up to {FORMAT_VERSION}; "
            f"upgrade sparsekernel to load it."
        )
    raise ModelFormatError(
        f"Unknown model format version {_short(version)}; this sparsekernel reads format versions "
        f"1 to {FORMAT_VERSION}."
    )


def _section(metadata, name):
    value = metadata.get(name)
    if not isinstance(value, dict):
        raise ModelFormatError(
            f"Malformed {_METADATA}: {name!r} must be a JSON object, got {_short(value)}."
        )
    return value


def _model_class(metadata, registry):
    name = metadata.get("class")
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ModelFormatError(
            f"Unknown model class {_short(name)}: this sparsekernel can load "
            f"{', '.join(sorted(registry))}."
        )
    return cls


def _check_attribute_name(cls, name):
    # Only data attributes may be set: never methods, properties or dunder names.
    if not is_fitted_name(cls, name):
        raise ModelFormatError(
            f"Malformed {_METADATA}: {_short(name)} is not a valid fitted attribute of "
            f"{cls.__name__} (expected a public name ending with '_')."
        )


class _ArrayReader:
    """``read_array(key)`` for :func:`decode`: each listed array exactly once.

    The index in metadata.json and the .npy members must match one to one, and no array may
    claim more data than its member holds, before any array is read.
    """

    def __init__(self, zf, members, index):
        self._zf, self._used, self._entries = zf, set(), {}
        for key, entry in index.items():
            member = members.get(f"{key}.npy")
            if member is None:
                raise ModelFormatError(f"it lacks the array member '{key}.npy'.")
            self._entries[key] = (member, *_index_entry(key, entry, member))
        listed = {f"{key}.npy" for key in index}
        unlisted = [n for n in members if n.endswith(".npy") and n not in listed]
        if unlisted:
            raise ModelFormatError(
                f"member {unlisted[0]!r} is not listed in the arrays of {_METADATA}.")

    def __call__(self, key):
        if not isinstance(key, str) or key not in self._entries:
            raise ModelFormatError(f"malformed {_METADATA}: array {key!r} is not listed.")
        if key in self._used:
            raise ModelFormatError(f"malformed {_METADATA}: array {key!r} is used twice.")
        self._used.add(key)
        return read_array(self._zf, *self._entries[key])

    def check_all_used(self):
        unused = sorted(set(self._entries) - self._used)
        if unused:
            raise ModelFormatError(
                f"array member '{unused[0]}.npy' is listed in {_METADATA} but no value uses it.")


def _index_entry(key, entry, member):
    """``(dtype, shape)`` of one entry of the arrays index, checked against its member."""
    where = f"array member '{key}.npy'"
    if not (isinstance(entry, dict) and set(entry) == {"dtype", "shape"}
            and isinstance(entry["dtype"], str) and isinstance(entry["shape"], list)
            and len(entry["shape"]) <= 32
            and all(type(n) is int and n >= 0 for n in entry["shape"])):
        raise ModelFormatError(f"malformed {_METADATA} entry for {where}: {_short(entry)}.")
    try:
        dtype = np.dtype(entry["dtype"])
    except (TypeError, ValueError, SyntaxError) as exc:
        raise ModelFormatError(
            f"{where} is listed with dtype {_short(entry['dtype'])}: {exc}.") from None
    check_array_dtype(dtype, where)
    nbytes = math.prod(entry["shape"]) * dtype.itemsize
    if nbytes > member.file_size:
        raise ModelFormatError(
            f"{where} is listed with {format_bytes(nbytes)} of data, but the member holds "
            f"{format_bytes(member.file_size)}.")
    return dtype, entry["shape"]


def _short(value):
    """repr of a value read from the file, cut to a length fit for a message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
