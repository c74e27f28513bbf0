"""Composite models (pipelines, calibrated classifiers, ...) in the ``"skops"`` container.

Why skops, not our own layout
-----------------------------
A ``Pipeline`` of scikit-learn steps cannot be rebuilt from parameters and public fitted
attributes: ``ColumnTransformer`` (``_columns``, ``_remainder``), ``OneHotEncoder``
(``_n_features_outs``, ...), ``SimpleImputer`` (``_fit_dtype``) and ``SVC`` (``_dual_coef_``,
``_n_support``, ...) predict from private state, so an extension of our format would have
to store (and validate) every private attribute of every allowed class, which is what skops,
the maintained no-pickle format for scikit-learn objects, already does. We therefore wrap
skops and keep our own checks around it (option (a), our layout extended with
allow-listed scikit-learn classes rebuilt from public state, fails before any fuzzing:
``OneHotEncoder``, ``SimpleImputer`` and ``SVC`` raise AttributeError on a private attribute
once so rebuilt).

Fuzz numbers (tests/test_io_pipeline.py, mutations in the style of test_io_fuzz.py aimed at
``schema.json`` and the skops members too): 200 mutations of a StandardScaler + ReducedSVC
pipeline and a ColumnTransformer pipeline on a pandas frame, 0 failures of the bar (162
refused with ModelFormatError, 38 loaded and computing finite values on the real inputs);
3,600 mutations of six composite models (seed 1), 0 failures (2,956 refused, 644 loaded).
Measured peak memory of a load: about 3x the model's arrays (skops holds each member's
bytes next to the array built from them until it returns); 273 MB for a 92 MB pipeline,
within 2x + 100 MB only while models stay below about 100 MB.

Around :func:`skops.io.load`: the zip directory and sizes (shared with the native layout)
before anything is decompressed; ``schema.json`` under the same JSON caps as
``metadata.json``; every type the schema names against :func:`allowed_types` (stricter than
skops' own defaults) and every ``.npy`` header (and those inside ``.npz`` members) against its
member's size before skops reads it; any exception skops raises becomes ModelFormatError.
The loaded object is then walked: arrays of allowed dtypes, float arrays finite (except
NaN categories and imputation statistics, which honest models hold), CSR matrices
consistent, every sparsekernel estimator checked as the native layout checks it (private
attributes dropped, parameters, fitted state), and the whole model evaluated on a probe row.
"""

from __future__ import annotations

import io
import json
import numbers
import warnings
import zipfile

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ._codec import ModelFormatError, _csr_problem
from ._container import (
    _READ_ERRORS,
    METADATA,
    SCHEMA,
    check_array_dtype,
    check_npy_member,
    read_metadata,
    zip_directory,
)
from ._spec import FittedStateError, check_fitted_state, probe

__all__ = ["CONTAINER", "allowed_types", "check_saveable", "load_nested", "needs_nested",
           "write_nested"]

CONTAINER = "skops"
#: scikit-learn classes a model file may hold, by public module.
_SKLEARN_CLASSES = {
    "sklearn.pipeline": ["Pipeline"],
    "sklearn.compose": ["ColumnTransformer"],
    "sklearn.preprocessing": ["StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler",
                              "Normalizer", "OneHotEncoder", "OrdinalEncoder",
                              "PolynomialFeatures", "LabelEncoder"],
    "sklearn.impute": ["SimpleImputer"],
    "sklearn.calibration": ["CalibratedClassifierCV", "_CalibratedClassifier",
                            "_SigmoidCalibration", "_TemperatureScaling"],
    "sklearn.isotonic": ["IsotonicRegression"],
    "sklearn.svm": ["SVC"],
}
#: Plain values skops stores for these models.
_PLAIN_TYPES = (dict, list, tuple, str, int, float, bool, slice, type(None), np.ndarray,
                np.dtype, np.float64, np.float32, np.int64, np.int32, np.bool_,
                sp.csr_matrix, sp.csr_array)
# Floats that honest models hold as NaN: a missing-value category, the statistic of an
# all-missing column.
_NAN_ALLOWED = frozenset({"categories_", "statistics_"})
_PROBE_METHODS = ("decision_function", "predict_proba", "predict", "transform")


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def allowed_types():
    """Return ``{qualified name: class}`` of every type a composite model file may hold."""
    import importlib

    from ._persistence import allowed_classes

    types = {_name(cls): cls for cls in _PLAIN_TYPES}
    types.update({_name(cls): cls for cls in allowed_classes().values()})
    for module, names in _SKLEARN_CLASSES.items():
        for name in names:  # a private class may be absent from another scikit-learn version
            cls = getattr(importlib.import_module(module), name, None)
            if cls is not None:
                types[_name(cls)] = cls
    return types


