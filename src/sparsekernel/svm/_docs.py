"""Docstring pieces of the SSVM / RSVM estimators, written once for the four of them."""

from __future__ import annotations

_OBJECTIVE = """
    Objective (the SVM family's, stated in full in ``sparsekernel.svm._base``; ``C`` means
    the same in every estimator of the family)::

        min_{w, b}  1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss_i
        f(x) = sum_j w_j K(x, z_j) + b

    ``s_i`` is ``sample_weight`` times the class weight."""

_KERNEL = """
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

_EPSILON = """
    epsilon : float, default=0.1
        Half-width of the insensitive tube: residuals below it cost nothing."""

_N_BASIS = """
    n_basis : 'auto', int, float or None, default={default}
        Number m of basis functions: an int in [1, n], a fraction of n in (0, 1], 'auto' =
        min(n, 1000), or None = every training row (Z = X, the full-kernel SSVM, refused
        when its (n+1) x (n+1) Newton system exceeds ``memory_budget``; with
        ``kernel='linear'`` the primal on X, for any n; ``basis`` must then stay 'random').
        The review advises 1-10 % of n. A number is ignored when ``basis`` is an array."""

_BASIS = """
    basis : {'random', 'kmeans', 'incremental', 'systematic', 'clustering'}, array-like or \
BasisSelector, default='random'
        How to choose the basis points Z: uniformly random training rows (stratified by
        class for classifiers), k-means centroids of a subsample, IRSVM's incremental
        selection, systematic sampling of misclassified points (classifiers only),
        class-wise k-means centroids with per-centre widths (these replace ``gamma``), an
        explicit (m, d) array, or a selector from :mod:`sparsekernel.basis` (it is given this
        estimator's kernel). The incremental and systematic schemes may stop below
        ``n_basis``."""

_SOLVER = """
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

_TAIL = """
    random_state : int, RandomState or None, default=None
        Seed for the basis selection.
    verbose : int, default=0
        0 silent; 1 a progress bar over the one-vs-rest problems; 2 also a line per Newton
        iteration and per solve (standard error, or the 'sparsekernel' logger)."""

_ATTRIBUTES = """
    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features), or None
        The basis points Z (None for ``n_basis=None`` with the linear kernel, which works
        in the primal on X itself).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray
        Weights w on the m basis functions: {coef_shape}.
    intercept_ : {intercept}
        Bias b.
    gamma_ : float, ndarray of shape (m,) or None
        Kernel width actually used (per-centre widths when the basis provides them).
    n_iter_ : {n_iter}
        Newton iterations per sub-problem.
    objective_ : ndarray of shape (n_problems,)
        Objective value reached per sub-problem.
    n_features_in_ : int
        Number of features seen in fit."""

_CLASSES = """
    classes_ : ndarray of shape (n_classes,)
        Class labels."""

HINGE = ("loss_i = p(1 - y_i f(x_i), smoothing)^2 (squared smooth hinge) with y_i in\n"
         "    {-1, +1}; multiclass problems are solved one-vs-rest on one shared K(X, Z).")
EPS = ("loss_i = p(f(x_i) - y_i - epsilon)^2 + p(y_i - f(x_i) - epsilon)^2 (squared\n"
       "    smooth epsilon-insensitive loss).")


def svm_doc(summary, loss, *, regression, n_basis_default, examples=""):
    """Assemble a class docstring: summary, objective, parameters, attributes, examples."""
    params = (_KERNEL + (_EPSILON if regression else "")
              + _N_BASIS.format(default=n_basis_default) + _BASIS + _SOLVER
              + ("" if regression else _CLASS_WEIGHT) + _TAIL)
    if regression:
        attrs = _ATTRIBUTES.format(coef_shape="shape (m,)", intercept="float",
                                   n_iter="int")
    else:
        attrs = _ATTRIBUTES.format(
            coef_shape="shape (1, m) for two classes, (n_classes, m) for multiclass "
                       "(one-vs-rest)",
            intercept="ndarray of shape (1,) or (n_classes,)",
            n_iter="ndarray of shape (n_problems,)") + _CLASSES
    return (f"{summary}\n{_OBJECTIVE}\n\n    Here {loss}\n\n    Parameters\n    ----------"
            f"{params}\n{attrs}\n{examples}")
