"""ReducedSetSVC and compress_svc: a fitted RBF kernel SVM on far fewer expansion vectors."""

from __future__ import annotations

import numpy as np
from scipy.linalg import block_diag
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from ..base import BASIS_CONSTRAINTS
from ..basis import resolve_n_basis
from ..kernels import Kernel
from ..utils import (
    MemoryPlan,
    Options,
    SolverProgress,
    constraints,
    parse_memory_budget,
    plain,
    seed_from,
)
from ..utils.fitted_spec import CLASSES, FEATURES, INFO, OVR, ClassSpec, kernel_basis
from ._base import LOSSES, SPARSE_MARGIN_CONSTRAINTS, ExpansionClassifier
from ._basis_svm import BasisSVM
from ._reduced_set import kernel_expansion, reduced_set_rbf

__all__ = ["ReducedSetSVC", "compress_svc"]


@fill_doc
class ReducedSetSVC(ExpansionClassifier):
    """A fitted RBF kernel SVM compressed to ``n_basis`` expansion vectors (RS or MRS).

    The reduced set (RS) method replaces ``w = sum_i a_i phi(x_i)`` by
    ``sum_j beta_j phi(z_j)`` with far fewer vectors z_j, found greedily by a fixed-point
    iteration, and coefficients minimizing ``||w - sum_j beta_j phi(z_j)||`` (eq. 47); the
    SVM's bias is kept. The modified RS method (MRS, the default) keeps the vectors but
    re-fits coefficients and bias by the exact SVM of :class:`SparseMarginClassifier`
    (eq. 45) on the training data. Prediction costs O(m d).

    Parameters
    ----------
    svc : estimator or None, default=None
        The model to compress: a fitted binary scikit-learn ``SVC`` (rbf kernel) or a fitted
        binary sparsekernel RBF model, used as is; an unfitted one is first fitted on (X, y)
        (one clone per class, one-vs-rest, for multiclass y); None means ``SVC()``.
    {n_basis}
        One-vs-rest models get m // k each (at least one), and a model keeps at most as many
        vectors as it has support vectors.
    method : {'mrs', 'rs'}, default='mrs'
        Coefficients by the exact SVM on Z (eq. 45, needs the training data in ``fit``) or by
        the feature-space least squares fit of RS (eq. 47).
    C : float or None, default=None
        Loss weight of the MRS step; None matches the model compressed (``2 * svc.C`` for a
        scikit-learn SVC, whose objective is ``1/2||w||^2 + C_libsvm sum_i hinge_i``).
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        Loss of the MRS step (the SVC's own is 'hinge').
    max_iter : int, default=50
        Fixed-point iterations per expansion vector (per start).
    tol : float, default=1e-6
        Fixed-point stopping tolerance (relative step); the MRS step is solved to a relative
        duality gap of ``tol``.
    {memory_budget}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
    basis_indices_ : None
    coef_ : ndarray of shape (1, m) or (n_classes, m)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    gamma_ : float
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Largest number of fixed-point iterations spent on one expansion vector.
    n_source_support_ : int
        Support vectors of the compressed model(s) (the prediction cost before compression;
        ``n_support_`` is the cost after).
    n_features_in_ : int

    Notes
    -----
    :func:`sparsekernel.io.save` stores only sparsekernel estimators as parameters: before
    saving a model made from a scikit-learn SVC call ``set_params(svc=None)`` (prediction uses
    the fitted attributes only).

    See Also
    --------
    compress_svc : the same as a function of a fitted SVC.
    SparseMarginClassifier : Learns a few expansion vectors in the first place.
    sklearn.svm.SVC : The model this compresses.

    References
    ----------
    .. [1] M. Wu, B. Schoelkopf and G. Bakir, "A direct method for building sparse kernel
       learning algorithms", Journal of Machine Learning Research 7, 603-624,
       2006 (sections 4 and 5).
    .. [2] C. J. C. Burges, "Simplified support vector decision rules", Proceedings of the
       13th International Conference on Machine Learning (ICML), 71-77, 1996.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from sparsekernel import ReducedSetSVC
    >>> X, y = make_moons(200, noise=0.15, random_state=0)
    >>> svc = SVC(gamma=2.0, C=10.0).fit(X, y)
    >>> small = ReducedSetSVC(svc, n_basis=10).fit(X, y)
    >>> small.n_support_
    10
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, **CLASSES, **kernel_basis(csr=False), **OVR,
         "n_source_support_": INFO, "n_iter_": INFO})
    _parameter_constraints = {
        **constraints("max_iter", "tol", "memory_budget", "random_state", "verbose"),
        "svc": [None, BaseEstimator],
        "n_basis": BASIS_CONSTRAINTS["n_basis"],
        "method": [Options("mrs", "rs")],
        "C": [None, *SPARSE_MARGIN_CONSTRAINTS["C"]],
        "loss": LOSSES,
    }

    def __init__(self, svc=None, *, n_basis=0.05, method="mrs", C=None, loss="hinge",
                 max_iter=50, tol=1e-6, memory_budget=None, random_state=None, verbose=0):
        self.svc = svc
        self.n_basis = n_basis
        self.method = method
        self.C = C
        self.loss = loss
        self.max_iter = max_iter
        self.tol = tol
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    def _plan_memory(self, X, n_models):
        """The memory rule (:meth:`~sparsekernel.base.KernelExpansionMixin._plan_basis`) for
        m = ``n_basis`` vectors over ``n_models`` compressed models, checked before anything
        is fitted (a source SVC fitted here keeps LIBSVM's own kernel cache).

        Returns the bytes the plan leaves to the kernel's row blocks (at least one row)."""
        (n, d), k = X.shape, self._n_problems
        m = max(1, resolve_n_basis(self.n_basis, n) // n_models) * n_models
        block = 8.0 * (2 * n + d + 1)  # one row of K(V, V), V at most every row
        plan = MemoryPlan(
            type(self).__name__, parse_memory_budget(self.memory_budget),
            working_vectors=8.0 * n * (k + 3), support_vectors=2 * 8.0 * n * d,
            reduced_set=8.0 * n * (m // n_models + 2),
            features=4 * 8.0 * n * m if self.method == "mrs" else 0.0,
            m_x_m_matrices=self._M_SQUARES * 8.0 * m * m, kernel_block=block)
        plan.require(f"n_basis={self.n_basis!r} is too many expansion vectors for this "
                     "budget: lower n_basis, or raise memory_budget (float('inf') for no cap)")
        return int(max(block, plan.budget - plan.total + block))

    def _source_models(self, X, Y, sw):
        """The fitted binary model per one-vs-rest target, and the kernel blocks' share of
        the budget (:meth:`_plan_memory`)."""
        svc = SVC() if self.svc is None else self.svc
        try:
            check_is_fitted(svc)
        except NotFittedError:
            share = self._plan_memory(X, Y.shape[1])
            return [clone(svc).fit(X, t, sample_weight=sw) for t in Y.T], share
        src_classes = [plain(c) for c in getattr(svc, "classes_", [])]
        if len(src_classes) != 2:
            raise ValueError(f"Only binary models can be compressed; the fitted "
                             f"{type(svc).__name__} has classes {src_classes}. Pass an "
                             "unfitted model to fit and compress it one-vs-rest.")
        if not np.array_equal(np.asarray(svc.classes_), self.classes_):
            raise ValueError(
                f"The fitted {type(svc).__name__} has classes {src_classes} but y has "
                f"{[plain(c) for c in self.classes_]}: pass the model's own training data."
            )
        return [svc], self._plan_memory(X, 1)

    def fit(self, X, y, sample_weight=None):
        """Compress the model(s); X, y are the training data (MRS re-fits coefficients on it).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Used when fitting an unfitted ``svc`` and in the MRS step.

        Returns
        -------
        self
        """
        X, y_enc, Y, sw = self._classifier_data(X, y, sample_weight)
        self._check_weighted_classes(y_enc, sw)
        models, share = self._source_models(X, Y, sw)
        m = max(1, resolve_n_basis(self.n_basis, X.shape[0]) // len(models))
        with SolverProgress(self.verbose, len(models), type(self).__name__) as progress:
            parts = []
            for label, model in zip(self._problem_labels, models, strict=True):
                parts.append(self._compress(model, X, m, progress.callback(label), share))
                progress.done()
        self.n_source_support_ = int(sum(p["n_sv"] for p in parts))
        self.n_iter_ = max(p["n_iter"] for p in parts)
        self.basis_indices_ = None
        Z = np.vstack([p["Z"] for p in parts])
        if self.method == "rs":  # each model keeps its own vectors, coefficients and bias
            self.basis_, self.coef_ = Z, block_diag(*[p["beta"] for p in parts])
            self.intercept_ = np.array([p["b"] for p in parts])
            return self
        C_src = parts[-1]["C"]
        C = self.C if self.C is not None else (C_src if C_src is not None else 2.0)
        kernel = self._kernel()
        kernel.memory_budget = share
        svm = BasisSVM(kernel, X, Y, C=C, loss=self.loss, sample_weight=sw,
                       tol=self.tol, random_state=seed_from(self.random_state))
        self._fit_coefficients(svm, Z)  # merges vectors that coincide across models
        return self

    def _compress(self, model, X, m, callback, share):
        """Greedy reduced set of one binary model: a dict of Z, beta, b, C and counts;
        its kernel blocks within ``share`` bytes."""
        V, a, b, gamma, C = kernel_expansion(model, X)
        self.gamma_ = gamma  # one width for the whole ensemble (all fitted on the same X)
        kernel = Kernel("rbf", gamma=gamma, memory_budget=share)
        Z, beta, it = reduced_set_rbf(kernel, V, a, min(m, len(V)), max_iter=self.max_iter,
                                      tol=self.tol, callback=callback)
        return {"Z": Z, "beta": beta, "b": b, "C": C, "n_sv": len(V), "n_iter": it}


def compress_svc(svc, X, y, n_basis=0.05, method="mrs", **params):
    """Compress a fitted RBF kernel SVM to ``n_basis`` expansion vectors; returns the model.

    The returned :class:`ReducedSetSVC` evaluates ``n_basis`` kernels per prediction
    instead of one per support vector.

    Parameters
    ----------
    svc : fitted binary sklearn.svm.SVC (rbf) or sparsekernel RBF model
    X, y : the model's training data (MRS re-fits the coefficients on them; ``gamma='scale'``
        is resolved on X)
    n_basis : int, float or 'auto', default=0.05
    method : {'mrs', 'rs'}, default='mrs'
    **params : further :class:`ReducedSetSVC` parameters (C, loss, max_iter, tol, ...)

    Returns
    -------
    ReducedSetSVC
        Fitted.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from sparsekernel import compress_svc
    >>> X, y = make_moons(400, noise=0.2, random_state=0)
    >>> svc = SVC(C=10, gamma=2.0).fit(X, y)
    >>> small = compress_svc(svc, X, y, n_basis=10)
    >>> bool(small.basis_.shape[0] <= 10 < svc.n_support_.sum())
    True
    """
    return ReducedSetSVC(svc=svc, n_basis=n_basis, method=method, **params).fit(X, y)
