"""Structural checks of the scikit-learn objects a composite model file may hold.

scikit-learn trusts its fitted state: ``SVC`` hands ``_n_support``, ``_dual_coef_`` and
``_intercept_`` to libsvm, which indexes with them unchecked, and ``OneHotEncoder`` builds
a CSR matrix from ``_n_features_outs`` that compiled code later walks. A model read from a
file is therefore checked, before any of its methods runs, against the state the class's
``fit`` produces: every attribute it sets present and no other, of the right type, dtype,
dimension and shape (consistent with ``n_features_in_``, the number of classes, ...),
integer indices and counts in range, private state derived from public state equal to what
scikit-learn derives from it, and the constructor parameters valid as ``fit`` checks them.

:func:`checks` is the table ``{class: Spec}``; the container may hold a scikit-learn class
only if it has an entry, so an allowed class without its check cannot exist. ``save`` runs
the same checks on the model in memory, so it refuses what ``load`` would refuse.
"""

from __future__ import annotations

import copy
import functools
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..utils.fitted_spec import (
    INFO,
    Count,
    Floats,
    Labels,
    Names,
    Nullable,
    Real,
    bind,
    brief,
    fail,
)

__all__ = ["Spec", "check_object", "checks", "derived_attributes"]

# What set_output stores on a transformer: {"transform": "default" | "pandas" | "polars"}.
_OUTPUT_CONFIG = "_sklearn_output_config"

#: Largest polynomial degree and output width a PolynomialFeatures may declare (the
#: transform allocates a row of that width; honest models stay far below).
_MAX_POLY_DEGREE = 100
_MAX_POLY_OUTPUT = 2**24
#: Largest degree an SVC may declare (libsvm raises its polynomial kernel to this power).
_MAX_SVC_DEGREE = 100
_SVC_KERNELS = ("linear", "poly", "rbf", "sigmoid")


# --- attribute kinds (the protocol of ``utils.fitted_spec``: ``check(value, symbols)``) ---

@dataclass(frozen=True)
class Ints:
    """An integer array of the given shape with values in [low, high) (``high`` an int or a
    symbol); ``dtype`` pins the exact dtype compiled code reads."""

    shape: tuple
    low: int | None = 0
    high: int | str | None = None
    dtype: str | None = None

    def check(self, value, symbols):
        if not (type(value) is np.ndarray and value.dtype.kind in "iu"):
            fail(f"must be an integer array, got {brief(value)}")
        if self.dtype and value.dtype != np.dtype(self.dtype):
            fail(f"must have dtype {self.dtype}, got {value.dtype}")
        bind(symbols, self.shape, value.shape)
        high = symbols.get(self.high, self.high) if isinstance(self.high, str) else self.high
        if value.size and self.low is not None and value.min() < self.low:
            fail(f"holds {value.min()}, expected values >= {self.low}")
        if value.size and high is not None and value.max() >= high:
            fail(f"holds {value.max()}, expected values below {high}")


@dataclass(frozen=True)
class Flag:
    """A bool (Python or numpy)."""

    def check(self, value, symbols):
        if not isinstance(value, bool | np.bool_):
            fail(f"must be a bool, got {brief(value)}")


@dataclass(frozen=True)
class OneOf:
    """One of the given plain values (strings, None)."""

    values: tuple

    def check(self, value, symbols):
        if not any(type(value) is type(v) and value == v for v in self.values):
            fail(f"must be one of {list(self.values)}, got {brief(value)}")


@dataclass(frozen=True)
class InstanceOf:
    """An object of exactly one of the classes named ``module.qualname``."""

    names: tuple

    def check(self, value, symbols):
        name = f"{type(value).__module__}.{type(value).__qualname__}"
        if name not in self.names:
            fail(f"must be a {' or '.join(n.rsplit('.', 1)[1] for n in self.names)}, got "
                  f"{brief(value)}")


@dataclass(frozen=True)
class AnyOf:
    """The first of ``kinds`` that accepts the value (its symbols are kept)."""

    kinds: tuple

    def check(self, value, symbols):
        problems = []
        for kind in self.kinds:
            trial = dict(symbols)
            try:
                kind.check(value, trial)
            except ValueError as exc:
                problems.append(str(exc))
                continue
            symbols.update(trial)
            return
        fail(" or ".join(problems))


@dataclass(frozen=True)
class Uniques:
    """Sorted unique values, as ``np.unique`` returns them: a non-empty 1-D array of
    numbers (finite; NaN or None allowed last when ``nan_last``) or of str."""

    nan_last: bool = False

    def check(self, value, symbols):
        if not (type(value) is np.ndarray and value.ndim == 1 and len(value)):
            fail(f"must be a non-empty 1-D array, got {brief(value)}")
        _check_sorted_unique(value, self.nan_last)


def _check_sorted_unique(value, nan_last=False):
    kind = value.dtype.kind
    if kind == "O":
        items = value.tolist()
        if nan_last and items and (items[-1] is None or _is_nan(items[-1])):
            items = items[:-1]
        if not (all(type(v) is str for v in items) or all(
                isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
                and np.isfinite(v) for v in items)):
            fail("must hold only str, or only finite numbers, when of dtype object")
        if any(a >= b for a, b in zip(items, items[1:], strict=False)):
            fail("must be sorted and unique")
        return
    if kind not in "biufU":
        fail(f"must be of a bool, int, float or str dtype, got {value.dtype}")
    if kind == "f":
        finite = np.isfinite(value)
        n_nan = int(np.isnan(value).sum())
        if not (finite.all() or (nan_last and n_nan == 1 and np.isnan(value[-1])
                                 and finite[:-1].all())):
            fail("holds NaN or infinite values" + (
                " (NaN is allowed only as the last category)" if nan_last else ""))
        value = value[finite]
    if len(value) > 1 and not np.all(value[1:] > value[:-1]):
        fail("must be sorted and unique")


