"""Convex solvers on explicit feature arrays or row-block operators.

Solvers import neither ``sparsekernel.kernels`` nor scikit-learn, and every one returns a
fixed result type: :class:`SolverResult` for the optimisers, :class:`EigenResult` for the
small eigenproblems of :mod:`~sparsekernel.solvers.eigen`. NaN or infinity met on the way
(a badly scaled problem) raises the one error type :class:`NonFiniteError`.
"""

from ._blocks import ArrayBlocks, as_row_blocks
from ._losses import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge, smooth_plus
from ._result import NonFiniteError, SolverResult
from ._spd import spd_cholesky, spd_solve
from .basis_lbfgs import basis_lbfgs
from .block_minimization import SelectiveBlockMinimization, block_minimization_bytes
from .dual_cd import dual_cd
from .eigen import (
    EigenResult,
    MomentAccumulator,
    Moments,
    canonical_correlations,
    generalized_low_rank_eigen,
    relative_ridge,
    symmetric_eigen,
    whitening,
)
from .least_squares import (
    IncrementalLSSVM,
    NormalEquations,
    lssvm_dual,
    lssvm_normal_equations,
    lssvm_primal,
)
from .logistic import logistic_newton
from .newton_armijo import newton_armijo, newton_armijo_bytes
from .newton_kernel import newton_kernel, newton_kernel_bytes

__all__ = ["ArrayBlocks", "EigenResult", "IncrementalLSSVM", "MomentAccumulator", "Moments",
           "NonFiniteError", "NormalEquations", "SelectiveBlockMinimization", "SolverResult",
           "SquaredSmoothEpsilonInsensitive", "SquaredSmoothHinge", "as_row_blocks",
           "basis_lbfgs", "block_minimization_bytes", "canonical_correlations", "dual_cd",
           "generalized_low_rank_eigen", "logistic_newton", "lssvm_dual",
           "lssvm_normal_equations", "lssvm_primal", "newton_armijo", "newton_armijo_bytes",
           "newton_kernel", "newton_kernel_bytes",
           "relative_ridge", "smooth_plus", "spd_cholesky", "spd_solve", "symmetric_eigen",
           "whitening"]
