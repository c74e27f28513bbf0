"""LowRankOneClassSVM: Schölkopf's nu-one-class SVM on Nystrom features (novelty detection).

The problem (Schölkopf, Platt, Shawe-Taylor, Smola, Williamson, Neural Computation 13, 2001)
is solved exactly, by its dual, on the whitened Nystrom features F(x) = K(x, Z) M of m
landmarks (:mod:`sparsekernel.solvers.one_class`), so its cost is that of a linear model on
m features and the model is the kernel expansion f(x) = K(x, Z) mu - rho, mu = M w. With
every training row as a landmark (``basis=X``) the features span the kernel's feature space
on the data and the model is scikit-learn's ``OneClassSVM``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from .._input import fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    SparseKernelEstimator,
    _ravel,
    lazy_on_dask,
    report_result,
)
from ..compute import namespace_of
from ..features._nystrom import NystromMapMixin, nystrom_map_spec
from ..solvers.nu import one_class_dual
from ..utils import Interval, Options, constraints, fit_step
from ..utils.fitted_spec import INFO, Floats, Real

__all__ = ["LowRankOneClassSVM"]


@fill_doc
class LowRankOneClassSVM(OutlierMixin, NystromMapMixin, KernelExpansionMixin,
                         SparseKernelEstimator):
    """Unsupervised novelty detection: the nu-one-class SVM on Nystrom features.

    With landmarks Z and a whitening M (M^T K(Z, Z) M = I) it solves Schölkopf et al.'s
    one-class problem on the features F(x) = M^T K(Z, x), in LIBSVM's scaling::

        min_{w, rho}  1/2 ||w||^2 - nu S rho + sum_i s_i max(0, rho - w^T F(x_i)),

    with s_i the sample weights and S their sum: the boundary ``w^T F(x) = rho`` leaves
    out at most a share ``nu`` of the (weighted) training rows, and at least a share ``nu``
    are support vectors. The hinge is kept exact, so the nu-property holds as in LIBSVM. The
    problem is solved by its dual (a decomposition method on the dual's working sets,
    :func:`sparsekernel.solvers.nu.one_class_dual`), whose cost is a few products
    with the n x r features: linear in the rows. The model is the kernel expansion
    ``decision_function(x) = K(x, Z) mu - rho`` with mu = M w, on m << n landmarks (k-means
    centres by default), so prediction costs m kernel evaluations a row. With every
    training row as a landmark (``basis=X``) it is the exact kernel machine, scikit-learn's
    :class:`~sklearn.svm.OneClassSVM`, with the same decision values.

    ``n_basis='auto'`` sizes the basis as for :class:`NystromFeatures` (the effective
    dimension of the kernel on the data at the default regularization).

    Parameters
    ----------
    nu : float, default=0.5
        An upper bound on the share of training rows outside the boundary (novelties) and
        a lower bound on the share of support vectors, in (0, 1].
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {n_basis}
    {basis}
    whitening : {'cholesky', 'eigh'}, default='cholesky'
        How K(Z, Z)^(-1/2) is applied, as in :class:`LowRankSVC`.
    {rcond}
    {memory_budget}
    tol : float, default=1e-3
        Stop when the KKT conditions hold to ``tol`` times the largest absolute value
        of ``w^T F(x_i)``.
    max_iter : int, default=1000
        Working sets of the dual solver.
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (r, n_features)
        Landmarks Z (with Cholesky whitening, the r independent ones, in pivot order).
    basis_indices_ : ndarray of shape (r,) or None
        Training rows of the landmarks, when they are training rows.
    normalization_ : ndarray
        M with features K(X, Z) M (as :class:`LowRankSVC`'s).
    eigenvalues_ : ndarray of shape (r,) or None
        Kept eigenvalues of K(Z, Z) ('eigh' whitening; None for 'cholesky').
    coef_ : ndarray of shape (1, r)
        w, the weights on the features.
    intercept_ : ndarray of shape (1,)
        -rho.
    offset_ : float
        rho: ``decision_function = score_samples - offset_``, as scikit-learn's
        ``OneClassSVM``.
    n_iter_ : int
        Working sets the dual solver took.
    gamma_ : float or ndarray of shape (r,)
    n_features_in_ : int

    See Also
    --------
    sklearn.svm.OneClassSVM : The exact kernel machine (LIBSVM), quadratic in the rows.
    sklearn.linear_model.SGDOneClassSVM : A stochastic-gradient linear one-class SVM, for a
        pipeline after :class:`NystromFeatures` or scikit-learn's ``Nystroem``.
    sklearn.ensemble.IsolationForest : Tree-based novelty and outlier detection.
    LowRankSVC : The classifier on the same features.

    References
    ----------
    .. [1] B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
       "Estimating the support of a high-dimensional distribution", Neural Computation 13,
       1443-1471, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsekernel import LowRankOneClassSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 2))
    >>> detector = LowRankOneClassSVM(nu=0.1, gamma=0.5, n_basis=50, random_state=0).fit(X)
    >>> outside = float(np.mean(detector.predict(X) == -1))
    >>> bool(outside <= 0.1 + 0.02)
    True
    >>> detector.predict([[0.0, 0.0], [6.0, 6.0]])
    array([ 1, -1])
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = nystrom_map_spec(
        {"coef_": Floats(("p", "r")), "intercept_": Floats(("p",)), "offset_": Real(),
         "n_iter_": INFO})
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **BASIS_CONSTRAINTS,
        **constraints("tol", "max_iter", "verbose"),
        "nu": [Interval("real", 0, 1, closed="right")],
        "whitening": [Options("cholesky", "eigh")],
        "rcond": [Options("auto"), Interval("real", 0, 1, closed="left")],
    }

    def __init__(self, *, nu=0.5, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_basis="auto", basis="kmeans", whitening="cholesky", rcond="auto",
                 memory_budget=None, tol=1e-3, max_iter=1000, random_state=None, verbose=0):
        self.nu = nu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.whitening = whitening
        self.rcond = rcond
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None, sample_weight=None):
        """Fit the boundary of the training rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            An array of another array-API namespace (a GPU's) is fitted on a host copy,
            and the fitted arrays are moved to its device, where the model scores it.
        y : None
            Ignored (present for the scikit-learn API).
        sample_weight : array-like of shape (n_samples,), optional
            Weights s_i: the bounds of the duals, as scikit-learn's ``OneClassSVM``'s;
            rows of weight 0 take no part.

        Returns
        -------
        self
        """
        # A namespace's rows are fitted on a host copy, the model then moved to X's device.
        data = fit_input(self, X, None, sample_weight).on_host(np.inf)
        if not data.local:
            raise ValueError(
                f"LowRankOneClassSVM fits NumPy arrays and CSR matrices in memory; got "
                f"{type(X).__name__}: pass X.compute() (a dask collection) or a NumPy copy.")
        _, sw, _ = data.targets(self)
        fmap = self._fit_map(data.X, None, self.whitening, planned=True)
        F = fmap.transform(data.X)
        with fit_step("solve"):
            res = one_class_dual(F, self.nu, sw, tol=self.tol, max_iter=self.max_iter)
        del F
        report_result(self, res)
        self.coef_ = np.asarray(res.coef, dtype=np.float64)[None, :]
        self.intercept_ = np.array([res.intercept])
        self.offset_ = -float(res.intercept)
        self.n_iter_ = int(res.n_iter)
        return data.finish(self)

    @lazy_on_dask
    def decision_function(self, X):
        """``K(x, Z) mu - rho``: positive inside the boundary, negative outside, shape (n,)
        (scikit-learn's ``OneClassSVM`` scale: LIBSVM's)."""
        return _ravel(self._raw_decision(X))

    @lazy_on_dask
    def score_samples(self, X):
        """``decision_function(X) + offset_``, the raw score (higher: more normal)."""
        return self.decision_function(X) + self.offset_

    @lazy_on_dask
    def predict(self, X):
        """+1 inside the boundary (decision >= 0), -1 outside (novelties), shape (n,)."""
        check_is_fitted(self)
        decision = self.decision_function(X)
        xp = namespace_of(decision)  # (NumPy's, or the input's array-API namespace)
        return xp.where(decision < 0, xp.asarray(-1), xp.asarray(1))
