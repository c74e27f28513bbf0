"""Reduced kernel features K(X, Z): stored when they fit the budget, recomputed otherwise."""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..basis import BasisSelector, make_basis_selector, resolve_n_basis
from ..kernels import KERNELS, Kernel, resolve_gamma
from ..kernels._functions import working_dtype
from ..utils import Interval, Options, parse_memory_budget, validate_params

__all__ = ["KernelBlocks", "ReducedFeatures", "make_kernel", "reduced_design", "select_basis"]


class KernelBlocks:
    """Row blocks of K(X, Z) computed on demand, for solvers when storing K(X, Z) won't fit.

    Implements the solvers' row-block protocol (``shape``, ``dtype``, iteration over
    ``(rows, block)``); each pass recomputes the kernel, trading time for O(block * m) memory.
    """

    def __init__(self, kernel, X, Z):
        self.kernel, self.X, self.Z = kernel, X, Z
        self.block_rows = kernel.block_rows(X, Z)

    @property
    def shape(self):
        return (self.X.shape[0], self.Z.shape[0])

    @property
    def dtype(self):
        return working_dtype(self.X, self.Z)

    def take(self, indices):
        """K(X[indices], Z) as an array."""
        return self.kernel(self.X[indices], self.Z)

    def __iter__(self):
        return self.kernel.blocks(self.X, self.Z, self.block_rows)


def reduced_design(kernel, X, Z):
    """K(X, Z) as a stored array if it fits ``kernel.memory_budget``, else as KernelBlocks."""
    nbytes = X.shape[0] * Z.shape[0] * working_dtype(X, Z).itemsize
    if nbytes <= kernel.memory_budget:
        return kernel(X, Z)
    return KernelBlocks(kernel, X, Z)


def _accepts_kernel(selector):
    try:
        params = inspect.signature(selector.select).parameters
    except (TypeError, ValueError):
        return False
    return "kernel" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def select_basis(X, y, n_basis, basis, random_state, kernel=None):
    """Resolve ``n_basis`` and ``basis`` and return the selector's BasisResult.

    ``kernel`` (the estimator's Kernel with gamma resolved) is passed on to selectors whose
    ``select`` accepts it (IRSVM, systematic and clustering need kernel values).
    """
    selector = make_basis_selector(basis)
    m = resolve_n_basis(n_basis, X.shape[0]) if not hasattr(selector, "centers") else None
    extra = {"kernel": kernel} if kernel is not None and _accepts_kernel(selector) else {}
    return selector.select(X, y, n_basis=m, random_state=check_random_state(random_state),
                           **extra)


def make_kernel(kernel, gamma, degree, coef0, memory_budget, X, basis_gamma=None):
    """Build the Kernel with gamma resolved on X; per-centre widths from the basis win."""
    g = basis_gamma if basis_gamma is not None else resolve_gamma(gamma, X)
    return Kernel(kernel, gamma=g, degree=degree, coef0=coef0, memory_budget=memory_budget)


KERNEL_CONSTRAINTS = {
    "kernel": [Options(*KERNELS, "gaussian", "poly")],
    "gamma": [Options("scale", "auto"), Interval("real", 0, None, closed="neither")],
    "degree": [Interval("int", 1, None, closed="left")],
    "coef0": [Interval("real", None, None, closed="neither")],
    "memory_budget": [None, Interval("real", 1, None, closed="left"), str],
}
BASIS_CONSTRAINTS = {
    "n_basis": [
        Options("auto"),
        Interval("int", 1, None, closed="left"),
        Interval("real", 0, 1, closed="right"),
    ],
    "basis": [str, "array-like", BasisSelector],
    "random_state": ["random_state"],
}


class ReducedFeatures(TransformerMixin, BaseEstimator):
    """Map X to the reduced kernel features K(X, Z) on m basis points Z.

    Parameters
    ----------
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}, default='rbf'
    gamma : 'scale', 'auto' or float, default='scale'
        As in scikit-learn's SVC.
    degree : int, default=3
    coef0 : float, default=0.0
    n_basis : 'auto', int or float, default='auto'
        Number of basis points m: an int, a fraction of n in (0, 1], or 'auto' =
        min(n, 1000). Ignored when ``basis`` is an array.
    basis : str, array-like or BasisSelector, default='random'
        How to choose Z ('random', 'kmeans', 'incremental', 'systematic', 'clustering'),
        or Z itself. ('systematic' needs labels, which a transformer never sees.)
    memory_budget : int, str or None, default=None
        Bytes for one block of kernel evaluations (None: 1 GiB).
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features)
    basis_indices_ : ndarray of shape (m,) or None
    gamma_ : float or ndarray of shape (m,)
    n_features_in_ : int
    """

    _parameter_constraints = {**KERNEL_CONSTRAINTS, **BASIS_CONSTRAINTS}

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, n_basis="auto",
                 basis="random", memory_budget=None, random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None):
        """Choose the basis points Z from X."""
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))
        parse_memory_budget(self.memory_budget)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                           self.memory_budget, X)
        res = select_basis(X, None, self.n_basis, self.basis, self.random_state, kern)
        if res.gamma is not None:
            kern = make_kernel(self.kernel, self.gamma, self.degree, self.coef0,
                               self.memory_budget, X, res.gamma)
        self.basis_, self.basis_indices_, self.gamma_ = res.centers, res.indices, kern.gamma
        return self

    def _kernel(self):
        return Kernel(self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0,
                      memory_budget=self.memory_budget)

    def transform(self, X):
        """Return K(X, Z) of shape (n, m), float32 for float32 input."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        Z = self.basis_.astype(X.dtype, copy=False)
        return self._kernel()(X, Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
