"""Reduced kernel PCA: principal components of the reduced kernel data K(X, Z)."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from ..base import lazy_on_dask
from ..compute import backend_of, model_to_namespace, to_numpy
from ..features import nystrom_map
from ..features._nystrom import nystrom_map_on
from ..kernels._xp import xp_apply, xp_basis, xp_blocks
from ..solvers import symmetric_eigen
from ..solvers.eigen import symmetric_eigen_on, weighted_moments_on
from ..utils import Options, check_sample_weight, is_dask_collection
from ..utils.fitted_spec import FEATURES, INFO, ClassSpec, Floats, kernel_basis
from ._base import ReducedKernelBase, dask_kernel_moments, kernel_moments

__all__ = ["ReducedKernelPCA"]

METHODS = ("nystrom", "reduced")


@fill_doc
class ReducedKernelPCA(ClassNamePrefixFeaturesOutMixin, ReducedKernelBase):
    """Kernel PCA on m << n basis points, fitted in one pass over row blocks.

    Both methods accumulate the m x m covariance of the reduced kernel data
    ``Sigma = 1/n sum_i (K(z, x_i) - kbar)(K(z, x_i) - kbar)^T`` block by block and differ
    in the eigenproblem solved on it:

    - ``method='nystrom'`` (default): linear PCA of the Nystrom features
      ``phi(x) = K(x, Z) U Lambda^(-1/2)`` with ``K(Z, Z) = U Lambda U^T`` (the map of
      :class:`~sparsekernel.NystromFeatures`, eigenvalues at or below ``10 * eps`` of X's
      dtype times the largest dropped), i.e. the eigenproblem of
      ``T^T Sigma T`` with ``T = U Lambda^(-1/2)``. Since ``phi(x)^T phi(x')`` is the Nystrom
      approximation of k(x, x'), this is kernel PCA on the approximated kernel: with Z = X
      (``n_basis=None``) it *equals* scikit-learn's ``KernelPCA`` (same kernel, up to the
      sign of each component), and it converges to it as m grows.
    - ``method='reduced'``: the reduced KPCA of the review's eqs. (36)-(37),
      ``Sigma alpha = lambda alpha`` with the m kernel columns used as plain features. This is
      PCA of the empirical kernel map, i.e. kernel PCA with the kernel
      ``sum_j k(x, z_j) k(z_j, x')``, not with k itself: its components differ from KernelPCA
      even at Z = X, so it is kept for fidelity to the paper.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components; None keeps every component of non-zero variance (the rank
        tolerance :data:`sparsekernel.solvers.eigen.RANK_RTOL` of the covariance).
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {n_basis}
    {basis}
    method : {'nystrom', 'reduced'}, default='nystrom'
        Which eigenproblem (see above).
    whiten : bool, default=False
        Divide each component by its standard deviation so that the training scores have
        unit variance (components with zero variance are left unscaled).
    {memory_budget}
    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, m)
        Weights on the centred reduced kernel features: the scores are
        ``(K(X, Z) - mean_) @ components_.T`` (before whitening).
    mean_ : ndarray of shape (m,)
        Weighted mean of K(x_i, Z) over the training rows.
    explained_variance_ : ndarray of shape (n_components,)
        Variance of each component's training scores (1/n normalisation; equals
        ``KernelPCA.eigenvalues_ / n`` at Z = X with the Nystrom method).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the total variance of the features (Nystrom or reduced) per component.
    basis_ : ndarray or CSR matrix of shape (m, n_features)
    basis_indices_ : ndarray of shape (m,) or None
    gamma_ : float or ndarray of shape (m,)
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from sparsekernel import ReducedKernelPCA
    >>> X, _ = make_circles(400, factor=0.3, noise=0.05, random_state=0)
    >>> kpca = ReducedKernelPCA(n_components=2, gamma=2.0, n_basis=50, random_state=0)
    >>> kpca.fit_transform(X).shape
    (400, 2)

    See Also
    --------
    ReducedKernelSIR : Supervised directions (sliced inverse regression) on the same data.
    ReducedKernelCCA : Directions of largest correlation between two views.
    NystromFeatures : The Nystrom features whose linear PCA ``method='nystrom'`` is.
    sklearn.decomposition.KernelPCA : Exact kernel PCA, O(n^2) memory.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 4).
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, **kernel_basis(), "components_": Floats(("c", "m")),
         "mean_": Floats(("m",)), "explained_variance_": Floats(("c",)),
         "explained_variance_ratio_": INFO})
    _parameter_constraints = {
        **ReducedKernelBase._parameter_constraints,
        "method": [Options(*METHODS)],
        "whiten": ["boolean"],
    }

    def __init__(self, n_components=None, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_basis="auto", basis="random", method="nystrom", whiten=False,
                 memory_budget=None, random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.method = method
        self.whiten = whiten
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Choose the basis and compute the principal components.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of shape \
(n_samples, n_features)
            A dask collection is fitted where its rows are: the basis chosen on a sample of
            every chunk, each chunk's moments of K(X, Z) summed by its worker.
        y : ignored
        sample_weight : array-like or dask array of shape (n_samples,), optional
            Row weights of the covariance.

        Returns
        -------
        self
        """
        wide = self.method == "nystrom"
        if is_dask_collection(X):
            kern, mom = dask_kernel_moments(self, X, sample_weight, wide)
        elif not backend_of(X).is_numpy:
            return self._fit_on(backend_of(X), X, sample_weight)
        else:
            X = self._validate_X(X, reset=True)
            sw = check_sample_weight(sample_weight, X.shape[0])
            kern = self._fit_basis(X)
            # A Nystrom map's moments in float64 (its whitening amplifies K's rounding)
            Z = self.basis_.astype(np.float64) if wide else self.basis_
            mom = kernel_moments(kern, X, Z, weight=sw)
        T, cov = None, mom.cov
        if self.method == "nystrom":
            T = nystrom_map(kern, self.basis_, "auto", "eigh").normalization
            cov = T.T @ cov @ T
        eig = symmetric_eigen(cov, self.n_components)
        components = eig.vectors if T is None else T @ eig.vectors
        self.components_ = np.ascontiguousarray(components.T)
        self.mean_ = mom.mean
        self.explained_variance_ = eig.values
        total = float(np.trace(cov))
        self.explained_variance_ratio_ = eig.values / total if total > 0 else eig.values * 0.0
        self._n_features_out = self.components_.shape[0]
        return self

    def _fit_on(self, backend, X, sample_weight):
        """:meth:`fit` on an array-API backend: the moments of K(X, Z), the Nystrom map,
        the eigenproblem, k-means landmarks and the fitted arrays on X's device (gamma and
        'auto' resolved on a host copy of X)."""
        X = self._validate_X(X, reset=True)
        sw = check_sample_weight(to_numpy(sample_weight), X.shape[0])
        kern = self._fit_basis(to_numpy(X), X_device=X)
        xp = backend.xp
        Z = xp_basis(backend, X, self.basis_indices_, self.basis_)
        dtype = backend.widest_float() if self.method == "nystrom" else X.dtype
        mean, cov = weighted_moments_on(
            backend, lambda: xp_blocks(kern, X, Z, backend, dtype), sw)
        T = None
        if self.method == "nystrom":
            T = xp.astype(nystrom_map_on(backend, kern, Z, "auto").normalization,
                          cov.dtype)
            cov = T.T @ cov @ T
        eig = symmetric_eigen_on(backend, cov, self.n_components)
        components = eig.vectors if T is None else T @ eig.vectors
        self.basis_, self.components_, self.mean_ = Z, components.T, mean
        self.explained_variance_ = eig.values
        total = float(xp.sum(xp.linalg.diagonal(cov)))
        self.explained_variance_ratio_ = eig.values / total if total > 0 else eig.values * 0.0
        self._n_features_out = self.components_.shape[0]
        return model_to_namespace(self, X)

    def _transform_on(self, backend, X):
        xp = backend.xp
        dtype = backend.widest_float() if self.method == "nystrom" else X.dtype  # (_project)
        P = backend.asarray(self.components_, dtype=dtype).T
        shift = xp.reshape(backend.asarray(self.mean_, dtype=dtype), (1, -1)) @ P
        scores = xp.astype(xp_apply(self._kernel(), X, backend.asarray(self.basis_, dtype=dtype),
                                    P, backend, dtype) - shift, X.dtype)
        if self.whiten:
            std = xp.sqrt(backend.asarray(self.explained_variance_, dtype=X.dtype))
            scores = scores / xp.where(std > 0, std, xp.ones_like(std))
        return scores

    @lazy_on_dask
    def transform(self, X):
        """Project X on the components: an (n, n_components) array in X's dtype (a lazy
        dask array for dask input, block by block)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        backend = backend_of(X)
        if not backend.is_numpy:
            return self._transform_on(backend, X)
        scores = self._project(X, self._kernel(), self.basis_, self.mean_, self.components_,
                               wide=self.method == "nystrom")
        if self.whiten:
            std = np.sqrt(self.explained_variance_)
            scores /= np.where(std > 0, std, 1.0).astype(scores.dtype)
        return scores
