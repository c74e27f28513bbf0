"""The LS-SVM family's objective and shared glue; LSSVR and LSSVC, its exact and reduced fit.

Objective of the whole LS-SVM family (LSSVR/LSSVC, the pruned and online variants, and the
low-rank LR-LSSVM), per regression target or one-vs-rest class problem::

    min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2,   f(x) = w^T phi(x) + b

``s_i`` is ``sample_weight`` times the class weight; classifiers use targets y_i in {-1, +1}
(Suykens' equality constraints y_i f(x_i) = 1 - e_i give the same e_i^2). Relation to the SVM
family (``1/2 ||w||^2 + 1/2 b^2 + C/2 sum_i s_i loss_i``): ``C`` scales the summed loss
identically, so the same ``C`` means the same trade-off; the differences are the loss (the
plain squared error instead of the squared (smooth) hinge or epsilon-insensitive loss) and
the bias, which LS-SVMs leave unpenalized, as in Suykens' formulation. The LS-SVM papers'
regularization parameter (gamma in Suykens, C in Kim et al., gamma in Fang et al.) is this
C; their RBF exp(-||x - x'||^2 / sigma^2) is ``kernel='rbf', gamma=1/sigma^2``.

- exact (``n_basis=None``): ``phi`` is the kernel's feature map; the dual is the (n+1)
  bordered system on the n x n kernel matrix (``f(x) = sum_i alpha_i K(x, x_i) + b``): about
  24 n^2 bytes for K, the system and its factor, refused past ``memory_budget``.
- reduced (``n_basis`` a number or 'auto'): the same problem restricted to functions spanned
  by m basis points Z, solved on the package's Nystrom features ``K(X, Z) U Lambda^{-1/2}``
  (:func:`sparsekernel.features.nystrom_from_basis`, with its one eigenvalue floor), i.e.
  ``||w||^2`` is the RKHS norm ``beta^T K_ZZ beta`` of ``f(x) = sum_j beta_j K(x, z_j) + b``.
  With Z = X it is the exact LS-SVM; the cost is O(n m^2) time and O(n m) memory (or
  O(block m) with features recomputed block by block past ``memory_budget``).
"""

from __future__ import annotations

import numpy as np

from .._docs import fill_doc
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    N_BASIS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SingleTargetRegressorMixin,
    SparseKernelEstimator,
    report_result,
)
from ..features import nystrom_from_basis
from ..kernels import resolve_gamma
from ..solvers import lssvm_dual, lssvm_primal
from ..utils import constraints, parse_memory_budget

__all__ = ["ATTRIBUTES", "BaseLSSVM", "KERNEL_PARAMS", "LSSVC", "LSSVM_CONSTRAINTS", "LSSVR",
           "fit_data", "fitted"]

#: Parameters of every kernel LS-SVM (the low-rank one has no kernel).
LSSVM_CONSTRAINTS = {**KERNEL_CONSTRAINTS, **constraints("C", "verbose")}

#: Docstring pieces of the kernel LS-SVMs: the first parameters (``fill_doc`` placeholders)
#: and the fitted attributes of the exact, reduced and pruned fits.
KERNEL_PARAMS = """
    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {C}
"""
ATTRIBUTES = """
    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features)
        The support vectors / basis points Z (the training rows for the exact fit).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray
        Dual weights beta on the basis: f(x) = sum_j beta_j K(x, z_j) + b. Shape (m,) for
        regression, (1, m) for two classes, (n_classes, m) one-vs-rest.
    intercept_ : float or ndarray of shape (1,) or (n_classes,)
        Bias b.
    gamma_ : float or ndarray
        Kernel width used.
    objective_ : float
        Objective value (summed over one-vs-rest problems).
    n_support_ : int
        Number of basis functions evaluated at prediction (property).
    n_features_in_ : int
"""


class _FeatureBlocks:
    """Row blocks of the Nystrom features ``fmap.transform(X[rows])``, recomputed per pass
    (the solvers' row-block protocol), for when the n x r features exceed the budget."""

    def __init__(self, fmap, X):
        self.fmap, self.X = fmap, X
        self.block_rows = fmap.kernel.block_rows(X, fmap.Z)
        self.shape = (X.shape[0], fmap.n_components)
        self.dtype = np.result_type(X.dtype, np.float32)

    def __iter__(self):
        n = self.X.shape[0]
        for start in range(0, n, self.block_rows):
            rows = slice(start, min(start + self.block_rows, n))
            yield rows, self.fmap.transform(self.X[rows])


