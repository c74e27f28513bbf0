"""Public SSVM / RSVM estimators: ReducedSVC/SVR, and SmoothSVC/SVR (their n_basis=None)."""

from __future__ import annotations

from ..base import OneVsRestClassifierMixin, SingleTargetRegressorMixin
from ..solvers import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge
from ..utils import constraints
from ._base import SVM_CONSTRAINTS, BaseSmoothSVM
from ._docs import EPS, HINGE, svm_doc

__all__ = ["ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"]

_FIT_DOC = """Fit the model.

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Training data; float32 input is kept in float32.
        y : array-like of shape (n_samples,)
            {y}
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms (and ``C``).

        Returns
        -------
        self
        """


class ReducedSVC(OneVsRestClassifierMixin, BaseSmoothSVM):
    _parameter_constraints = {**SVM_CONSTRAINTS, **constraints("class_weight")}

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis="auto", basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-6, max_iter=100, class_weight=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.smoothing = smoothing
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        X, y_enc, Y, sw = self._classifier_data(X, y, sample_weight)
        self._solve(self._design(X, y_enc), Y, sw, self._problem_labels)
        return self

    fit.__doc__ = _FIT_DOC.format(y="Class labels of any type scikit-learn accepts.")

    def _loss(self):
        return SquaredSmoothHinge(self.smoothing)


class ReducedSVR(SingleTargetRegressorMixin, BaseSmoothSVM):
    _parameter_constraints = {**SVM_CONSTRAINTS, **constraints("epsilon")}

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 n_basis="auto", basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-6, max_iter=100, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.epsilon = epsilon
        self.n_basis = n_basis
        self.basis = basis
        self.smoothing = smoothing
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        X, y, sw = self._regressor_data(X, y, sample_weight)
        self._solve(self._design(X, None), y[:, None], sw)
        self.coef_, self.intercept_ = self.coef_[0], float(self.intercept_[0])
        self.n_iter_ = int(self.n_iter_[0])
        return self

    fit.__doc__ = _FIT_DOC.format(y="Real targets.")

    def _loss(self):
        return SquaredSmoothEpsilonInsensitive(self.smoothing, self.epsilon)


class SmoothSVC(ReducedSVC):
    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis=None, basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-6, max_iter=100, class_weight=None, random_state=None, verbose=0):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, C=C,
                         n_basis=n_basis, basis=basis, smoothing=smoothing,
                         memory_budget=memory_budget, tol=tol, max_iter=max_iter,
                         class_weight=class_weight, random_state=random_state,
                         verbose=verbose)


class SmoothSVR(ReducedSVR):
    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 n_basis=None, basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-6, max_iter=100, random_state=None, verbose=0):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, C=C,
                         epsilon=epsilon, n_basis=n_basis, basis=basis, smoothing=smoothing,
                         memory_budget=memory_budget, tol=tol, max_iter=max_iter,
                         random_state=random_state, verbose=verbose)


ReducedSVC.__doc__ = svm_doc(
    "Reduced support vector classifier (RSVM, Lee & Mangasarian 2001).\n\n"
    "    The SSVM on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points:\n"
    "    O(n m) memory and O(n m^2) time per Newton step instead of O(n^2) and O(n^3).\n"
    "    ``n_basis=None`` is the full-kernel SSVM (:class:`SmoothSVC`).",
    HINGE, regression=False, n_basis_default="'auto'", examples="""
    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import ReducedSVC
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = ReducedSVC(gamma=2.0, C=10.0, n_basis=30, random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (1, 30)
    >>> bool(clf.score(X, y) > 0.95)
    True
""")

ReducedSVR.__doc__ = svm_doc(
    "Reduced smooth epsilon-insensitive support vector regression (reduced epsilon-SSVR).\n\n"
    "    epsilon-SSVR on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points;\n"
    "    ``n_basis=None`` is the full-kernel epsilon-SSVR (:class:`SmoothSVR`).",
    EPS, regression=True, n_basis_default="'auto'")

SmoothSVC.__doc__ = svm_doc(
    "Smooth support vector classifier (SSVM, Lee & Mangasarian 2001): the full-kernel SSVM.\n\n"
    "    :class:`ReducedSVC` with ``n_basis=None`` by default: every training point is a\n"
    "    basis function (Z = X), so the Newton system is (n+1) x (n+1): for small n.\n"
    "    ``kernel='linear'`` solves the linear SSVM in the primal (m = n_features) and scales\n"
    "    to large n. Any other ``n_basis`` makes it the reduced SVM.",
    HINGE, regression=False, n_basis_default="None")

SmoothSVR.__doc__ = svm_doc(
    "Smooth epsilon-insensitive support vector regression (epsilon-SSVR, Lee, Hsieh &\n"
    "    Huang 2005): the full-kernel epsilon-SSVR.\n\n"
    "    :class:`ReducedSVR` with ``n_basis=None`` by default (Z = X); ``kernel='linear'``\n"
    "    works in the primal.",
    EPS, regression=True, n_basis_default="None")
