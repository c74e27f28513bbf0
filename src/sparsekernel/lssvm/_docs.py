"""Docstring pieces shared by the LS-SVM family (one objective statement, one wording)."""

from __future__ import annotations

OBJECTIVE = """
    Objective (shared by the whole LS-SVM family)::

        min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2,  f(x) = w^T phi(x) + b

    ``s_i`` is ``sample_weight`` (times the class weight); classifiers use y_i in {-1, +1},
    one-vs-rest past two classes. ``C`` scales the summed loss exactly as in the SVM family
    (``1/2 ||w||^2 + 1/2 b^2 + C/2 sum_i s_i loss_i``); the LS-SVM loss is the plain
    squared error and the bias is not penalized (Suykens). See ``sparsekernel.lssvm``.
"""

PARAMS = {
    "kernel": """
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}, default='rbf'
        Kernel function (the LS-SVM papers' exp(-||x - x'||^2 / sigma^2) is 'rbf' with
        gamma = 1 / sigma^2).
    gamma : 'scale', 'auto' or float, default='scale'
        Kernel width, as in scikit-learn's SVC.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        Offset of the polynomial and sigmoid kernels.""",
    "C": """
    C : float, default=1.0
        Weight of the squared-error term (objective above).""",
    "n_basis": """
    n_basis : 'auto', int, float or None, default='auto'
        Number m of basis functions of the fitted model: an int, a fraction of the training
        rows in (0, 1], or 'auto' = min(n, 1000) (the reduced LS-SVM on m basis points Z).
        None: the exact LS-SVM, every training row a basis function (O(n^2) memory; refused
        past ``memory_budget`` with the estimate).""",
    "basis": """
    basis : str, array-like or BasisSelector, default='random'
        How the reduced LS-SVM chooses its basis points Z ('random', 'kmeans', 'kmedoids',
        'incremental', 'systematic', 'clustering'; a selector receives this estimator's
        kernel), or Z itself. Ignored when n_basis is None.""",
    "memory_budget": """
    memory_budget : int, str or None, default=None
        Bytes (None: 1 GiB). An exact fit needing more (about 24 n^2 bytes) is refused
        with the estimate; the reduced fit streams K(X, Z) in blocks past it.""",
    "class_weight": """
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weights of each class's samples.""",
    "random_state": """
    random_state : int, RandomState or None, default=None
        Seed for the basis selection (and, where used, the validation split).""",
    "verbose": """
    verbose : int, default=0
        0 silent; 2 or more: one line per solve (status, objective) on standard error, or
        through the ``sparsekernel`` logger when the application configured it.""",
}

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
    n_features_in_ : int"""

CLASSES = """
    classes_ : ndarray of shape (n_classes,)
        Class labels."""


def doc(summary, params, classifier=False, examples="", extra_params="", attrs=ATTRIBUTES,
        extra_attrs="", notes=""):
    """Assemble a numpydoc docstring from the shared pieces."""
    body = "".join(PARAMS[p] for p in params) + extra_params
    attributes = attrs + (CLASSES if classifier else "") + extra_attrs
    return (f"{summary}\n{OBJECTIVE}\n    Parameters\n    ----------{body}\n{attributes}\n"
            f"{notes}{examples}")
