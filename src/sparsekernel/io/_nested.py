"""Composite models (pipelines, calibrated classifiers, ...) in the ``"skops"`` container.

Scikit-learn objects predict from private state (``SVC``'s ``_dual_coef_``,
``OneHotEncoder``'s ``_n_features_outs``, ...), which parameters and public fitted attributes
cannot rebuild; skops, the maintained no-pickle format for scikit-learn objects, stores it.
We wrap skops with the checks listed under "Safety" in docs/user_guide/model_files.md,
before skops reads anything and on the loaded object.

Both containers hold the same sparsekernel estimators: :func:`stored_form` writes each as
the native layout does (parameters, transient ones at their defaults, and public fitted
attributes; never private state). ``save`` runs the same checks on that form of the model,
so a file it writes loads.
"""

from __future__ import annotations

import copy
import functools
import inspect
import io
import json
import numbers
import warnings
import zipfile

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..utils import format_bytes
from ._codec import ModelFormatError, _csr_problem, saved_params
from ._container import (
    _READ_ERRORS,
    METADATA,
    SCHEMA,
    check_array_dtype,
    check_npy_member,
    read_metadata,
    zip_directory,
)
from ._registry import allowed_classes, check_params
from ._sklearn_checks import check_object, checks, derived_attributes
from ._spec import FittedStateError, check_fitted_state, fitted_names, is_fitted_name, probe

__all__ = ["CONTAINER", "allowed_types", "check_saveable", "load_nested", "needs_nested",
           "stored_form", "write_nested"]

CONTAINER = "skops"
_NUMPY_SCALARS = (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                  np.uint64, np.uint32, np.uint16, np.uint8, np.bool_)
#: Plain values skops stores for these models.
_PLAIN_TYPES = (dict, list, tuple, str, int, float, bool, slice, type(None), np.ndarray,
                np.dtype, sp.csr_matrix, sp.csr_array, *_NUMPY_SCALARS)
# Arrays where honest models hold non-finite floats: a missing-value category, the
# statistic of an all-missing column (NaN), the outer edges of a constant feature's bin
# (infinity); their owners' checks say which.
_NONFINITE_ALLOWED = frozenset({"categories_", "statistics_", "bin_edges_"})
_PROBE_METHODS = ("decision_function", "predict_proba", "predict", "transform")
# The members scipy.sparse.save_npz writes for a CSR matrix.
_NPZ_REQUIRED = frozenset({"data.npy", "indices.npy", "indptr.npy", "format.npy",
                           "shape.npy"})
_NPZ_SMALL = 4096


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def allowed_types():
    """Return ``{qualified name: class}`` of every type a composite model file may hold."""
    types = {_name(cls): cls for cls in _PLAIN_TYPES}
    types.update({_name(cls): cls for cls in allowed_classes().values()})
    types.update({_name(cls): cls for cls in checks()})
    return types


def _sklearn_names():
    return sorted(cls.__name__ for cls in checks() if isinstance(cls, type)
                  and issubclass(cls, BaseEstimator) and not cls.__name__.startswith("_"))


def _node_types():
    """``{skops node kind: qualified names of the types it may build}``: each allowed type
    only through the node kind skops writes for it."""
    scalars = {_name(t) for t in _NUMPY_SCALARS}
    objects = {_name(c) for c in allowed_classes().values()}
    objects |= {_name(c) for c, spec in checks().items() if spec.node == "ObjectNode"}
    return {
        "ObjectNode": objects,
        "LossNode": {_name(c) for c, spec in checks().items() if spec.node == "LossNode"},
        "NdArrayNode": {"numpy.ndarray"} | scalars,
        "DTypeNode": {"numpy.dtype"},
        "TypeNode": scalars | {f"builtins.{t}" for t in ("str", "int", "float", "bool")},
        "JsonNode": {"builtins.str"},
        "DictNode": {"builtins.dict"},
        "ListNode": {"builtins.list"},
        "TupleNode": {"builtins.tuple"},
        "SliceNode": {"builtins.slice"},
        "SparseMatrixNode": {_name(sp.csr_matrix), _name(sp.csr_array)},
    }


