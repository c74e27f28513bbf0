"""Public SSVM / RSVM estimators: ReducedSVC/SVR, and SmoothSVC/SVR (their n_basis=None)."""

from __future__ import annotations

from .._docs import fill_doc
from ..base import OneVsRestClassifierMixin, SingleTargetRegressorMixin
from ..solvers import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge
from ..utils import constraints
from ..utils.fitted_spec import CLASSES, FEATURES, INFO, OVR, SINGLE, ClassSpec, kernel_basis
from ._base import SVM_CONSTRAINTS, BaseSmoothSVM

__all__ = ["ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"]

_FIT_DOC = """Fit the model.

        Parameters
        ----------
        X : {{array-like, sparse matrix, dask array, dask dataframe}} of shape \
(n_samples, n_features)
            Training data; float32 input is kept in float32. A dask collection is fitted
            where its rows are, to the same model (:doc:`/distributed`); ``n_basis=None``
            (every row a basis function) is refused there.
        y : array-like or dask array of shape (n_samples,)
            {y}
        sample_weight : array-like or dask array of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms (and ``C``).

        Returns
        -------
        self
        """


def _smooth_svm_spec(classifier):
    return ClassSpec({**FEATURES, **(CLASSES if classifier else {}),
                      **kernel_basis(linear=True), **(OVR if classifier else SINGLE),
                      "n_iter_": INFO, "objective_": INFO})


