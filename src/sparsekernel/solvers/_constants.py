"""The solvers' shared constants, one table: each is defined here once, with its reason.

Solver-specific tolerances stay beside their solver; what two solvers must agree on (how
long float32 systems are trusted, how many bytes of rows a product gathers, how large a
streamed block is) lives here.
"""

from __future__ import annotations

__all__ = ["ARMIJO", "BLOCK_BYTES", "F32_PATIENCE", "F32_ROUNDING", "GATHER_BYTES",
           "MAX_HALVINGS"]

#: Newton iterations of a problem after which its systems are built in float64 whatever
#: happens: float32 Hessians speed the early, far-from-optimal steps, and a problem that is
#: still iterating after this many has not settled, which float32 round-off can cause.
F32_PATIENCE = 10
#: Gradient norm, relative to its scale, at which float32 rows' products can stop Newton's
#: progress: their margins are sums of m float32 products, their gradients float32 sums of
#: up to 1,024 rows (``compute.rmatmul``), each rounding at up to about 1e-4 of its terms.
#: Below it a stalled problem is refined with float64 products; above it a slow step is
#: Newton's own.
F32_ROUNDING = 1e-4
#: Bytes of gathered (scaled) rows per Gram product (``syrk``) when a Hessian is summed over
#: a row set: large enough that the m x m output is written once per many rows, and at most
#: glibc's largest mmap threshold (32 MiB), so the buffer is reused heap memory rather than
#: fresh pages faulted in at every product.
GATHER_BYTES = 32 * 2**20
#: Temporary memory per block when a stored array is streamed (float64 copies of a float32
#: block, active-row copies): below the same threshold, for the same reason.
BLOCK_BYTES = 16 * 2**20
#: Sufficient decrease of the backtracking line search on smooth losses
#: (:func:`~sparsekernel.solvers._line_search.backtrack`): a step t along a descent direction
#: with slope g is taken once the objective fell by ARMIJO t |g|. Small, so that a Newton step
#: is taken whole wherever the quadratic model is roughly right (Nocedal & Wright's 1e-4).
ARMIJO = 1e-4
#: Halvings of the step before the search gives up: below 2^-40 of a Newton step the
#: objective's change is under float64's rounding of it.
MAX_HALVINGS = 40
