"""Shared glue of the LS-SVM family: exact and reduced fits, targets, weights, prediction.

Objective of the whole LS-SVM family (LSSVR/LSSVC, the pruned and online variants, and the
low-rank LR-LSSVM), per regression target or one-vs-rest class problem::

    min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2,   f(x) = w^T phi(x) + b

``s_i`` is ``sample_weight`` times the class weight; classifiers use targets y_i in {-1, +1}
(Suykens' equality constraints y_i f(x_i) = 1 - e_i give the same e_i^2). Relation to the SVM
family (svm/_base.py, ``1/2 ||w||^2 + 1/2 b^2 + C/2 sum_i s_i loss_i``): ``C`` scales the
summed loss identically, so the same ``C`` means the same trade-off; the differences are the
loss (the plain squared error instead of the squared (smooth) hinge or epsilon-insensitive
loss) and the bias, which LS-SVMs leave unpenalized, as in Suykens' formulation.
The LS-SVM papers' regularization parameter (gamma in Suykens, C in Kim et al.) is this C.

- exact (``n_basis=None``): ``phi`` is the kernel's feature map; the dual is the (n+1)
  bordered system on the n x n kernel matrix (``f(x) = sum_i alpha_i K(x, x_i) + b``).
- reduced (``n_basis`` given): the same problem restricted to functions spanned by m basis
  points Z, solved on the Nystrom features ``K(X, Z) K_ZZ^{-1/2}`` (eigenvalues of K_ZZ below
  1e-12 times the largest are dropped), i.e. ``||w||^2`` is the RKHS norm
  ``beta^T K_ZZ beta`` of ``f(x) = sum_j beta_j K(x, z_j) + b``. With Z = X it is the exact
  LS-SVM; the cost is O(n m^2) time and O(n m) memory (or O(block m) with recomputed blocks).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..basis import BasisSelector
from ..features import make_kernel, reduced_design, select_basis
from ..features._reduced import KERNEL_CONSTRAINTS
from ..solvers import lssvm_dual, lssvm_primal
from ..svm._base import _DTYPES, BaseSmoothSVM
from ..utils import Interval, Options, check_sample_weight, parse_memory_budget, plain

__all__ = ["LSSVMClassifierMixin", "LSSVMRegressorMixin", "BaseLSSVM", "exact_bytes"]

_EIG_FLOOR = 1e-12

LSSVM_CONSTRAINTS = {
    **KERNEL_CONSTRAINTS,
    "C": [Interval("real", 0, None, closed="neither")],
    "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
}
REDUCED_CONSTRAINTS = {
    "n_basis": [None, Options("auto"), Interval("int", 1, None, closed="left"),
                Interval("real", 0, 1, closed="right")],
    "basis": [str, "array-like", BasisSelector],
    "random_state": ["random_state"],
}


def exact_bytes(n):
    """Peak bytes of an exact LS-SVM fit on n rows: K, K + diag(1/(C s)) and its factor."""
    return 3 * 8 * n * n


class _ProjectedBlocks:
    """Row blocks of ``K(X, Z) @ T`` computed on demand (Nystrom features past the budget)."""

    def __init__(self, blocks, T):
        self.blocks, self.T = blocks, T

    @property
    def shape(self):
        return (self.blocks.shape[0], self.T.shape[1])

    dtype = np.dtype(np.float64)

    def take(self, indices):
        return self.blocks.take(indices) @ self.T

    def __iter__(self):
        for rows, Kb in self.blocks:
            yield rows, np.asarray(Kb, dtype=np.float64) @ self.T


def nystrom_map(K_zz):
    """``T = U diag(lambda)^{-1/2}`` over eigenpairs above the floor: F = K(X, Z) T."""
    vals, U = np.linalg.eigh(np.asarray(K_zz, dtype=np.float64))
    keep = vals > _EIG_FLOOR * max(vals.max(), 0.0)
    if not keep.any():
        raise ValueError("The basis kernel matrix K(Z, Z) has no positive eigenvalue; "
                         "the basis points or the kernel are degenerate.")
    return U[:, keep] / np.sqrt(vals[keep])


class BaseLSSVM(BaseSmoothSVM):
    """Exact or reduced LS-SVM fit; subclasses turn labels into target columns."""

    _parameter_constraints = {**LSSVM_CONSTRAINTS, **REDUCED_CONSTRAINTS}

    def _fit_targets(self, X, Y, sw, y_basis):
        """Solve for the target columns Y (n, k); set basis_, coef_ (k, m), intercept_ (k,)."""
        if self.n_basis is None:
            return self._fit_exact(X, Y, sw)
        return self._fit_reduced(X, Y, sw, y_basis)

    def _check_exact_memory(self, n):
        need, budget = exact_bytes(n), parse_memory_budget(self.memory_budget)
        if need > budget:
            raise ValueError(
                f"An exact {type(self).__name__} fit on n={n} rows needs the n x n kernel "
                f"matrix and its Cholesky factor: about {need / 2**20:.0f} MiB, above "
                f"memory_budget={budget / 2**20:.0f} MiB. Pass n_basis (e.g. n_basis=1000) "
                f"for the reduced LS-SVM, or raise memory_budget."
            )

    def _fit_exact(self, X, Y, sw):
        keep = np.flatnonzero(sw > 0)  # zero-weight rows have alpha = 0: leave them out
        self._check_exact_memory(len(keep))
        Xk = X[keep]
        kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X)
        res = lssvm_dual(kern(Xk, Xk), Y[keep], self.C, sw[keep])
        self.basis_, self.basis_indices_, self.gamma_ = Xk, keep, kern.gamma
        self.coef_ = np.ascontiguousarray(res.coef.T)
        self.intercept_ = np.atleast_1d(res.intercept)
        self.objective_ = res.objective
        return res

    def _fit_reduced(self, X, Y, sw, y_basis):
        sel = select_basis(X, y_basis, self.n_basis, self.basis, self.random_state)
        Z = sel.centers
        kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X, sel.gamma)
        T = nystrom_map(kern(Z, Z))
        F = reduced_design(kern, X, Z)
        F = F @ T if isinstance(F, np.ndarray) else _ProjectedBlocks(F, T)
        res = lssvm_primal(F, Y, self.C, sw)
        self.basis_, self.basis_indices_, self.gamma_ = Z, sel.indices, kern.gamma
        self.coef_ = np.ascontiguousarray((T @ res.coef).T)
        self.intercept_ = np.atleast_1d(res.intercept)
        self.objective_ = res.objective
        return res

    @property
    def n_support_(self):
        """Number of basis functions (support vectors) the model evaluates at prediction."""
        return self.basis_.shape[0]


class LSSVMClassifierMixin(ClassifierMixin):
    """Labels -> +-1 target columns (one-vs-rest past two classes) and back."""

    def _classifier_data(self, X, y, sample_weight):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; got 1 class "
                f"({plain(self.classes_[0])!r})."
            )
        sw = check_sample_weight(sample_weight, X.shape[0])
        if getattr(self, "class_weight", None) is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        return X, y_enc, self._targets(y_enc), sw

    def _targets(self, y_enc):
        if len(self.classes_) == 2:
            return np.where(y_enc == 1, 1.0, -1.0)[:, None]
        return np.where(y_enc[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)

    def decision_function(self, X):
        """Scores: shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes) one-vs-rest scores."""
        scores = self._raw_decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the sign for two classes, the largest one-vs-rest score otherwise."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]


class LSSVMRegressorMixin(RegressorMixin):
    """One real target column."""

    def _regressor_data(self, X, y, sample_weight):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES, y_numeric=True)
        sw = check_sample_weight(sample_weight, X.shape[0])
        return X, np.asarray(y, dtype=np.float64)[:, None], sw

    def _as_regressor(self):
        """coef_ (m,) and intercept_ float for a single target."""
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])

    def predict(self, X):
        """Predicted targets, shape (n,)."""
        return self._raw_decision(X).ravel()


def dense_rows(X):
    """A dense float64 copy of X (CSR rows are densified)."""
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
