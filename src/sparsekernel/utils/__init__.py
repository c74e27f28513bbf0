"""Shared helpers: parameter validation, memory budgets, weights and progress."""

from ._blas import numpy_blas_single_threaded
from ._constraints import COMMON_CONSTRAINTS, constraints
from ._memory import DEFAULT_MEMORY_BUDGET, parse_memory_budget
from ._numerics import eigenvalue_floor
from ._progress import SolverProgress, log_line
from ._random import check_random_state, seed_from
from ._validation import Interval, InvalidParameterError, Options, plain, validate_params
from ._weights import check_sample_weight

__all__ = [
    "COMMON_CONSTRAINTS",
    "check_random_state",
    "constraints",
    "eigenvalue_floor",
    "log_line",
    "seed_from",
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
