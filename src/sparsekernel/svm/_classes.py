"""Public SSVM / RSVM estimators. Docstrings share one objective statement (see _base)."""

from __future__ import annotations

from ._base import ReducedMixin
from ._estimators import SmoothClassifierBase, SmoothRegressorBase

__all__ = ["ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"]

_OBJECTIVE = """
    Objective (the whole SVM family shares it, so ``C`` means the same everywhere)::

        min_{w, b}  1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss_i
        f(x) = sum_j w_j K(x, z_j) + b

    ``s_i`` is ``sample_weight`` times the class weight. Both ``w`` and ``b`` are penalized,
    as in the SSVM papers, which makes the Newton system positive definite.
"""

_KERNEL_PARAMS = """
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}, default='rbf'
        Kernel function.
    gamma : 'scale', 'auto' or float, default='scale'
        Kernel width for 'rbf', 'laplacian', 'polynomial' and 'sigmoid'; 'scale' is
        1 / (n_features * X.var()) as in scikit-learn's SVC.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Offset of the polynomial and sigmoid kernels.
    C : float, default=1.0
        Weight of the loss term (objective above). Larger C fits the data more closely."""

_BASIS_PARAMS = """
    n_basis : 'auto', int or float, default='auto'
        Number m of basis functions: an int in [1, n], a fraction of n in (0, 1], or
        'auto' = min(n, 1000). The review advises 1-10 % of n. Ignored when ``basis`` is
        an array.
    basis : {'random', 'kmeans', 'incremental', 'systematic', 'clustering'}, array-like or \
BasisSelector, default='random'
        How to choose the basis points Z: uniformly random training rows (stratified by
        class for classifiers), k-means centroids of a subsample, IRSVM's incremental
        selection, systematic sampling of misclassified points (classifiers only),
        class-wise k-means centroids with per-centre widths (these replace ``gamma``), an
        explicit (m, d) array, or a selector from :mod:`sparsekernel.basis`. The
        incremental and systematic schemes may stop below ``n_basis``."""

_SOLVER_PARAMS = """
    smoothing : float, default=inf
        Smoothing parameter alpha of the smooth plus function p(x) = x + log(1 +
        exp(-alpha x)) / alpha. ``inf`` (default, as the authors' toolbox) uses the exact
        squared loss and a generalized Newton method whose Hessian only involves rows with
        non-zero loss; the papers' smooth setting is 5.
    memory_budget : int, str or None, default=None
        Bytes for kernel evaluation (None: 1 GiB). K(X, Z) is stored when it fits, else
        recomputed block by block at every pass; peak memory stays O(n d + m^2 + block m).
    tol : float, default=1e-6
        Stop when ||grad||_inf <= tol * max(1, ||grad at 0||_inf).
    max_iter : int, default=100
        Maximum Newton iterations per sub-problem."""

_CLASS_WEIGHT = """
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weights of each class's samples (``'balanced'``: n / (k * count))."""

_EPSILON = """
    epsilon : float, default=0.1
        Half-width of the insensitive tube: residuals below it cost nothing."""

_COMMON_TAIL = """
    verbose : int, default=0
        0 silent; 1 a progress bar; 2 also a log line per Newton iteration."""

_ATTRIBUTES = """
    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features), or None
        The basis points Z (None for the linear-kernel Smooth* models, which work in the
        primal on X itself).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray
        Weights w on the m basis functions: shape (1, m) for two classes, (n_classes, m)
        for multiclass (one-vs-rest), (m,) for regression.
    intercept_ : ndarray of shape (1,) or (n_classes,), or float for regression
        Bias b.
    gamma_ : float, ndarray of shape (m,) or None
        Kernel width actually used (per-centre widths when the basis provides them).
    n_iter_ : ndarray of shape (n_problems,), or int for regression
        Newton iterations per sub-problem.
    objective_ : ndarray of shape (n_problems,)
        Objective value reached per sub-problem.
    n_features_in_ : int
        Number of features seen in fit."""

