"""Shared helpers: parameter validation, memory budgets, weights and progress."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["COMMON_CONSTRAINTS", "DEFAULT_MEMORY_BUDGET", "FLOAT32_WORK",
           "InvalidParameterError", "Interval", "MemoryBudgetError", "MemoryBudgetWarning",
           "MemoryPlan", "Options", "SolverProgress", "UNLIMITED_MEMORY_BUDGET",
           "check_random_state", "check_sample_weight", "column_mean_std", "constraints",
           "eigenvalue_floor", "feature_dtype", "fit_note", "fit_step", "format_bytes",
           "is_dask_collection", "largest_within", "log_line", "parse_memory_budget",
           "plain", "pyplot", "repeated_rows", "seed_from", "validate_params"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._memory": ["DEFAULT_MEMORY_BUDGET", "UNLIMITED_MEMORY_BUDGET", "MemoryBudgetError",
                 "MemoryBudgetWarning", "MemoryPlan", "format_bytes", "largest_within",
                 "parse_memory_budget"],
    "._numerics": ["FLOAT32_WORK", "column_mean_std", "eigenvalue_floor",
                   "feature_dtype", "repeated_rows"],
    "._plotting": ["pyplot"],
    "._progress": ["SolverProgress", "fit_note", "fit_step", "log_line"],
    "._random": ["check_random_state", "seed_from"],
    "._validation": ["COMMON_CONSTRAINTS", "Interval", "InvalidParameterError", "Options",
                     "check_sample_weight", "constraints", "is_dask_collection", "plain",
                     "validate_params"],
})
