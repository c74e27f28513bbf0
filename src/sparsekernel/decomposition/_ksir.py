"""Reduced kernel sliced inverse regression (KSIR, Yeh, Huang and Lee, IEEE TKDE 2009)."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .._docs import fill_doc
from ..base import DTYPES, lazy_on_dask
from ..solvers import generalized_low_rank_eigen, relative_ridge
from ..utils import Interval, Options, check_sample_weight, plain
from ..utils.fitted_spec import FEATURES, INFO, ClassSpec, Floats, Labels, kernel_basis
from ._base import ReducedKernelBase, check_n_samples, kernel_moments

__all__ = ["ReducedKernelSIR", "slice_labels"]

SLICINGS = ("auto", "classes", "response")
#: The authors' toolbox default number of slices for regression (option -z of KSIR.m).
DEFAULT_N_SLICES = 30


def slice_labels(y, n_slices):
    """Slice index of every row when y is cut into ``n_slices`` slices of sorted response.

    As the authors' KSIR.m: a stable ascending sort, slices of ``n // J`` rows with the first
    ``n % J`` slices one row larger (ties across a boundary are split by row order).
    """
    n = y.shape[0]
    J = min(n_slices, n)
    sizes = np.full(J, n // J)
    sizes[: n % J] += 1
    labels = np.empty(n, dtype=np.intp)
    labels[np.argsort(y, kind="stable")] = np.repeat(np.arange(J), sizes)
    return labels, J


@fill_doc
class ReducedKernelSIR(ClassNamePrefixFeaturesOutMixin, ReducedKernelBase):
    """Kernel sliced inverse regression on the reduced kernel data K(X, Z).

    Finds the effective dimension-reduction (e.d.r.) directions of the review's eq. (40),

        Sigma_b beta = lambda (Sigma_K + eps I) beta,   beta^T (Sigma_K + eps I) beta = I,

    with ``Sigma_K`` the covariance of K(x_i, Z) and ``Sigma_b = W W^T`` the between-slice
    covariance, ``W_j = sqrt(n_j / n) (mean of slice j - overall mean)`` (weighted by
    ``sample_weight``), solved through its J x J form. Slices are the classes for
    classification and ``n_slices`` groups of sorted response for regression (random basis
    rows are stratified by slice). At most J - 1 directions are informative; ``lambda`` in
    [0, 1] is the share of a direction's variance explained by the slices. To classify, use
    it as a pipeline's first step, e.g.
    ``make_pipeline(ReducedKernelSIR(), SmoothSVC(kernel='linear'))``.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of directions; None keeps every informative one (at most J - 1).
    n_slices : int, default=30
        Number of slices of the sorted response for regression (the toolbox default); at
        most n. Ignored when slicing by class.
    slicing : {'auto', 'classes', 'response'}, default='auto'
        'classes': one slice per distinct y; 'response': slices of sorted y; 'auto': classes
        when scikit-learn's ``type_of_target(y)`` is 'binary' or 'multiclass' (integer or
        string labels), response otherwise.
    ridge : float, default=1e-8
        Relative ridge: ``eps = ridge * trace(Sigma_K) / m`` is added to the covariance; 0
        gives plain SIR (a singular covariance is then inverted on its numerical range).
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {n_basis}
    {basis}
    {memory_budget}
    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, m)
        The e.d.r. directions beta as rows: ``transform(X) = (K(X, Z) - mean_) @
        components_.T``.
    eigenvalues_ : ndarray of shape (n_components,)
        The generalized eigenvalues lambda, decreasing.
    mean_ : ndarray of shape (m,)
    slice_means_ : ndarray of shape (J, m)
        Mean of K(x, Z) in each slice.
    slice_weights_ : ndarray of shape (J,)
        Sum of the sample weights in each slice (its size without weights).
    classes_ : ndarray of shape (J,) or None
        The class of each slice when slicing by class, else None.
    basis_ : ndarray or CSR matrix of shape (m, n_features)
    basis_indices_ : ndarray of shape (m,) or None
    gamma_ : float or ndarray of shape (m,)
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sparsekernel import ReducedKernelSIR
    >>> X, y = load_iris(return_X_y=True)
    >>> ReducedKernelSIR(n_basis=30, random_state=0).fit_transform(X, y).shape
    (150, 2)

    See Also
    --------
    ReducedKernelPCA : Unsupervised directions on the same reduced kernel data.
    ReducedKernelCCA : Directions of largest correlation between two views.
    sklearn.discriminant_analysis.LinearDiscriminantAnalysis : Linear supervised directions.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang and Y.-J. Lee, "Nonlinear dimension reduction with kernel
       sliced inverse regression", IEEE Transactions on Knowledge and Data Engineering
       21(11), 1590-1603, 2009.
    .. [2] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 4).
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, **kernel_basis(), "components_": Floats(("c", "m")),
         "eigenvalues_": INFO, "mean_": Floats(("m",)), "slice_means_": INFO,
         "slice_weights_": INFO, "classes_": Labels(nullable=True, symbol="J")})
    _parameter_constraints = {
        **ReducedKernelBase._parameter_constraints,
        "n_slices": [Interval("int", 2, None, closed="left")],
        "slicing": [Options(*SLICINGS)],
        "ridge": [Interval("real", 0, None, closed="left")],
    }
    _requires_y = True

    def __init__(self, n_components=None, *, n_slices=DEFAULT_N_SLICES, slicing="auto",
                 ridge=1e-8, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_basis="auto", basis="random", memory_budget=None, random_state=None):
        self.n_components = n_components
        self.n_slices = n_slices
        self.slicing = slicing
        self.ridge = ridge
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _slices(self, y):
        """(classes or None, slice label per row, number of slices)."""
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        by_class = self.slicing == "classes" or (
            self.slicing == "auto" and kind in ("binary", "multiclass"))
        if not by_class:
            if kind not in ("continuous", "binary", "multiclass"):
                raise ValueError(f"{type(self).__name__} needs a 1-D target; got a "
                                 f"{kind!r} target.")
            labels, J = slice_labels(np.asarray(y, dtype=np.float64), self.n_slices)
            return None, labels, J
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"slicing='classes' needs class labels; y is {kind!r}. Use "
                             "slicing='response' for a real-valued target.")
        classes, labels = np.unique(y, return_inverse=True)
        return classes, labels, len(classes)

    def fit(self, X, y, sample_weight=None):
        """Compute the e.d.r. directions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels or a real response.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights of the covariance and of the slice means.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=DTYPES)
        check_n_samples(self, X)
        classes, labels, J = self._slices(y)
        if J < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 slices; y has one class "
                             f"(a single value, {plain(np.ravel(y)[0])!r}).")
        sw = check_sample_weight(sample_weight, X.shape[0])
        kern = self._fit_basis(X, labels)
        mom = kernel_moments(kern, X, self.basis_, weight=sw, group=labels, n_groups=J)
        share = mom.group_weights / mom.weight
        W = ((mom.group_means - mom.mean) * np.sqrt(share)[:, None]).T
        eps = relative_ridge(mom.cov, self.ridge)
        eig = generalized_low_rank_eigen(W, mom.cov, eps, self.n_components)
        self.components_ = np.ascontiguousarray(eig.vectors.T)
        self.eigenvalues_ = eig.values
        self.mean_ = mom.mean
        self.slice_means_, self.slice_weights_ = mom.group_means, mom.group_weights
        self.classes_ = classes
        self._n_features_out = self.components_.shape[0]
        return self

    @lazy_on_dask
    def transform(self, X):
        """Coordinates of X along the e.d.r. directions: (n, n_components), X's dtype (a
        lazy dask array for dask input, block by block)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self._project(X, self._kernel(), self.basis_, self.mean_, self.components_)
