"""``save`` and ``load``: the zip container, its metadata and its checks."""

from __future__ import annotations

import json
import os
import secrets
import zipfile

import numpy as np
from sklearn.base import BaseEstimator

from ._codec import ModelFormatError, UnsupportedValueError, decode, encode, instantiate

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "allowed_classes", "load", "save"]

FORMAT_NAME = "sparsekernel-model"
#: Version of the file layout written by :func:`save`; :func:`load` reads versions up to it.
FORMAT_VERSION = 1
_METADATA = "metadata.json"


def save(model, path):
    """Write a (fitted or unfitted) estimator to ``path`` in the sparsekernel model format.

    Parameters
    ----------
    model : estimator
        An instance of an estimator class exported by ``sparsekernel`` (``__all__``).
    path : str or path-like
        Destination file, conventionally with the ``.skm`` extension. It is replaced only
        once the whole model has been written.

    Raises
    ------
    ModelFormatError
        If the class is not a sparsekernel estimator, or a parameter or public fitted
        attribute holds a value the format cannot store (the message names it and its type).
    """
    metadata, arrays = _encode_model(model, allowed_classes())
    # Write next to the target and rename, so a failed save never leaves a half-written file.
    # (Not tempfile.mkstemp: its 0600 mode would make every saved model private.)
    tmp = f"{os.fsdecode(path)}.{secrets.token_hex(4)}.tmp"
    fh = open(tmp, "xb")  # closed by the with statement below
    try:
        with fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(_METADATA, json.dumps(metadata, indent=1, allow_nan=False))
            for key, array in arrays.items():
                with zf.open(f"{key}.npy", "w", force_zip64=array.nbytes > 2**30) as member:
                    np.save(member, array, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _encode_model(model, registry):
    cls_name = type(model).__name__
    if registry.get(cls_name) is not type(model):
        raise ModelFormatError(
            f"Cannot save a {type(model).__qualname__}: only the estimators exported by "
            f"sparsekernel can be saved ({', '.join(sorted(registry))})."
        )
    arrays = {}
    params = {
        name: _encode_named(model, "parameter", name, value, arrays, registry)
        for name, value in model.get_params(deep=False).items()
    }
    attributes = {
        name: _encode_named(model, "fitted attribute", name, value, arrays, None)
        for name, value in vars(model).items()
        if _is_public_fitted(name)
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


def _is_public_fitted(name):
    return name.endswith("_") and not name.startswith("_")


def _library_version():
    import sparsekernel

    return getattr(sparsekernel, "__version__", "unknown")


def load(path):
    """Read an estimator written by :func:`save`.

    Loading never executes code from the file (see "Safety" in :mod:`sparsekernel.io`).

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    estimator
        A new estimator with the saved parameters and public fitted attributes.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFormatError
        If the file is not a sparsekernel model file, was written by a newer format version,
        or is damaged.
    """
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ModelFormatError(
            f"{os.fspath(path)!r} is not a sparsekernel model file: it is not a zip archive."
        ) from None
    with zf:
        metadata = _read_metadata(zf, path)
        registry = allowed_classes()
        cls = _model_class(metadata, registry)
        read_array = _array_reader(zf, _section(metadata, "arrays"))
        params = {p: decode(v, read_array, registry)
                  for p, v in _section(metadata, "params").items()}
        model = instantiate(cls, params)
        for name, node in _section(metadata, "attributes").items():
            _check_attribute_name(cls, name)
            setattr(model, name, decode(node, read_array, registry))
    return model


def _read_metadata(zf, path):
    try:
        raw = zf.read(_METADATA)
    except KeyError:
        raise ModelFormatError(
            f"{os.fspath(path)!r} is not a sparsekernel model file: it has no {_METADATA}."
        ) from None
    try:
        metadata = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelFormatError(f"Malformed {_METADATA} in {os.fspath(path)!r}: {exc}.") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        found = metadata.get("format") if isinstance(metadata, dict) else type(metadata).__name__
        raise ModelFormatError(
            f"{os.fspath(path)!r} is not a sparsekernel model file: expected format "
            f"{FORMAT_NAME!r} in {_METADATA}, got {found!r}."
        )
    _check_version(metadata)
    return metadata


def _check_version(metadata):
    version = metadata.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and 1 <= version:
        if version <= FORMAT_VERSION:
            return
        raise ModelFormatError(
            f"The model file has format version {version} (written by sparsekernel "
            f"{metadata.get('library_version', 'unknown')}), but this sparsekernel "
            f"({_library_version()}) reads format versions up to {FORMAT_VERSION}; "
            f"upgrade sparsekernel to load it."
        )
    raise ModelFormatError(
        f"Unknown model format version {version!r}; this sparsekernel reads format versions "
        f"1 to {FORMAT_VERSION}."
    )


def _section(metadata, name):
    value = metadata.get(name)
    if not isinstance(value, dict):
        raise ModelFormatError(
            f"Malformed {_METADATA}: {name!r} must be a JSON object, got {value!r}."
        )
    return value


def _model_class(metadata, registry):
    name = metadata.get("class")
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ModelFormatError(
            f"Unknown model class {name!r}: this sparsekernel can load "
            f"{', '.join(sorted(registry))}."
        )
    return cls


def _check_attribute_name(cls, name):
    # Only data attributes may be set: never methods, properties or dunder names.
    if not (name.isidentifier() and _is_public_fitted(name)) or hasattr(cls, name):
        raise ModelFormatError(
            f"Malformed {_METADATA}: {name!r} is not a valid fitted attribute of "
            f"{cls.__name__} (expected a public name ending with '_')."
        )


def _array_reader(zf, index):
    def read_array(key):
        entry = index.get(key) if isinstance(key, str) else None
        if not isinstance(entry, dict):
            raise ModelFormatError(f"Malformed {_METADATA}: array {key!r} is not listed.")
        member = f"{key}.npy"
        try:
            with zf.open(member) as fh:
                array = np.lib.format.read_array(fh, allow_pickle=False)
        except KeyError:
            raise ModelFormatError(f"The model file lacks the array member {member!r}.") from None
        except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
            raise ModelFormatError(f"Cannot read array member {member!r}: {exc}") from None
        if array.dtype.str != entry.get("dtype") or list(array.shape) != entry.get("shape"):
            raise ModelFormatError(
                f"Array member {member!r} has dtype {array.dtype.str} and shape "
                f"{list(array.shape)}, but {_METADATA} lists {entry.get('dtype')} and "
                f"{entry.get('shape')}."
            )
        return array

    return read_array


def allowed_classes():
    """Return ``{class name: class}`` for every estimator the model format may instantiate.

    These are the estimators exported by ``sparsekernel.__all__`` (the models) and by
    ``sparsekernel.basis.__all__`` (selectors, which appear as nested parameters).
    """
    # Imported here, not at module level: the top-level package may import sparsekernel.io.
    import sparsekernel
    import sparsekernel.basis

    classes = {}
    for module in (sparsekernel, sparsekernel.basis):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if isinstance(obj, type) and issubclass(obj, BaseEstimator):
                classes.setdefault(obj.__name__, obj)
    return classes