class ReducedSVC(OneVsRestClassifierMixin, BaseSmoothSVM):
    """Reduced support vector classifier (RSVM, Lee & Mangasarian 2001).

    The SSVM on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points (the
    review advises 1-10 % of n): O(n m) memory and O(n m^2) time per Newton step instead of
    O(n^2) and O(n^3). Each binary problem solves

        min_{w, b}  1/2 (||w||^2 + b^2) + C/2 * sum_i s_i p(1 - y_i f(x_i))^2,
        f(x) = sum_j w_j K(x, z_j) + b,

    with p the smooth plus function (``smoothing``; max(0, .) at the default inf) and s_i
    the sample times the class weight: the SVM family's objective
    (:doc:`/user_guide/svm`), in the scaling shared by every estimator
    (:doc:`/user_guide/concepts`). Multiclass problems are solved one-vs-rest on one shared
    K(X, Z). ``n_basis=None`` is the full-kernel SSVM (:class:`SmoothSVC`). There is no
    ``predict_proba``: calibrate ``decision_function`` with
    :class:`sklearn.calibration.CalibratedClassifierCV`, or fit
    :class:`KernelLogisticRegression`.

    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {C}
    {n_basis}
    {basis}
    smoothing : float, default=inf
        Smoothing parameter alpha of the smooth plus function p(x) = x + log(1 +
        exp(-alpha x)) / alpha. ``inf`` (default, as the authors' toolbox) uses the exact
        squared loss and a generalized Newton method whose Hessian only involves rows with
        non-zero loss; the papers' smooth setting is 5.
    {memory_budget}
    tol : float, default=1e-3
        Stop when ||grad||_inf <= tol * max(1, ||grad at 0||_inf), as LowRankSVC. Tighter
        takes more Newton iterations for nearly the same predictions. On the full
        kernel (n_basis=None) with smoothing=inf the fit ends at the exact optimum, and tol
        only judges an iterate stopped by max_iter.
    {max_iter}
    {class_weight}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features), or None
        The basis points Z (None for ``n_basis=None`` with the linear kernel, which works
        in the primal on X itself).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray of shape (1, m) for two classes, (n_classes, m) for multiclass
        Weights w on the m basis functions (one row per one-vs-rest problem).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Bias b.
    gamma_ : float, ndarray of shape (m,) or None
        Kernel width actually used (per-centre widths when the basis provides them).
    n_iter_ : ndarray of shape (n_problems,)
        Newton iterations per sub-problem.
    objective_ : ndarray of shape (n_problems,)
        Objective value reached per sub-problem.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

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

    See Also
    --------
    SmoothSVC : The same SSVM on the full kernel (every row a basis function).
    LowRankSVC : The SVM on whitened Nystrom features (RKHS penalty), streamed when large.
    KernelLogisticRegression : Class probabilities from the same reduced kernel.
    sklearn.svm.SVC : The exact kernel SVM (LIBSVM), O(n^2) memory.
    sklearn.kernel_approximation.Nystroem : Nystrom features for a linear scikit-learn model.

    References
    ----------
    .. [1] Y.-J. Lee and O. L. Mangasarian, "RSVM: Reduced support vector machines",
       Proceedings of the SIAM International Conference on Data Mining, 2001.
    .. [2] Y.-J. Lee and O. L. Mangasarian, "SSVM: A smooth support vector machine",
       Computational Optimization and Applications 20, 5-22, 2001.
    .. [3] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (sections 2.1-2.3).
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _smooth_svm_spec(True)
    _parameter_constraints = {**SVM_CONSTRAINTS, **constraints("class_weight")}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis="auto", basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-3, max_iter=100, class_weight=None, random_state=None, verbose=0):
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
        return self._fit(X, y, sample_weight)

    fit.__doc__ = _FIT_DOC.format(y="Class labels of any type scikit-learn accepts.")

    def _loss(self):
        return SquaredSmoothHinge(self.smoothing)


class ReducedSVR(SingleTargetRegressorMixin, BaseSmoothSVM):
    """Reduced smooth epsilon-insensitive support vector regression (reduced epsilon-SSVR).

    epsilon-SSVR on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points:

        min_{w, b}  1/2 (||w||^2 + b^2)
                    + C/2 * sum_i s_i [p(f(x_i) - y_i - epsilon)^2 + p(y_i - f(x_i) - epsilon)^2],

    with f(x) = sum_j w_j K(x, z_j) + b and p the smooth plus function (``smoothing``):
    the SVM family's objective (:doc:`/user_guide/svm`) with the squared smooth
    epsilon-insensitive loss. ``n_basis=None`` is the full-kernel epsilon-SSVR
    (:class:`SmoothSVR`).

    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {C}
    {epsilon}
    {n_basis}
    {basis}
    smoothing : float, default=inf
        Smoothing parameter alpha of the smooth plus function (as in :class:`ReducedSVC`;
        ``inf`` is the exact squared epsilon-insensitive loss).
    {memory_budget}
    tol : float, default=1e-3
        Stop when ||grad||_inf <= tol * max(1, ||grad at 0||_inf), as the classifiers.
        Tighter takes more Newton iterations for nearly the same R^2. On the full kernel
        (n_basis=None) with smoothing=inf the fit ends at the exact optimum, and tol only
        judges an iterate stopped by max_iter.
    {max_iter}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features), or None
        The basis points Z (None for ``n_basis=None`` with the linear kernel).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray of shape (m,)
        Weights w on the m basis functions.
    intercept_ : float
        Bias b.
    gamma_ : float, ndarray of shape (m,) or None
        Kernel width actually used (per-centre widths when the basis provides them).
    n_iter_ : int
        Newton iterations.
    objective_ : ndarray of shape (1,)
        Objective value reached.
    n_features_in_ : int

    Examples
    --------
    >>> from sparsekernel import ReducedSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(400, noise=0.1, random_state=0)
    >>> reg = ReducedSVR(gamma=1.0, C=100.0, n_basis=20, random_state=0).fit(X, y)
    >>> reg.coef_.shape
    (20,)
    >>> bool(reg.score(X, y) > 0.9)
    True

    See Also
    --------
    SmoothSVR : The same epsilon-SSVR on the full kernel.
    LSSVR : Least-squares SVR (squared error, no tube), reduced or exact.
    sklearn.svm.SVR : The exact kernel epsilon-SVR (LIBSVM), O(n^2) memory.

    References
    ----------
    .. [1] Y.-J. Lee, W.-F. Hsieh and C.-M. Huang, "epsilon-SSVR: A smooth support vector
       machine for epsilon-insensitive regression", IEEE Transactions on Knowledge and Data
       Engineering 17(5), 678-685, 2005.
    .. [2] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (sections 2.1-2.3).
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _smooth_svm_spec(False)
    _parameter_constraints = {**SVM_CONSTRAINTS, **constraints("epsilon")}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 n_basis="auto", basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-3, max_iter=100, random_state=None, verbose=0):
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
        self._fit(X, y, sample_weight)
        self.coef_, self.intercept_ = self.coef_[0], float(self.intercept_[0])
        self.n_iter_ = int(self.n_iter_[0])
        return self

    fit.__doc__ = _FIT_DOC.format(y="Real targets.")

    def _loss(self):
        return SquaredSmoothEpsilonInsensitive(self.smoothing, self.epsilon)