def _is_nan(value):
    return isinstance(value, float | np.floating) and value != value


# --- the table -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """What a fitted instance of one class holds.

    ``fitted``: the attributes ``fit`` sets, checked in this order (the first to fix a
    symbol binds it); ``optional`` those among them ``fit`` may leave out. An instance with
    none of them is unfitted (only its parameters are checked). ``relations`` check what the
    shapes cannot express; ``params`` checks parameters beyond ``_parameter_constraints``;
    ``derived`` names attributes never read from a file but rebuilt by ``rebuild`` once the
    rest is checked. ``make`` builds a default instance, whose attributes other than the
    parameters (``__init__`` may set some) a file must hold unchanged (False: the class
    takes required arguments and sets nothing else). ``node`` is the skops node kind that
    writes the class.
    """

    fitted: dict = field(default_factory=dict)
    optional: frozenset = frozenset()
    relations: tuple = ()
    params: object = None
    derived: frozenset = frozenset()
    rebuild: object = None
    make: object = None
    node: str = "ObjectNode"


_FEATURES = {"n_features_in_": Count("d", minimum=1), "feature_names_in_": Names()}
_NAMES = frozenset({"feature_names_in_"})


def _spec(fitted, optional=(), **kwargs):
    return Spec({**_FEATURES, **fitted}, optional=_NAMES | frozenset(optional), **kwargs)


def _need(condition, attribute, message):
    if not condition:
        fail(f"{attribute!r} {message}")


def _same_labels(a, b):
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.tolist() == b.tolist())


# --- preprocessing -------------------------------------------------------------------------

def _standard_scaler(model, symbols):
    _need(not model.with_mean or model.mean_ is not None, "mean_", "is None but with_mean")
    _need(not model.with_std or model.scale_ is not None, "scale_", "is None but with_std")


def _robust_scaler(model, symbols):
    _need(not model.with_centering or model.center_ is not None, "center_",
          "is None but with_centering")
    _need(not model.with_scaling or model.scale_ is not None, "scale_",
          "is None but with_scaling")


def _nonnegative(name):
    def relation(model, symbols):
        _need(np.all(getattr(model, name) >= 0), name, "holds negative values")
    return relation


def _quantiles(model, symbols):
    refs, quantiles = model.references_, model.quantiles_
    _need(np.all((refs >= 0) & (refs <= 1)) and np.all(np.diff(refs) >= 0), "references_",
          "must rise from 0 to 1")
    _need(np.all(np.diff(quantiles, axis=0) >= 0), "quantiles_",
          "must not decrease along each column")


def _power(model, symbols):
    scaler = getattr(model, "_scaler", None)
    _need((scaler is not None) == bool(model.standardize), "_scaler",
          "must be present exactly when standardize")
    if scaler is not None:
        _need(getattr(scaler, "n_features_in_", None) == symbols["d"], "_scaler",
              f"must be a StandardScaler fitted on {symbols['d']} features")


def _bins(model, symbols):
    edges, n_bins = model.bin_edges_, model.n_bins_
    _need(type(edges) is np.ndarray and edges.dtype == object and edges.shape == n_bins.shape,
          "bin_edges_", f"must be an object array of {len(n_bins)} arrays")
    for j, (edge, n) in enumerate(zip(edges.tolist(), n_bins.tolist(), strict=True)):
        _need(type(edge) is np.ndarray and edge.dtype.kind == "f" and edge.shape == (n + 1,)
              and not np.isnan(edge).any() and np.all(np.diff(edge) >= 0),
              "bin_edges_", f"[{j}] must be {n + 1} non-decreasing bin edges (n_bins_[{j}] + 1)")
    encoder = getattr(model, "_encoder", None)
    _need((encoder is not None) == (model.encode != "ordinal"), "_encoder",
          "must be present exactly when encode is not 'ordinal'")
    if encoder is not None:
        cats = getattr(encoder, "categories_", None)
        _need(isinstance(cats, list) and len(cats) == len(n_bins) and all(
            np.array_equal(c, np.arange(n)) for c, n in zip(cats, n_bins.tolist(), strict=True)),
            "_encoder", "must encode the bins 0 .. n_bins_ - 1 of each feature")


def _polynomial(model, symbols):
    degree = model.degree
    low, high = (0, degree) if isinstance(degree, numbers.Integral) else tuple(degree)
    _need(_is_index(low) and _is_index(high) and low <= high <= _MAX_POLY_DEGREE, "degree",
          f"must be an int or (min, max) ints up to {_MAX_POLY_DEGREE}, got {degree!r}")
    _need((model._min_degree, model._max_degree) == (low, high), "_max_degree",
          f"and _min_degree must be ({low}, {high}) for degree={degree!r}")
    count = functools.partial(type(model)._num_combinations, n_features=symbols["d"],
                              max_degree=high, interaction_only=model.interaction_only,
                              include_bias=model.include_bias)
    n_full, n_out = count(min_degree=0), count(min_degree=low)
    _need(model._n_out_full == n_full and model.n_output_features_ == n_out,
          "n_output_features_", f"and _n_out_full must be {n_out} and {n_full}")
    _need(n_full <= _MAX_POLY_OUTPUT, "n_output_features_",
          f"is {n_full}, more than {_MAX_POLY_OUTPUT}")


def _imputer(model, symbols):
    stats = model.statistics_
    _need(stats.dtype.kind in "biuf" or (stats.dtype == object and all(
        isinstance(v, str | numbers.Real) for v in stats.tolist())), "statistics_",
        f"must hold numbers or str, got dtype {stats.dtype}")
    _need(model.indicator_ is None, "indicator_", "must be None (add_indicator=False)")
    for name in ("_fit_dtype", "_fill_dtype"):
        value = getattr(model, name, np.dtype(float))
        _need(isinstance(value, np.dtype) and value.kind in "biuf", name,
              f"must be a numeric dtype, got {brief(value)}")


def _identity_function(model):
    for name in ("func", "inverse_func", "kw_args", "inv_kw_args"):
        _need(getattr(model, name) is None, name,
              "must be None: model files hold only the identity FunctionTransformer "
              "(a ColumnTransformer's passthrough)")
    _need(model.feature_names_out in (None, "one-to-one"), "feature_names_out",
          "must be None or 'one-to-one'")


# --- encoders ------------------------------------------------------------------------------

def _categories(model, symbols):
    cats = model.categories_
    _need(isinstance(cats, list) and len(cats) == symbols["d"], "categories_",
          f"must be a list of {symbols['d']} arrays, got {brief(cats)}")
    for j, c in enumerate(cats):
        try:
            Uniques(nan_last=True).check(c, {})
        except ValueError as exc:
            fail(f"'categories_' [{j}] {exc}")


def _encoder_dtype(model):
    value = model.dtype
    ok = isinstance(value, str | np.dtype) or (isinstance(value, type) and issubclass(
        value, np.generic | float | int))
    _need(ok and np.dtype(value).kind in "biuf" and np.dtype(value).subdtype is None, "dtype",
          f"must be a numeric dtype, got {brief(value)}")


def _infrequent(model, symbols, missing):
    """``_infrequent_indices`` in range, and the mappings derived from them as ``fit``
    derives them."""
    on = model._infrequent_enabled
    derived = copy.copy(model)
    derived._check_infrequent_enabled()
    _need(on is derived._infrequent_enabled, "_infrequent_enabled",
          f"must be {derived._infrequent_enabled} for min_frequency={model.min_frequency!r} "
          f"and max_categories={model.max_categories!r}")
    if not on:
        return
    indices = model._infrequent_indices
    _need(isinstance(indices, list) and len(indices) == symbols["d"], "_infrequent_indices",
          f"must be a list of {symbols['d']} entries")
    expected = []
    for j, (idx, cats) in enumerate(zip(indices, model.categories_, strict=True)):
        n = len(cats) - (1 if j in missing else 0)
        if idx is not None:
            Ints(("n_infrequent",), high=n).check(idx, {})
            _need(idx.size and np.all(np.diff(idx) > 0), "_infrequent_indices",
                  f"[{j}] must be sorted unique category indices")
        expected.append(None if idx is None else _infrequent_mapping(idx, n))
    mappings = model._default_to_infrequent_mappings
    _need(isinstance(mappings, list) and len(mappings) == len(expected) and all(
        (a is None and b is None) or (isinstance(a, np.ndarray) and b is not None
                                      and np.array_equal(a, b))
        for a, b in zip(mappings, expected, strict=True)),
        "_default_to_infrequent_mappings", "must be derived from _infrequent_indices")


def _infrequent_mapping(infrequent, n_cats):
    # As OrdinalEncoder/OneHotEncoder._fit_infrequent_category_mapping derives it.
    mapping = np.empty(n_cats, dtype=np.int64)
    n_frequent = n_cats - infrequent.size
    mapping[infrequent] = n_frequent
    mapping[np.setdiff1d(np.arange(n_cats), infrequent)] = np.arange(n_frequent)
    return mapping


def _same_drop(a, b):
    if a is None or b is None:
        return a is None and b is None
    return (isinstance(a, np.ndarray) and a.dtype == object and a.shape == b.shape
            and all(x is None if y is None else _is_index(x) and x == y
                    for x, y in zip(a.tolist(), b.tolist(), strict=True)))


def _one_hot(model, symbols):
    _categories(model, symbols)
    _infrequent(model, symbols, {})
    derived = copy.copy(model)
    derived._set_drop_idx()
    for name in ("drop_idx_", "_drop_idx_after_grouping"):
        _need(_same_drop(getattr(model, name), getattr(derived, name)), name,
              "must be derived from drop and categories_ as fit derives it")
    outs = model._n_features_outs
    _need(isinstance(outs, list) and outs == derived._compute_n_features_outs(),
          "_n_features_outs", "must be derived from categories_, drop and the infrequent "
          "categories as fit derives it")


def _ordinal(model, symbols):
    _categories(model, symbols)
    missing = model._missing_indices
    expected = {j: len(c) - 1 for j, c in enumerate(model.categories_)
                if len(c) and _is_nan(c[-1])}
    _need(isinstance(missing, dict) and missing == expected, "_missing_indices",
          f"must be {expected} (the NaN category of each feature)")
    _infrequent(model, symbols, missing)


# --- linear models -------------------------------------------------------------------------

def _coef_rows(model, symbols):
    """Rows of a linear classifier's ``coef_``: one per class, one for two classes (two
    with the Crammer-Singer formulation)."""
    k = symbols["k"]
    rows = 1 if model.coef_.ndim == 1 else model.coef_.shape[0]
    allowed = {1, 2} if k == 2 and getattr(model, "multi_class", None) == "crammer_singer" \
        else {1 if k == 2 else k}
    _need(rows in allowed, "coef_", f"has {rows} rows, expected {min(allowed)} for {k} classes")
    intercept = model.intercept_
    if isinstance(intercept, np.ndarray):
        _need(intercept.shape == (rows,), "intercept_",
              f"has shape {intercept.shape}, expected ({rows},)")


def _targets(model, symbols):
    """A linear regressor: ``coef_`` (d,) with a scalar or (1,) intercept, or (t, d) with
    (t,)."""
    coef, intercept = model.coef_, model.intercept_
    if coef.ndim == 2:
        _need(isinstance(intercept, np.ndarray) and intercept.shape == coef.shape[:1]
              or (_scalar(intercept) and not model.fit_intercept), "intercept_",
              f"must have shape ({coef.shape[0]},) for coef_ of shape {coef.shape}")
    else:
        _need(_scalar(intercept) or (isinstance(intercept, np.ndarray)
                                     and intercept.shape == (1,)),
              "intercept_", f"must be a number for coef_ of shape {coef.shape}")


def _scalar(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _label_binarizer(model, symbols):
    binarizer = model._label_binarizer
    _need(_same_labels(getattr(binarizer, "classes_", None), model.classes_),
          "_label_binarizer", "must hold the classes_ of the classifier")
    _need(getattr(binarizer, "y_type_", None) in ("binary", "multiclass"), "_label_binarizer",
          "must be fitted on binary or multiclass targets")


def _sgd_loss(model, symbols):
    loss = getattr(model, "_loss_function_", None)
    if loss is None:
        return
    expected = type(model).loss_functions.get(model.loss, (None,))[0]
    _need(type(loss) is expected, "_loss_function_",
          f"must be a {getattr(expected, '__name__', expected)} for loss={model.loss!r}")


def _sgd_average(model, symbols):
    names = ("_standard_coef", "_standard_intercept", "_average_coef", "_average_intercept")
    present = [n for n in names if n in vars(model)]
    _need(not present or len(present) == len(names), present[0] if present else names[0],
          f"comes with {', '.join(names)}")
    for name in present:
        reference = model.coef_ if "coef" in name else model.intercept_
        value = getattr(model, name)
        _need(type(value) is np.ndarray and value.size == np.size(reference), name,
              f"must have the {np.size(reference)} values of its public counterpart")


# --- SVC: what libsvm reads ----------------------------------------------------------------

def _svc_params(model):
    _need(isinstance(model.kernel, str) and model.kernel in _SVC_KERNELS, "kernel",
          f"must be one of {list(_SVC_KERNELS)} (a callable or precomputed kernel cannot be "
          f"stored), got {brief(model.kernel)}")
    # libsvm reads degree as a C int, and the polynomial kernel raises to that power.
    _need(_is_index(model.degree) and model.degree <= _MAX_SVC_DEGREE, "degree",
          f"must be an int from 0 to {_MAX_SVC_DEGREE}, got {brief(model.degree)}")


@dataclass(frozen=True)
class _PairLabels:
    """``SVC.classes_``: :class:`Labels` binding k, and m = k (k - 1) / 2, the number of
    one-vs-one problems, so that every per-pair array is measured against the classes."""

    def check(self, value, symbols):
        Labels().check(value, symbols)
        bind(symbols, ("m",), (symbols["k"] * (symbols["k"] - 1) // 2,))


def _dense64(value, attribute, shape):
    _need(type(value) is np.ndarray and value.dtype == np.float64 and value.shape == shape
          and value.flags.c_contiguous, attribute,
          f"must be a C-contiguous float64 array of shape {shape}, got {brief(value)}")
    _need(np.isfinite(value).all(), attribute, "holds NaN or infinite values")


def _svc_counts(model, symbols):
    k, n_sv = symbols["k"], symbols["n_sv"]
    counts = model._n_support
    _need(n_sv >= 1, "support_vectors_", "holds no support vector")
    _need(counts.shape == (k,) and int(counts.sum()) == n_sv and np.all(counts <= n_sv),
          "_n_support", f"must count the {n_sv} support vectors of each of the {k} classes, "
          f"got {counts.tolist()[:10]}")
    n_train, d = model.shape_fit_
    _need(n_train >= n_sv and d == symbols["d"], "shape_fit_",
          f"must be (training rows >= {n_sv}, {symbols['d']}), got {model.shape_fit_}")
    _need(model.support_.size == 0 or model.support_.max() < n_train, "support_",
          f"holds a row index not below the {n_train} training rows")


def _svc_vectors(model, symbols):
    k, n_sv, d = symbols["k"], symbols["n_sv"], symbols["d"]
    vectors, dual = model.support_vectors_, model._dual_coef_
    if not model._sparse:
        _dense64(vectors, "support_vectors_", (n_sv, d))
        _dense64(dual, "_dual_coef_", (k - 1, n_sv))
        return
    _need(sp.issparse(vectors) and vectors.format == "csr" and vectors.dtype == np.float64
          and vectors.shape == (n_sv, d) and vectors.indices.dtype == np.int32
          and vectors.indptr.dtype == np.int32, "support_vectors_",
          f"must be a float64 CSR matrix of shape ({n_sv}, {d}) with int32 indices, got "
          f"{brief(vectors)}")
    rows = np.repeat(np.arange(n_sv), np.diff(vectors.indptr))
    same_row = rows[1:] == rows[:-1]
    _need(np.all(vectors.indices[1:][same_row] > vectors.indices[:-1][same_row]),
          "support_vectors_", "must have sorted column indices in each row")
    _need(sp.issparse(dual) and dual.format == "csr" and dual.shape == (k - 1, n_sv)
          and dual.dtype == np.float64 and dual.data.shape == ((k - 1) * n_sv,)
          and np.array_equal(dual.indices, np.tile(np.arange(n_sv), k - 1)),
          "_dual_coef_", f"must be a dense-patterned float64 CSR matrix of shape "
          f"({k - 1}, {n_sv}), got {brief(dual)}")


def _svc_public(model, symbols):
    k, n_sv, m = symbols["k"], symbols["n_sv"], symbols["m"]
    _dense64(model._intercept_, "_intercept_", (m,))
    _svc_same_as_private(model, k, n_sv)
    a, b = model._probA, model._probB
    _need(a.shape == b.shape and a.shape in ((0,), (m,)), "_probA",
          f"and _probB must both hold 0 or {m} values")
    _need(a.dtype == np.float64 and b.dtype == np.float64, "_probA", "and _probB must be float64")
    probability = getattr(model, "_effective_probability", model.probability is True)
    _need(not probability or a.shape == (m,), "_probA",
          f"must hold {m} values when probabilities are enabled")
    _need(model.fit_status_ in (0, 1), "fit_status_", "must be 0 or 1")
    gamma = model._gamma
    _need(_scalar(gamma) and np.isfinite(gamma) and gamma >= 0, "_gamma",
          f"must be a finite number >= 0, got {brief(gamma)}")
    _need(not _scalar(model.gamma) or gamma == model.gamma, "_gamma",
          f"must equal gamma={model.gamma!r}")


def _svc_same_as_private(model, k, n_sv):
    """``intercept_`` and ``dual_coef_`` as ``fit`` derives them from the private arrays
    predict reads (negated for two classes), so that what a model shows is what it
    computes."""
    sign, negated = (-1.0, "minus ") if k == 2 else (1.0, "")
    _need(np.array_equal(model.intercept_, sign * model._intercept_), "intercept_",
          f"must equal {negated}_intercept_, from which predict computes")
    public, private = model.dual_coef_, model._dual_coef_
    if model._sparse:
        _need(sp.issparse(public) and public.shape == (k - 1, n_sv)
              and (public != sign * private).nnz == 0, "dual_coef_",
              f"must be a CSR matrix equal to {negated}_dual_coef_, from which predict "
              f"computes, got {brief(public)}")
        return
    _dense64(public, "dual_coef_", (k - 1, n_sv))
    _need(np.array_equal(public, sign * private), "dual_coef_",
          f"must equal {negated}_dual_coef_, from which predict computes")


_SVC_PROBE_ROWS = 16


def _svc_finite(model, symbols):
    """Finite decision values on the first support vectors, rows an honest model computes
    on without overflow (a kernel's ``gamma``, ``coef0`` and ``degree`` can overflow
    where a zero probe row does not); run once the state libsvm reads has passed."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        values = model.decision_function(model.support_vectors_[:_SVC_PROBE_ROWS])
    _need(np.isfinite(values).all(), "support_vectors_",
          f"get non-finite decision values: the {model.kernel!r} kernel with "
          f"gamma={model._gamma!r}, coef0={model.coef0!r}, degree={model.degree!r} overflows "
          "on the model's own support vectors")


