"""What a fitted model holds, checked at save and load against its class's ``_fitted_spec``.

Each estimator states its fitted attributes beside its class (``_fitted_spec``, in the
vocabulary of :mod:`sparsekernel.utils.fitted_spec`); :func:`check_fitted_state` runs them
at save and load, and :func:`probe` then evaluates a loaded model on one zero row, so
whatever a spec misses still cannot reach a caller.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..utils.fitted_spec import FLOAT_DTYPES

__all__ = ["FittedStateError", "check_fitted_state", "fitted_names", "is_fitted_name", "probe",
           "spec_of"]

_PROBE_DENSE_MAX = 2**16  # wider inputs are probed with a CSR zero row


class FittedStateError(Exception):
    """The fitted state of a model does not match its class; ``attribute`` names the culprit
    (None when the problem is the set of attributes or the model as a whole)."""

    def __init__(self, attribute, message):
        super().__init__(message)
        self.attribute = attribute


def spec_of(cls):
    """The :class:`~sparsekernel.utils.fitted_spec.ClassSpec` of ``cls``: its
    ``_fitted_spec``, None for a class that declares none."""
    return getattr(cls, "_fitted_spec", None)


# --- checks --------------------------------------------------------------------------------

def fitted_names(model):
    """The public fitted attributes of ``model``: names ending, not starting, with '_'."""
    return [name for name in vars(model) if _public_fitted(name)]


def _public_fitted(name):
    return name.endswith("_") and not name.startswith("_")


def is_fitted_name(cls, name):
    """Whether a file may set ``name`` as a fitted attribute of a ``cls``: an identifier
    ending, not starting, with '_', and no class attribute (a method, a property, a dunder
    name), which a file must never shadow."""
    return (isinstance(name, str) and name.isidentifier() and _public_fitted(name)
            and not hasattr(cls, name))


def check_fitted_state(model):
    """Check ``model``'s fitted attributes against its class; return the bound symbols.

    An unfitted model (no fitted attribute) passes with no symbols. Raises
    :class:`FittedStateError` naming the first attribute that is missing, unexpected or
    wrong.
    """
    names = fitted_names(model)
    if not names:
        return {}
    spec = spec_of(type(model))
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
    dtype = basis.dtype if basis is not None and basis.dtype in FLOAT_DTYPES else np.float64
    if d > _PROBE_DENSE_MAX:
        return sp.csr_matrix((1, d), dtype=dtype)
    return np.zeros((1, d), dtype=dtype)
