"""Declarative parameter constraints, checked once at ``fit`` entry, and sample weights.

The message shape follows scikit-learn's so users see one style everywhere::

    The 'C' parameter of ReducedSVC must be a float in the range (0.0, inf). Got -1 instead.

We keep our own small implementation because ``sklearn.utils._param_validation`` is private.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["COMMON_CONSTRAINTS", "InvalidParameterError", "Interval", "Options",
           "check_sample_weight", "constraints", "is_dask_collection", "plain",
           "validate_params"]


def plain(value):
    """A NumPy scalar as the equivalent Python scalar, so messages read ``-1.0``, not
    ``np.float64(-1.0)``; other values unchanged."""
    return value.item() if isinstance(value, np.generic) else value


class InvalidParameterError(ValueError, TypeError):
    """A parameter has the wrong type or value.

    Subclasses both ``ValueError`` and ``TypeError`` so that existing ``except`` clauses for
    either keep working (as scikit-learn's error of the same name does).

    See Also
    --------
    MemoryBudgetError : Parameters that together ask for more memory than allowed.
    """


class Interval:
    """Numbers of a given kind in a range.

    Parameters
    ----------
    kind : {"int", "real"}
        ``"int"`` accepts integers only; ``"real"`` accepts any real number (ints too).
    left, right : float or None
        Bounds; ``None`` means -inf (left) or inf (right), which, as any bound, belongs to
        the interval only where ``closed`` says so: ``Interval("real", 0, None,
        closed="neither")`` is (0, inf) and refuses ``float('inf')``, ``closed="right"``
        makes it (0, inf].
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    """

    def __init__(self, kind, left, right, *, closed):
        if kind not in ("int", "real"):
            raise ValueError(f"kind must be 'int' or 'real'. Got {kind!r} instead.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(
                f"closed must be 'left', 'right', 'both' or 'neither'. Got {closed!r} instead."
            )
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def _type_ok(self, value):
        if isinstance(value, bool | np.bool_):
            return False
        if self.kind == "int":
            return isinstance(value, numbers.Integral)
        return isinstance(value, numbers.Real)

    def is_satisfied_by(self, value):
        if not self._type_ok(value) or (isinstance(value, float) and math.isnan(value)):
            return False
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        lo_ok = value >= left if self.closed in ("left", "both") else value > left
        hi_ok = value <= right if self.closed in ("right", "both") else value < right
        return bool(lo_ok and hi_ok)

    def __str__(self):
        noun = "an int" if self.kind == "int" else "a float"
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        return f"{noun} in the range {lb}{lo}, {hi}{rb}"


class Options:
    """A fixed set of allowed values (usually strings)."""

    def __init__(self, *values):
        self.values = values

    def is_satisfied_by(self, value):
        return isinstance(value, str | bool | type(None) | numbers.Number) and any(
            value == v and type(value) is type(v) for v in self.values
        )

    def __str__(self):
        return "a str among {" + ", ".join(repr(v) for v in self.values) + "}"


_NAMED = {
    "array-like": (
        lambda v: hasattr(v, "__array__") or hasattr(v, "shape") or isinstance(v, list | tuple),
        "an array-like",
    ),
    "boolean": (lambda v: isinstance(v, bool | np.bool_), "a bool"),
    "dict": (lambda v: isinstance(v, dict), "a dict"),
    # A numpy Generator is refused here, at validation, in every estimator: scikit-learn's
    # check_random_state (and its meta-estimators) take RandomState only, and one fit must be
    # reproducible from one seed.
    "random_state": (
        lambda v: v is None
        or (isinstance(v, numbers.Integral) and not isinstance(v, bool))
        or isinstance(v, np.random.RandomState),
        "an int, a numpy RandomState or None (a numpy Generator is not accepted: pass "
        "an int seed, e.g. int(rng.integers(2**31)))",
    ),
    "callable": (callable, "a callable"),
}


def _satisfies(constraint, value):
    if constraint is None:
        return value is None
    if isinstance(constraint, str):
        return _NAMED[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def _describe(constraint):
    if constraint is None:
        return "None"
    if isinstance(constraint, str):
        return _NAMED[constraint][1]
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__!r}"
    return str(constraint)


def validate_params(owner, constraints, params):
    """Check ``params`` against ``constraints``; raise on the first violation.

    Parameters
    ----------
    owner : str
        Name used in the message, usually the estimator's class name.
    constraints : dict of str to list
        For each parameter name, the list of acceptable constraints (any one suffices):
        ``Interval``, ``Options``, a type, ``None`` or a named constraint
        (``"array-like"``, ``"boolean"``, ``"dict"``, ``"random_state"``, ``"callable"``).
    params : dict
        The values to check (typically ``estimator.get_params(deep=False)``).

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the owner, the accepted forms and the value received.
    """
    for name, allowed in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if any(_satisfies(c, value) for c in allowed):
            continue
        forms = [_describe(c) for c in allowed]
        expected = forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {expected}. "
            f"Got {plain(value)!r} instead."
        )


#: The vocabulary shared by every estimator: one name, one meaning, one check. Family tables
#: add to these; kernel and basis constraints live in :mod:`sparsekernel.base` (they name the
#: kernel functions and the basis selectors, which sit above this layer).
COMMON_CONSTRAINTS = {
    "C": [Interval("real", 0, None, closed="neither")],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 1, None, closed="left")],
    "class_weight": [None, Options("balanced"), "dict"],
    "random_state": ["random_state"],
    "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
    "memory_budget": [None, Interval("real", 1, None, closed="both"), str],  # inf: no cap
    "epsilon": [Interval("real", 0, None, closed="left")],
}


def constraints(*names, **extra):
    """A constraint table: the shared entries ``names`` plus family-specific ``extra``."""
    return {**{name: COMMON_CONSTRAINTS[name] for name in names}, **extra}


def check_sample_weight(sample_weight, n_samples):
    """Return sample weights as a float64 array of shape (n_samples,).

    None gives ones; a scalar is broadcast. Weights must be finite and non-negative with a
    positive sum; errors name the problem and the offending value or shape.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), matching X; got shape {sw.shape}."
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite; it contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError(
            f"sample_weight must be non-negative; its minimum is {float(sw.min())!r}."
        )
    if sw.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum; all weights are zero.")
    return sw


def is_dask_collection(obj):
    """True for dask arrays / dataframes, decided without importing dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")
