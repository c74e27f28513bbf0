"""Convex solvers on explicit feature arrays or row-block operators.

Solvers import neither ``sparsekernel.kernels`` nor scikit-learn, and every one returns a
:class:`SolverResult`.
"""

from ._blocks import ArrayBlocks, as_row_blocks
from ._losses import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge, smooth_plus
from ._result import SolverResult
from .block_minimization import SelectiveBlockMinimization
from .dual_cd import dual_cd
from .newton_armijo import newton_armijo

__all__ = [
    "ArrayBlocks",
    "SelectiveBlockMinimization",
    "SolverResult",
    "SquaredSmoothEpsilonInsensitive",
    "SquaredSmoothHinge",
    "as_row_blocks",
    "dual_cd",
    "newton_armijo",
    "smooth_plus",
]