class BaseLSSVM(KernelExpansionMixin, SparseKernelEstimator):
    """Exact or reduced LS-SVM fit of target columns; subclasses turn labels into targets."""

    _parameter_constraints = {**LSSVM_CONSTRAINTS, **BASIS_CONSTRAINTS,
                              "n_basis": [None, *N_BASIS]}

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Real targets (regression) or class labels; more than two classes are fitted
            one-vs-rest on one shared kernel factorization (exact) or feature map (reduced).
        sample_weight : array-like of shape (n_samples,), optional
            Weights ``s_i`` of the squared errors.

        Returns
        -------
        self
        """
        X, Y, sw, y_enc = fit_data(self, X, y, sample_weight)
        if self.n_basis is None:
            self.gamma_ = resolve_gamma(self.gamma, X)
            res = self._fit_exact(X, Y, sw)
        else:
            res = self._fit_reduced(X, Y, sw, y_enc)
        report_result(self, res)
        return fitted(self)

    def _fit_exact(self, X, Y, sw):
        """The exact LS-SVM with the kernel of ``gamma_``: every positive-weight row is a
        basis point (zero-weight rows have alpha = 0, so they stay out of the n x n system)."""
        keep = np.flatnonzero(sw > 0)
        n = len(keep)
        need, budget = 24 * n * n, parse_memory_budget(self.memory_budget)
        if need > budget:
            raise ValueError(
                f"An exact {type(self).__name__} fit on n={n} rows needs the n x n kernel "
                f"matrix and its Cholesky factor: about {need / 2**20:.0f} MiB, above "
                f"memory_budget={budget / 2**20:.0f} MiB. Pass n_basis (the default 'auto' "
                f"is min(n, 1000) basis functions) for the reduced LS-SVM, or raise "
                f"memory_budget."
            )
        Xk = X[keep]
        res = lssvm_dual(self._kernel()(Xk, Xk), Y[keep], self.C, sw[keep])
        self.basis_, self.basis_indices_ = Xk, keep
        self._store(res.coef, res)
        return res

    def _fit_reduced(self, X, Y, sw, y_basis):
        kern, basis = self._fit_kernel_basis(X, y_basis)
        fmap = nystrom_from_basis(kern, basis, "auto", X.dtype, "eigh")
        nbytes = X.shape[0] * fmap.n_components * np.result_type(X.dtype, np.float32).itemsize
        F = fmap.transform(X) if nbytes <= kern.memory_budget else _FeatureBlocks(fmap, X)
        res = lssvm_primal(F, Y, self.C, sw)
        self.basis_ = fmap.Z
        # f(x) = K(x, Z) M w + b: store the coefficients on K(x, Z) for _raw_decision.
        self._store(fmap.normalization @ res.coef, res)
        return res

    def _store(self, coef, res):
        self.coef_ = np.ascontiguousarray(coef.T)
        self.intercept_ = np.atleast_1d(res.intercept)
        self.objective_ = float(res.objective)


def fit_data(est, X, y, sample_weight):
    """Validated ``(X, Y, sw, y_enc)``: a classifier's +-1 one-vs-rest target columns and
    encoded labels, or a regressor's one target column (``y_enc`` None)."""
    if isinstance(est, OneVsRestClassifierMixin):
        X, y_enc, Y, sw = est._classifier_data(X, y, sample_weight)
        return X, Y, sw, y_enc
    X, y, sw = est._regressor_data(X, y, sample_weight)
    return X, y[:, None], sw, None


def fitted(est):
    """``est``, a regressor's one target column stored as ``coef_`` (m,), float intercept."""
    if not isinstance(est, OneVsRestClassifierMixin):
        est.coef_, est.intercept_ = est.coef_[0], float(est.intercept_[0])
    return est


@fill_doc
class LSSVR(SingleTargetRegressorMixin, BaseLSSVM):
    __doc__ = """Least-squares support vector regression (Suykens), reduced or exact.

    Reduced on ``n_basis`` points, or exact with ``n_basis=None``; the objective is the LS-SVM
    family's (:mod:`sparsekernel.lssvm._base`).
""" + KERNEL_PARAMS + """    {n_basis}
    {basis}
    {memory_budget}
    {random_state}
    {verbose}
""" + ATTRIBUTES

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, n_basis="auto",
                 basis="random", memory_budget=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose


@fill_doc
class LSSVC(OneVsRestClassifierMixin, BaseLSSVM):
    __doc__ = """Least-squares support vector classifier (Suykens & Vandewalle 1999).

    Reduced on ``n_basis`` points, or exact with ``n_basis=None``; the objective is the LS-SVM
    family's (:mod:`sparsekernel.lssvm._base`).
""" + KERNEL_PARAMS + """    {n_basis}
    {basis}
    {memory_budget}
    {class_weight}
    {random_state}
    {verbose}
""" + ATTRIBUTES + """    classes_ : ndarray of shape (n_classes,)
        Class labels.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import LSSVC
    >>> X, y = make_moons(300, noise=0.1, random_state=0)
    >>> exact = LSSVC(gamma=2.0, C=10.0, n_basis=None).fit(X, y)
    >>> reduced = LSSVC(gamma=2.0, C=10.0, n_basis=40, random_state=0).fit(X, y)
    >>> exact.n_support_, reduced.n_support_
    (300, 40)
    """

    _parameter_constraints = {**BaseLSSVM._parameter_constraints,
                              **constraints("class_weight")}

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, n_basis="auto",
                 basis="random", memory_budget=None, class_weight=None, random_state=None,
                 verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
