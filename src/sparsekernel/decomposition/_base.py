"""Glue shared by the reduced kernel transformers: basis, kernel, one-pass moments, projection.

Every estimator here fits in the same three steps: choose the basis Z, fold the row blocks of
the reduced kernel data K(X, Z) into an m x m covariance (and slice means or cross-covariances)
with :class:`~sparsekernel.solvers.MomentAccumulator`, then solve a small eigenproblem in
:mod:`sparsekernel.solvers.eigen`. Peak memory is O(n d + m^2 + block m): K(X, X) is never
formed and K(X, Z) is never stored.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import validate_data

from ..features import make_kernel, select_basis
from ..features._reduced import BASIS_CONSTRAINTS, KERNEL_CONSTRAINTS
from ..kernels import Kernel
from ..solvers import MomentAccumulator
from ..utils import Interval, parse_memory_budget, validate_params

DTYPES = [np.float64, np.float32]

_KERNEL_DOC = """kernel : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}, default='rbf'
        Kernel function.
    gamma : 'scale', 'auto' or float, default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()) as in scikit-learn's SVC.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Offset of the polynomial and sigmoid kernels.
    n_basis : 'auto', int or float, default='auto'
        Number m of basis points: an int in [1, n], a fraction of n in (0, 1], or 'auto' =
        min(n, 1000). Ignored when ``basis`` is an array."""

_MEMORY_DOC = """memory_budget : int, str or None, default=None
        Bytes for one block of kernel evaluations (None: 1 GiB). K(X, Z) is computed and
        folded into the m x m moments block by block; it is never stored.
    random_state : int, RandomState or None, default=None
        Seed for the basis selection."""

#: Constraint on ``n_components`` shared by the three transformers.
N_COMPONENTS = {"n_components": [None, Interval("int", 1, None, closed="left")]}


def doc(text):
    """Fill the shared parameter blocks into a class docstring."""
    return text.replace("{kernel_params}", _KERNEL_DOC).replace("{memory_params}", _MEMORY_DOC)


class ReducedKernelBase(TransformerMixin, BaseEstimator):
    """Parameter checking, basis selection, block-wise moments and the fitted projection."""

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **BASIS_CONSTRAINTS, **N_COMPONENTS}

    def _check_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))
        parse_memory_budget(self.memory_budget)

    def _validate_X(self, X, reset):
        X = validate_data(self, X, accept_sparse="csr", dtype=DTYPES, reset=reset)
        if reset:
            check_n_samples(self, X)
        return X

    def _kernel_map(self, X, y_basis=None):
        """Choose Z on X and build the kernel; returns (kernel, BasisResult)."""
        res = select_basis(X, y_basis, self.n_basis, self.basis, self.random_state)
        kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X, res.gamma)
        return kern, res

    def _fitted_kernel(self, gamma):
        return Kernel(self.kernel, gamma=gamma, degree=self.degree, coef0=self.coef0,
                      memory_budget=self.memory_budget)

    def _project(self, X, basis, gamma, mean, components):
        """``(K(X, Z) - mean) @ components.T`` block by block, in X's dtype."""
        Z = basis.astype(X.dtype, copy=False)
        scores = self._fitted_kernel(gamma).apply(X, Z, components.T)
        scores -= mean @ components.T
        return scores.astype(X.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def check_n_samples(est, X):
    """A covariance needs two rows; say so before anything else fails on n_samples=1."""
    if X.shape[0] < 2:
        raise ValueError(f"{type(est).__name__} needs at least 2 samples to estimate a "
                         f"covariance; got n_samples={X.shape[0]}.")


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

