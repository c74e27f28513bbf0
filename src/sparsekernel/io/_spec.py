"""What a fitted model holds: each estimator's fitted attributes, checked generically.

Prediction code trusts its fitted state (compiled kernels index with ``basis_``'s CSR
arrays, ``coef_`` must line up with ``basis_``), so a model read from a file is checked
against the state its class's ``fit`` produces: every attribute present, of the right type
and dtype family, finite where prediction computes with it, and with shapes consistent with
the others. Shapes are written with symbols bound by the first attribute that fixes them:

``d``  n_features_in_          ``k``  len(classes_) (``p``: 1 for two classes, else k)
``m``  basis functions         ``r``  output dimension of a whitening map
``c``  components              ``P``, ``Q``  parts and part scores (MapReduceSVC)
``dy``, ``my``  the second view's features and basis functions (ReducedKernelCCA)

:func:`check_fitted_state` runs at save and load; :func:`probe` then evaluates a loaded
model on one zero row, so whatever the table misses still cannot reach a caller.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["FittedStateError", "check_fitted_state", "probe"]

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_PROBE_DENSE_MAX = 2**16  # wider inputs are probed with a CSR zero row


class FittedStateError(Exception):
    """The fitted state of a model does not match its class; ``attribute`` names the culprit
    (None when the problem is the set of attributes or the model as a whole)."""

    def __init__(self, attribute, message):
        super().__init__(message)
        self.attribute = attribute


def _fail(message):
    raise ValueError(message)


def _bind(symbols, spec, actual):
    """Match ``actual`` (a shape) against ``spec`` (ints and symbols), binding new symbols."""
    if len(spec) != len(actual):
        _fail(f"has {len(actual)} dimension(s) {tuple(actual)}, expected {len(spec)} "
              f"{_show(spec, symbols)}")
    for want, got in zip(spec, actual, strict=True):
        expected = symbols.get(want, got) if isinstance(want, str) else want
        if expected != got:
            _fail(f"has shape {tuple(actual)}, expected {_show(spec, symbols)}")
    for want, got in zip(spec, actual, strict=True):
        if isinstance(want, str):
            symbols.setdefault(want, got)


def _show(spec, symbols):
    return "(" + ", ".join(str(symbols.get(s, s)) for s in spec) + ("," if len(spec) == 1
                                                                     else "") + ")"


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


# --- attribute kinds -----------------------------------------------------------------------

@dataclass(frozen=True)
class Count:
    """A non-negative int (Python or numpy), optionally binding a symbol."""

    symbol: str | None = None
    minimum: int = 0

    def check(self, value, symbols):
        if not _is_int(value) or value < self.minimum:
            _fail(f"must be an int >= {self.minimum}, got {_brief(value)}")
        if self.symbol:
            _bind(symbols, (self.symbol,), (int(value),))


@dataclass(frozen=True)
class Real:
    """A finite real scalar (positive when ``positive``)."""

    positive: bool = False

    def check(self, value, symbols):
        if not _is_real(value) or not math.isfinite(value) or (self.positive and value <= 0):
            _fail(f"must be a finite{' positive' if self.positive else ''} number, got "
                  f"{_brief(value)}")


@dataclass(frozen=True)
class Floats:
    """A float32/float64 array of the given shape, all finite (and positive); CSR allowed
    when ``csr``."""

    shape: tuple
    csr: bool = False
    positive: bool = False

    def check(self, value, symbols):
        if sp.issparse(value) and self.csr:
            data = value.data
        elif isinstance(value, np.ndarray) and type(value) is np.ndarray:
            data = value
        else:
            _fail(f"must be a {'dense or CSR ' if self.csr else ''}numpy array, got "
                  f"{_brief(value)}")
        if value.dtype not in _FLOAT_DTYPES:
            _fail(f"must be float32 or float64, got dtype {value.dtype}")
        _bind(symbols, self.shape, value.shape)
        if not np.isfinite(data).all():
            _fail("holds NaN or infinite values")
        if self.positive and not (data > 0).all():
            _fail("must be positive")


@dataclass(frozen=True)
class Basis:
    """``basis_``: Z of shape (m, d), dense or CSR; None (m = d) for a linear model on X."""

    csr: bool = True
    linear: bool = False

    def check(self, value, symbols):
        if value is None and self.linear:
            _bind(symbols, ("m",), (symbols["d"],))
            return
        Floats(("m", "d"), csr=self.csr).check(value, symbols)
        if symbols["m"] < 1:
            _fail("holds no basis function")


@dataclass(frozen=True)
class Gamma:
    """A kernel width: a positive number, or one per basis function (``symbol``)."""

    symbol: str = "m"
    linear: bool = False

    def check(self, value, symbols):
        if value is None and self.linear:
            return
        if isinstance(value, np.ndarray):
            Floats((self.symbol,), positive=True).check(value, symbols)
        else:
            Real(positive=True).check(value, symbols)


@dataclass(frozen=True)
class Labels:
    """Sorted unique labels (>= 2): int, float (finite), bool or str; binds k and p."""

    nullable: bool = False
    symbol: str = "k"

    def check(self, value, symbols):
        if value is None and self.nullable:
            return
        if not (isinstance(value, np.ndarray) and value.ndim == 1 and len(value) >= 2):
            _fail(f"must be a 1-D array of at least 2 labels, got {_brief(value)}")
        _check_label_dtype(value)
        if not np.all(value[1:] > value[:-1]):
            _fail("must be sorted and unique (as np.unique returns them)")
        _bind(symbols, (self.symbol,), value.shape)
        symbols.setdefault("p", 1 if len(value) == 2 else len(value))


def _check_label_dtype(value):
    kind = value.dtype.kind
    if kind == "O":
        if not all(type(v) is str for v in value):
            _fail("must hold only str when of dtype object")
    elif kind not in "biufU":
        _fail(f"must be of a bool, int, float or str dtype, got {value.dtype}")
    elif kind == "f" and not np.isfinite(value).all():
        _fail("holds NaN or infinite labels")


@dataclass(frozen=True)
class Names:
    """``feature_names_in_``: d strings."""

    def check(self, value, symbols):
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "OU"
                and all(type(v) is str for v in value.tolist())):
            _fail(f"must be an array of str, got {_brief(value)}")
        _bind(symbols, ("d",), value.shape)


@dataclass(frozen=True)
class Nullable:
    """``inner``, or None."""

    inner: object

    def check(self, value, symbols):
        if value is not None:
            self.inner.check(value, symbols)


@dataclass(frozen=True)
class Indices:
    """Non-negative integer indices (training rows)."""

    shape: tuple

    def check(self, value, symbols):
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "iu"):
            _fail(f"must be an integer array, got {_brief(value)}")
        _bind(symbols, self.shape, value.shape)
        if value.size and value.min() < 0:
            _fail("holds negative indices")


@dataclass(frozen=True)
class Offsets:
    """``part_offsets_``: P + 1 non-decreasing ints from 0 to m; binds P."""

    def check(self, value, symbols):
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "iu"
                and value.ndim == 1 and len(value) >= 2):
            _fail(f"must be a 1-D integer array of at least 2 offsets, got {_brief(value)}")
        if value[0] != 0 or value[-1] != symbols["m"] or np.any(value[1:] < value[:-1]):
            _fail(f"must rise from 0 to the {symbols['m']} basis functions")
        _bind(symbols, ("P",), (len(value) - 1,))


@dataclass(frozen=True)
class Info:
    """Diagnostics no prediction reads (iteration counts, objectives, paths): any numbers,
    numeric arrays, strings and containers of them; non-finite values are allowed."""

    def check(self, value, symbols, depth=0):
        if depth > 8:
            _fail("nests too deeply")
        if value is None or isinstance(value, str | bool | numbers.Number | np.generic):
            if isinstance(value, np.generic) and value.dtype.kind not in "biuf":
                _fail(f"holds a numpy scalar of dtype {value.dtype}")
            return
        if isinstance(value, np.ndarray) and type(value) is np.ndarray:
            if value.dtype.kind not in "biuf":
                _fail(f"holds an array of dtype {value.dtype}")
            return
        if isinstance(value, list | tuple):
            items = value
        elif isinstance(value, dict) and all(isinstance(k, str | int) for k in value):
            items = value.values()
        else:
            _fail(f"holds a {type(value).__name__}")
        for item in items:
            self.check(item, symbols, depth + 1)


def _brief(value):
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    if sp.issparse(value):
        return f"a sparse {value.format} matrix of shape {value.shape}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 40 else text[:37] + '...'}"


# --- the estimators ------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassSpec:
    """The fitted attributes of one estimator class, in binding order, plus the relations
    between symbols the shapes cannot express."""

    attributes: dict
    optional: frozenset = frozenset({"feature_names_in_"})
    relations: tuple = field(default=())


INFO = Info()
_FEATURES = {"n_features_in_": Count("d", minimum=1), "feature_names_in_": Names()}
_CLASSES = {"classes_": Labels()}
_OVR = {"coef_": Floats(("p", "m")), "intercept_": Floats(("p",))}
_SINGLE = {"coef_": Floats(("m",)), "intercept_": Real()}


def _kernel_basis(csr=True, linear=False):
    return {"basis_": Basis(csr=csr, linear=linear), "basis_indices_": Nullable(Indices(("m",))),
            "gamma_": Gamma(linear=linear)}


def _whitening(identity=False):
    # identity: normalization_ may be None, the identity map (LowRankSVC's exact machine).
    M = Floats(("m", "r"))
    return {"normalization_": Nullable(M) if identity else M,
            "eigenvalues_": Nullable(Floats(("r",)))}


def _triangular_is_square(model, symbols):
    # eigenvalues_ None marks Cholesky whitening (an m x m triangular map, BLAS trmm) or,
    # with normalization_ None, the identity: either way r = m.
    if model.eigenvalues_ is None and symbols["r"] != symbols["m"]:
        return "normalization_", "must be square (m, m) when eigenvalues_ is None"
    return None


def _part_scores(model, symbols):
    if symbols["Q"] != symbols["P"] * symbols["p"]:
        return "part_coef_", (f"must have n_parts * n_problems = {symbols['P'] * symbols['p']}"
                              f" columns, has {symbols['Q']}")
    return None


def _lssvm(classifier, extra=None):
    head = {**_FEATURES, **(_CLASSES if classifier else {}), "gamma_": Gamma()}
    # n_rows_seen_ after partial_fit; the stream's moments are not saved, so a loaded model
    # refuses a further partial_fit instead of restarting from one chunk.
    return ClassSpec({**head, "basis_": Basis(), "basis_indices_": Nullable(Indices(("m",))),
                      **(_OVR if classifier else _SINGLE), "objective_": INFO,
                      "n_rows_seen_": INFO, **(extra or {})},
                     optional=frozenset({"feature_names_in_", "n_rows_seen_"}))


def _low_rank_lssvm(classifier):
    return ClassSpec({**_FEATURES, **(_CLASSES if classifier else {}),
                      "basis_": Basis(csr=False), "shapes_": Floats(("m", "d"), positive=True),
                      **(_OVR if classifier else _SINGLE), "objective_": INFO, "n_iter_": INFO,
                      "best_iter_": INFO, "history_": INFO, "n_reseeded_": INFO})


def _smooth_svm(classifier):
    return ClassSpec({**_FEATURES, **(_CLASSES if classifier else {}),
                      **_kernel_basis(linear=True), **(_OVR if classifier else _SINGLE),
                      "n_iter_": INFO, "objective_": INFO})


def _sparse_margin():
    return ClassSpec({**_FEATURES, **_CLASSES, **_kernel_basis(csr=False), **_OVR,
                      "objective_": INFO, "objective_init_": INFO, "n_iter_": INFO})


SPECS = {
    "SmoothSVC": _smooth_svm(True),
    "SmoothSVR": _smooth_svm(False),
    "ReducedSVC": _smooth_svm(True),
    "ReducedSVR": _smooth_svm(False),
    "LowRankSVC": ClassSpec(
        {**_FEATURES, **_CLASSES, **_kernel_basis(),
         **_whitening(identity=True),
         "coef_": Floats(("p", "r")), "intercept_": Floats(("p",)), "n_iter_": INFO,
         "n_rows_seen_": INFO},
        optional=frozenset({"feature_names_in_", "n_rows_seen_"}),
        relations=(_triangular_is_square,)),
    "MapReduceSVC": ClassSpec(
        {**_FEATURES, **_CLASSES, "basis_": Basis(), "part_offsets_": Offsets(),
         "part_coef_": Floats(("m", "Q")), "part_intercept_": Floats(("Q",)),
         "gamma_": Gamma(), "part_n_iter_": INFO, "part_n_samples_": INFO,
         "coef_": Floats(("p", "Q")), "intercept_": Floats(("p",)), "n_iter_": INFO},
        relations=(_part_scores,)),
    "ReducedFeatures": ClassSpec({**_FEATURES, **_kernel_basis()}),
    "NystromFeatures": ClassSpec(
        {**_FEATURES, **_kernel_basis(), **_whitening(),
         "n_components_": Count("r", minimum=1)},
        relations=(_triangular_is_square,)),
    "LSSVC": _lssvm(True),
    "LSSVR": _lssvm(False),
    "PrunedLSSVC": _lssvm(True, {"pruning_path_": INFO}),
    "PrunedLSSVR": _lssvm(False, {"pruning_path_": INFO}),
    "OnlineLSSVR": ClassSpec(
        {**_FEATURES, "gamma_": Gamma(), "n_samples_seen_": Count(), **_SINGLE,
         "objective_": INFO, "basis_": Basis(csr=False),
         "support_targets_": Floats(("m",)), "support_weights_": Floats(("m",))}),
    "LowRankLSSVC": _low_rank_lssvm(True),
    "LowRankLSSVR": _low_rank_lssvm(False),
    "ReducedKernelPCA": ClassSpec(
        {**_FEATURES, **_kernel_basis(), "components_": Floats(("c", "m")),
         "mean_": Floats(("m",)), "explained_variance_": Floats(("c",)),
         "explained_variance_ratio_": INFO}),
    "ReducedKernelSIR": ClassSpec(
        {**_FEATURES, **_kernel_basis(), "components_": Floats(("c", "m")),
         "eigenvalues_": INFO, "mean_": Floats(("m",)), "slice_means_": INFO,
         "slice_weights_": INFO, "classes_": Labels(nullable=True, symbol="J")}),
    "ReducedKernelCCA": ClassSpec(
        {**_FEATURES, "n_features_y_in_": Count("dy", minimum=1), **_kernel_basis(),
         "basis_y_": Floats(("my", "dy"), csr=True), "gamma_y_": Gamma(symbol="my"),
         "x_weights_": Floats(("m", "c")), "y_weights_": Floats(("my", "c")),
         "x_mean_": Floats(("m",)), "y_mean_": Floats(("my",)), "correlations_": INFO,
         "x_ridge_": INFO, "y_ridge_": INFO}),
    "SparseMarginClassifier": _sparse_margin(),
    "SparseFisherDiscriminant": _sparse_margin(),
    "ReducedSetSVC": ClassSpec(
        {**_FEATURES, **_CLASSES, **_kernel_basis(csr=False), **_OVR,
         "n_source_support_": INFO, "n_iter_": INFO}),
    "KernelLogisticRegression": ClassSpec(
        {**_FEATURES, **_CLASSES, **_kernel_basis(), **_whitening(),
         "coef_": Floats(("p", "r")), "intercept_": Floats(("p",)), "n_iter_": INFO,
         "objective_": INFO},
        relations=(_triangular_is_square,)),
}


def _with_platt(spec):
    """``spec`` plus the optional Platt sigmoid parameters ``probA_`` and ``probB_`` that
    ``sparsekernel train -b 1`` stores on a classifier (one per one-vs-rest problem)."""
    platt = {"probA_": Floats(("p",)), "probB_": Floats(("p",))}
    return ClassSpec({**spec.attributes, **platt}, optional=spec.optional | set(platt),
                     relations=spec.relations)


# Every classifier (an estimator with non-optional labels): after its own attributes, so
# that ``p`` is bound by ``classes_`` before the sigmoid parameters are checked.
SPECS.update({name: _with_platt(spec) for name, spec in SPECS.items()
              if isinstance(spec.attributes.get("classes_"), Labels)
              and not spec.attributes["classes_"].nullable})


# --- checks --------------------------------------------------------------------------------

def fitted_names(model):
    """The public fitted attributes of ``model``: names ending, not starting, with '_'."""
    return [name for name in vars(model) if name.endswith("_") and not name.startswith("_")]


def check_fitted_state(model):
    """Check ``model``'s fitted attributes against its class; return the bound symbols.

    An unfitted model (no fitted attribute) passes with no symbols. Raises
    :class:`FittedStateError` naming the first attribute that is missing, unexpected or
    wrong.
    """
    names = fitted_names(model)
    if not names:
        return {}
    spec = SPECS.get(type(model).__name__)
    if spec is None:
        raise FittedStateError(names[0], f"{type(model).__name__} has no fitted attributes "
                                         f"to restore, but {names[0]!r} is set")
    unknown = [n for n in names if n not in spec.attributes]
    if unknown:
        raise FittedStateError(unknown[0], f"{unknown[0]!r} is not a fitted attribute of "
                                           f"{type(model).__name__}")
    missing = [n for n in spec.attributes if n not in names and n not in spec.optional]
    if missing:
        raise FittedStateError(None, f"the fitted attribute(s) {missing} of "
                                     f"{type(model).__name__} are missing")
    symbols = {}
    for name, kind in spec.attributes.items():
        if name in names:
            try:
                kind.check(getattr(model, name), symbols)
            except ValueError as exc:
                raise FittedStateError(name, f"{name!r} {exc}") from None
    for relation in spec.relations:
        problem = relation(model, symbols)
        if problem:
            raise FittedStateError(problem[0], f"{problem[0]!r} {problem[1]}")
    return symbols


def probe(model, symbols):
    """Evaluate a checked model on one zero row; raise ValueError unless it computes finite
    values. Every prediction and transform method the model has is run."""
    X = _zero_row(model, symbols["d"])
    calls = [(m, (X,)) for m in ("decision_function", "predict", "predict_proba", "transform")
             if hasattr(model, m)]
    if "dy" in symbols:  # a two-view model: the second view's projection too
        calls.append(("transform", (X, np.zeros((1, symbols["dy"])))))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for method, args in calls:
            result = getattr(model, method)(*args)
            for out in result if isinstance(result, tuple) else (result,):
                out = np.asarray(out)
                if out.dtype.kind in "fc" and not np.isfinite(out).all():
                    raise ValueError(f"{method} returns non-finite values on a zero input")


def _zero_row(model, d):
    """One zero row in the basis' dtype (so no copy of the basis is made), CSR when wide."""
    basis = getattr(model, "basis_", None)
    dtype = basis.dtype if basis is not None and basis.dtype in _FLOAT_DTYPES else np.float64
    if d > _PROBE_DENSE_MAX:
        return sp.csr_matrix((1, d), dtype=dtype)
    return np.zeros((1, d), dtype=dtype)
