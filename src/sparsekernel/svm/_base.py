"""The SVM family's objective, and the fit glue of ReducedSVC/SVR (and so SmoothSVC/SVR).

Objective. Every estimator of the family (LowRankSVC included) solves, per binary
sub-problem (one-vs-rest for multiclass) or regression target::

    min_{w, b}  1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss_i
    f(x) = sum_j w_j K(x, z_j) + b

so ``C`` means the same everywhere. ``s_i`` is ``sample_weight`` times the class weight.
``loss_i`` is the squared smooth hinge p(1 - y_i f(x_i))^2 with y_i in {-1, +1} (classifiers)
or the squared smooth epsilon-insensitive loss p(f(x_i) - y_i - epsilon)^2 + p(y_i - f(x_i) -
epsilon)^2 (regressors), p the smooth plus function of ``smoothing`` (see ReducedSVC). Both w
and b are penalized, as in the SSVM papers, which makes the Newton system positive definite.
For the squared hinge, ``C = 2 * C_liblinear`` on the same features.

Basis. The solver sees the features F = K(X, Z) (RSVM), stored when they fit
``memory_budget`` and else recomputed block by block at every pass; ``n_basis=None`` is Z = X
(:class:`~sparsekernel.SmoothSVC`, :class:`~sparsekernel.SmoothSVR`). There, with the exact
losses (smoothing=inf), the fit solves in the rows' coordinates (:func:`solve_in_rows`):
n-square systems on the active rows instead of (n+1)-square Hessians summed over them at
every step: a cheaper fit, and exactly optimal at its end.
"""

from __future__ import annotations

import functools

import numpy as np

from .._input import fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    N_BASIS,
    KernelExpansionMixin,
    SparseKernelEstimator,
    report_result,
)
from ..basis import make_kernel
from ..compute import gram, planned_threads, rmatmul
from ..features import reduced_design
from ..kernels._functions import working_dtype
from ..solvers import newton_kernel
from ..solvers.newton_ovr import newton_ovr
from ..utils import Interval, SolverProgress, constraints
from ._memory import Budget, budget_holding, reduced_plan, warm_start_fits

__all__ = ["SVM_CONSTRAINTS", "BaseSmoothSVM", "kernel_newton", "solve_in_rows",
           "solve_newton"]

SVM_CONSTRAINTS = {
    **KERNEL_CONSTRAINTS,
    **BASIS_CONSTRAINTS,
    "n_basis": [None, *N_BASIS],
    **constraints("C", "tol", "max_iter", "verbose"),
    "smoothing": [Interval("real", 0, None, closed="right")],  # inf: the exact loss
}


class BaseSmoothSVM(KernelExpansionMixin, SparseKernelEstimator):
    """Basis -> features -> one Newton solve per column of targets; subclasses give the loss."""

    _parameter_constraints = SVM_CONSTRAINTS

    def _design(self, X, y_basis, k=1):
        """The features the solver sees (stored, or blocks recomputed at every pass, as the
        memory plan allows: :mod:`sparsekernel.svm._memory`) for k problems; sets
        ``basis_``, ``basis_indices_`` and ``gamma_``."""
        n, itemsize = X.shape[0], np.result_type(X.dtype, np.float32).itemsize
        budget = Budget(self)

        def plan(m, stored=False):
            return reduced_plan(budget, self, n, m, k, itemsize, stored)

        if self.n_basis is not None:
            m_max = budget.check_n_basis(self.n_basis, n, plan,
                                         lambda m: plan(m, stored=True))
            kern, _ = self._fit_kernel_basis(
                X, y_basis, m_max, budget_for=lambda m: budget_holding(
                    self, lambda b: reduced_plan(b, self, n, m, k, itemsize, True).total))
        else:
            self._check_full_kernel()
            if self.kernel == "linear":  # the linear SSVM, in the primal on X itself
                self.basis_ = self.basis_indices_ = self.gamma_ = None
                return X
            plan(n).require(f"n_basis=None is the full {self.kernel!r} kernel on all n={n} "
                            "rows: use the reduced estimator (n_basis << n, e.g. 'auto') or "
                            "raise memory_budget")
            kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                               self.memory_budget, X)
            self.basis_, self.basis_indices_ = X.copy(), np.arange(n)
            self.gamma_ = kern.gamma
        store = plan(self.basis_.shape[0], stored=True).fits()
        kern.memory_budget = int(budget.kernel)  # the blocks' share of the budget
        # The full kernel against X itself: K(X, X) is computed as a symmetric matrix
        # (half the products, :meth:`~sparsekernel.kernels.Kernel._gram`).
        Z = X if self.n_basis is None else self.basis_
        return reduced_design(kern, X, Z, store=store)

    def _fit(self, X, y, sample_weight):
        """The one fit, wherever X's rows are (:mod:`sparsekernel._input`): in memory,
        the features as :meth:`_design` plans them; on a dask collection, the basis chosen
        on a sample of every chunk and each chunk's K(X_p, Z) computed and kept on its
        worker, the solver of :meth:`_solve` on their
        :class:`~sparsekernel.distributed._rows.DaskRows`."""

        data = fit_input(self, X, y, sample_weight, namespaces=False)
        Y, sw, y_enc = data.targets(self)
        labels = self._problem_labels if y_enc is not None else None
        if data.local:
            self._solve(self._design(data.X, y_enc, Y.shape[1]), Y, sw, labels)
            return data.finish(self)
        if self.n_basis is None:
            raise ValueError(
                f"{type(self).__name__} with n_basis=None uses every row as a basis function "
                "(an n x n kernel): on rows that are not in memory pass n_basis (an int, a "
                "fraction or 'auto').")
        kern, _ = self._fit_kernel_basis(data.sample, data.y_basis(self), **data.basis_args)
        Z = self.basis_
        with data.rows(self, functools.partial(kern, Z=Z),
                       Z.shape[0], working_dtype(data.sample, Z)) as rows:
            self._solve(rows, Y, sw, labels)
        return data.finish(self)

    def _check_full_kernel(self):
        """``n_basis=None``: no other basis was asked for."""
        if not (isinstance(self.basis, str) and self.basis == "random"):
            raise ValueError(
                f"{type(self).__name__} with n_basis=None uses every training row as a basis "
                f"function, so basis={self.basis!r} would not be used; pass n_basis (an int, "
                "a fraction or 'auto') to choose the basis with it."
            )

    def _in_rows(self):
        """Whether the fit solves in the rows' coordinates (:func:`solve_in_rows`): the full
        kernel (n_basis=None, not linear) with an exact piecewise-quadratic loss."""
        return (self.n_basis is None and self.kernel != "linear"
                and np.isinf(self._loss().alpha))

    def _solve(self, F, Y, sample_weight, labels=None):
        """Every column of Y: on the full kernel in the rows' coordinates, else all at once
        by :func:`~sparsekernel.solvers.newton_ovr.newton_ovr` on the features (stored,
        recomputed or a provider's), with the loss of the estimator."""
        if isinstance(F, np.ndarray) and self._in_rows():
            fit = solve_in_rows(self, F, Y, sample_weight, labels,
                                getattr(self._loss(), "epsilon", None))
        else:
            budget = Budget(self)
            fit = solve_newton(self, F, Y, sample_weight, labels, budget, self._loss(),
                               warm_start=warm_start_fits(F, budget))
        self.coef_, self.intercept_, self.n_iter_, self.objective_ = fit


