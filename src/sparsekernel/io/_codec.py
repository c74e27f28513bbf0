"""Turn parameter and attribute values into JSON plus named arrays (``{key: ndarray}``), and back.

Every JSON object in the tree is a tagged node (see the format description in
docs/user_guide/model_files.md), so plain dicts from a file are never taken for values.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

__all__ = ["ModelFormatError", "UnsupportedValueError", "decode", "encode", "instantiate",
           "saved_params"]

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_SCALAR_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float16", "float32", "float64"])
_SPARSE_CONTAINERS = {"csr_matrix": sp.csr_matrix, "csr_array": sp.csr_array}
_SUPPORTED = (
    "None, bool, int, float, str, numpy scalars, numpy arrays (not of object dtype, except "
    "arrays of str), scipy sparse matrices, lists, tuples, dicts and sparsekernel estimators"
)


class ModelFormatError(ValueError):
    """A model cannot be saved in, or read from, the sparsekernel model format.

    Raised by :func:`~sparsekernel.io.save` when the estimator holds a value the format cannot
    represent, and by :func:`~sparsekernel.io.load` when a file is not a valid model file.

    See Also
    --------
    save, load : Write and read model files.
    """


class UnsupportedValueError(Exception):
    """A value the format cannot store; ``save`` turns it into a ModelFormatError."""


def saved_params(cls, params):
    """``params`` without those ``cls`` declares transient (``_transient_params``).

    Transient parameters say where a fit runs (a cluster address, a live client), not what
    the model is: they are never written, and a value found in a file is ignored, so a
    tampered file cannot choose where the next ``fit`` connects.
    """
    transient = getattr(cls, "_transient_params", ())
    return {name: value for name, value in params.items() if name not in transient}


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
    params = saved_params(type(value), value.get_params(deep=False))
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
        if len(tags) == 1 and set(node) <= _TAG_KEYS[tags[0]]:
            try:
                return _DECODERS[tags[0]](node, read_array, registry)
            except ModelFormatError:
                raise
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                raise ModelFormatError(
                    f"malformed {tags[0]} value {_short(node)} in metadata.json: {exc!r}"
                ) from None
    raise ModelFormatError(f"unrecognised value {_short(node)} in metadata.json")


def _short(node):
    text = repr(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _decode_numpy_scalar(node, read_array, registry):
    name, value = node["__numpy__"], node["value"]
    if not (isinstance(name, str) and name in _SCALAR_DTYPES):
        raise ValueError(f"{name!r} is not a bool, integer or float dtype name")
    if not isinstance(value, dict | bool | int | float) or (name == "bool") != (
            isinstance(value, bool)):
        raise ValueError(f"{value!r} is not a value of dtype {name}")
    return np.dtype(name).type(decode(value, read_array, registry))


def _decode_array(node, read_array, registry):
    array = read_array(node["__array__"])
    if node.get("as_object"):
        if array.dtype.kind != "U":
            raise ValueError(f"as_object needs a unicode array, not {array.dtype.str}")
        array = array.astype(object)
    if node.get("as_scalar"):
        if array.ndim:
            raise ValueError(f"as_scalar needs a 0-d array, not shape {array.shape}")
        return array[()]
    return array


def _decode_sparse(node, read_array, registry):
    container = _SPARSE_CONTAINERS[node["__sparse__"]]
    nodes = [node[p] for p in ("data", "indices", "indptr")]
    if not all(isinstance(n, dict) and set(n) == {"__array__"} for n in nodes):
        raise ValueError("data, indices and indptr must be plain array references")
    members = ", ".join(f"'{n['__array__']}.npy'" for n in nodes)
    shape = node["shape"]
    if not (isinstance(shape, list) and len(shape) == 2
            and all(type(n) is int and 0 <= n < 2**62 for n in shape)):
        raise ValueError(f"shape must be two non-negative ints, got {shape!r}")
    data, indices, indptr = (_decode_array(n, read_array, registry) for n in nodes)
    problem = _csr_problem(data, indices, indptr, shape)
    if problem:
        raise ModelFormatError(f"the CSR matrix in members {members} is malformed: {problem}.")
    # scipy keeps int32/int64 index arrays; unsigned ones (valid once in range) become int64.
    indices, indptr = (a if a.dtype in (np.int32, np.int64) else a.astype(np.int64)
                       for a in (indices, indptr))
    return container((data, indices, indptr), shape=tuple(shape))


def _csr_problem(data, indices, indptr, shape):
    """What is wrong with these CSR parts, or None. Compiled sparse code trusts them: a
    column index out of range reads or writes outside its buffers."""
    n_rows, n_cols = shape
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        return "data, indices and indptr must be 1-D"
    if data.dtype.kind not in "biufc" or indices.dtype.kind not in "iu" or (
            indptr.dtype.kind not in "iu"):
        return (f"dtypes data {data.dtype.str}, indices {indices.dtype.str}, indptr "
                f"{indptr.dtype.str} (numbers, and integer indices, expected)")
    if len(indptr) != n_rows + 1:
        return f"indptr has {len(indptr)} entries for {n_rows} rows (rows + 1 expected)"
    if len(data) != len(indices):
        return f"{len(data)} values but {len(indices)} column indices"
    if indptr[0] != 0 or indptr[-1] != len(indices):
        return (f"indptr runs from {indptr[0]} to {indptr[-1]}, not from 0 to the "
                f"{len(indices)} stored values")
    if np.any(indptr[1:] < indptr[:-1]):
        return "indptr decreases"
    if len(indices) and (indices.min() < 0 or indices.max() >= n_cols):
        bad = indices[(indices < 0) | (indices >= n_cols)][0]
        return f"column index {bad} is outside 0..{n_cols - 1}"
    return None


def _decode_estimator(node, read_array, registry):
    name = node["__estimator__"]
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ModelFormatError(
            f"unknown estimator class {name!r}; a model file may name only "
            f"{', '.join(sorted(registry))}"
        )
    if not isinstance(node["params"], dict):
        raise ValueError(f"params must be a JSON object, got {_short(node['params'])}")
    params = {p: decode(v, read_array, registry) for p, v in node["params"].items()}
    return instantiate(cls, params)


_TAG_KEYS = {
    "__float__": {"__float__"},
    "__numpy__": {"__numpy__", "value"},
    "__tuple__": {"__tuple__"},
    "__dict__": {"__dict__"},
    "__array__": {"__array__", "as_object", "as_scalar"},
    "__sparse__": {"__sparse__", "shape", "data", "indices", "indptr"},
    "__estimator__": {"__estimator__", "params"},
}


def instantiate(cls, params):
    """Return ``cls(**params)`` (transient parameters dropped), reporting parameters the
    class does not take."""
    try:
        return cls(**saved_params(cls, params))
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
