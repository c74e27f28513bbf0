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

from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SparseKernelEstimator,
)
from ..kernels import Kernel, resolve_gamma
from ..utils import Interval, Options, constraints, plain

__all__ = ["ExpansionClassifier", "SPARSE_MARGIN_CONSTRAINTS", "dedupe_rows", "dense_basis",
           "rbf_kernel"]

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
    _, first = np.unique(key, axis=0, return_index=True)
    return Z[np.sort(first)]


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

        Each one-vs-rest problem is one solve reported by ``_solve_each``; problems not
        reached after an interrupt keep zero coefficients. Returns the solver results.
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
