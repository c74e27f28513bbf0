"""Convex solvers on explicit feature arrays or row-block operators.

Solvers import neither ``sparsekernel.kernels`` nor scikit-learn, and every one returns a
fixed result type: :class:`SolverResult` for the optimisers, :class:`EigenResult` for the
small eigenproblems of :mod:`~sparsekernel.solvers.eigen`.
"""

from ._blocks import ArrayBlocks, as_row_blocks
from ._losses import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge, smooth_plus
from ._result import SolverResult
from .block_minimization import SelectiveBlockMinimization
from .dual_cd import dual_cd
from .eigen import (
    EigenResult,
    MomentAccumulator,
    Moments,
    canonical_correlations,
    generalized_low_rank_eigen,
    inverse_sqrt,
    relative_ridge,
    symmetric_eigen,
    whitening,
)
from .least_squares import IncrementalLSSVM, lssvm_dual, lssvm_primal
from .newton_armijo import newton_armijo

__all__ = [
    "ArrayBlocks",
    "EigenResult",
    "IncrementalLSSVM",
    "MomentAccumulator",
    "Moments",
    "SelectiveBlockMinimization",
    "SolverResult",
    "SquaredSmoothEpsilonInsensitive",
    "SquaredSmoothHinge",
    "as_row_blocks",
    "canonical_correlations",
    "dual_cd",
    "generalized_low_rank_eigen",
    "inverse_sqrt",
    "lssvm_dual",
    "lssvm_primal",
    "newton_armijo",
    "relative_ridge",
    "smooth_plus",
    "symmetric_eigen",
    "whitening",
]
