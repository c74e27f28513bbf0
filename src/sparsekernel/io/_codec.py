"""Turn parameter and attribute values into JSON plus named arrays (``{key: ndarray}``), and back.

Every JSON object in the tree is a tagged node (see the format description in
:mod:`sparsekernel.io`), so plain dicts from a file are never taken for values.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

__all__ = ["ModelFormatError", "UnsupportedValueError", "decode", "encode"]

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_SPARSE_CONTAINERS = {"csr_matrix": sp.csr_matrix, "csr_array": sp.csr_array}
_SUPPORTED = (
    "None, bool, int, float, str, numpy scalars, numpy arrays (not of object dtype, except "
    "arrays of str), scipy sparse matrices, lists, tuples, dicts and sparsekernel estimators"
)


class ModelFormatError(ValueError):
    """A model cannot be saved in, or read from, the sparsekernel model format.

    Raised by :func:`~sparsekernel.io.save` when the estimator holds a value the format cannot
    represent, and by :func:`~sparsekernel.io.load` when a file is not a valid model file.
    """


class UnsupportedValueError(Exception):
    """A value the format cannot store; ``save`` turns it into a ModelFormatError."""


def encode(value, key, arrays, registry=None):
    """Return the JSON tree for ``value``; arrays go to ``arrays`` under keys below ``key``.

    Estimators (only classes in ``registry``) are accepted when ``registry`` is given;
    fitted attributes are encoded without one, since a nested estimator's fitted state would
    otherwise be lost silently.
    """
    if value is None or isinstance(value, bool | str):
        return str(value) if isinstance(value, str) else value
    if isinstance(value, np.generic):  # before int/float: np.float64 subclasses float
        return _encode_numpy_scalar(value, key, arrays)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _encode_float(value)
    if isinstance(value, np.ndarray):
        return _encode_array(value, key, arrays)
    if sp.issparse(value):
        return _encode_sparse(value, key, arrays)
    if isinstance(value, list | tuple):
        items = [encode(v, f"{key}/{i}", arrays, registry) for i, v in enumerate(value)]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {"__dict__": [
            [encode(k, f"{key}/{i}/key", arrays), encode(v, f"{key}/{i}", arrays, registry)]
            for i, (k, v) in enumerate(value.items())
        ]}
    if registry is not None and isinstance(value, BaseEstimator):
        return _encode_estimator(value, key, arrays, registry)
    raise UnsupportedValueError(
        f"values of type {type(value).__name__} are not supported; supported are {_SUPPORTED}"
    )


def _encode_float(value):
    if math.isfinite(value):
        return float(value)
    return {"__float__": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _encode_numpy_scalar(value, key, arrays):
    # bool, int and float scalars read well as JSON; others (complex, float128, datetime64)
    # keep their exact dtype as a 0-d array member.
    if value.dtype.kind in "biuf" and value.dtype.itemsize <= 8:
        item = value.item()
        return {"__numpy__": value.dtype.name,
                "value": _encode_float(item) if isinstance(item, float) else item}
    node = _encode_array(np.asarray(value), key, arrays)
    node["as_scalar"] = True
    return node


def _encode_array(value, key, arrays):
    if type(value) not in (np.ndarray, np.memmap):
        raise UnsupportedValueError(
            f"array subclass {type(value).__name__} is not supported; convert it to a plain "
            f"numpy array"
        )
    if value.dtype != object:
        if value.dtype.hasobject:
            raise UnsupportedValueError(f"structured dtype {value.dtype} holds Python objects")
        arrays[key] = np.asarray(value)
        return {"__array__": key}
    text = value.astype(str) if all(isinstance(v, str) for v in value.flat) else None
    # Unicode arrays drop trailing NUL characters: refuse rather than alter the strings.
    if text is None or not np.array_equal(text.astype(object), value):
        raise UnsupportedValueError(
            "arrays of dtype object are only supported when every element is a str"
        )
    arrays[key] = text
    return {"__array__": key, "as_object": True}


def _encode_sparse(value, key, arrays):
    container = "csr_matrix" if isinstance(value, sp.spmatrix) else "csr_array"
    csr = value.tocsr()
    node = {"__sparse__": container, "shape": [int(n) for n in csr.shape]}
    for part in ("data", "indices", "indptr"):
        node[part] = _encode_array(getattr(csr, part), f"{key}/{part}", arrays)
    return node


def _encode_estimator(value, key, arrays, registry):
    name = type(value).__name__
    if registry.get(name) is not type(value):
        raise UnsupportedValueError(
            f"estimator {type(value).__qualname__} is not one of the sparsekernel classes a "
            f"model file may name ({', '.join(sorted(registry))})"
        )
    params = value.get_params(deep=False)
    return {"__estimator__": name, "params": {
        p: encode(v, f"{key}/{p}", arrays, registry) for p, v in params.items()
    }}


def decode(node, read_array, registry):
    """Rebuild the value stored as ``node``; ``read_array(key)`` returns a stored array."""
    if node is None or isinstance(node, bool | int | float | str):
        return node
    if isinstance(node, list):
        return [decode(v, read_array, registry) for v in node]
    if isinstance(node, dict):
        tags = [k for k in node if k in _DECODERS]
        if len(tags) == 1:
            try:
                return _DECODERS[tags[0]](node, read_array, registry)
            except ModelFormatError:
                raise
            except (KeyError, TypeError, ValueError) as exc:
                raise ModelFormatError(
                    f"malformed {tags[0]} value {_short(node)} in metadata.json: {exc!r}"
                ) from None
    raise ModelFormatError(f"unrecognised value {_short(node)} in metadata.json")


def _short(node):
    text = repr(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _decode_numpy_scalar(node, read_array, registry):
    dtype = np.dtype(node["__numpy__"])
    if dtype.kind not in "biuf":
        raise ValueError(f"dtype {dtype} is not a bool, integer or float dtype")
    return dtype.type(decode(node["value"], read_array, registry))


def _decode_array(node, read_array, registry):
    array = read_array(node["__array__"])
    if node.get("as_object"):
        array = array.astype(object)
    return array[()] if node.get("as_scalar") else array


def _decode_sparse(node, read_array, registry):
    container = _SPARSE_CONTAINERS[node["__sparse__"]]
    parts = [_decode_array(node[p], read_array, registry) for p in ("data", "indices", "indptr")]
    shape = node["shape"]
    if not (isinstance(shape, list) and len(shape) == 2
            and all(isinstance(n, int) and n >= 0 for n in shape)):
        raise ValueError(f"shape must be two non-negative ints, got {shape!r}")
    return container(tuple(parts), shape=tuple(shape))


def _decode_estimator(node, read_array, registry):
    name = node["__estimator__"]
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ModelFormatError(
            f"unknown estimator class {name!r}; a model file may name only "
            f"{', '.join(sorted(registry))}"
        )
    params = {p: decode(v, read_array, registry) for p, v in node["params"].items()}
    return instantiate(cls, params)


def instantiate(cls, params):
    """Return ``cls(**params)``, reporting parameters the class does not take."""
    try:
        return cls(**params)
    except TypeError as exc:
        raise ModelFormatError(
            f"the saved parameters {sorted(params)} do not match {cls.__name__}: {exc}"
        ) from None


_DECODERS = {
    "__float__": lambda node, read_array, registry: _NONFINITE[node["__float__"]],
    "__numpy__": _decode_numpy_scalar,
    "__tuple__": lambda node, read_array, registry: tuple(
        decode(v, read_array, registry) for v in node["__tuple__"]),
    "__dict__": lambda node, read_array, registry: {
        decode(k, read_array, registry): decode(v, read_array, registry)
        for k, v in node["__dict__"]},
    "__array__": _decode_array,
    "__sparse__": _decode_sparse,
    "__estimator__": _decode_estimator,
}
