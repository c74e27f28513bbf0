"""Shared fit/predict glue for the smooth (SSVM/SSVR) and reduced (RSVM/RSVR) estimators.

All four solve, per binary sub-problem (one-vs-rest for multiclass) or regression target::

    min_{w, b}  1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * l(f(x_i), y_i)
    f(x) = sum_j w_j K(x, z_j) + b

on explicit features F = K(X, Z): Z = X for the Smooth* (full kernel) estimators, m << n
chosen basis points for the Reduced* ones. ``s_i`` = sample_weight times the class weight;
``l`` is the squared smooth hinge p(1 - y f, smoothing)^2 or the squared smooth
epsilon-insensitive loss. ``smoothing=inf`` gives the exact squared hinge / squared
epsilon-insensitive loss, solved by generalized Newton (the SSVM toolbox's default).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ..basis import BasisResult
from ..features import make_kernel, reduced_design, select_basis
from ..features._reduced import BASIS_CONSTRAINTS, KERNEL_CONSTRAINTS
from ..kernels import Kernel
from ..solvers import newton_armijo
from ..utils import Interval, SolverProgress, parse_memory_budget, validate_params

SOLVER_CONSTRAINTS = {
    "C": [Interval("real", 0, None, closed="neither")],
    "smoothing": [Interval("real", 0, None, closed="neither")],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 1, None, closed="left")],
    "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
}

_DTYPES = [np.float64, np.float32]


class BaseSmoothSVM(BaseEstimator):
    """Fit/predict machinery; subclasses choose the loss, targets and basis strategy."""

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **SOLVER_CONSTRAINTS}
    #: True for Reduced* (choose m basis points), False for Smooth* (Z = X).
    _reduced = False

    def _check_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))
        parse_memory_budget(self.memory_budget)

    def _validate_X(self, X, reset):
        return validate_data(self, X, accept_sparse="csr", dtype=_DTYPES, reset=reset)

    def _select_basis(self, X, y_basis, kernel):
        if self._reduced:
            return select_basis(X, y_basis, self.n_basis, self.basis, self.random_state,
                                kernel)
        self._check_full_kernel_memory(X.shape[0])
        return BasisResult(centers=X.copy(), indices=np.arange(X.shape[0]))

    def _check_full_kernel_memory(self, n):
        hessian_bytes = 8 * (n + 1) ** 2
        budget = parse_memory_budget(self.memory_budget)
        if hessian_bytes > budget:
            raise ValueError(
                f"{type(self).__name__} with the full {self.kernel!r} kernel needs an "
                f"(n+1)x(n+1) Newton system: {hessian_bytes / 2**20:.0f} MiB for n={n}, "
                f"above memory_budget={budget / 2**20:.0f} MiB. Use the reduced estimator "
                f"(n_basis << n) or raise memory_budget."
            )

    def _design(self, X, y_basis):
        """Features for the solver; sets basis_, basis_indices_ and gamma_."""
        if not self._reduced and self.kernel == "linear":
            # The linear SSVM works in the primal on X itself (m = n_features).
            self.basis_, self.basis_indices_, self.gamma_ = None, None, None
            return X
        kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X)
        res = self._select_basis(X, y_basis, kern)
        if res.gamma is not None:  # per-centre widths from the selector replace gamma
            kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                               self.memory_budget, X, res.gamma)
        self.basis_, self.basis_indices_, self.gamma_ = res.centers, res.indices, kern.gamma
        return reduced_design(kern, X, res.centers)

    def _solve(self, F, problems, sample_weight):
        """Run Newton-Armijo on each (label, targets) problem; store coef_, intercept_, ..."""
        loss = self._loss()
        results = []
        with SolverProgress(self.verbose, len(problems), type(self).__name__) as progress:
            for label, target in problems:
                res = newton_armijo(F, target, loss, C=self.C, sample_weight=sample_weight,
                                    tol=self.tol, max_iter=self.max_iter,
                                    callback=progress.callback(label))
                progress.done()
                results.append(res)
                if self._report(res, label, len(problems)):
                    break
        m = F.shape[1]
        coef = np.zeros((len(problems), m))
        intercept = np.zeros(len(problems))
        for k, res in enumerate(results):
            coef[k], intercept[k] = res.coef, res.intercept
        self.n_iter_ = np.array([r.n_iter for r in results] + [0] * (len(problems) -
                                                                      len(results)))
        self.objective_ = np.array([r.objective for r in results] + [np.nan] *
                                   (len(problems) - len(results)))
        return coef, intercept

    def _report(self, res, label, n_problems):
        """Warn about non-convergence; return True when the user interrupted the fit."""
        name = type(self).__name__
        where = f" for class {label!r}" if n_problems > 1 or label is not None else ""
        if res.status == "interrupted":
            warnings.warn(f"{name} fit interrupted{where}: {res.message} Problems not yet "
                          "solved keep zero coefficients.", UserWarning, stacklevel=4)
            return True
        if not res.converged:
            warnings.warn(f"{name} did not converge{where}: {res.message}",
                          ConvergenceWarning, stacklevel=4)
        return False

    def _kernel(self):
        return Kernel(self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0,
                      memory_budget=self.memory_budget)

    def _raw_decision(self, X):
        """K(X, Z) coef^T + intercept, block by block: shape (n, n_problems)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        coef = np.atleast_2d(self.coef_)
        if self.basis_ is None:
            scores = np.asarray(X @ coef.T)
        else:
            Z = self.basis_.astype(X.dtype, copy=False)
            scores = self._kernel().apply(X, Z, coef.T)
        return scores + np.atleast_1d(self.intercept_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class ReducedMixin:
    """Parameters shared by the Reduced* estimators (basis size and strategy)."""

    _reduced = True
    _parameter_constraints = {**BaseSmoothSVM._parameter_constraints, **BASIS_CONSTRAINTS}

