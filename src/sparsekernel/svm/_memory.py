"""Memory plans of the SVM family's fits: what each path allocates beyond X, from one budget.

``memory_budget`` caps what a fit allocates beyond its input (X, y, sample_weight): the
targets and working vectors, the m x m systems, the stored features or the chunks of a
streamed fit, and the kernel blocks. A fit plans before it allocates:

1. ``n_basis='auto'`` is lowered to the largest m whose stored path fits the budget (the
   stored path is several times faster than streaming the same m), and never below
   ``AUTO_MIN`` (the smallest basis 'auto' takes) while the cheapest path holds that many.
   The cap grows with the budget, so a larger budget never gives a smaller basis; when it
   binds, the fit warns (:class:`~sparsekernel.utils.MemoryBudgetWarning`) with the budget
   that would store the basis 'auto' wanted;
2. an explicit ``n_basis`` whose cheapest path does not fit raises
   :class:`~sparsekernel.utils.MemoryBudgetError` with the estimate, before the basis is
   chosen;
3. the features are stored when the stored path fits; otherwise ReducedSVC recomputes them
   block by block at every pass and LowRankSVC streams chunks of as many rows as fit.

The figures are upper estimates of each solver's peak (its ``*_bytes`` function), checked
against tracemalloc's peak in ``tests/test_memory_budget.py``. What a process loads once is
outside the budget: the interpreter and the modules, BLAS's own thread buffers, and numba's
compiler with the compiled loops of dual coordinate descent, loaded by the first fit that
streams or uses the hinge loss. A first fit in a fresh process therefore grows the resident
set by that much more than its budget; later fits stay within it.
"""

from __future__ import annotations

import numpy as np

from ..basis import resolve_n_basis
from ..basis._base import AUTO_MIN
from ..compute import max_threads
from ..features._nystrom import nystrom_map_bytes
from ..kernels._blocks import CACHE_BLOCK_BYTES
from ..solvers import GATHER_BYTES, block_minimization_bytes, newton_kernel_bytes
from ..solvers._rows import is_provider
from ..solvers.newton_ovr import newton_ovr_bytes, warm_sample_rows
from ..utils import MemoryPlan, largest_within, parse_memory_budget

__all__ = ["MIN_CHUNK", "Budget", "budget_holding"]

#: Rows of the smallest chunk a streamed LowRankSVC fit is planned with.
MIN_CHUNK = 256


class Budget:
    """One fit's budget and its shares: kernel blocks, gather buffers, kept Hessians.

    Parameters
    ----------
    estimator : estimator with ``memory_budget``
    nbytes : int, optional
        Another budget for the same estimator (:func:`budget_holding`).
    """

    def __init__(self, estimator, nbytes=None):
        self.owner = type(estimator).__name__
        self.bytes = parse_memory_budget(estimator.memory_budget if nbytes is None else nbytes)
        # The most threads the solvers may run (the CPUs), not the plan in force: the plan,
        # and so 'auto''s m and the stored or streamed path, is the same at any thread count.
        self.threads = max_threads()
        # Kernel blocks are capped near CACHE_BLOCK_BYTES of output each (plan_block_rows);
        # a block's temporaries are about three outputs, one block per thread in flight.
        self.kernel = min(self.bytes / 8, 3.0 * self.threads * CACHE_BLOCK_BYTES)
        self.hessians = self.bytes / 4

    def gather(self, m):
        """Bytes of one gather buffer of a Newton solver on m features."""
        return min(GATHER_BYTES, max(self.bytes / 16, 64.0 * 8 * (m + 1)))

    def plan(self, **parts):
        """A :class:`~sparsekernel.utils.MemoryPlan` of this fit with the kernel share."""
        return MemoryPlan(self.owner, self.bytes, kernel_blocks=self.kernel, **parts)

    def largest_m(self, cost, n):
        """Largest m in [1, n] whose cheapest plan ``cost(m)`` fits (None if even 1 fails)."""
        return largest_within(lambda m: cost(m).total, self.bytes, 1, n)

    def check_n_basis(self, n_basis, n, cost, stored_cost):
        """The cap on m.

        For an explicit ``n_basis``: None, after raising
        :class:`~sparsekernel.utils.MemoryBudgetError` (with the estimate) unless its
        cheapest plan ``cost`` fits. For 'auto': the largest m whose stored plan
        ``stored_cost`` fits, or ``min(n, AUTO_MIN)`` streamed (or recomputed) where even
        that many do not fit stored but the cheapest plan holds them.

        Both terms grow with the budget, so the cap does: a larger budget never gives a
        smaller basis. The stored path is preferred over streaming a larger m because it is
        several times faster at the same m; a budget below the stored plan of the basis
        'auto' wants is reported by the fit (:class:`~sparsekernel.utils.MemoryBudgetWarning`)
        rather than turned into a slow streamed fit of every basis function.
        """
        if not (isinstance(n_basis, str) and n_basis == "auto"):
            m = resolve_n_basis(n_basis, n)
            cost(m).require(f"n_basis={n_basis!r} is too many basis functions for this budget: "
                            "lower n_basis, or raise memory_budget (float('inf') for no cap)")
            return None
        m_stored = self.largest_m(stored_cost, n) or 0
        m_floor = self.largest_m(cost, min(n, AUTO_MIN))
        if m_floor is None:
            cost(1).require("raise memory_budget (float('inf') for no cap)")
        return max(m_stored, m_floor)


