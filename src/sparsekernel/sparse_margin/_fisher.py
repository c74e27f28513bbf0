"""Sparse kernel Fisher discriminant (Wu, Schoelkopf & Bakir 2006, appendix A)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve
from sklearn.utils import check_random_state

from ..kernels import Kernel, resolve_gamma
from ..utils import Interval
from ._base import BasisClassifierMixin
from ._basis_svm import BasisSVM, basis_cholesky, rbf_basis_gradient
from ._optimize import minimize_over_basis
from ._slmc import INNER_MAX_ITER, SPARSE_MARGIN_CONSTRAINTS, initial_basis

__all__ = ["FisherBasisObjective", "SparseFisherDiscriminant"]


class FisherBasisObjective:
    """W(Z) = -(largest generalized eigenvalue of (A_z, B_z)), summed over binary problems.

    With ``w = sum_j beta_j phi(z_j)``, ``Psi = K(X, Z)`` and weights ``s``::

        A_z = d d^T,  d = mu_+ - mu_-   (weighted class means of the rows of Psi)
        B_z = (1/S) sum_i s_i (psi_i - mu_{y_i})(psi_i - mu_{y_i})^T + reg_param K_z

    A_z has rank one, so the eigenvalue is ``lambda = d^T B_z^-1 d`` with eigenvector
    ``beta = B_z^-1 d / sqrt(lambda)`` (``beta^T B_z beta = 1``), and eq. (63) gives
    ``dW/dz = -d(beta^T A_z beta)/dz + lambda d(beta^T B_z beta)/dz`` at fixed beta.
    """

    def __init__(self, kernel, X, targets, sample_weight, reg_param):
        self.kernel, self.X, self.targets = kernel, X, targets
        self.sw, self.reg_param = sample_weight, reg_param

    def _one(self, Psi, Kz, y):
        """(lambda, beta, gx, zz_weight) for one +-1 target."""
        s = self.sw
        pos = y > 0
        S, S1, S2 = s.sum(), s[pos].sum(), s[~pos].sum()
        e = np.where(pos, s / S1, -s / S2)
        d = Psi.T @ e
        mean = np.where(pos[:, None], (s[pos] @ Psi[pos]) / S1, (s[~pos] @ Psi[~pos]) / S2)
        Pc = Psi - mean
        B = (Pc.T * s) @ Pc / S + self.reg_param * Kz
        solved = cho_solve((basis_cholesky(B), True), d)
        lam = float(d @ solved)
        beta = solved / np.sqrt(lam)
        sc = Pc @ beta
        gx = -2.0 * float(beta @ d) * e + lam * (2.0 / S) * s * sc
        return lam, beta, gx, 2.0 * lam * self.reg_param

    def value_and_grad(self, Z):
        Kz = np.asarray(self.kernel(Z, Z), dtype=np.float64)
        Psi = np.asarray(self.kernel(self.X, Z), dtype=np.float64)
        W, grad = 0.0, np.zeros_like(Z)
        for y in self.targets:
            lam, beta, gx, zz = self._one(Psi, Kz, y)
            W -= lam
            grad += rbf_basis_gradient(Z, self.X, Psi, gx, beta, Kz, zz,
                                       float(self.kernel.gamma))
        return W, grad


class SparseFisherDiscriminant(BasisClassifierMixin):
    """Sparse kernel Fisher discriminant (SKFD): Fisher's criterion on m learned vectors.

    The expansion vectors Z maximize the kernel Fisher discriminant's Rayleigh quotient
    ``w^T A w / (w^T B w + reg_param ||w||^2)`` over ``w = sum_j beta_j phi(z_j)`` (between- and
    within-class scatter A, B in feature space): W(Z) is minus the largest generalized
    eigenvalue and is minimized over Z by L-BFGS with the gradient of eq. (63). As the paper
    says, the eigenvector gives no bias, so the final coefficients and bias come from the SVM
    step on the learned Z (eq. 45), i.e. the objective of :class:`SparseMarginClassifier`::

        min_{v, b}  1/2 ||v||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss(y_i (v . phi_z(x_i) + b))

    in the SVM family's scaling (``C = 2 * C_libsvm`` for the hinge loss). Multiclass problems
    are one-vs-rest on one shared Z minimizing the summed criterion.

    Parameters
    ----------
    kernel : {'rbf', 'gaussian'}, default='rbf'
    gamma : 'scale', 'auto' or float, default='scale'
    C : float, default=1.0
        Loss weight of the final SVM step (SVM-family scaling).
    reg_param : float, default=1e-3
        Regularization mu of the within-class scatter (``B + mu I`` in feature space).
    n_basis : int or float, default=10
        Number of expansion vectors (int, or a fraction of n in (0, 1]).
    basis : {'random', 'kmeans'}, array-like or BasisSelector, default='kmeans'
        Initial Z (the paper initializes SKFD with k-means); duplicates are removed.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        Loss of the final SVM step.
    tol : float, default=1e-4
        Relative decrease of W below which L-BFGS stops.
    max_iter : int, default=100
        L-BFGS iterations over Z.
    memory_budget : int, str or None, default=None
    class_weight : dict, 'balanced' or None, default=None
    random_state : int, RandomState or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
    coef_ : ndarray of shape (1, m) or (n_classes, m)
        Expansion coefficients from the SVM step.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    gamma_ : float
    classes_ : ndarray of shape (n_classes,)
    objective_ : float
        W(Z) (minus the Fisher eigenvalue, summed over problems) at the returned Z.
    objective_init_ : float
        W at the initial Z.
    n_iter_ : int
    n_features_in_ : int
    """

    _parameter_constraints = {**SPARSE_MARGIN_CONSTRAINTS,
                              "reg_param": [Interval("real", 0, None, closed="neither")]}

    def __init__(self, kernel="rbf", gamma="scale", C=1.0, reg_param=1e-3, n_basis=10,
                 basis="kmeans", loss="hinge", tol=1e-4, max_iter=100, memory_budget=None,
                 class_weight=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.reg_param = reg_param
        self.n_basis = n_basis
        self.basis = basis
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Learn Z by Fisher's criterion, then the coefficients and bias by the SVM step.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, y_enc, sw, targets = self._validate_fit(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        Z0 = initial_basis(X, y_enc, self.n_basis, self.basis, rng)
        self.gamma_ = float(resolve_gamma(self.gamma, X))
        kernel = Kernel("rbf", gamma=self.gamma_, memory_budget=self.memory_budget)
        fisher = FisherBasisObjective(kernel, X, targets, sw, self.reg_param)
        Z, info = minimize_over_basis(fisher.value_and_grad, Z0, max_iter=self.max_iter,
                                      tol=self.tol, verbose=self.verbose,
                                      name=type(self).__name__)
        svm = BasisSVM(kernel, X, targets, C=self.C, loss=self.loss, sample_weight=sw,
                       tol=self.tol / 10, max_iter=INNER_MAX_ITER,
                       random_state=rng.randint(np.iinfo(np.int32).max))
        self.basis_ = Z
        self.coef_, self.intercept_, _ = svm.coefficients(Z)
        self.objective_ = float(info["W"])
        self.objective_init_ = float(info["W_init"])
        self.n_iter_ = info["n_iter"]
        return self
