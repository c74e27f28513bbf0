"""The vocabulary of fitted-state specs: what a fitted estimator's attributes may hold.

Every estimator states its fitted attributes beside its class, as ``_fitted_spec`` (a
:class:`ClassSpec`), the way it states ``_parameter_constraints``; :mod:`sparsekernel.io`
checks a model against it at save and load (prediction code trusts its fitted state:
compiled kernels index with ``basis_``'s CSR arrays, ``coef_`` must line up with
``basis_``): every attribute present, of the right type and dtype family, finite where
prediction computes with it, and with shapes consistent with the others. Shapes are
written with symbols bound by the first attribute that fixes them:

``d``  n_features_in_          ``k``  len(classes_) (``p``: 1 for two classes, else k)
``m``  basis functions         ``r``  output dimension of a whitening map
``c``  components              ``P``, ``Q``  parts and part scores (MapReduceSVC)
``dy``, ``my``  the second view's features and basis functions (ReducedKernelCCA)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["CLASSES", "FEATURES", "FLOAT_DTYPES", "INFO", "OVR", "SINGLE", "Basis", "ClassSpec",
           "Count", "Floats", "Gamma", "Indices", "Info", "Labels", "Names", "Nullable",
           "Offsets", "Real", "bind", "brief", "fail", "kernel_basis", "triangular_is_square",
           "whitening"]

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def fail(message):
    raise ValueError(message)


def bind(symbols, spec, actual):
    """Match ``actual`` (a shape) against ``spec`` (ints and symbols), binding new symbols."""
    if len(spec) != len(actual):
        fail(f"has {len(actual)} dimension(s) {tuple(actual)}, expected {len(spec)} "
              f"{_show(spec, symbols)}")
    for want, got in zip(spec, actual, strict=True):
        expected = symbols.get(want, got) if isinstance(want, str) else want
        if expected != got:
            fail(f"has shape {tuple(actual)}, expected {_show(spec, symbols)}")
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
            fail(f"must be an int >= {self.minimum}, got {brief(value)}")
        if self.symbol:
            bind(symbols, (self.symbol,), (int(value),))


@dataclass(frozen=True)
class Real:
    """A finite real scalar (positive when ``positive``)."""

    positive: bool = False

    def check(self, value, symbols):
        if not _is_real(value) or not math.isfinite(value) or (self.positive and value <= 0):
            fail(f"must be a finite{' positive' if self.positive else ''} number, got "
                  f"{brief(value)}")


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
            fail(f"must be a {'dense or CSR ' if self.csr else ''}numpy array, got "
                  f"{brief(value)}")
        if value.dtype not in FLOAT_DTYPES:
            fail(f"must be float32 or float64, got dtype {value.dtype}")
        bind(symbols, self.shape, value.shape)
        if not np.isfinite(data).all():
            fail("holds NaN or infinite values")
        if self.positive and not (data > 0).all():
            fail("must be positive")


@dataclass(frozen=True)
class Basis:
    """``basis_``: Z of shape (m, d), dense or CSR; None (m = d) for a linear model on X."""

    csr: bool = True
    linear: bool = False

    def check(self, value, symbols):
        if value is None and self.linear:
            bind(symbols, ("m",), (symbols["d"],))
            return
        Floats(("m", "d"), csr=self.csr).check(value, symbols)
        if symbols["m"] < 1:
            fail("holds no basis function")


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
            fail(f"must be a 1-D array of at least 2 labels, got {brief(value)}")
        _check_label_dtype(value)
        if not np.all(value[1:] > value[:-1]):
            fail("must be sorted and unique (as np.unique returns them)")
        bind(symbols, (self.symbol,), value.shape)
        symbols.setdefault("p", 1 if len(value) == 2 else len(value))


def _check_label_dtype(value):
    kind = value.dtype.kind
    if kind == "O":
        if not all(type(v) is str for v in value):
            fail("must hold only str when of dtype object")
    elif kind not in "biufU":
        fail(f"must be of a bool, int, float or str dtype, got {value.dtype}")
    elif kind == "f" and not np.isfinite(value).all():
        fail("holds NaN or infinite labels")


@dataclass(frozen=True)
class Names:
    """``feature_names_in_``: d strings."""

    def check(self, value, symbols):
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "OU"
                and all(type(v) is str for v in value.tolist())):
            fail(f"must be an array of str, got {brief(value)}")
        bind(symbols, ("d",), value.shape)


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
            fail(f"must be an integer array, got {brief(value)}")
        bind(symbols, self.shape, value.shape)
        if value.size and value.min() < 0:
            fail("holds negative indices")


@dataclass(frozen=True)
class Offsets:
    """``part_offsets_``: P + 1 non-decreasing ints from 0 to m; binds P."""

    def check(self, value, symbols):
        if not (isinstance(value, np.ndarray) and value.dtype.kind in "iu"
                and value.ndim == 1 and len(value) >= 2):
            fail(f"must be a 1-D integer array of at least 2 offsets, got {brief(value)}")
        if value[0] != 0 or value[-1] != symbols["m"] or np.any(value[1:] < value[:-1]):
            fail(f"must rise from 0 to the {symbols['m']} basis functions")
        bind(symbols, ("P",), (len(value) - 1,))


@dataclass(frozen=True)
class Info:
    """Diagnostics no prediction reads (iteration counts, objectives, paths): any numbers,
    numeric arrays, strings and containers of them; non-finite values are allowed."""

    def check(self, value, symbols, depth=0):
        if depth > 8:
            fail("nests too deeply")
        if value is None or isinstance(value, str | bool | numbers.Number | np.generic):
            if isinstance(value, np.generic) and value.dtype.kind not in "biuf":
                fail(f"holds a numpy scalar of dtype {value.dtype}")
            return
        if isinstance(value, np.ndarray) and type(value) is np.ndarray:
            if value.dtype.kind not in "biuf":
                fail(f"holds an array of dtype {value.dtype}")
            return
        if isinstance(value, list | tuple):
            items = value
        elif isinstance(value, dict) and all(isinstance(k, str | int) for k in value):
            items = value.values()
        else:
            fail(f"holds a {type(value).__name__}")
        for item in items:
            self.check(item, symbols, depth + 1)


def brief(value):
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
FEATURES = {"n_features_in_": Count("d", minimum=1), "feature_names_in_": Names()}
CLASSES = {"classes_": Labels()}
OVR = {"coef_": Floats(("p", "m")), "intercept_": Floats(("p",))}
SINGLE = {"coef_": Floats(("m",)), "intercept_": Real()}


def kernel_basis(csr=True, linear=False):
    return {"basis_": Basis(csr=csr, linear=linear), "basis_indices_": Nullable(Indices(("m",))),
            "gamma_": Gamma(linear=linear)}


def whitening(identity=False):
    # identity: normalization_ may be None, the identity map (LowRankSVC's exact machine).
    M = Floats(("m", "r"))
    return {"normalization_": Nullable(M) if identity else M,
            "eigenvalues_": Nullable(Floats(("r",)))}


def triangular_is_square(model, symbols):
    # eigenvalues_ None marks Cholesky whitening (an m x m triangular map, BLAS trmm) or,
    # with normalization_ None, the identity: either way r = m.
    if model.eigenvalues_ is None and symbols["r"] != symbols["m"]:
        return "normalization_", "must be square (m, m) when eigenvalues_ is None"
    return None
