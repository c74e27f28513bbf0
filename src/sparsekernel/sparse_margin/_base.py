"""The sparse-margin family's objective (Wu, Schoelkopf & Bakir 2006) and its shared steps.

Every estimator here predicts ``f(x) = sum_j beta_j K(z_j, x) + b`` with the RBF kernel and
gets its coefficients, per binary (one-vs-rest) problem, from the exact SVM on Z (eq. 45)::

    min_{v, b}  1/2 ||v||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss(y_i (v . phi_z(x_i) + b))
    phi_z(x) = L^-1 [K(z_1, x) .. K(z_m, x)],   K(Z, Z) = L L^T,   beta = L^-T v

with ``s_i`` = sample_weight times the class weight and ``loss`` the hinge or squared hinge:
the SVM family's objective and scaling (``C = 2 * C_libsvm`` for the hinge loss; the bias is
penalized as in the whole package). The estimators differ only in how Z is chosen (see
:mod:`sparsekernel.sparse_margin`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SparseKernelEstimator,
    report_result,
)
from ..basis import BasisResult, BasisSelector, fit_kernel_basis
from ..kernels import Kernel, resolve_gamma
from ..solvers import basis_lbfgs
from ..utils import (
    Interval,
    Options,
    SolverProgress,
    constraints,
    plain,
    repeated_rows,
    seed_from,
    validate_params,
)
from ..utils.fitted_spec import CLASSES, FEATURES, INFO, OVR, ClassSpec, kernel_basis
from ._basis_svm import BasisSVM

__all__ = ["ExpansionClassifier", "LearnedBasis", "LearnedBasisClassifier",
           "SPARSE_MARGIN_CONSTRAINTS", "dedupe_rows"]

#: max_iter >= 0: 0 keeps the initial Z (the paper's MRSVM with random rows).
LBFGS_MAX_ITER = [Interval("int", 0, None, closed="left")]
LOSSES = [Options("hinge", "squared_hinge")]

SPARSE_MARGIN_CONSTRAINTS = {
    **constraints("C", "tol", "memory_budget", "class_weight", "random_state", "verbose"),
    "kernel": [Options("rbf", "gaussian")],
    "gamma": KERNEL_CONSTRAINTS["gamma"],
    **BASIS_CONSTRAINTS,
    "loss": LOSSES,
    "max_iter": LBFGS_MAX_ITER,
}

#: dual_cd passes for the final coefficient solve on the chosen Z.
FINAL_MAX_ITER = 20000


def dedupe_rows(Z, decimals=None):
    """Z without repeated rows (first occurrence kept, order preserved).

    Coinciding expansion vectors make K_z singular (the paper removes duplicated points);
    ``decimals`` rounds before comparing, to merge vectors that became numerically equal.
    """
    key = Z if decimals is None else np.round(Z, decimals)
    return Z[repeated_rows(key)[0]]


def dense_basis(Z):
    """Dense float64 copy of basis points (CSR or array), duplicates removed."""
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return dedupe_rows(np.array(Z, dtype=np.float64))


def rbf_kernel(kernel, X, owner):
    """``kernel`` checked to be RBF with one width (None: RBF with gamma='scale' on X).

    The gradient of W(Z) is written for ``exp(-gamma ||x - z||^2)`` with a scalar gamma.
    """
    if kernel is None:
        return Kernel("rbf", gamma=resolve_gamma("scale", X))
    if kernel.name != "rbf" or not np.isscalar(kernel.gamma):
        raise ValueError(f"{owner} learns Z for the 'rbf' kernel with one scalar gamma (the "
                         f"gradient is RBF-specific); got {kernel!r}.")
    return kernel


def sparse_margin_spec():
    """The fitted attributes of a classifier on learned expansion vectors."""
    return ClassSpec({**FEATURES, **CLASSES, **kernel_basis(csr=False), **OVR,
                      "objective_": INFO, "objective_init_": INFO, "n_iter_": INFO})


class ExpansionClassifier(OneVsRestClassifierMixin, KernelExpansionMixin,
                          SparseKernelEstimator):
    """Shared steps: the weighted-classes check and the exact SVM on Z (eq. 45)."""

    def _check_weighted_classes(self, y_enc, sw):
        weighted = np.bincount(y_enc, weights=sw, minlength=len(self.classes_)) > 0
        if weighted.sum() < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes with positive "
                f"weight; only class {plain(self.classes_[weighted.argmax()])!r} has any."
            )

    def _fit_coefficients(self, svm, Z):
        """Set ``basis_`` (Z, near-duplicates merged), ``coef_`` and ``intercept_``.

        Each one-vs-rest problem is one solve reported by ``_solve_each``. Returns the solver
        results.
        """
        self.basis_ = dedupe_rows(Z, decimals=10)
        feats = svm.features(self.basis_)
        k = self._n_problems
        results = self._solve_each(
            k, lambda j, cb: svm.solve_one(j, feats, max_iter=FINAL_MAX_ITER, callback=cb),
            self._problem_labels)
        self.coef_, self.intercept_ = np.zeros((k, len(self.basis_))), np.zeros(k)
        for j, res in enumerate(results):
            self.coef_[j], self.intercept_[j] = svm.expansion(feats, res), res.intercept
        return results


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

    _parameter_constraints = {**constraints("tol", "verbose"), "init": BASIS_CONSTRAINTS["basis"],
                              "max_iter": LBFGS_MAX_ITER}

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
        _, start = fit_kernel_basis(X, y, kernel=kernel.name, gamma=kernel.gamma,
                                    memory_budget=kernel.memory_budget, n_basis=n_basis,
                                    basis=self.init, random_state=rng)
        objective = self.objective(kernel, X, _targets(y), None, seed_from(rng))
        with SolverProgress(self.verbose, 1, name) as progress:
            result = self.learn(objective, dense_basis(start.centers), progress.callback(None))
        report_result(self, result)
        Z = result.coef.astype(X.dtype)
        return BasisResult(centers=sp.csr_matrix(Z) if sp.issparse(X) else Z,
                           info={"result": result})

    def learn(self, objective, Z0, callback=None):
        """L-BFGS over Z from Z0: the :func:`~sparsekernel.solvers.basis_lbfgs` result."""
        return basis_lbfgs(objective.value_and_grad, Z0, max_iter=self.max_iter, tol=self.tol,
                           callback=callback)

    def objective(self, kernel, X, Y, sample_weight, seed):
        """The criterion W on (X, Y (n, k) of +-1, weights): has ``value_and_grad(Z)``."""
        raise NotImplementedError


class LearnedBasisClassifier(ExpansionClassifier):
    """fit = initial Z from ``basis`` -> Z learned by ``_selector()`` -> SVM on Z (eq. 45).

    Subclasses define ``_selector()``: a :class:`LearnedBasis` from their parameters.
    """

    def _memory_parts(self, n, m, d, itemsize):
        """The shared plan plus the n x m float64 arrays every evaluation of W(Z) holds:
        K(X, Z), its whitened (SVM) or centred (Fisher) copies and the gradient's weighted
        rows, five at most."""
        return {**super()._memory_parts(n, m, d, itemsize), "features": 5 * 8.0 * n * m}

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
        # An objective that is the SVMs on Z (SLMC's) is re-solved tightly from its last duals.
        svm = objective if isinstance(objective, BasisSVM) else BasisSVM(
            kernel, X, Y, C=self.C, loss=self.loss, sample_weight=sw, tol=self.tol / 10,
            random_state=seed)
        finals = self._fit_coefficients(svm, result.coef)
        self.objective_ = (float(sum(r.objective for r in finals)) if svm is objective
                           else float(result.objective))  # W at basis_
        self.objective_init_ = (float(result.history[0]["objective"]) if result.history
                                else float("nan"))
        self.n_iter_ = result.n_iter
        return self
