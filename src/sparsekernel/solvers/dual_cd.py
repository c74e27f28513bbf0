"""Dual coordinate descent for the linear SVM (Hsieh, Chang, Lin, Keerthi, Sundararajan 2008).

Objective (the SVM family's scaling, see ``svm/_base.py``; ``C`` means the same everywhere)::

    P(w, b) = 1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss_i,   f_i = F_i w + b

    loss='squared_hinge':  loss_i = max(0, 1 - y_i f_i)^2     (L2-loss SVM)
    loss='hinge':          loss_i = max(0, 1 - y_i f_i)        (L1-loss SVM)

The bias is a *penalized* extra feature of constant value 1 (``fit_intercept=True``): the
augmented rows are ``[F_i, 1]`` and ``b`` is the last weight, so ``1/2 b^2`` is part of the
regularizer exactly as in the SSVM family (and as LIBLINEAR's ``-B 1``). The dual is::

    min_alpha  1/2 alpha^T (Q + D) alpha - sum_i alpha_i,   0 <= alpha_i <= U_i
    Q_ij = y_i y_j [F_i, 1] . [F_j, 1]

    squared_hinge:  D_ii = 1 / (C s_i),  U_i = inf
    hinge:          D_ii = 0,            U_i = C s_i / 2

and ``[w, b] = sum_i alpha_i y_i [F_i, 1]``. Relation to LIBLINEAR (and scikit-learn's
``LinearSVC``), whose objective is ``1/2 ||w||^2 + C_lib sum_i loss_i``: ``C_lib = C / 2``
for both losses, i.e. ``C = 2 * C_lib``.

Stopping: the duality gap ``P(w, b) - D(alpha)`` (an upper bound on the primal
suboptimality) is computed exactly, over all rows, after every full pass (and, while
shrinking leaves rows out of the passes, when the active rows look converged and at least
every 10 passes), and compared with ``tol * P(w, b)``.
"""

from __future__ import annotations

import time

import numpy as np

from ._result import SolverResult, check_finite

# The compiled loops (._dual_cd_kernels) are imported inside the functions that run them:
# importing numba costs a few tenths of a second, which only a dual CD fit should pay.

__all__ = ["LOSSES", "dual_cd"]

#: Losses ``dual_cd`` accepts.
LOSSES = ("squared_hinge", "hinge")
#: With shrinking, passes between two exact duality-gap evaluations (at most).
_GAP_EVERY = 10


def _as_rows(F):
    """F as a C-contiguous float32/float64 ndarray; views (memmaps included) are not copied."""
    F = np.asarray(F)
    if F.ndim != 2:
        raise ValueError(f"F must be a 2-D array; got an array of shape {F.shape}.")
    if F.dtype not in (np.float32, np.float64):
        raise TypeError(f"F must be float32 or float64; got dtype {F.dtype}.")
    if not F.flags.c_contiguous:
        raise ValueError(
            "F must be C-contiguous (row-major) so that rows are read without copies; "
            "pass np.ascontiguousarray(F)."
        )
    return F


def _box(loss, C, sw):
    """(D_ii, U_i) of the dual; rows with zero weight are pinned at alpha_i = 0."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}; got {loss!r}.")
    cs = C * sw
    pos = cs > 0
    if loss == "squared_hinge":
        diag = np.divide(1.0, cs, out=np.zeros_like(cs), where=pos)
        upper = np.where(pos, np.inf, 0.0)
    else:
        diag = np.zeros_like(cs)
        upper = 0.5 * cs
    return diag, upper


def _check_vectors(n, m, y, sample_weight, dual0, offset):
    """y, sample weights, the starting duals and the offset as float64 arrays, checked."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,) or np.any(sw < 0):
        raise ValueError("sample_weight must be a non-negative array of shape (n,).")
    alpha = np.zeros(n) if dual0 is None else np.asarray(dual0, dtype=np.float64)
    w0 = np.zeros(m + 1) if offset is None else np.array(offset, dtype=np.float64)
    for name, v, shape in (("y", y, (n,)), ("dual0", alpha, (n,)), ("offset", w0, (m + 1,))):
        if v.shape != shape:
            raise ValueError(f"{name} must have shape {shape}; got {v.shape}.")
    return y, sw, alpha, w0