def budget_holding(estimator, cost):
    """The budget whose plan ``cost(budget)`` (a :class:`Budget` -> bytes) fits it: the
    plan's shares (kernel blocks, kept Hessians) grow with the budget, so the estimate at
    the present budget is iterated until it holds itself."""
    nbytes = cost(Budget(estimator))
    for _ in range(16):
        needed = cost(Budget(estimator, nbytes))
        if needed <= nbytes:
            break
        nbytes = needed
    return nbytes


def lowrank_plan(budget, est, n, m, k, itemsize, chunk=None):
    """LowRankSVC: stored features and the joint Newton solver (``chunk=None``), or block
    minimization over chunks of ``chunk`` rows."""
    common = {"targets": 8.0 * n * (k + 1), "m_x_m_matrices": nystrom_map_bytes(m)}
    if chunk is None:
        if est.loss == "squared_hinge":
            solver = newton_ovr_bytes(n, m, k, budget.threads, budget.hessians,
                                      budget.gather(m), itemsize)
        else:  # dual coordinate descent: duals, margins and a contiguous target column
            solver = 8.0 * n * 4
        return budget.plan(features=float(n) * m * itemsize, solver=solver, **common)
    return budget.plan(chunks=block_minimization_bytes(chunk, m, k, n if est.n_passes > 1
                                                       else 0), **common)


def reduced_plan(budget, est, n, m, k, itemsize, stored):
    """ReducedSVC/SVR: K(X, Z) stored (``stored=True``) or recomputed in blocks."""
    gather = budget.gather(m)
    if stored and est._in_rows():  # (svm._base.solve_in_rows: m = n)
        float64_copy = 8.0 * n * m if itemsize < 8 else 0.0  # F for the Gram, in float64
        solver = (newton_kernel_bytes(n, k, budget.threads) + float64_copy
                  + 8.0 * n * n * (budget.threads - 1))  # the threads' other Gram squares
    else:
        warm = stored or _warm_fits(n, m, itemsize, budget)
        solver = newton_ovr_bytes(n, m, k, budget.threads, budget.hessians, gather, itemsize,
                                  warm)
    features = float(n) * m * itemsize if stored else 0.0
    return budget.plan(targets=8.0 * n * (k + 1), features=features, solver=solver)


def warm_start_fits(F, budget):
    """Whether newton_ovr may start from a sample of F's rows: always from stored features
    or a provider's (where the sample stays, and the plan counts it), from recomputed ones
    only while the sample's copy takes at most an eighth of the budget."""
    if isinstance(F, np.ndarray) or is_provider(F):
        return True
    return _warm_fits(*F.shape, np.dtype(F.dtype).itemsize, budget)


def _warm_fits(n, m, itemsize, budget):
    return float(itemsize) * warm_sample_rows(n, m) * m <= budget.bytes / 8
