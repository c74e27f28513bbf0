"""Shared helpers: parameter validation, memory budgets, weights and progress."""

from ._blas import numpy_blas_single_threaded
from ._memory import DEFAULT_MEMORY_BUDGET, parse_memory_budget
from ._progress import SolverProgress
from ._validation import Interval, InvalidParameterError, Options, plain, validate_params
from ._weights import check_sample_weight

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "InvalidParameterError",
    "Interval",
    "Options",
    "SolverProgress",
    "check_sample_weight",
    "numpy_blas_single_threaded",
    "parse_memory_budget",
    "plain",
    "validate_params",
]