_RANDOM_STATE = """
    random_state : int, RandomState or None, default=None
        Seed for the basis selection."""


def _doc(summary, objective_loss, params, attrs_extra="", notes=""):
    return (f"{summary}\n{_OBJECTIVE}    Here {objective_loss}\n\n    Parameters\n"
            f"    ----------{params}\n{_ATTRIBUTES}{attrs_extra}\n{notes}")


_HINGE = ("loss_i = p(1 - y_i f(x_i), smoothing)^2 (squared smooth hinge) with y_i in\n"
          "    {-1, +1}; multiclass problems are solved one-vs-rest on one shared K(X, Z).")
_EPS = ("loss_i = p(f(x_i) - y_i - epsilon)^2 + p(y_i - f(x_i) - epsilon)^2 (squared\n"
        "    smooth epsilon-insensitive loss).")
_CLASSES = """
    classes_ : ndarray of shape (n_classes,)
        Class labels."""


class SmoothSVC(SmoothClassifierBase):
    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 smoothing=float("inf"), memory_budget=None, tol=1e-6, max_iter=100,
                 class_weight=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.smoothing = smoothing
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.verbose = verbose


SmoothSVC.__doc__ = _doc(
    "Smooth support vector classifier (SSVM, Lee & Mangasarian 2001) on the full kernel.\n\n"
    "    Every training point is a basis function (Z = X), so the Newton system is\n"
    "    (n+1) x (n+1): for small n. ``kernel='linear'`` solves the linear SSVM in the primal\n"
    "    (m = n_features) and scales to large n.",
    _HINGE, _KERNEL_PARAMS + _SOLVER_PARAMS + _CLASS_WEIGHT + _COMMON_TAIL, _CLASSES,
)


class SmoothSVR(SmoothRegressorBase):
    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, epsilon=0.1,
                 smoothing=float("inf"), memory_budget=None, tol=1e-6, max_iter=100,
                 verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.epsilon = epsilon
        self.smoothing = smoothing
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose


SmoothSVR.__doc__ = _doc(
    "Smooth epsilon-insensitive support vector regression (epsilon-SSVR, Lee, Hsieh &\n"
    "    Huang 2005) on the full kernel (Z = X); ``kernel='linear'`` works in the primal.",
    _EPS, _KERNEL_PARAMS + _EPSILON + _SOLVER_PARAMS + _COMMON_TAIL,
)


class ReducedSVC(ReducedMixin, SmoothClassifierBase):
    _parameter_constraints = {**SmoothClassifierBase._parameter_constraints,
                              **ReducedMixin._parameter_constraints}

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


ReducedSVC.__doc__ = _doc(
    "Reduced support vector classifier (RSVM, Lee & Mangasarian 2001).\n\n"
    "    The SSVM on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points:\n"
    "    O(n m) memory and O(n m^2) time per Newton step instead of O(n^2) and O(n^3).",
    _HINGE,
    _KERNEL_PARAMS + _BASIS_PARAMS + _SOLVER_PARAMS + _CLASS_WEIGHT + _RANDOM_STATE
    + _COMMON_TAIL,
    _CLASSES,
    """
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
""",
)


class ReducedSVR(ReducedMixin, SmoothRegressorBase):
    _parameter_constraints = {**SmoothRegressorBase._parameter_constraints,
                              **ReducedMixin._parameter_constraints}

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


ReducedSVR.__doc__ = _doc(
    "Reduced smooth epsilon-insensitive support vector regression (reduced epsilon-SSVR).\n\n"
    "    epsilon-SSVR on the reduced kernel K(X, Z) with m = ``n_basis`` << n basis points.",
    _EPS, _KERNEL_PARAMS + _EPSILON + _BASIS_PARAMS + _SOLVER_PARAMS + _RANDOM_STATE
    + _COMMON_TAIL,
)