def needs_nested(model, registry):
    """Whether ``model`` needs the skops container: anything but a sparsekernel estimator
    whose parameters are plain values or sparsekernel estimators."""
    if registry.get(type(model).__name__) is not type(model):
        return True
    return any(isinstance(v, BaseEstimator) and registry.get(type(v).__name__) is not type(v)
               for v in model.get_params(deep=False).values())


# --- walking an object graph ---------------------------------------------------------------

def _children(value):
    """``(label, child)`` pairs of a container or an object's attributes (without those its
    class rebuilds at load)."""
    if isinstance(value, dict):  # keys too: a file builds them with a type it names
        return [(f".keys()[{i}]", k) for i, k in enumerate(value)] + [
            (f"[{k!r}]", v) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [(f"[{i}]", v) for i, v in enumerate(value.ravel().tolist())]
    if hasattr(value, "__dict__") and not isinstance(value, type):
        derived = derived_attributes(value)
        return [(f".{k}", v) for k, v in vars(value).items() if k not in derived]
    return []


def _walk(value, path, depth=0):
    """Yield ``(path, value)`` for ``value`` and everything it holds, depth first."""
    if depth > 100:
        raise ModelFormatError(f"{path} nests more than 100 levels deep.")
    yield path, value
    for label, child in _children(value):
        yield from _walk(child, path + label, depth + 1)


def check_saveable(model):
    """Refuse, naming it, anything in ``model``'s :func:`stored_form` that :func:`load`
    would refuse: objects the container may not hold, scikit-learn objects or sparsekernel
    estimators whose state is not what their ``fit`` produces, and a fitted model failing
    on a probe row."""
    prefix = f"Cannot save the {type(model).__name__}: "
    stored = stored_form(model)  # probed below: its caches must not reach the file
    _check_graph(stored, loading=False, prefix=prefix)
    if _is_fitted(stored):
        _probe_whole(stored, prefix)


# --- what the container stores of a sparsekernel estimator ---------------------------------

def stored_form(model):
    """``model`` as the container stores it: each sparsekernel estimator in it reduced to
    what the native layout stores (:func:`_stored_state`), everything else shared with
    ``model``, which is left as it is (only the objects above an estimator are copied)."""
    return _stored(model, {})


def _stored(value, memo):
    key = id(value)
    if key not in memo:
        memo[key] = value  # a cycle, which no estimator holds, is left to the walk
        memo[key] = _stored_value(value, memo)
    return memo[key]


def _stored_value(value, memo):
    if _is_ours(value):
        new = copy.copy(value)
        vars(new).clear()
        vars(new).update({k: _stored(v, memo) for k, v in _stored_state(value).items()})
        return new
    if type(value) in (list, tuple):
        items = [_stored(v, memo) for v in value]
        changed = any(a is not b for a, b in zip(items, value, strict=True))
        return type(value)(items) if changed else value
    if type(value) is dict:
        items = {k: _stored(v, memo) for k, v in value.items()}
        return items if any(items[k] is not v for k, v in value.items()) else value
    if type(value) is np.ndarray and value.dtype == object:
        items = [_stored(v, memo) for v in value.flat]
        if all(a is b for a, b in zip(items, value.flat, strict=True)):
            return value
        new = np.empty(value.shape, dtype=object)
        for i, item in enumerate(items):
            new.flat[i] = item
        return new
    if hasattr(value, "__dict__") and not isinstance(value, type) and (
            type(value) in checks()):
        state = {k: _stored(v, memo) for k, v in vars(value).items()}
        if all(state[k] is v for k, v in vars(value).items()):
            return value
        new = copy.copy(value)
        vars(new).update(state)
        return new
    return value


def _stored_state(model):
    """What both containers store of a sparsekernel estimator: its parameters (transient
    ones at their defaults) and its public fitted attributes."""
    cls = type(model)
    state = {**_transient_defaults(cls), **saved_params(cls, model.get_params(deep=False))}
    state.update((name, vars(model)[name]) for name in fitted_names(model))
    return state


@functools.cache
def _transient_defaults(cls):
    """``{name: default}`` of the parameters ``cls`` declares transient (where a fit runs):
    never written, and reset to the default at load whatever a file holds."""
    signature = inspect.signature(cls)
    return {name: signature.parameters[name].default
            for name in getattr(cls, "_transient_params", ())}


def _check_stored_names(model, path):
    """A loaded sparsekernel estimator holds every parameter, and besides only public
    fitted attributes (as the native layout: no private state, no class attribute
    shadowed); its transient parameters are reset to their defaults."""
    cls = type(model)
    params, state = frozenset(cls._get_param_names()), vars(model)
    missing = sorted(params - set(state))
    if missing:
        raise ModelFormatError(f"{path} ({cls.__name__}) lacks the parameter(s) {missing}.")
    extra = [name for name in state if name not in params and not is_fitted_name(cls, name)]
    if extra:
        raise ModelFormatError(
            f"{path} ({cls.__name__}) holds {str(extra[0])[:60]!r}, which is neither a "
            "parameter nor a fitted attribute (a public name ending with '_' that the class "
            "does not define): model files hold no private state.")
    for name, default in _transient_defaults(cls).items():
        setattr(model, name, default)


def _check_graph(model, loading, prefix=""):
    """Walk ``model``: every value of an allowed type, arrays and CSR matrices sound; then
    check every estimator, innermost first (a container's checks read its parts)."""
    types, table = allowed_types(), checks()
    estimators = []
    for path, value in _walk(model, type(model).__name__):
        if isinstance(value, type):
            if _name(value) not in types:
                raise ModelFormatError(f"{prefix}{path} is the type {_name(value)}, which "
                                       "model files may not hold.")
            continue
        if not _allowed(value, types):
            raise ModelFormatError(
                f"{prefix}{path} is a {_name(type(value))}, which model files may not hold; "
                f"allowed are the sparsekernel estimators and {', '.join(_sklearn_names())}.")
        if isinstance(value, np.ndarray):
            _check_array(value, f"{prefix}{path}")
        elif sp.issparse(value):
            _check_sparse(value, f"{prefix}{path}")
        elif type(value) in table or _is_ours(value):
            estimators.append((path, value))
    checked = set()
    for path, value in reversed(estimators):
        if id(value) not in checked:
            checked.add(id(value))
            _check_estimator(value, path, loading, prefix)


def _check_estimator(value, path, loading, prefix):
    if _is_ours(value):
        if loading:
            _check_stored_names(value, path)
        _check_ours(value, path, prefix)
        return
    try:
        check_object(value, loading)
    except Exception as exc:  # noqa: BLE001 - whatever a crafted state makes a check raise
        problem = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise ModelFormatError(f"{prefix}{path} ({type(value).__name__}): "
                               f"{problem[:300]}") from None


def _allowed(value, types):
    if isinstance(value, np.dtype):  # each dtype has its own class (numpy.dtypes.*)
        return value.kind in "biufcU" and value.names is None and value.subdtype is None
    return types.get(_name(type(value))) is type(value)


def _is_ours(value):
    return isinstance(value, BaseEstimator) and (
        allowed_classes().get(type(value).__name__) is type(value))


def _check_ours(model, path, prefix=""):
    """A sparsekernel estimator inside a composite: the checks of the native layout."""

    try:
        check_params(model)
        symbols = check_fitted_state(model)
        if symbols:
            probe(model, symbols)
    except (FittedStateError, ModelFormatError, ValueError, TypeError, ArithmeticError,
            IndexError, AttributeError) as exc:
        raise ModelFormatError(f"{prefix}{path} ({type(model).__name__}): {exc}") from None


def _check_array(value, path):
    if value.dtype != object:
        check_array_dtype(value.dtype, path)
    if value.dtype.kind in "fc" and not np.isfinite(value).all() and not any(
            f".{name}" in path for name in _NONFINITE_ALLOWED):
        raise ModelFormatError(f"{path} holds NaN or infinite values.")


def _check_sparse(value, path):
    problem = None
    if value.format != "csr":
        problem = f"it is in {value.format} format"
    else:
        problem = _csr_problem(value.data, value.indices, value.indptr, value.shape)
    if problem is None and value.data.dtype.kind in "fc" and not np.isfinite(value.data).all():
        problem = "it holds NaN or infinite values"
    if problem:
        raise ModelFormatError(f"the CSR matrix {path} is malformed: {problem}.")


# --- writing -------------------------------------------------------------------------------

def write_nested(model, fh, metadata):
    """Write the :func:`stored_form` of ``model`` (which :func:`check_saveable` accepted)
    with skops, plus our ``metadata.json``, to the binary file ``fh``."""
    import skops.io

    skops.io.dump(stored_form(model), fh, compression=zipfile.ZIP_DEFLATED)
    fh.seek(0)
    with zipfile.ZipFile(fh, "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA, json.dumps(metadata, indent=1))


# --- reading -------------------------------------------------------------------------------

def load_nested(fh, zf, members, metadata, max_bytes):
    """The model in an opened skops-container file, once every check has passed.
    ``max_bytes`` bounds the members and the arrays inside ``.npz`` members together."""
    if SCHEMA not in members:
        raise ModelFormatError(f"the {CONTAINER} container has no {SCHEMA}.")
    names = _check_schema(read_metadata(zf, members[SCHEMA]), members)
    budget = max_bytes - sum(info.file_size for info in members.values())
    for name, info in members.items():
        if name.endswith(".npy"):
            check_npy_member(zf, info)
        elif name.endswith(".npz"):
            budget -= _check_npz_member(zf, info, budget, max_bytes)
    model = _skops_load(fh, names)
    if type(model).__name__ != metadata.get("class"):
        raise ModelFormatError(f"{METADATA} names the class {metadata.get('class')!r}, but "
                               f"{SCHEMA} holds a {type(model).__name__}.")
    _check_graph(model, loading=True)
    if _is_fitted(model):
        _probe_whole(model)
    return model


def _check_schema(schema, members):
    """Every node of the schema must build an allowed type through the node kind skops
    writes for it, every file it names must be a member of the matching kind, and every
    array member must be named by it (as the native layout refuses unlisted members);
    returns the qualified type names (skops' trusted list)."""
    kinds, found, files = _node_types(), set(), set()
    allowed = set().union(*kinds.values())
    for node in _json_nodes(schema):
        if not {"__class__", "__module__", "__loader__"} & set(node):
            continue
        loader, name = node.get("__loader__"), f"{node.get('__module__')}.{node.get('__class__')}"
        if name not in allowed:
            raise ModelFormatError(f"{SCHEMA} names the type {name[:100]!r}, which a model "
                                   "file may not hold.")
        if not isinstance(loader, str) or name not in kinds.get(loader, ()):
            raise ModelFormatError(
                f"{SCHEMA} builds the type {name!r} with a {str(loader)[:40]!r} node; a model "
                f"file may build it only with {_kinds_of(name, kinds)}.")
        files.add(_check_node_file(node, loader, members))
        found.add(name)
    unread = sorted(n for n in members if n.endswith((".npy", ".npz")) and n not in files)
    if unread:
        raise ModelFormatError(f"member {unread[0][:100]!r} is not read by {SCHEMA} (a "
                               f"{CONTAINER} file holds only the arrays its schema reads).")
    return sorted(found)


def _kinds_of(name, kinds):
    return " or ".join(repr(k) for k, names in kinds.items() if name in names)


_FILE_EXTENSIONS = {"NdArrayNode": ".npy", "SparseMatrixNode": ".npz"}


def _check_node_file(node, loader, members):
    """The payload of an array or sparse node: a member of the right kind (its name is
    returned), or (object arrays) a list of nodes (None)."""
    extension = _FILE_EXTENSIONS.get(loader)
    kind = node.get("type")
    if extension is None or (loader == "NdArrayNode" and kind == "json"
                             and node.get("__class__") == "ndarray"):
        if "file" in node:
            raise ModelFormatError(f"{SCHEMA} gives a {loader} node a member to read.")
        return None
    expected = "numpy" if loader == "NdArrayNode" else "scipy"
    file = node.get("file")
    if kind != expected or not (isinstance(file, str) and file.endswith(extension)):
        raise ModelFormatError(f"{SCHEMA} has a {loader} node of type {str(kind)[:20]!r} "
                               f"reading {str(file)[:100]!r}; expected type {expected!r} "
                               f"and a {extension} member.")
    if file not in members:
        raise ModelFormatError(f"{SCHEMA} refers to the member {file[:100]!r}, which the "
                               "archive lacks.")
    return file


def _json_nodes(node):
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_npz_member(zf, info, budget, max_bytes):
    """An ``.npz`` member is a zip of ``.npy`` arrays holding one CSR matrix: the same
    checks as the archive, its arrays' decompressed sizes within what ``max_bytes`` leaves
    (``budget``). Returns those sizes."""
    name = info.filename
    try:
        with zf.open(info) as fh:
            inner = zipfile.ZipFile(io.BytesIO(fh.read(info.file_size + 1)))
    except _READ_ERRORS as exc:
        raise ModelFormatError(f"cannot read member {name!r}: {exc}.") from None
    with inner:
        declared = sum(i.file_size for i in inner.infolist())
        if declared > budget:
            raise ModelFormatError(
                f"member {name!r} holds arrays of {format_bytes(declared)} decompressed; with "
                f"the other members that exceeds max_bytes={format_bytes(max_bytes)}; pass a "
                "larger max_bytes to load a model this big.")
        inner_members = zip_directory(inner, budget)
        if not (_NPZ_REQUIRED <= set(inner_members) <= _NPZ_REQUIRED | {"_is_array.npy"}):
            raise ModelFormatError(
                f"member {name!r} holds {sorted(inner_members)[:8]}, not the arrays of a "
                f"sparse matrix ({', '.join(sorted(_NPZ_REQUIRED))}).")
        for inner_name, inner_info in inner_members.items():
            check_npy_member(inner, inner_info,
                             extra_kinds="S" if inner_name == "format.npy" else "")
        _check_npz_layout(inner, inner_members, name)
    return declared


def _check_npz_layout(inner, members, name):
    """The small members that tell scipy what to build: a CSR matrix of a valid shape."""
    small = {}
    for key in ("format.npy", "shape.npy", "_is_array.npy"):
        if key in members:
            if members[key].file_size > _NPZ_SMALL:
                raise ModelFormatError(f"member {name!r} has an oversized {key}.")
            try:
                small[key] = np.load(io.BytesIO(inner.read(members[key])), allow_pickle=False)
            except _READ_ERRORS as exc:
                raise ModelFormatError(f"cannot read {key} in member {name!r}: {exc}.") from None
    fmt, shape = small["format.npy"], small["shape.npy"]
    if not (fmt.shape == () and fmt.dtype.kind == "S" and fmt.item() == b"csr"):
        raise ModelFormatError(f"member {name!r} holds a sparse matrix of format "
                               f"{fmt.tolist()!r}; model files hold only CSR.")
    if not (shape.shape == (2,) and shape.dtype.kind in "iu" and np.all(shape >= 0)):
        raise ModelFormatError(f"member {name!r} declares the shape {shape.tolist()!r}; "
                               "expected two non-negative ints.")
    flag = small.get("_is_array.npy")
    if flag is not None and not (flag.shape == () and flag.dtype.kind == "b"):
        raise ModelFormatError(f"member {name!r} has a malformed _is_array.npy.")


def _skops_load(fh, trusted):
    import skops.io

    fh.seek(0)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # e.g. InconsistentVersionWarning: checked below
            return skops.io.load(fh, trusted=trusted)
    except Exception as exc:  # noqa: BLE001 - whatever a crafted file makes skops raise
        raise ModelFormatError(
            f"{SCHEMA} does not describe a valid model: {type(exc).__name__}: "
            f"{str(exc)[:200]}") from None


def _is_fitted(model):
    """Whether ``model`` claims to be fitted (scikit-learn's test); an unfitted composite
    is stored and loaded without a probe, and refuses to predict."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except NotFittedError:
        return False
    except Exception:  # noqa: BLE001 - a crafted state; the probe will tell
        return True
    return True


# --- the probe -----------------------------------------------------------------------------

def _probe_whole(model, prefix=""):
    """Run every prediction and transform method of ``model`` on one row it accepts."""
    X = _probe_input(model, prefix)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method in _PROBE_METHODS:
            if not hasattr(model, method):
                continue
            try:
                out = getattr(model, method)(X)
            except Exception as exc:  # noqa: BLE001 - whatever a crafted model raises
                raise ModelFormatError(
                    f"{prefix}the {type(model).__name__} fails on a probe row in {method}: "
                    f"{type(exc).__name__}: {str(exc)[:200]}") from None
            out = out.data if sp.issparse(out) else np.asarray(out)
            if out.dtype.kind in "fc" and not np.isfinite(out).all():
                raise ModelFormatError(f"{prefix}the {type(model).__name__}'s {method} returns "
                                       "non-finite values on a probe row.")


def _first_step(model):
    while hasattr(model, "steps") and isinstance(model.steps, list) and model.steps:
        model = model.steps[0][1]
    return model


def _probe_input(model, prefix=""):
    """One row: each column's first category where an encoder reads it, else 0.0; a pandas
    frame when the model was fitted on one."""
    names = getattr(model, "feature_names_in_", None)
    d = getattr(model, "n_features_in_", None)
    if not (isinstance(d, numbers.Integral) and 0 < d <= 2**16):
        raise ModelFormatError(f"{prefix}the {type(model).__name__} has n_features_in_={d!r}, "
                               "expected an int from 1 to 65536.")
    row = [0.0] * int(d)
    for column, category in _encoded_columns(_first_step(model), names):
        if isinstance(column, numbers.Integral) and 0 <= column < d:
            row[int(column)] = category
    kind = object if any(isinstance(v, str) for v in row) else float
    try:
        import pandas as pd
    except ImportError:  # then the model was not fitted on a frame, whatever the file says
        names = None
    if names is None:
        return np.array([row], dtype=kind)
    return pd.DataFrame([row], columns=list(names))


def _encoded_columns(step, names):
    """``(column index, first category)`` for the columns an encoder in ``step`` reads."""
    if hasattr(step, "categories_"):
        return [(j, c[0]) for j, c in enumerate(step.categories_) if len(c)]
    pairs = []
    lookup = {n: i for i, n in enumerate(names)} if names is not None else {}
    for entry in getattr(step, "transformers_", None) or []:
        if not (isinstance(entry, tuple) and len(entry) == 3):
            continue
        columns = entry[2] if isinstance(entry[2], list | tuple) else [entry[2]]
        indices = [lookup.get(c, c) if isinstance(c, str) else c for c in columns]
        for j, category in _encoded_columns(_first_step(entry[1]), None):
            if isinstance(j, int) and j < len(indices):
                pairs.append((indices[j], category))
    return pairs
