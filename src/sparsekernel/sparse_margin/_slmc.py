"""Sparse large margin classifier (SLMC, Wu, Schoelkopf & Bakir, JMLR 7:603-624, 2006), MRSVM."""

from __future__ import annotations

from .._docs import fill_doc
from ..svm import LowRankSVC
from ._base import (
    LOSSES,
    SPARSE_MARGIN_CONSTRAINTS,
    LearnedBasis,
    LearnedBasisClassifier,
    sparse_margin_spec,
)
from ._basis_svm import BasisSVM

__all__ = ["SparseMarginBasis", "SparseMarginClassifier", "modified_rsvm"]


@fill_doc
class SparseMarginBasis(LearnedBasis):
    """Expansion vectors Z that minimise the SVM's marginal function W(Z) (SLMC).

    W(Z) is the optimal value of the SVM objective on the span of phi(z_1..z_m), summed over
    the one-vs-rest problems (:class:`SparseMarginClassifier`); each evaluation solves the
    linear SVM on the whitened map exactly, warm-started, and the gradient is eq. (46). Use
    it as ``basis=`` of any classifier, e.g. ``ReducedSVC(basis=SparseMarginBasis(C=20))``;
    the kernel must be 'rbf' with a scalar gamma.

    Parameters
    ----------
    {C}
    loss : {'hinge', 'squared_hinge'}, default='hinge'
    init : str, array-like or BasisSelector, default='random'
        The starting Z (chosen with the same kernel); duplicates are removed.
    tol : float, default=1e-4
        L-BFGS stops when the relative decrease of W falls below ``tol``; each inner SVM is
        solved to a relative duality gap of ``tol / 10``.
    max_iter : int, default=100
        L-BFGS iterations (0 keeps the starting Z).
    verbose : int, default=0
        2 prints a line per L-BFGS iteration and one for the search.

    See Also
    --------
    SparseMarginClassifier : The SLMC itself: this search, then the exact SVM on Z.
    FisherBasis : Expansion vectors from the kernel Fisher criterion instead.
    sparsekernel.basis.KMeansBasis : Fixed centres, no search.

    References
    ----------
    .. [1] M. Wu, B. Schoelkopf and G. Bakir, "A direct method for building sparse kernel
       learning algorithms", Journal of Machine Learning Research 7, 603-624, 2006.
    """

    _parameter_constraints = {**LearnedBasis._parameter_constraints,
                              "C": SPARSE_MARGIN_CONSTRAINTS["C"], "loss": LOSSES}

    def __init__(self, *, C=1.0, loss="hinge", init="random", tol=1e-4, max_iter=100, verbose=0):
        self.C = C
        self.loss = loss
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def objective(self, kernel, X, Y, sample_weight, seed):
        """The warm-started SVMs on phi_z whose ``value_and_grad`` is W(Z) and eq. (46)."""
        return BasisSVM(kernel, X, Y, C=self.C, loss=self.loss, sample_weight=sample_weight,
                        tol=self.tol / 10, random_state=seed)


@fill_doc
class SparseMarginClassifier(LearnedBasisClassifier):
    """Sparse large margin classifier (SLMC): an SVM on ``n_basis`` learned expansion vectors.

    Wu, Schoelkopf & Bakir (JMLR 2006) constrain the SVM to ``w = sum_j beta_j phi(z_j)`` and
    move the expansion vectors Z (not necessarily training points) to minimize W(Z), the
    optimal value of the SVM objective on their span: with K(Z, Z) = L L^T and the features
    phi_Z(x) = L^(-1) K(Z, x),

        W(Z) = min_{v, b}  1/2 ||v||^2 + 1/2 b^2 + C/2 * sum_i s_i loss(y_i (v^T phi_Z(x_i) + b)),

    with the hinge (default) or the squared hinge (:doc:`/user_guide/sparse_margin`). Z moves
    by L-BFGS from ``basis`` (:class:`SparseMarginBasis`); the coefficients are then the
    exact SVM on Z (eq. 45). Multiclass problems are one-vs-rest on one shared Z that
    minimizes the sum of the binary objectives.

    Parameters
    ----------
    kernel : {'rbf', 'gaussian'}, default='rbf'
        The Gaussian kernel ``exp(-gamma ||x - x'||^2)`` (the gradient is RBF-specific).
    {gamma}
    {C}
    {n_basis}
        Every L-BFGS step solves an SVM on m features; the paper uses 5-10 % of the support
        vectors of the full SVM.
    {basis}
        Here it is the initial Z ('random' is the paper's Table 1, 'kmeans' its Table 2).
        Duplicated rows are removed, so ``basis_`` may have fewer than ``n_basis`` rows.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        The paper's L1-loss SVM, or the L2-loss SVM (strictly convex dual: smoother W).
    tol : float, default=1e-4
        L-BFGS stops when the relative decrease of W falls below ``tol``; each inner SVM is
        solved to a relative duality gap of ``tol / 10``.
    max_iter : int, default=100
        L-BFGS iterations over Z (the paper reports 20-200). 0 keeps the initial Z, which
        with ``basis='random'`` is the paper's modified RSVM (MRSVM).
    {memory_budget}
    {class_weight}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
        The learned expansion vectors Z (float64).
    basis_indices_ : None
        The learned vectors are not training rows.
    coef_ : ndarray of shape (1, m) or (n_classes, m)
        Expansion coefficients beta (eq. 45).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    gamma_ : float
    classes_ : ndarray of shape (n_classes,)
    objective_ : float
        W at ``basis_`` (summed over one-vs-rest problems).
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

    See Also
    --------
    SparseMarginBasis : The search for Z, as a basis selector for any estimator.
    SparseFisherDiscriminant : Z from the kernel Fisher criterion instead.
    ReducedSetSVC : Compress a fitted SVM to a few expansion vectors.
    ReducedSVC : The smooth SVM on a chosen (not learned) basis.
    sklearn.svm.SVC : The kernel SVM on all its support vectors.

    References
    ----------
    .. [1] M. Wu, B. Schoelkopf and G. Bakir, "A direct method for building sparse kernel
       learning algorithms", Journal of Machine Learning Research 7, 603-624, 2006.
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = sparse_margin_spec()
    _parameter_constraints = SPARSE_MARGIN_CONSTRAINTS

    def __init__(self, *, kernel="rbf", gamma="scale", C=1.0, n_basis=10, basis="random",
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

    def _selector(self):
        return SparseMarginBasis(C=self.C, loss=self.loss, tol=self.tol, max_iter=self.max_iter)


def modified_rsvm(n_basis="auto", *, C=1.0, gamma="scale", random_state=None, **params):
    """The paper's modified RSVM: random expansion vectors, coefficients by eq. (45).

    Eq. (45) is the linear SVM on a whitened empirical kernel map such as the Nystrom
    features, so MRSVM is :class:`sparsekernel.LowRankSVC` with ``basis='random'`` and the
    hinge loss; this returns that unfitted estimator (as does
    :class:`SparseMarginClassifier` with ``max_iter=0``, up to the factorization of K_z).

    Parameters
    ----------
    n_basis : 'auto', int or float, default='auto'
    C : float, default=1.0
        SVM-family scaling (``C = 2 * C_libsvm``).
    gamma : 'scale', 'auto' or float, default='scale'
    random_state : int, RandomState or None, default=None
    **params : further LowRankSVC parameters (tol, max_iter, class_weight, ...)

    Returns
    -------
    LowRankSVC
    """
    return LowRankSVC(kernel="rbf", gamma=gamma, C=C, loss="hinge", n_basis=n_basis,
                      basis="random", random_state=random_state, **params)
