"""Glue shared by the reduced kernel transformers: basis, one-pass moments, projection.

Every estimator here fits in the same three steps: choose the basis Z (through the one
basis -> kernel path of :mod:`sparsekernel.base`, so a selector gets the estimator's kernel),
fold the row blocks of the reduced kernel data K(X, Z) into an m x m covariance (and slice
means or cross-covariances) with :class:`~sparsekernel.solvers.MomentAccumulator`, then solve
a small eigenproblem in :mod:`sparsekernel.solvers.eigen`. Peak memory is O(n d + m^2 + block
m): K(X, X) is never formed and K(X, Z) is never stored. Nothing iterates, so these
estimators take no ``verbose``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin

from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    N_BASIS,
    KernelExpansionMixin,
    SparseKernelEstimator,
)
from ..basis import make_kernel
from ..compute import astype, namespace_of
from ..solvers import MomentAccumulator
from ..utils import Interval


class ReducedKernelBase(TransformerMixin, KernelExpansionMixin, SparseKernelEstimator):
    """Basis selection (or every row), block-wise moments and the fitted projection."""

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **BASIS_CONSTRAINTS,
                              "n_basis": [None, *N_BASIS],
                              "n_components": [None, Interval("int", 1, None, closed="left")]}
    _requires_y = False  # KSIR and KCCA need y (the slices, the second view)
    #: The m x m covariance, a block's cross-product, and the eigenproblem's matrix,
    #: eigenvectors and workspace (solvers.eigen): the shared plan's m x m arrays.
    _M_SQUARES = 7

    def _validate_X(self, X, reset=False):
        X = super()._validate_X(X, reset=reset)
        if reset:
            check_n_samples(self, X)
        return X

    def _fit_basis(self, X, y_basis=None, gamma=None, n_rows=None, X_device=None):
        """Set ``basis_``, ``basis_indices_``, ``gamma_``; return the fitted kernel
        (``gamma``, ``n_rows``, ``X_device``: see :meth:`_fit_kernel_basis`)."""
        if self.n_basis is not None:
            return self._fit_kernel_basis(X, y_basis, gamma=gamma, n_rows=n_rows,
                                          X_device=X_device)[0]
        check_full_kernel(self, X)
        kern = self._view_kernel(X)
        self.basis_, self.basis_indices_ = X.copy(), np.arange(X.shape[0])
        self.gamma_ = kern.gamma
        return kern

    def _view_kernel(self, X):
        """The kernel with gamma resolved on X (no basis selection)."""
        return make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X)

    def _project(self, X, kernel, basis, mean, components, wide=False):
        """``(K(X, Z) - mean) @ components.T`` block by block, in X's dtype; ``wide``: K and
        the product in float64 (components through a Nystrom map, which carry its small
        directions: the precision policy of :ref:`precision`)."""
        xp = namespace_of(components)  # NumPy, or the device of a model moved there
        shift = xp.reshape(mean, (1, -1)) @ components.T
        if xp is not np:
            scores = kernel.apply(X, basis, components.T, dtype=np.float64 if wide else X.dtype)
            return astype(scores - astype(shift, scores.dtype), X.dtype)
        Z = basis.astype(np.float64 if wide else X.dtype, copy=False)
        scores = kernel.apply(X, Z, components.T)
        scores -= shift
        return scores.astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.target_tags.required = self._requires_y
        return tags


def check_n_samples(est, X):
    """A covariance needs two rows; say so before anything else fails on n_samples=1."""
    if X.shape[0] < 2:
        raise ValueError(f"{type(est).__name__} needs at least 2 samples to estimate a "
                         f"covariance; got n_samples={X.shape[0]}.")


def check_full_kernel(est, X):
    """Refuse ``n_basis=None`` (every one of the n training rows a basis function) when the
    fit's memory plan on m = n (``est._memory_plan``, the rule of every estimator) exceeds
    the budget: :class:`~sparsekernel.utils.MemoryBudgetError` with the estimate."""
    (n, d), itemsize = X.shape, np.result_type(X.dtype, np.float32).itemsize
    est._memory_plan(n, n, d, itemsize).require(
        f"n_basis=None makes every one of the n={n} rows a basis function, with n x n "
        "covariance matrices: use a reduced basis (n_basis << n, e.g. 'auto') or raise "
        "memory_budget")


def chunk_moments(K, weight):
    """The :class:`~sparsekernel.solvers.MomentAccumulator` of one block of rows."""
    acc = MomentAccumulator()
    acc.update(K, weight)
    return acc


def kernel_moments(kern, X, Z, weight=None, group=None, n_groups=0):
    """One pass over the row blocks of K(X, Z): weighted mean, covariance, group means."""
    acc = MomentAccumulator(n_groups)
    for rows, K in kern.blocks(X, Z):
        acc.update(K, None if weight is None else weight[rows],
                   None if group is None else group[rows])
    return acc.result()


def joint_kernel_moments(kern_x, X, Zx, kern_y, Y, Zy):
    """Moments of the concatenated features [K(X, Zx), K(Y, Zy)] over the same row blocks."""
    rows_per_block = min(kern_x.block_rows(X, Zx), kern_y.block_rows(Y, Zy))
    acc = MomentAccumulator()
    pairs = zip(kern_x.blocks(X, Zx, rows_per_block), kern_y.blocks(Y, Zy, rows_per_block),
                strict=True)
    for (_, Kx), (_, Ky) in pairs:
        acc.update(np.hstack([np.asarray(Kx, dtype=np.float64),
                              np.asarray(Ky, dtype=np.float64)]))
    return acc.result()
