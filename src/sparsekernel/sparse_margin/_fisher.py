"""Sparse kernel Fisher discriminant (Wu, Schoelkopf & Bakir 2006, appendix A)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from .._docs import fill_doc
from ..compute import spd_cholesky
from ..solvers import NonFiniteError
from ..utils import Interval, check_sample_weight
from ._base import (
    SPARSE_MARGIN_CONSTRAINTS,
    LearnedBasis,
    LearnedBasisClassifier,
    sparse_margin_spec,
)
from ._basis_svm import JITTER, rbf_basis_gradient

__all__ = ["FisherBasis", "FisherBasisObjective", "SparseFisherDiscriminant"]

RIDGE = [Interval("real", 0, None, closed="neither")]


class FisherBasisObjective:
    """W(Z) = -(largest generalized eigenvalue of (A_z, B_z)), summed over binary problems.

    With ``w = sum_j beta_j phi(z_j)``, ``Psi = K(X, Z)`` and weights ``s``::

        A_z = d d^T,  d = mu_+ - mu_-   (weighted class means of the rows of Psi)
        B_z = (1/S) sum_i s_i (psi_i - mu_{y_i})(psi_i - mu_{y_i})^T + ridge K_z

    A_z has rank one, so the eigenvalue is ``lambda = d^T B_z^-1 d`` with eigenvector
    ``beta = B_z^-1 d / sqrt(lambda)`` (``beta^T B_z beta = 1``), and eq. (63) gives
    ``dW/dz = -d(beta^T A_z beta)/dz + lambda d(beta^T B_z beta)/dz`` at fixed beta.

    Parameters
    ----------
    kernel : Kernel
        'rbf' with a scalar gamma.
    X : ndarray or CSR matrix of shape (n, d)
    Y : ndarray of shape (n, k)
        +-1 targets, one column per binary problem.
    sample_weight : ndarray of shape (n,) or None
    ridge : float
        The ridge mu on the within-class scatter (``B + mu I`` in feature space).
    """

    def __init__(self, kernel, X, Y, sample_weight, ridge):
        self.kernel, self.X, self.Y = kernel, X, np.asarray(Y, dtype=np.float64)
        self.sw, self.ridge = check_sample_weight(sample_weight, X.shape[0]), ridge
        self._evaluated = False  # a degenerate criterion at the start Z is an error

    def _one(self, Psi, Kz, y):
        """(lambda, beta, gx, zz_weight) for one +-1 target."""
        s = self.sw
        pos = y > 0
        S, S1, S2 = s.sum(), s[pos].sum(), s[~pos].sum()
        e = np.where(pos, s / S1, -s / S2)
        d = Psi.T @ e
        mean = np.where(pos[:, None], (s[pos] @ Psi[pos]) / S1, (s[~pos] @ Psi[~pos]) / S2)
        Pc = Psi - mean
        B = (Pc.T * s) @ Pc / S + self.ridge * Kz
        solved = cho_solve((spd_cholesky(B, jitter=JITTER)[0], True), d)
        lam = float(d @ solved)
        if not (np.isfinite(lam) and lam > 0.0):  # beta = B^-1 d / sqrt(lam) would be NaN
            if not self._evaluated:
                raise NonFiniteError(self._degenerate_message(lam, Psi))
            # A trial point of the line search: W = 0 (no separation) with a zero gradient
            # is worse than the start, so L-BFGS rejects it and keeps the best Z.
            return 0.0, np.zeros_like(d), np.zeros_like(y), 0.0
        beta = solved / np.sqrt(lam)
        sc = Pc @ beta
        gx = -2.0 * float(beta @ d) * e + lam * (2.0 / S) * s * sc
        return lam, beta, gx, 2.0 * lam * self.ridge

    def _degenerate_message(self, lam, Psi):
        """Why there is no Fisher direction: the kernel sees every row alike."""
        gamma = float(self.kernel.gamma)
        k_max = float(Psi.max()) if Psi.size else 0.0
        k_min = float(Psi.min()) if Psi.size else 0.0
        return (
            f"The kernel Fisher criterion is degenerate: its eigenvalue d^T B^-1 d is {lam:.3g} "
            f"(d, the difference of the class means in feature space, is zero). The kernel "
            f"values K(X, Z) between the training rows and the expansion vectors lie in "
            f"[{k_min:.3g}, {k_max:.3g}] with the 'rbf' kernel's gamma={gamma:.3g}: "
            + ("every row is far from every expansion vector, so gamma is too large"
               if k_max < 1e-6 else "the kernel sees every row alike")
            + ". Pass a smaller gamma (gamma='scale' adapts it to the data: 1 / (n_features "
            "* X.var())) or standardize X (e.g. sklearn.preprocessing.StandardScaler)."
        )

    def value_and_grad(self, Z):
        """W(Z) and its gradient (eq. 63), shape (m, d)."""
        Kz = np.asarray(self.kernel(Z, Z), dtype=np.float64)
        Psi = np.asarray(self.kernel(self.X, Z), dtype=np.float64)
        W, grad = 0.0, np.zeros_like(Z)
        for y in self.Y.T:
            lam, beta, gx, zz = self._one(Psi, Kz, y)
            W -= lam
            grad += rbf_basis_gradient(Z, self.X, Psi, gx, beta, Kz, zz,
                                       float(self.kernel.gamma))
        self._evaluated = True
        return W, grad


class FisherBasis(LearnedBasis):
    """Expansion vectors Z that maximise the kernel Fisher criterion (sparse KFD).

    Minimises W(Z) = minus the largest Rayleigh quotient ``w^T A w / (w^T B w + ridge
    ||w||^2)`` over ``w = sum_j beta_j phi(z_j)`` (between- and within-class scatter A, B in
    feature space; :class:`FisherBasisObjective`), summed over the one-vs-rest problems, by
    L-BFGS. Use it as ``basis=`` of any classifier with the 'rbf' kernel.

    Parameters
    ----------
    ridge : float, default=1e-3
        Ridge mu on the within-class scatter (``B + mu I`` in feature space): absolute, since
        the gradient of eq. (63) holds for a fixed mu.
    init : str, array-like or BasisSelector, default='kmeans'
        The starting Z (the paper initializes SKFD with k-means); duplicates are removed.
    tol : float, default=1e-4
        Relative decrease of W below which L-BFGS stops.
    max_iter : int, default=100
        L-BFGS iterations (0 keeps the starting Z).
    verbose : int, default=0
        2 prints a line per L-BFGS iteration and one for the search.

    See Also
    --------
    SparseFisherDiscriminant : The sparse KFD itself: this search, then the SVM on Z.
    SparseMarginBasis : Expansion vectors from the SVM's margin instead.

    References
    ----------
    .. [1] M. Wu, B. Schoelkopf and G. Bakir, "A direct method for building sparse kernel
       learning algorithms", Journal of Machine Learning Research 7, 603-624,
       2006 (appendix A).
    """

    _parameter_constraints = {**LearnedBasis._parameter_constraints, "ridge": RIDGE}

    def __init__(self, *, ridge=1e-3, init="kmeans", tol=1e-4, max_iter=100, verbose=0):
        self.ridge = ridge
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def objective(self, kernel, X, Y, sample_weight, seed):
        """The Fisher criterion W(Z) with its gradient."""
        return FisherBasisObjective(kernel, X, Y, sample_weight, self.ridge)


@fill_doc
class SparseFisherDiscriminant(LearnedBasisClassifier):
    """Sparse kernel Fisher discriminant (SKFD): Fisher's criterion on m learned vectors.

    The expansion vectors Z maximize the kernel Fisher discriminant's Rayleigh quotient
    (:class:`FisherBasis`), started from ``basis``. The eigenvector gives no bias, so the
    final coefficients and bias come from the exact SVM on Z (eq. 45) of
    :class:`SparseMarginClassifier`. Multiclass problems are one-vs-rest on one shared Z
    minimizing the summed criterion.

    Parameters
    ----------
    kernel : {'rbf', 'gaussian'}, default='rbf'
        The Gaussian kernel (the gradient is RBF-specific).
    {gamma}
    {C}
        Here it weights the final SVM step.
    ridge : float, default=1e-3
        Ridge mu on the within-class scatter (``B + mu I`` in feature space).
    {n_basis}
    {basis}
        Here it is the initial Z (the paper initializes SKFD with k-means); duplicates are
        removed.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        Loss of the final SVM step.
    tol : float, default=1e-4
        Relative decrease of W below which L-BFGS stops (the SVM step: gap ``tol / 10``).
    max_iter : int, default=100
        L-BFGS iterations over Z (0 keeps the initial Z).
    {memory_budget}
    {class_weight}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
    basis_indices_ : None
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

    See Also
    --------
    FisherBasis : The search for Z, as a basis selector for any estimator.
    SparseMarginClassifier : Z that minimizes the SVM objective instead.
    sklearn.discriminant_analysis.LinearDiscriminantAnalysis : Fisher's linear discriminant.

    References
    ----------
    .. [1] M. Wu, B. Schoelkopf and G. Bakir, "A direct method for building sparse kernel
       learning algorithms", Journal of Machine Learning Research 7, 603-624,
       2006 (appendix A).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import SparseFisherDiscriminant
    >>> X, y = make_moons(200, noise=0.15, random_state=0)
    >>> clf = SparseFisherDiscriminant(gamma=2.0, n_basis=6, random_state=0).fit(X, y)
    >>> clf.basis_.shape
    (6, 2)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = sparse_margin_spec()
    _parameter_constraints = {**SPARSE_MARGIN_CONSTRAINTS, "ridge": RIDGE}

    def __init__(self, *, kernel="rbf", gamma="scale", C=1.0, ridge=1e-3, n_basis=10,
                 basis="kmeans", loss="hinge", tol=1e-4, max_iter=100, memory_budget=None,
                 class_weight=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.ridge = ridge
        self.n_basis = n_basis
        self.basis = basis
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def _selector(self):
        return FisherBasis(ridge=self.ridge, tol=self.tol, max_iter=self.max_iter)