def needs_nested(model, registry):
    """Whether ``model`` needs the skops container: anything but a sparsekernel estimator
    whose parameters are plain values or sparsekernel estimators."""
    if registry.get(type(model).__name__) is not type(model):
        return True
    return any(isinstance(v, BaseEstimator) and registry.get(type(v).__name__) is not type(v)
               for v in model.get_params(deep=False).values())


# --- walking an object graph ---------------------------------------------------------------

def _children(value):
    """``(label, child)`` pairs of a container or an object's attributes."""
    if isinstance(value, dict):
        return [(f"[{k!r}]", v) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [(f"[{i}]", v) for i, v in enumerate(value.ravel().tolist())]
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return [(f".{k}", v) for k, v in vars(value).items()]
    return []


def _walk(value, path, depth=0):
    """Yield ``(path, value)`` for ``value`` and everything it holds, depth first."""
    if depth > 100:
        raise ModelFormatError(f"{path} nests more than 100 levels deep.")
    yield path, value
    for label, child in _children(value):
        yield from _walk(child, path + label, depth + 1)


def check_saveable(model):
    """Refuse, naming it, any object in ``model`` the container may not hold, and any
    sparsekernel estimator :func:`load` would refuse."""
    types = allowed_types()
    root = type(model).__name__
    for path, value in _walk(model, root):
        if isinstance(value, type):
            if _name(value) not in types:
                raise ModelFormatError(f"Cannot save the {root}: {path} is the type "
                                       f"{_name(value)}, which model files may not hold.")
        elif not _allowed(value, types):
            raise ModelFormatError(
                f"Cannot save the {root}: {path} is a {_name(type(value))}, which model "
                f"files may not hold; allowed are the sparsekernel estimators and "
                f"{', '.join(sorted(n for ns in _SKLEARN_CLASSES.values() for n in ns))}.")
        elif _is_ours(value):
            _check_ours(value, path, f"Cannot save the {root}: ")


def _allowed(value, types):
    if isinstance(value, np.dtype):  # each dtype has its own class (numpy.dtypes.*)
        return value.kind in "biufcU"
    return types.get(_name(type(value))) is type(value)


def _is_ours(value):
    from ._persistence import allowed_classes

    return isinstance(value, BaseEstimator) and (
        allowed_classes().get(type(value).__name__) is type(value))


def _check_ours(model, path, prefix=""):
    """A sparsekernel estimator inside a composite: the checks of the native layout."""
    from ._persistence import _check_params

    try:
        _check_params(model)
        symbols = check_fitted_state(model)
        if symbols:
            probe(model, symbols)
    except (FittedStateError, ModelFormatError, ValueError, TypeError, ArithmeticError,
            IndexError, AttributeError) as exc:
        raise ModelFormatError(f"{prefix}{path} ({type(model).__name__}): {exc}") from None


# --- writing -------------------------------------------------------------------------------

def write_nested(model, fh, metadata):
    """Write ``model`` with skops, plus our ``metadata.json``, to the binary file ``fh``."""
    import skops.io

    check_saveable(model)
    skops.io.dump(model, fh, compression=zipfile.ZIP_DEFLATED)
    fh.seek(0)
    with zipfile.ZipFile(fh, "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA, json.dumps(metadata, indent=1))


# --- reading -------------------------------------------------------------------------------

def load_nested(fh, zf, members, metadata):
    """The model in an opened skops-container file, once every check has passed."""
    if SCHEMA not in members:
        raise ModelFormatError(f"the {CONTAINER} container has no {SCHEMA}.")
    names = _check_schema(read_metadata(zf, members[SCHEMA]), members)
    for name, info in members.items():
        if name.endswith(".npy"):
            check_npy_member(zf, info)
        elif name.endswith(".npz"):
            _check_npz_member(zf, info)
    model = _skops_load(fh, names)
    if type(model).__name__ != metadata.get("class"):
        raise ModelFormatError(f"{METADATA} names the class {metadata.get('class')!r}, but "
                               f"{SCHEMA} holds a {type(model).__name__}.")
    _check_loaded(model)
    return model


def _check_schema(schema, members):
    """Every type the schema names must be allowed, and every file it names a member;
    returns the qualified type names (skops' trusted list)."""
    types, found = allowed_types(), set()
    for node in _json_nodes(schema):
        if "__class__" in node or "__module__" in node:
            name = f"{node.get('__module__')}.{node.get('__class__')}"
            if name not in types:
                raise ModelFormatError(f"{SCHEMA} names the type {name[:100]!r}, which a model "
                                       "file may not hold.")
            found.add(name)
        if "file" in node and not (isinstance(node["file"], str) and node["file"] in members):
            raise ModelFormatError(f"{SCHEMA} refers to the member {str(node['file'])[:100]!r},"
                                   " which the archive lacks.")
    return sorted(found)


def _json_nodes(node):
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_npz_member(zf, info):
    """An ``.npz`` member (a sparse matrix) is a zip of ``.npy`` arrays: the same checks."""
    try:
        with zf.open(info) as fh:
            inner = zipfile.ZipFile(io.BytesIO(fh.read(info.file_size + 1)))
    except _READ_ERRORS as exc:
        raise ModelFormatError(f"cannot read member {info.filename!r}: {exc}.") from None
    with inner:
        inner_members = zip_directory(inner, info.file_size)
        for name, inner_info in inner_members.items():
            if not name.endswith(".npy"):
                raise ModelFormatError(f"member {info.filename!r} holds {name!r}, not an array.")
            check_npy_member(inner, inner_info, extra_kinds="S" if name == "format.npy" else "")


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


def _check_loaded(model):
    root = type(model).__name__
    types = allowed_types()
    for path, value in _walk(model, root):
        if isinstance(value, type):
            continue
        if not _allowed(value, types):
            raise ModelFormatError(f"{path} is a {_name(type(value))}, which a model file may "
                                   "not hold.")
        if isinstance(value, np.ndarray):
            _check_array(value, path)
        elif sp.issparse(value):
            _check_sparse(value, path)
        elif _is_ours(value):
            _drop_private(value)
            _check_ours(value, path)
    _probe_whole(model)


def _check_array(value, path):
    if value.dtype != object:
        check_array_dtype(value.dtype, path)
    if value.dtype.kind in "fc" and not np.isfinite(value).all() and not any(
            f".{name}" in path for name in _NAN_ALLOWED):
        raise ModelFormatError(f"{path} holds NaN or infinite values.")


def _check_sparse(value, path):
    problem = _csr_problem(value.data, value.indices, value.indptr, value.shape)
    if problem is None and value.data.dtype.kind in "fc" and not np.isfinite(value.data).all():
        problem = "it holds NaN or infinite values"
    if problem:
        raise ModelFormatError(f"the CSR matrix {path} is malformed: {problem}.")


def _drop_private(model):
    # The native layout never stores private attributes (caches are rebuilt lazily); a file
    # must not inject them here either.
    for name in [n for n in vars(model) if n.startswith("_")]:
        delattr(model, name)


# --- the probe -----------------------------------------------------------------------------

def _probe_whole(model):
    """Run every prediction and transform method of ``model`` on one row it accepts."""
    X = _probe_input(model)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method in _PROBE_METHODS:
            if not hasattr(model, method):
                continue
            try:
                out = np.asarray(getattr(model, method)(X))
            except Exception as exc:  # noqa: BLE001 - whatever a crafted model raises
                raise ModelFormatError(
                    f"the {type(model).__name__} fails on a probe row in {method}: "
                    f"{type(exc).__name__}: {str(exc)[:200]}") from None
            if out.dtype.kind in "fc" and not np.isfinite(out).all():
                raise ModelFormatError(f"the {type(model).__name__}'s {method} returns "
                                       "non-finite values on a probe row.")


def _first_step(model):
    while hasattr(model, "steps") and isinstance(model.steps, list) and model.steps:
        model = model.steps[0][1]
    return model


def _probe_input(model):
    """One row: each column's first category where an encoder reads it, else 0.0; a pandas
    frame when the model was fitted on one."""
    names = getattr(model, "feature_names_in_", None)
    d = getattr(model, "n_features_in_", None)
    if not (isinstance(d, numbers.Integral) and 0 < d <= 2**16):
        raise ModelFormatError(f"the {type(model).__name__} has n_features_in_={d!r}, "
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
