"""Shared helpers: parameter validation, memory budgets, weights and progress."""

from ._blas import numpy_blas_single_threaded
from ._memory import DEFAULT_MEMORY_BUDGET, parse_memory_budget
from ._numerics import eigenvalue_floor
from ._progress import SolverProgress, log_line
from ._random import check_random_state, seed_from
from ._validation import (
    COMMON_CONSTRAINTS,
    Interval,
    InvalidParameterError,
    Options,
    check_sample_weight,
    constraints,
    plain,
    validate_params,
)

__all__ = ["COMMON_CONSTRAINTS", "DEFAULT_MEMORY_BUDGET", "InvalidParameterError", "Interval",
           "Options", "SolverProgress", "check_random_state", "check_sample_weight", "constraints",
           "eigenvalue_floor", "log_line", "numpy_blas_single_threaded", "parse_memory_budget",
           "plain", "seed_from", "validate_params"]
