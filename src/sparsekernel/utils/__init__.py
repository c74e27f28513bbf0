"""Shared helpers: parameter validation and memory budgets."""

from ._memory import DEFAULT_MEMORY_BUDGET, parse_memory_budget
from ._validation import InvalidParameterError, Interval, Options, validate_params

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "InvalidParameterError",
    "Interval",
    "Options",
    "parse_memory_budget",
    "validate_params",
]