def _squared_norms(F):
    out = np.empty(F.shape[0])
    # Blocks of ~8 MB in float64: larger temporaries are fresh mmaps, and faulting their
    # pages in costs far more than the arithmetic.
    rows = max(1, 2**20 // max(F.shape[1], 1))
    for start in range(0, F.shape[0], rows):
        blk = np.asarray(F[start:start + rows], dtype=np.float64)
        out[start:start + len(blk)] = np.einsum("ij,ij->i", blk, blk)
    return out


def _gap(F, y, alpha, w, w0, bias, loss, C, sw, diag, margins):
    """(primal, dual, gap) at (w, alpha); ``margins`` is scratch of shape (n,).

    With an offset w0 the pair is P = 1/2 ||w - w0||^2 + losses and
    D = sum alpha - 1/2 ||w||^2 + 1/2 ||w0||^2 - 1/2 sum D_ii alpha_i^2 (w0 = 0: the usual).
    """
    from ._dual_cd_kernels import row_margins

    f = row_margins(F, w, bias, margins)
    viol = np.maximum(0.0, 1.0 - y * f)
    dw = w - w0
    reg_p = 0.5 * float(dw @ dw)
    reg_d = 0.5 * float(w @ w) - 0.5 * float(w0 @ w0)
    if loss == "squared_hinge":
        primal = reg_p + 0.5 * C * float(sw @ (viol * viol))
        dual = float(alpha.sum()) - reg_d - 0.5 * float(diag @ (alpha * alpha))
    else:
        primal = reg_p + 0.5 * C * float(sw @ viol)
        dual = float(alpha.sum()) - reg_d
    return primal, dual, primal - dual


def dual_cd(F, y, C=1.0, *, loss="squared_hinge", sample_weight=None, fit_intercept=True,
            tol=1e-3, max_iter=1000, dual0=None, shrinking=True, shuffle=True,
            random_state=None, max_seconds=None, offset=None, callback=None):
    """Minimise P(w, b) (module docstring) by dual coordinate descent.

    Parameters
    ----------
    F : ndarray of shape (n, m), float32 or float64, C-contiguous
        Explicit features, read row by row in place (a ``np.memmap`` works; nothing is copied
        into another format or dtype).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
        Loss weight of the SVM family (``C = 2 * C_liblinear``).
    loss : {'squared_hinge', 'hinge'}
        L2-loss or L1-loss SVM.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights s_i; a zero weight removes the row.
    fit_intercept : bool
        Add the penalized bias feature (value 1). False fixes b = 0.
    tol : float
        Stop when the duality gap is at most ``tol * P(w, b)`` (relative gap).
    max_iter : int
        Maximum passes (epochs) over the active rows.
    dual0 : ndarray of shape (n,), optional
        Warm start: a previous dual vector (clipped into the box; the primal point is
        rebuilt from it). Zeros by default.
    shrinking : bool
        Drop rows that stay at a bound from the passes (LIBLINEAR's rule); they are restored
        before convergence is declared on the active set alone.
    shuffle : bool
        Visit the active rows in a fresh random order every pass.
    random_state : int, numpy Generator or None
        Seed of the visiting order.
    max_seconds : float, optional
        Wall-clock budget, checked between passes.
    offset : ndarray of shape (m + 1,), optional
        Block minimization: the fixed contribution ``[w0, b0] = sum_j alpha_j y_j [F_j, 1]``
        of rows outside ``F`` whose dual variables are held fixed. The solver then minimises
        the full dual over the rows of ``F`` only; the returned primal point is
        ``offset + sum_i alpha_i y_i [F_i, 1]``, and ``objective`` / ``gap`` refer to the
        block problem ``1/2 ||[w, b] - offset||^2 + C/2 sum_i s_i loss_i``.
    callback : callable, optional
        Called after every pass with a dict (n_iter, grad_norm, n_active, and objective and
        gap when the gap was evaluated); ``grad_norm`` is the spread max PG - min PG of the
        projected gradient over the pass.

    Returns
    -------
    SolverResult
        ``coef`` = w (float64, shape (m,)), ``intercept`` = b, ``objective`` = P(w, b),
        ``dual`` = alpha, ``gap`` = P - D at the returned point, ``tol_reached`` = the
        absolute gap threshold. A KeyboardInterrupt propagates.
    """
    from ._dual_cd_kernels import dcd_epoch, weights_from_dual

    F = _as_rows(F)
    n, m = F.shape
    y, sw, alpha, w0 = _check_vectors(n, m, y, sample_weight, dual0, offset)
    bias = 1.0 if fit_intercept else 0.0
    diag, upper = _box(loss, float(C), sw)
    qd = _squared_norms(F) + bias + diag
    alpha = np.clip(alpha, 0.0, upper)
    w = weights_from_dual(F, alpha * y, bias, np.zeros(m + 1)) + w0
    index = np.flatnonzero(upper > 0).astype(np.int64)  # zero-weight rows never move
    active = len(index)
    rng = np.random.default_rng(random_state)
    margins = np.empty(n)
    pg_max_old, pg_min_old = np.inf, -np.inf
    status, n_iter, history = "max_iter", 0, []
    spread, primal, gap = np.inf, np.nan, np.nan
    start = time.perf_counter()
    for n_iter in range(1, max_iter + 1):
        if shuffle:
            rng.shuffle(index[:active])
        full_pass = active == len(index)
        active, pg_max, pg_min = dcd_epoch(F, y, alpha, w, qd, diag, upper, index,
                                           active, bias, pg_max_old, pg_min_old)
        spread = pg_max - pg_min if active else 0.0
        # The exact gap costs a pass over all n rows; with shrinking the epochs may touch
        # far fewer, so it is checked on full passes, when the active rows look
        # converged, and every _GAP_EVERY passes.
        settled = spread <= tol and not full_pass
        info = {"n_iter": n_iter, "grad_norm": spread, "n_active": active}
        if full_pass or settled or n_iter % _GAP_EVERY == 0 or n_iter == max_iter:
            primal, _, gap = _gap(F, y, alpha, w, w0, bias, loss, C, sw, diag, margins)
            check_finite("dual_cd", n_iter, objective=primal, duality_gap=gap)
            info.update(objective=primal, gap=gap)
        history.append(info)
        if callback is not None:
            callback(info)
        if "gap" in info and gap <= tol * primal:
            status = "converged"
            break
        if not shrinking or settled:
            # Converged on the active rows only: bring the shrunk rows back.
            active, pg_max_old, pg_min_old = len(index), np.inf, -np.inf
        else:
            pg_max_old = pg_max if pg_max > 0 else np.inf
            pg_min_old = pg_min if pg_min < 0 else -np.inf
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            status = "time_limit"
            primal, _, gap = _gap(F, y, alpha, w, w0, bias, loss, C, sw, diag, margins)
            break
    return SolverResult(
        coef=w[:m].copy(), intercept=float(w[m]), objective=primal, grad_norm=spread,
        tol_reached=tol * primal, n_iter=n_iter, converged=status == "converged",
        status=status, message=_message(status, n_iter, gap, tol * primal), history=history,
        dual=alpha, gap=gap,
    )


def _message(status, n_iter, gap, threshold):
    reason = {"converged": "duality gap below the tolerance",
              "max_iter": "maximum number of passes reached",
              "time_limit": "time budget (max_seconds) exhausted"}[status]
    return f"{reason} after {n_iter} passes: gap {gap:.3g} (threshold {threshold:.3g})."