def _full_kernel_doc(summary, reduced):
    """``summary``, then the Parameters and Attributes of ``reduced``'s unfilled docstring."""
    doc = reduced.__doc__
    if doc is None:  # python -OO
        return None
    return summary + doc[doc.index("\n    Parameters"):].split("\n    Examples")[0]


class SmoothSVC(ReducedSVC):
    __doc__ = _full_kernel_doc(
        """Smooth support vector classifier (SSVM, Lee & Mangasarian 2001).

    :class:`ReducedSVC` with ``n_basis=None`` by default: every training point is a basis
    function (Z = X), so each Newton system is up to n x n (solved in the rows'
    coordinates with the default smoothing=inf, ending at the exact optimum): for small
    n (``basis`` must then stay 'random'). ``kernel='linear'`` solves the linear SSVM in the primal
    (m = n_features) and scales to large n. Any other ``n_basis`` makes it the reduced SVM.
    The objective is :class:`ReducedSVC`'s (:doc:`/user_guide/svm`).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import SmoothSVC
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> clf = SmoothSVC(gamma=2.0, C=10.0).fit(X, y)
    >>> clf.basis_.shape
    (200, 2)
    >>> bool(clf.score(X, y) > 0.95)
    True

    See Also
    --------
    ReducedSVC : The same SSVM on m << n basis points, for large n.
    LSSVC : Least-squares SVM classifier, exact or reduced.
    sklearn.svm.SVC : The exact kernel SVM with the hinge loss (LIBSVM).

    References
    ----------
    .. [1] Y.-J. Lee and O. L. Mangasarian, "SSVM: A smooth support vector machine",
       Computational Optimization and Applications 20, 5-22, 2001.
""", ReducedSVC)

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _smooth_svm_spec(True)

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis=None, basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-3, max_iter=100, class_weight=None, random_state=None, verbose=0):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, C=C,
                         n_basis=n_basis, basis=basis, smoothing=smoothing,
                         memory_budget=memory_budget, tol=tol, max_iter=max_iter,
                         class_weight=class_weight, random_state=random_state,
                         verbose=verbose)


class SmoothSVR(ReducedSVR):
    __doc__ = _full_kernel_doc(
        """Smooth epsilon-insensitive SVR (epsilon-SSVR; Lee, Hsieh & Huang 2005).

    :class:`ReducedSVR` with ``n_basis=None`` by default (Z = X, the full-kernel
    epsilon-SSVR; ``basis`` must then stay 'random'); ``kernel='linear'`` works in the primal.
    The objective is :class:`ReducedSVR`'s (:doc:`/user_guide/svm`).

    Examples
    --------
    >>> from sparsekernel import SmoothSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(200, noise=0.1, random_state=0)
    >>> reg = SmoothSVR(gamma=1.0, C=100.0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True

    See Also
    --------
    ReducedSVR : The same epsilon-SSVR on m << n basis points, for large n.
    sklearn.svm.SVR : The exact kernel epsilon-SVR (LIBSVM).

    References
    ----------
    .. [1] Y.-J. Lee, W.-F. Hsieh and C.-M. Huang, "epsilon-SSVR: A smooth support vector
       machine for epsilon-insensitive regression", IEEE Transactions on Knowledge and Data
       Engineering 17(5), 678-685, 2005.
""", ReducedSVR)

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _smooth_svm_spec(False)

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 n_basis=None, basis="random", smoothing=float("inf"), memory_budget=None,
                 tol=1e-3, max_iter=100, random_state=None, verbose=0):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, C=C,
                         epsilon=epsilon, n_basis=n_basis, basis=basis, smoothing=smoothing,
                         memory_budget=memory_budget, tol=tol, max_iter=max_iter,
                         random_state=random_state, verbose=verbose)


# Filled last, not by decoration: the Smooth* docstrings reuse the Reduced* placeholders,
# which then take each class's own defaults (n_basis=None).
for _cls in (ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR):
    fill_doc(_cls)
