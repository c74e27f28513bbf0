"""Reduced kernel PCA: principal components of the reduced kernel data K(X, Z)."""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from .._input import fit_input
from ..base import lazy_on_dask
from ..compute import astype, namespace_of
from ..features import nystrom_map
from ..solvers import MomentAccumulator, symmetric_eigen
from ..utils import Options
from ..utils.fitted_spec import FEATURES, INFO, ClassSpec, Floats, kernel_basis
from ._base import ReducedKernelBase, chunk_moments

__all__ = ["ReducedKernelPCA"]

METHODS = ("nystrom", "reduced")


@fill_doc
class ReducedKernelPCA(ClassNamePrefixFeaturesOutMixin, ReducedKernelBase):
    """Kernel PCA on m << n basis points, fitted in one pass over row blocks.

    Both methods accumulate the m x m covariance of the reduced kernel data
    ``Sigma = 1/n sum_i (K(z, x_i) - kbar)(K(z, x_i) - kbar)^T`` block by block and differ
    in the eigenproblem solved on it:

    - ``method='nystrom'`` (default): linear PCA of the Nystrom features
      ``phi(x) = K(x, Z) T`` with ``T = U Lambda^(-1/2)`` (the map of
      :class:`~sparsekernel.NystromFeatures`), the eigenproblem of ``T^T Sigma T``: kernel
      PCA on the Nystrom approximation of k, equal to scikit-learn's ``KernelPCA`` at Z = X
      (``n_basis=None``, up to the sign of each component).
    - ``method='reduced'``: the reduced KPCA of the review's eqs. (36)-(37),
      ``Sigma alpha = lambda alpha`` on the m kernel columns as plain features, i.e. kernel
      PCA with the kernel ``sum_j k(x, z_j) k(z_j, x')``; it differs from KernelPCA even at
      Z = X.

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
        data = fit_input(self, X, None, sample_weight)
        if data.sampled and self.n_basis is None:
            raise ValueError(
                f"{type(self).__name__} with n_basis=None uses every row as a basis function: "
                "on dask input pass n_basis (an int, a fraction or 'auto').")
        _, sw, _ = data.targets(self)
        kern = self._fit_basis(data.sample, **data.basis_args)
        # A Nystrom map's moments in float64 (its whitening amplifies K's rounding)
        Z = self.basis_.astype(np.float64) if wide else self.basis_
        dtype = np.result_type(data.sample.dtype, Z.dtype, np.float32)
        block_rows = kern.block_rows(data.sample, Z)  # blocks of the kernel's budget
        Z = data.to_rows(Z)
        with data.rows(self, functools.partial(kern, Z=Z), Z.shape[0], dtype,
                       store=False, block_rows=block_rows) as rows:
            acc = rows.reduce(chunk_moments, MomentAccumulator.merge, sw)
        mom = (acc or MomentAccumulator()).result()  # (no row of positive weight: raises)
        T, cov = None, mom.cov
        if self.method == "nystrom":
            T = nystrom_map(kern, Z, "auto", "eigh").normalization
            cov = T.T @ cov @ T
        eig = symmetric_eigen(cov, self.n_components)
        components = eig.vectors if T is None else T @ eig.vectors
        xp = namespace_of(cov)
        self.components_ = np.ascontiguousarray(components.T) if xp is np else components.T
        self.mean_ = mom.mean
        self.explained_variance_ = eig.values
        total = float(np.trace(cov)) if xp is np else float(xp.sum(xp.linalg.diagonal(cov)))
        self.explained_variance_ratio_ = eig.values / total if total > 0 else eig.values * 0.0
        self._n_features_out = self.components_.shape[0]
        return data.finish(self)

    @lazy_on_dask
    def transform(self, X):
        """Project X on the components: an (n, n_components) array in X's dtype (a lazy
        dask array for dask input, block by block)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores = self._project(X, self._kernel(), self.basis_, self.mean_, self.components_,
                               wide=self.method == "nystrom")
        if self.whiten:
            xp = namespace_of(scores)
            std = xp.sqrt(self.explained_variance_)
            scores /= astype(xp.where(std > 0, std, xp.ones_like(std)), scores.dtype)
        return scores
