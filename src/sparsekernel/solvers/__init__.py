"""Convex solvers on explicit feature arrays or row-block operators.

Solvers import neither ``sparsekernel.kernels`` nor scikit-learn, and every one returns a
fixed result type: :class:`SolverResult` for the optimisers, :class:`EigenResult` for the
small eigenproblems of :mod:`~sparsekernel.solvers.eigen`. NaN or infinity met on the way
(a badly scaled problem) raises the one error type :class:`NonFiniteError`.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``): importing one
# solver, as every estimator module does, need not load the other ten. Functions named as
# their modules are bound now: importing the module (``solvers.dual_cd``) would otherwise
# leave the module, not the function, under that name.
from .. import _lazy_exports
from .basis_lbfgs import basis_lbfgs
from .dual_cd import dual_cd
from .newton_kernel import newton_kernel, newton_kernel_bytes
from .newton_ovr import newton_ovr, newton_ovr_bytes

__all__ = ["ArrayBlocks", "EigenResult", "GATHER_BYTES", "IncrementalLSSVM", "LSSVMPath",
           "LogisticDeviance", "MomentAccumulator", "Moments", "NonFiniteError",
           "NormalEquations", "SelectiveBlockMinimization", "SolverResult",
           "SquaredSmoothEpsilonInsensitive", "SquaredSmoothHinge", "as_row_blocks",
           "basis_lbfgs", "block_minimization_bytes", "canonical_correlations", "dual_cd",
           "generalized_low_rank_eigen", "logistic_newton", "lssvm_dual",
           "lssvm_normal_equations", "lssvm_primal", "newton_kernel", "newton_kernel_bytes",
           "newton_ovr", "newton_ovr_bytes", "relative_ridge", "smooth_plus",
           "symmetric_eigen", "whitening"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._blocks": ["ArrayBlocks", "as_row_blocks"],
    "._constants": ["GATHER_BYTES"],
    "._losses": ["LogisticDeviance", "SquaredSmoothEpsilonInsensitive", "SquaredSmoothHinge",
                  "smooth_plus"],
    "._result": ["NonFiniteError", "SolverResult"],
    ".block_minimization": ["SelectiveBlockMinimization", "block_minimization_bytes"],
    ".eigen": ["EigenResult", "MomentAccumulator", "Moments", "canonical_correlations",
               "generalized_low_rank_eigen", "relative_ridge", "symmetric_eigen",
               "whitening"],
    ".least_squares": ["IncrementalLSSVM", "LSSVMPath", "NormalEquations", "lssvm_dual",
                       "lssvm_normal_equations", "lssvm_primal"],
    ".logistic": ["logistic_newton"],
})