# --- containers ----------------------------------------------------------------------------

def _pipeline_params(model):
    _need(isinstance(model.steps, list) and model.steps and all(
        isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str) for s in model.steps),
        "steps", "must be a non-empty list of (name, estimator) pairs")
    model._validate_steps()


def _column_params(model):
    _need(isinstance(model.transformers, list) and all(
        isinstance(t, tuple) and len(t) == 3 and isinstance(t[0], str)
        for t in model.transformers), "transformers",
        "must be a list of (name, transformer, columns) triples")


def _columns(model, symbols):
    from sklearn.utils._indexing import _get_column_indices

    entries, remainder = model.transformers_, model._remainder
    _need(isinstance(remainder, tuple) and len(remainder) == 3 and isinstance(remainder[0], str),
          "_remainder", "must be a (name, transformer, columns) triple")
    _need(isinstance(entries, list) and all(
        isinstance(e, tuple) and len(e) == 3 and isinstance(e[0], str) for e in entries),
        "transformers_", "must be a list of (name, transformer, columns) triples")
    names = [e[0] for e in entries]
    _need(len(set(names)) == len(names), "transformers_", "must name each entry once")
    _need(isinstance(model._columns, list) and len(model._columns) == len(model.transformers),
          "_columns", f"must hold the columns of the {len(model.transformers)} transformers")
    keys = sorted(set(names) | {remainder[0]})
    indices, outputs = model._transformer_to_input_indices, model.output_indices_
    _need(isinstance(indices, dict) and sorted(indices) == keys,
          "_transformer_to_input_indices", f"must map exactly the names {keys}")
    _need(isinstance(outputs, dict) and sorted(outputs) == keys and all(
        isinstance(s, slice) and _is_index(s.start) and _is_index(s.stop) and s.step is None
        for s in outputs.values()), "output_indices_", f"must map the names {keys} to slices")
    frame = _empty_frame(model, symbols["d"])
    for name, transformer, columns in entries:
        _column_entry(name, transformer, _get_column_indices(frame, columns), indices[name])


