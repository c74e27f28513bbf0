"""Convex solvers on explicit feature arrays or row-block operators.

Solvers import neither ``sparsekernel.kernels`` nor scikit-learn, and every one returns a
:class:`SolverResult`.
"""

from ._blocks import ArrayBlocks, as_row_blocks
from ._losses import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge, smooth_plus
from ._result import SolverResult
from .least_squares import IncrementalLSSVM, lssvm_dual, lssvm_primal
from .newton_armijo import newton_armijo

__all__ = [
    "ArrayBlocks",
    "IncrementalLSSVM",
    "SolverResult",
    "SquaredSmoothEpsilonInsensitive",
    "SquaredSmoothHinge",
    "as_row_blocks",
    "lssvm_dual",
    "lssvm_primal",
    "newton_armijo",
    "smooth_plus",
]
