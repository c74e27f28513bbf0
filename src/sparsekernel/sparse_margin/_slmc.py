"""Sparse large margin classifier (SLMC, Wu, Schoelkopf & Bakir, JMLR 7:603-624, 2006)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..basis import BasisSelector
from ..features import select_basis
from ..kernels import Kernel, resolve_gamma
from ..utils import Interval, Options
from ._base import BasisClassifierMixin, dedupe_rows
from ._basis_svm import BasisSVM
from ._optimize import minimize_over_basis

__all__ = ["SparseMarginClassifier"]

#: dual_cd passes allowed per evaluation of W(Z) (warm starts usually need a few).
INNER_MAX_ITER = 1000

SPARSE_MARGIN_CONSTRAINTS = {
    "kernel": [Options("rbf", "gaussian")],
    "gamma": [Options("scale", "auto"), Interval("real", 0, None, closed="neither")],
    "C": [Interval("real", 0, None, closed="neither")],
    "n_basis": [Interval("int", 1, None, closed="left"),
                Interval("real", 0, 1, closed="right")],
    "basis": [str, "array-like", BasisSelector],
    "loss": [Options("hinge", "squared_hinge")],
    "tol": [Interval("real", 0, None, closed="neither")],
    "max_iter": [Interval("int", 0, None, closed="left")],
    "memory_budget": [None, Interval("real", 1, None, closed="left"), str],
    "class_weight": [None, Options("balanced"), "dict"],
    "random_state": ["random_state"],
    "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
}


def initial_basis(X, y_enc, n_basis, basis, random_state):
    """Dense float64 starting Z from the basis selectors, duplicates removed."""
    Z = select_basis(X, y_enc, n_basis, basis, random_state).centers
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return dedupe_rows(np.array(Z, dtype=np.float64))


class SparseMarginClassifier(BasisClassifierMixin):
    """Sparse large margin classifier (SLMC): an SVM on ``n_basis`` learned expansion vectors.

    Wu, Schoelkopf & Bakir (JMLR 2006) add the constraint ``w = sum_j beta_j phi(z_j)`` to the
    SVM and move the expansion vectors Z (which need not be training points) to minimize the
    marginal function W(Z), the optimal SVM objective on the span of phi(z_1..z_m)::

        W(Z) = min_{v, b}  1/2 ||v||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss(y_i (v . phi_z(x_i) + b))
        phi_z(x) = L^-1 [K(z_1, x) .. K(z_m, x)],   K(Z, Z) = L L^T

    which is the SVM family's objective (``svm/_base.py``: ``C`` means the same everywhere;
    ``C = 2 * C_libsvm`` for the hinge loss, so scikit-learn's ``SVC(C=c)`` corresponds to
    ``C = 2 c`` here; unlike LIBSVM the bias is penalized, ``1/2 b^2``, as in the whole family).
    Each evaluation solves this linear SVM exactly by dual coordinate descent warm-started from
    the previous dual vector; the gradient (eq. 46) follows from the envelope theorem and Z is
    moved by L-BFGS. The decision function is ``f(x) = sum_j beta_j K(z_j, x) + b`` with
    ``beta = K_z^-1 Psi (alpha * y)`` (eq. 45): O(m d) per prediction. Multiclass problems are
    solved one-vs-rest on one shared Z that minimizes the sum of the binary objectives.

    Parameters
    ----------
    kernel : {'rbf', 'gaussian'}, default='rbf'
        The Gaussian kernel ``exp(-gamma ||x - x'||^2)`` (the gradient is RBF-specific).
    gamma : 'scale', 'auto' or float, default='scale'
        Kernel width, as in scikit-learn's SVC.
    C : float, default=1.0
        Loss weight in the SVM family's scaling (objective above).
    n_basis : int or float, default=10
        Number m of expansion vectors: an int in [1, n] or a fraction of n in (0, 1]. The paper
        uses 5-10 % of the support vectors of the full SVM. Ignored when ``basis`` is an array.
    basis : {'random', 'kmeans'}, array-like or BasisSelector, default='random'
        Initial Z: random training rows (the paper's Table 1), k-means centroids (its Table 2),
        an explicit (m, d) array or a selector. Duplicated rows are removed, so ``basis_`` may
        have fewer than ``n_basis`` rows.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        The paper's L1-loss SVM, or the L2-loss SVM (strictly convex dual: smoother W).
    tol : float, default=1e-4
        L-BFGS stops when the relative decrease of W falls below ``tol``; each inner SVM is
        solved to a relative duality gap of ``tol / 10``.
    max_iter : int, default=100
        L-BFGS iterations over Z (the paper reports 20-200). 0 keeps the initial Z, which
        with ``basis='random'`` is the paper's modified RSVM (MRSVM).
    memory_budget : int, str or None, default=None
        Bytes for one block of kernel evaluations at prediction (None: 1 GiB).
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weights of each class's samples.
    random_state : int, RandomState or None, default=None
        Seed of the initial basis and of the coordinate-descent order.
    verbose : int, default=0
        0 silent; 1 a progress bar; 2 also a log line per L-BFGS iteration.

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
        The learned expansion vectors Z.
    coef_ : ndarray of shape (1, m) or (n_classes, m)
        Expansion coefficients beta (eq. 45).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    gamma_ : float
        The kernel width used.
    classes_ : ndarray of shape (n_classes,)
    objective_ : float
        W(Z) at the returned Z (summed over one-vs-rest problems).
    objective_init_ : float
        W at the initial Z.
    n_iter_ : int
        L-BFGS iterations performed.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import SparseMarginClassifier
    >>> X, y = make_moons(300, noise=0.15, random_state=0)
    >>> clf = SparseMarginClassifier(gamma=2.0, C=20.0, n_basis=8, random_state=0).fit(X, y)
    >>> clf.basis_.shape
    (8, 2)
    >>> bool(clf.objective_ < clf.objective_init_)
    True
    """

    _parameter_constraints = SPARSE_MARGIN_CONSTRAINTS

    def __init__(self, kernel="rbf", gamma="scale", C=1.0, n_basis=10, basis="random",
                 loss="hinge", tol=1e-4, max_iter=100, memory_budget=None, class_weight=None,
                 random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def _problem(self, X, targets, sw, rng):
        self.gamma_ = float(resolve_gamma(self.gamma, X))
        kernel = Kernel("rbf", gamma=self.gamma_, memory_budget=self.memory_budget)
        return BasisSVM(kernel, X, targets, C=self.C, loss=self.loss, sample_weight=sw,
                        tol=self.tol / 10, max_iter=INNER_MAX_ITER,
                        random_state=rng.randint(np.iinfo(np.int32).max))

    def fit(self, X, y, sample_weight=None):
        """Learn the expansion vectors and their coefficients.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms.

        Returns
        -------
        self
        """
        X, y_enc, sw, targets = self._validate_fit(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        Z0 = initial_basis(X, y_enc, self.n_basis, self.basis, rng)
        problem = self._problem(X, targets, sw, rng)
        Z, info = minimize_over_basis(problem.value_and_grad, Z0, max_iter=self.max_iter,
                                      tol=self.tol, verbose=self.verbose,
                                      name=type(self).__name__)
        self._finish(problem, Z, info)
        return self

    def _finish(self, problem, Z, info):
        """Final coefficients (eq. 45) on Z with merged near-duplicates; fitted attributes."""
        Z = dedupe_rows(Z, decimals=10)
        self.basis_ = Z
        self.coef_, self.intercept_, results = problem.coefficients(Z)
        self.objective_ = float(sum(r.objective for r in results))
        self.objective_init_ = float(info["W_init"])
        self.n_iter_ = info["n_iter"]
