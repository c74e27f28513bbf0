"""LSSVR and LSSVC: the reduced (Nystrom) LS-SVM on n_basis points, or exact with None."""

from __future__ import annotations

from .._docs import fill_doc
from ..base import OneVsRestClassifierMixin, SingleTargetRegressorMixin
from ..utils import constraints
from ._base import ATTRIBUTES, KERNEL_PARAMS, BaseLSSVM, as_single_target

__all__ = ["LSSVC", "LSSVR"]


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

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), optional
            Weights ``s_i`` of the squared errors.

        Returns
        -------
        self
        """
        X, y, sw = self._regressor_data(X, y, sample_weight)
        self._fit_targets(X, y[:, None], sw, None)
        return as_single_target(self)


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

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; more than two classes are fitted one-vs-rest on one shared
            kernel factorization (exact) or feature map (reduced).
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, y_enc, Y, sw = self._classifier_data(X, y, sample_weight)
        self._fit_targets(X, Y, sw, y_enc)
        return self

