"""The constraint vocabulary shared by every estimator: one name, one meaning, one check.

Family-specific tables add to these; an estimator's ``_parameter_constraints`` is a union of
the entries it takes. Kernel and basis constraints live in :mod:`sparsekernel.base` (they
name the kernel functions and the basis selectors, which sit above this layer).
"""

from __future__ import annotations

from ._validation import Interval, Options

__all__ = ["COMMON_CONSTRAINTS", "constraints"]

COMMON_CONSTRAINTS = {
    "C": [Interval("real", 0, None, closed="neither")],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 1, None, closed="left")],
    "class_weight": [None, Options("balanced"), "dict"],
    "random_state": ["random_state"],
    "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
    "memory_budget": [None, Interval("real", 1, float(2**62), closed="both"), str],
    "epsilon": [Interval("real", 0, None, closed="left")],
}


def constraints(*names, **extra):
    """A constraint table: the shared entries ``names`` plus family-specific ``extra``."""
    return {**{name: COMMON_CONSTRAINTS[name] for name in names}, **extra}
