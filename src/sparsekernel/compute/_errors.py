"""The one error raised on NaN or infinity met in a computation, and its likely causes."""

from __future__ import annotations

__all__ = ["LIKELY_CAUSES", "NonFiniteError"]

#: What usually makes a solver's numbers overflow or turn into NaN, for every message.
LIKELY_CAUSES = (
    "This usually comes from a badly scaled problem: features of very large or very small "
    "magnitude (standardize X, e.g. with sklearn.preprocessing.StandardScaler), a kernel "
    "width gamma far from 1 / (n_features * X.var()) (gamma='scale' chooses that), or an "
    "extreme C (try a value between 1e-3 and 1e3)."
)


class NonFiniteError(ValueError):
    """A computation met NaN or infinity in an objective, gradient or linear system.

    The one exception type of :mod:`sparsekernel.compute` and :mod:`sparsekernel.solvers`
    for non-finite intermediate results. It is a ValueError because the cause lies in the
    input data or the parameters (their scale), as for scikit-learn's checks of non-finite
    input; estimators catch it to add the names and values of their own parameters.
    """
