"""Learned expansion vectors: a basis selector that moves Z by L-BFGS, and its classifiers."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..base import BASIS_CONSTRAINTS, report_result
from ..basis import BasisResult, BasisSelector, fit_kernel_basis
from ..solvers import basis_lbfgs
from ..utils import SolverProgress, constraints, seed_from, validate_params
from ._base import LBFGS_MAX_ITER, ExpansionClassifier, dense_basis, rbf_kernel

__all__ = ["LearnedBasis", "LearnedBasisClassifier"]

LEARNED_BASIS_CONSTRAINTS = {
    **constraints("tol", "verbose"),
    "init": BASIS_CONSTRAINTS["basis"],
    "max_iter": LBFGS_MAX_ITER,
}


def _targets(y):
    """+-1 one-vs-rest targets from class labels: one column for two classes."""
    classes, y_enc = np.unique(y, return_inverse=True)
    if len(classes) == 2:
        return np.where(y_enc == 1, 1.0, -1.0)[:, None]
    return np.where(y_enc[:, None] == np.arange(len(classes)), 1.0, -1.0)


class LearnedBasis(BasisSelector):
    """Base of the selectors that learn Z: ``init`` selection, then L-BFGS on W(Z).

    Subclasses define ``objective(kernel, X, Y, sample_weight, seed)`` returning an object
    with ``value_and_grad(Z)``, and their parameters ``init``, ``tol``, ``max_iter`` and
    ``verbose``. Non-convergence is reported by :func:`sparsekernel.base.report_result` with
    the selector as the owner.
    """

    _parameter_constraints = LEARNED_BASIS_CONSTRAINTS

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        """Learn ``n_basis`` points Z with ``kernel`` (RBF); ``info['result']`` is the
        L-BFGS :class:`~sparsekernel.solvers.SolverResult`.

        Needs class labels ``y`` (the objectives are classification criteria). Duplicated
        initial points are removed, so Z may have fewer than ``n_basis`` rows.
        """
        name = type(self).__name__
        validate_params(name, self._parameter_constraints, self.get_params(deep=False))
        if y is None or len(np.unique(y)) < 2:
            raise ValueError(f"{name} learns Z from class labels of at least 2 classes; it "
                             "cannot serve a regressor, a transformer or a single class.")
        kernel = rbf_kernel(kernel, X, name)
        rng = check_random_state(random_state)
        Z0 = self.initial_basis(X, y, n_basis=n_basis, random_state=rng, kernel=kernel)
        objective = self.objective(kernel, X, _targets(y), None, seed_from(rng))
        with SolverProgress(self.verbose, 1, name) as progress:
            result = self.learn(objective, Z0, progress.callback(None))
        report_result(self, result)
        Z = result.coef.astype(X.dtype)
        return BasisResult(centers=sp.csr_matrix(Z) if sp.issparse(X) else Z,
                           info={"result": result})

    def initial_basis(self, X, y, *, n_basis, random_state, kernel):
        """Dense float64 starting Z from ``init``, chosen with ``kernel``; no duplicates."""
        _, res = fit_kernel_basis(X, y, kernel=kernel.name, gamma=kernel.gamma,
                                  memory_budget=kernel.memory_budget, n_basis=n_basis,
                                  basis=self.init, random_state=random_state)
        return dense_basis(res.centers)

    def learn(self, objective, Z0, callback=None):
        """L-BFGS over Z from Z0: the :func:`~sparsekernel.solvers.basis_lbfgs` result."""
        return basis_lbfgs(objective.value_and_grad, Z0, max_iter=self.max_iter, tol=self.tol,
                           callback=callback)

    def objective(self, kernel, X, Y, sample_weight, seed):
        """The criterion W on (X, Y (n, k) of +-1, weights): has ``value_and_grad(Z)``."""
        raise NotImplementedError


class LearnedBasisClassifier(ExpansionClassifier):
    """fit = initial Z from ``basis`` -> Z learned by ``_selector()`` -> SVM on Z (eq. 45).

    Subclasses define ``_selector()`` (a :class:`LearnedBasis` from their parameters) and
    ``_coefficient_svm(objective, kernel, X, Y, sw, seed)``.
    """

    def fit(self, X, y, sample_weight=None):
        """Learn the expansion vectors and their coefficients.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms.

        Returns
        -------
        self
        """
        X, y_enc, Y, sw = self._classifier_data(X, y, sample_weight)
        self._check_weighted_classes(y_enc, sw)
        kernel, start = self._fit_kernel_basis(X, y_enc)
        kernel = rbf_kernel(kernel, X, type(self).__name__)
        selector, seed = self._selector(), seed_from(self.random_state)
        objective = selector.objective(kernel, X, Y, sw, seed)
        Z0 = dense_basis(start.centers)
        (result,) = self._solve_each(1, lambda _, cb: selector.learn(objective, Z0, cb))
        self.basis_indices_ = None  # the learned vectors are not training rows
        finals = self._fit_coefficients(
            self._coefficient_svm(objective, kernel, X, Y, sw, seed), result.coef)
        self.objective_ = self._final_objective(result, finals)
        self.objective_init_ = (float(result.history[0]["objective"]) if result.history
                                else float("nan"))
        self.n_iter_ = result.n_iter
        return self

    def _final_objective(self, result, finals):
        return float(result.objective)