def _column_entry(name, transformer, found, listed):
    found = [int(i) for i in found]
    _need(isinstance(listed, list) and found == listed, "_transformer_to_input_indices",
          f"[{name!r}] must list the columns {found} its selection picks")
    if isinstance(transformer, str):
        _need(transformer in ("drop", "passthrough"), "transformers_",
              f"[{name!r}] must be an estimator, 'drop' or 'passthrough'")
        return
    _need(hasattr(transformer, "transform"), "transformers_", f"[{name!r}] cannot transform")
    width = getattr(transformer, "n_features_in_", len(found))
    _need(width == len(found), "transformers_",
          f"[{name!r}] is fitted on {width} features but selects {len(found)}")


def _is_index(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _empty_frame(model, d):
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return np.empty((0, d))
    import pandas as pd

    return pd.DataFrame(columns=list(names))


def _calibrated(model, symbols):
    pieces = model.calibrated_classifiers_
    _need(isinstance(pieces, list) and pieces and (model.ensemble is not False
                                                   or len(pieces) == 1),
          "calibrated_classifiers_", "must be a non-empty list (one entry without ensemble)")
    for piece in pieces:
        _need(type(piece).__name__ == "_CalibratedClassifier"
              and _same_labels(getattr(piece, "classes", None), model.classes_)
              and getattr(piece, "method", None) == model.method,
              "calibrated_classifiers_", "must be calibrations of these classes_ and method")


_CALIBRATORS = {"sigmoid": "sklearn.calibration._SigmoidCalibration",
                "isotonic": "sklearn.isotonic.IsotonicRegression",
                "temperature": "sklearn.calibration._TemperatureScaling"}


def _calibration(model, symbols):
    estimator, calibrators = model.estimator, model.calibrators
    seen = getattr(estimator, "classes_", None)
    _need(isinstance(seen, np.ndarray) and seen.ndim == 1 and set(seen.tolist())
          <= set(model.classes.tolist()), "estimator",
          "must be a fitted classifier whose classes_ are among classes")
    # One calibrator per column of the estimator's scores (one column for two classes).
    expected = 1 if model.method == "temperature" or len(seen) == 2 else len(seen)
    _need(isinstance(calibrators, list) and len(calibrators) == expected, "calibrators",
          f"must be a list of {expected} calibrators")
    for calibrator in calibrators:
        InstanceOf((_CALIBRATORS[model.method],)).check(calibrator, symbols)


def _isotonic(model, symbols):
    x = model.X_thresholds_
    _need(np.all(np.diff(x) >= 0), "X_thresholds_", "must not decrease")
    _need(model.X_min_ <= model.X_max_, "X_min_", "must not exceed X_max_")


def _rebuild_isotonic(model):
    model._build_f(model.X_thresholds_, model.y_thresholds_)


# --- the table, by class -------------------------------------------------------------------

def _preprocessing():
    from sklearn import preprocessing as pp
    from sklearn.feature_selection import VarianceThreshold
    from sklearn.impute import SimpleImputer

    floats_d = Floats(("d",))
    nullable = Nullable(floats_d)
    scale = Nullable(Floats(("d",), positive=True))
    return {
        pp.StandardScaler: _spec({"n_samples_seen_": INFO, "mean_": nullable, "var_": nullable,
                                  "scale_": scale}, relations=(_standard_scaler,)),
        pp.MinMaxScaler: _spec({"n_samples_seen_": INFO, "scale_": floats_d, "min_": floats_d,
                                "data_min_": floats_d, "data_max_": floats_d,
                                "data_range_": floats_d}),
        pp.MaxAbsScaler: _spec({"n_samples_seen_": INFO, "max_abs_": floats_d,
                                "scale_": Floats(("d",), positive=True)}),
        pp.RobustScaler: _spec({"center_": nullable, "scale_": scale},
                               relations=(_robust_scaler,)),
        pp.Normalizer: _spec({}),
        pp.Binarizer: _spec({}),
        pp.FunctionTransformer: _spec({}, optional={"n_features_in_"},
                                      params=_identity_function),
        pp.QuantileTransformer: _spec({"references_": Floats(("q",)),
                                       "quantiles_": Floats(("q", "d")),
                                       "n_quantiles_": Count("q", minimum=1)},
                                      relations=(_quantiles,)),
        pp.PowerTransformer: _spec({"lambdas_": floats_d,
                                    "_scaler": InstanceOf((_qualname(pp.StandardScaler),))},
                                   optional={"_scaler"}, relations=(_power,)),
        pp.KBinsDiscretizer: _spec({"n_bins_": Ints(("d",), low=1),
                                    "bin_edges_": INFO_OBJECTS,
                                    "_encoder": InstanceOf((_qualname(pp.OneHotEncoder),))},
                                   optional={"_encoder"}, relations=(_bins,)),
        pp.PolynomialFeatures: _spec({"_min_degree": Count(), "_max_degree": Count(),
                                      "n_output_features_": Count(), "_n_out_full": Count()},
                                     relations=(_polynomial,)),
        pp.OneHotEncoder: _spec({"categories_": INFO_OBJECTS, "_infrequent_enabled": Flag(),
                                 "drop_idx_": INFO_OBJECTS,
                                 "_drop_idx_after_grouping": INFO_OBJECTS,
                                 "_n_features_outs": INFO_OBJECTS,
                                 "_infrequent_indices": INFO_OBJECTS,
                                 "_default_to_infrequent_mappings": INFO_OBJECTS},
                                optional={"_infrequent_indices",
                                          "_default_to_infrequent_mappings"},
                                params=_encoder_dtype, relations=(_one_hot,)),
        pp.OrdinalEncoder: _spec({"categories_": INFO_OBJECTS, "_infrequent_enabled": Flag(),
                                  "_missing_indices": INFO_OBJECTS,
                                  "_infrequent_indices": INFO_OBJECTS,
                                  "_default_to_infrequent_mappings": INFO_OBJECTS},
                                 optional={"_infrequent_indices",
                                           "_default_to_infrequent_mappings"},
                                 params=_encoder_dtype, relations=(_ordinal,)),
        pp.LabelEncoder: Spec({"classes_": Uniques()}),
        pp.LabelBinarizer: Spec({"classes_": Uniques(), "y_type_": OneOf(
            ("binary", "multiclass", "multilabel-indicator")), "sparse_input_": Flag()}),
        SimpleImputer: _spec({"statistics_": AnyOf((Floats(("d",)), _ObjectVector("d"),
                                                    _NanFloats("d"))),
                              "indicator_": INFO_OBJECTS, "_fit_dtype": INFO_OBJECTS,
                              "_fill_dtype": INFO_OBJECTS},
                             optional={"_fill_dtype"}, relations=(_imputer,)),
        VarianceThreshold: _spec({"variances_": floats_d},
                                 relations=(_nonnegative("variances_"),)),
    }


def _decomposition():
    from sklearn.decomposition import PCA, TruncatedSVD

    components = {"components_": Floats(("c", "d")), "explained_variance_": Floats(("c",)),
                  "explained_variance_ratio_": INFO, "singular_values_": INFO}
    return {
        PCA: _spec({**components, "n_components_": Count("c", minimum=1),
                    "mean_": Floats(("d",)), "noise_variance_": INFO, "n_samples_": Count(),
                    "_fit_svd_solver": OneOf(("full", "arpack", "randomized",
                                              "covariance_eigh"))},
                   relations=(_nonnegative("explained_variance_"),)),
        TruncatedSVD: _spec(components),
    }


def _linear():
    from sklearn import linear_model as lm
    from sklearn.preprocessing import LabelBinarizer
    from sklearn.svm import LinearSVC, LinearSVR

    classes = {"classes_": Labels()}
    clf_coef = {"coef_": AnyOf((Floats(("r", "d")), Floats(("d",)))),
                "intercept_": AnyOf((Floats(("r",)), Real()))}
    reg_coef = {"coef_": AnyOf((Floats(("d",)), Floats(("t", "d")))),
                "intercept_": AnyOf((Real(), Floats(("t",))))}
    ridge = {"n_iter_": INFO, "solver_": INFO}
    coordinate = {"n_iter_": INFO, "dual_gap_": INFO}
    losses = sorted({_qualname(entry[0]) for entry in
                     [*lm.SGDClassifier.loss_functions.values(),
                      *lm.SGDRegressor.loss_functions.values()]})
    sgd = {"t_": Real(), "n_iter_": INFO, "_loss_function_": InstanceOf(tuple(losses)),
           "_standard_coef": INFO, "_standard_intercept": INFO, "_average_coef": INFO,
           "_average_intercept": INFO}
    averages = {"_standard_coef", "_standard_intercept", "_average_coef", "_average_intercept"}
    return {
        lm.LogisticRegression: _spec({**classes, **clf_coef, "n_iter_": INFO},
                                     relations=(_coef_rows,)),
        LinearSVC: _spec({**classes, **clf_coef, "n_iter_": INFO}, relations=(_coef_rows,)),
        lm.RidgeClassifier: _spec({"_label_binarizer": InstanceOf((_qualname(LabelBinarizer),)),
                                   **classes, **clf_coef, **ridge},
                                  relations=(_coef_rows, _label_binarizer)),
        lm.SGDClassifier: _spec({**classes, **clf_coef, "_expanded_class_weight": Floats(("k",)),
                                 **sgd}, optional=averages,
                                relations=(_coef_rows, _sgd_loss, _sgd_average)),
        lm.SGDRegressor: _spec({"coef_": Floats(("d",)), "intercept_": Floats((1,)), **sgd},
                               optional=averages | {"_loss_function_"},
                               relations=(_sgd_loss, _sgd_average)),
        LinearSVR: _spec({**reg_coef, "n_iter_": INFO}, relations=(_targets,)),
        lm.LinearRegression: _spec({**reg_coef, "rank_": INFO, "singular_": INFO},
                                   relations=(_targets,)),
        lm.Ridge: _spec({**reg_coef, **ridge}, relations=(_targets,)),
        lm.Lasso: _spec({**reg_coef, **coordinate}, relations=(_targets,)),
        lm.ElasticNet: _spec({**reg_coef, **coordinate}, relations=(_targets,)),
    }


def _svm_and_calibration():
    from sklearn import calibration
    from sklearn.isotonic import IsotonicRegression
    from sklearn.svm import SVC

    m = Floats(("m",))
    return {
        SVC: _spec({"classes_": _PairLabels(), "class_weight_": Floats(("k",)),
                    "_sparse": Flag(),
                    "_effective_probability": Flag(), "_gamma": INFO,
                    "support_vectors_": _Rows("n_sv"), "support_": Ints(("n_sv",),
                                                                           dtype="int32"),
                    "_n_support": Ints(("k",), dtype="int32"), "dual_coef_": INFO_OBJECTS,
                    "_dual_coef_": INFO_OBJECTS, "intercept_": m, "_intercept_": m,
                    "_probA": Floats(("n_probA",)), "_probB": Floats(("n_probB",)),
                    "fit_status_": Count(), "_num_iter": Ints(("m",)), "n_iter_": Ints(("m",)),
                    "shape_fit_": _Shape()},
                   optional={"_effective_probability"}, params=_svc_params,
                   relations=(_svc_counts, _svc_vectors, _svc_public, _svc_finite)),
        calibration.CalibratedClassifierCV: _spec(
            {"classes_": Labels(), "calibrated_classifiers_": INFO_OBJECTS},
            optional={"n_features_in_"}, relations=(_calibrated,)),
        calibration._CalibratedClassifier: Spec(
            {"estimator": INFO_OBJECTS, "calibrators": INFO_OBJECTS, "classes": Labels(),
             "method": OneOf(tuple(_CALIBRATORS))}, relations=(_calibration,),
            make=False),
        calibration._SigmoidCalibration: Spec({"a_": Real(), "b_": Real()}),
        calibration._TemperatureScaling: Spec({"beta_": Real(positive=True)}),
        IsotonicRegression: Spec({"X_min_": Real(), "X_max_": Real(),
                                  "X_thresholds_": Floats(("n",)),
                                  "y_thresholds_": Floats(("n",)), "increasing_": Flag()},
                                 relations=(_isotonic,), derived=frozenset({"f_"}),
                                 rebuild=_rebuild_isotonic),
    }


def _containers():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    return {
        Pipeline: Spec(params=_pipeline_params, make=False),
        ColumnTransformer: _spec({"_columns": INFO_OBJECTS,
                                  "_transformer_to_input_indices": INFO_OBJECTS,
                                  "_remainder": INFO_OBJECTS, "sparse_output_": Flag(),
                                  "transformers_": INFO_OBJECTS,
                                  "output_indices_": INFO_OBJECTS},
                                 params=_column_params, relations=(_columns,), make=False),
    }


def _losses():
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    classes = {entry[0] for entry in [*SGDClassifier.loss_functions.values(),
                                      *SGDRegressor.loss_functions.values()]}
    # Held by an SGD model for partial_fit, which rebuilds it; no prediction reads it.
    return {cls: Spec(make=False, node="LossNode") for cls in classes}


def _qualname(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclass(frozen=True)
class _Anything:
    """A value whose structure a relation of its owner checks (nested estimators, lists of
    arrays, object arrays); here only that it is present."""

    def check(self, value, symbols):
        return


INFO_OBJECTS = _Anything()


@dataclass(frozen=True)
class _Rows:
    """A dense or CSR matrix; binds its row count (``SVC.support_vectors_``, whose dtype
    and layout a relation checks against ``_sparse``)."""

    symbol: str

    def check(self, value, symbols):
        if not (type(value) is np.ndarray or sp.issparse(value)) or value.ndim != 2:
            fail(f"must be a 2-D array or CSR matrix, got {brief(value)}")
        bind(symbols, (self.symbol,), value.shape[:1])


@dataclass(frozen=True)
class _Shape:
    """``shape_fit_``: a tuple of two non-negative ints."""

    def check(self, value, symbols):
        if not (isinstance(value, tuple) and len(value) == 2
                and all(_is_index(v) for v in value)):
            fail(f"must be a tuple of two non-negative ints, got {brief(value)}")


@dataclass(frozen=True)
class _ObjectVector:
    """A 1-D object array of numbers and str (``SimpleImputer.statistics_`` with
    strategy='constant' or 'most_frequent' on mixed input)."""

    symbol: str

    def check(self, value, symbols):
        if not (type(value) is np.ndarray and value.dtype == object and value.ndim == 1):
            fail(f"must be a 1-D object array, got {brief(value)}")
        bind(symbols, (self.symbol,), value.shape)


@dataclass(frozen=True)
class _NanFloats:
    """A float vector that may hold NaN (an imputation statistic of an all-missing
    column), never infinity."""

    symbol: str

    def check(self, value, symbols):
        if not (type(value) is np.ndarray and value.dtype.kind == "f" and value.ndim == 1):
            fail(f"must be a 1-D float array, got {brief(value)}")
        bind(symbols, (self.symbol,), value.shape)
        if np.isinf(value).any():
            fail("holds infinite values")


@functools.cache
def checks():
    """``{class: Spec}`` for every scikit-learn class a composite model file may hold."""
    table = {}
    for part in (_preprocessing, _decomposition, _linear, _svm_and_calibration, _containers,
                 _losses):
        table.update(part())
    return table


# --- running a spec ------------------------------------------------------------------------

def derived_attributes(obj):
    """Attributes of ``obj`` rebuilt at load instead of read (never walked or stored)."""
    spec = checks().get(type(obj))
    return spec.derived if spec is not None else frozenset()


def check_object(obj, loading):
    """Check one scikit-learn object against its class's spec; raise ValueError naming the
    attribute at fault. When ``loading``, rebuild its derived attributes afterwards."""
    spec = checks()[type(obj)]
    state = vars(obj) if hasattr(obj, "__dict__") else {}
    params = _param_names(type(obj))
    _check_names(obj, spec, state, params)
    _check_params(obj, spec, state, params)
    fitted = [n for n in spec.fitted if n in state]
    if not fitted:
        return
    missing = [n for n in spec.fitted if n not in state and n not in spec.optional]
    if missing:
        fail(f"is partly fitted: it lacks {missing}")
    symbols = {}
    for name in fitted:
        try:
            spec.fitted[name].check(state[name], symbols)
        except ValueError as exc:
            fail(f"{name!r} {exc}")
    for relation in spec.relations:
        relation(obj, symbols)
    if loading and spec.rebuild is not None:
        spec.rebuild(obj)


def _param_names(cls):
    getter = getattr(cls, "_get_param_names", None)
    return frozenset(getter()) if getter is not None else frozenset()


@functools.cache
def _init_attributes(cls):
    """What ``cls()`` sets besides its parameters (e.g. SVC's ``nu`` and ``epsilon``)."""
    spec = checks()[cls]
    if spec.make is False:
        return {}
    default = (spec.make or cls)()
    params = _param_names(cls)
    return {k: v for k, v in vars(default).items() if k not in params}


def _check_names(obj, spec, state, params):
    init = _init_attributes(type(obj))
    known = params | set(init) | set(spec.fitted) | spec.derived | {_OUTPUT_CONFIG}
    unknown = [k for k in state if k not in known]
    if unknown:
        fail(f"has the attribute {str(unknown[0])[:60]!r}, which a fitted "
              f"{type(obj).__name__} does not hold (written by another scikit-learn version?)")
    for name, default in init.items():
        if name not in state:
            fail(f"lacks {name!r}, which {type(obj).__name__}() sets")
        value = state[name]
        if not (type(value) is type(default) and value == default):
            fail(f"has {name}={brief(value)}, but {type(obj).__name__}() sets {default!r}")


def _check_params(obj, spec, state, params):
    absent = sorted(params - set(state))
    if absent:
        fail(f"lacks the parameter(s) {absent}")
    config = state.get(_OUTPUT_CONFIG, {})
    if not (isinstance(config, dict) and all(
            k in ("transform", "fit_transform") and v in ("default", "pandas", "polars")
            for k, v in config.items())):
        fail(f"has {_OUTPUT_CONFIG}={brief(config)}, not a set_output configuration")
    if getattr(type(obj), "_parameter_constraints", None) is not None:
        obj._validate_params()
    if spec.params is not None:
        spec.params(obj)