def solve_in_rows(est, F, Y, sample_weight, labels, epsilon=None):
    """Every column of Y on the full kernel F = K(X, X), in the rows' coordinates: with
    w = F^T a and b = sum(a) the objective is newton_kernel's on F F^T
    (:mod:`sparsekernel.solvers.newton_kernel`), one n-square system per Newton step where
    the feature-space Hessian is (n+1)-square and summed over the active rows at every
    step. F is symmetric, so F F^T = F^T F is one ``syrk`` of its rows. Exact at its end.

    Returns ``(coef (k, n), intercept (k,), n_iter (k,), objective (k,))``.
    """
    threads = planned_threads()
    results = kernel_newton(est, gram(F, threads), Y, sample_weight, labels, epsilon)
    A = np.column_stack([r.coef for r in results])
    coef = rmatmul(F, A, threads)[:-1].T  # (rmatmul's last row is the sum: the intercepts)
    return (np.ascontiguousarray(coef), np.array([r.intercept for r in results]),
            np.array([r.n_iter for r in results]), np.array([r.objective for r in results]))


def kernel_newton(est, K, Y, sample_weight, labels, epsilon=None):
    """:func:`~sparsekernel.solvers.newton_kernel.newton_kernel` with ``est``'s C, tol and
    max_iter, its progress shown and each result reported (one per column of Y)."""
    with SolverProgress(est.verbose, Y.shape[1], type(est).__name__) as progress:
        log = progress.callback(None)

        def report(info):
            if log is not None:
                log(info)
            progress.done()

        results = newton_kernel(K, Y, C=est.C, sample_weight=sample_weight, tol=est.tol,
                                max_iter=est.max_iter, callback=report, epsilon=epsilon)
    for label, res in zip(labels or [None] * len(results), results, strict=True):
        report_result(est, res, label)
    return results


def solve_newton(est, F, Y, sample_weight, labels, budget, loss=None, C=None,
                 warm_start=True):
    """All problems of ``est`` (the columns of Y) on the features F (stored, recomputed or
    a provider's), jointly (:func:`~sparsekernel.solvers.newton_ovr.newton_ovr`, on the
    planned threads), with the solver's buffers and kept Hessians sized from the fit's
    ``budget`` (:class:`~sparsekernel.svm._memory.Budget`); ``loss``: newton_ovr's (None:
    the squared hinge); ``C``: another than ``est.C``; ``warm_start``: newton_ovr's.

    Returns ``(coef (k, m), intercept (k,), n_iter (k,), objective (k,))``.
    """
    k = Y.shape[1]
    with SolverProgress(est.verbose, k, type(est).__name__) as progress:
        log = progress.callback(None)

        def report(info):
            for _ in range(k - info["n_unconverged"] - progress.n_done):
                progress.done()
            if log is not None:
                log(info)

        results = newton_ovr(F, Y, C=est.C if C is None else C, sample_weight=sample_weight,
                             tol=est.tol, max_iter=est.max_iter, hessian_bytes=budget.hessians,
                             gather_bytes=budget.gather(F.shape[1]), callback=report,
                             loss=loss, warm_start=warm_start)
        for _ in range(k - progress.n_done):  # those stopped unconverged end here
            progress.done()
    for label, res in zip(labels or [None] * k, results, strict=True):
        report_result(est, res, label)
    return (np.array([r.coef for r in results]), np.array([r.intercept for r in results]),
            np.array([r.n_iter for r in results]), np.array([r.objective for r in results]))
