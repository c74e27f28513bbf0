"""Reduced kernel canonical correlation analysis (two views, one reduced kernel each)."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from ..base import DTYPES, lazy_on_dask
from ..basis import BasisResult, BasisSelector, fit_kernel_basis
from ..kernels import Kernel
from ..solvers import canonical_correlations, relative_ridge
from ..utils import Interval, check_random_state
from ..utils.fitted_spec import FEATURES, INFO, ClassSpec, Count, Floats, Gamma, kernel_basis
from ._base import ReducedKernelBase, check_full_kernel, joint_kernel_moments

__all__ = ["ReducedKernelCCA"]

#: Default relative ridge (the class docstring says why it is not ~0 as in KSIR).
DEFAULT_RIDGE = 1e-3


def _is_pair(basis):
    return isinstance(basis, tuple | list) and len(basis) == 2 and not np.isscalar(basis[0])


@fill_doc
class ReducedKernelCCA(ClassNamePrefixFeaturesOutMixin, ReducedKernelBase):
    """Kernel CCA between two views, each on its own reduced kernel K(., Z).

    With ``K1 = K(X, Zx)`` and ``K2 = K(Y, Zy)`` (column-centred), ``S11``, ``S22`` their
    covariances and ``S12`` the cross-covariance (1/n, accumulated in one pass over row
    blocks), solves the review's eq. (47) with a ridge on each view,

        max  a^T S12 b   subject to  a^T (S11 + eta1 I) a = b^T (S22 + eta2 I) b = 1,

    by Cholesky whitening and an SVD: ``L1^{-1} S12 L2^{-T} = U diag(rho) V^T``,
    ``a = L1^{-T} U``, ``b = L2^{-T} V``. The canonical correlations ``rho`` lie in [0, 1].

    The ridge is relative: ``eta = ridge * trace(S) / m`` per view. Without it the
    correlations are inflated by fitting noise (and reach 1 once ``m_x + m_y`` approaches
    n); the default keeps them below 1 and close to their held-out values. With a linear
    kernel, ``basis=(Ix, Iy)`` (identity matrices) and ``ridge=0`` this is linear CCA.

    ``fit(X, y)`` and ``transform(X, y)`` follow scikit-learn's ``CCA``: ``y`` is the second
    view (a 1-D y is one feature; the kernel parameters serve both views), and ``transform``
    returns ``(x_scores, y_scores)`` when ``y`` is given, ``x_scores`` otherwise. Unlike
    ``CCA``, ``fit_transform(X, y)`` returns ``x_scores`` only, so that the estimator works
    as a Pipeline step.

    Parameters
    ----------
    n_components : int, default=2
        Number of canonical pairs; at most the smaller view's number of basis points.
    ridge : float, default=1e-3
        Relative ridge on each view's covariance (above).
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {n_basis}
    basis : str, BasisSelector or a pair (Zx, Zy), default='random'
        How to choose the basis points. A selector (or a name of
        :data:`sparsekernel.basis.BASIS_SELECTORS`) is run on X with X's kernel; when it
        picks training rows (random) the same rows of Y are Y's basis (the pairing is kept),
        otherwise it is run on Y as well, with Y's kernel. A pair of arrays gives both bases
        explicitly. With ``n_basis=None`` every row of each view is a basis point (the
        full-kernel CCA, paired).
    {memory_budget}
    {random_state}

    Attributes
    ----------
    correlations_ : ndarray of shape (n_components,)
        Canonical correlations on the training data, decreasing.
    x_weights_ : ndarray of shape (m_x, n_components)
        a: ``x_scores = (K(X, Zx) - x_mean_) @ x_weights_``.
    y_weights_ : ndarray of shape (m_y, n_components)
        b: ``y_scores = (K(Y, Zy) - y_mean_) @ y_weights_``.
    x_mean_, y_mean_ : ndarray of shape (m_x,), (m_y,)
    x_ridge_, y_ridge_ : float
        The absolute ridges eta1, eta2 used.
    basis_ : ndarray or CSR matrix of shape (m_x, n_features)
        The basis points Zx of the first view (those ``transform(X)`` evaluates).
    basis_y_ : ndarray or CSR matrix of shape (m_y, n_features_y)
        The basis points Zy of the second view.
    basis_indices_ : ndarray of shape (m_x,) or None
        Training rows used as basis points of both views, when they are training rows.
    gamma_, gamma_y_ : float or ndarray
        Kernel widths of the first and the second view.
    n_features_in_ : int
        Features of X (the first view).
    n_features_y_in_ : int
        Features of the second view.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsekernel import ReducedKernelCCA
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(-1, 1, size=(500, 1))
    >>> X = np.hstack([t, t ** 2]) + 0.05 * rng.normal(size=(500, 2))
    >>> Y = np.cos(3 * t) + 0.05 * rng.normal(size=(500, 1))
    >>> kcca = ReducedKernelCCA(n_components=1, n_basis=50, random_state=0).fit(X, Y)
    >>> bool(kcca.correlations_[0] > 0.9)
    True

    See Also
    --------
    ReducedKernelPCA : Directions of largest variance of one view.
    ReducedKernelSIR : Directions that predict a response.
    sklearn.cross_decomposition.CCA : Linear canonical correlation analysis.

    References
    ----------
    .. [1] S.-Y. Huang, M.-H. Lee and C. K. Hsiao, "Nonlinear measures of association with
       kernel canonical correlation analysis and applications", Journal of Statistical
       Planning and Inference 139(7), 2162-2174, 2009.
    .. [2] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 4).
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, "n_features_y_in_": Count("dy", minimum=1), **kernel_basis(),
         "basis_y_": Floats(("my", "dy"), csr=True), "gamma_y_": Gamma(symbol="my"),
         "x_weights_": Floats(("m", "c")), "y_weights_": Floats(("my", "c")),
         "x_mean_": Floats(("m",)), "y_mean_": Floats(("my",)), "correlations_": INFO,
         "x_ridge_": INFO, "y_ridge_": INFO})
    _parameter_constraints = {
        **ReducedKernelBase._parameter_constraints,
        "n_components": [Interval("int", 1, None, closed="left")],
        "basis": [str, BasisSelector, tuple, list],
        "ridge": [Interval("real", 0, None, closed="left")],
    }
    _requires_y = True

    def __init__(self, n_components=2, *, ridge=DEFAULT_RIDGE, kernel="rbf", gamma="scale",
                 degree=3, coef0=0.0, n_basis="auto", basis="random", memory_budget=None,
                 random_state=None):
        self.n_components = n_components
        self.ridge = ridge
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state

    def _check_y(self, y, n_rows, reset):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None (y is the second view).")
        Y = check_array(y, accept_sparse="csr", dtype=DTYPES, ensure_2d=False, input_name="y")
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        check_consistent_length(np.empty(n_rows), Y)
        if reset:
            self.n_features_y_in_ = Y.shape[1]
        elif Y.shape[1] != self.n_features_y_in_:
            raise ValueError(f"y has {Y.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.n_features_y_in_} features for y.")
        return Y

    def _memory_parts(self, n, m, d, itemsize):
        """The shared plan for two views of m basis functions each: both bases, the joint
        (2m) x (2m) moments and eigenproblem, a row of each view's kernel (their joint
        block in float64)."""
        parts = super()._memory_parts(n, 2 * m, d, itemsize)
        parts["kernel_block"] += 8.0 * 2 * m
        return parts

    def _share_kernel_budget(self, kern, X, m):
        """Each view's blocks get half of what the plan leaves (they are held together)."""
        super()._share_kernel_budget(kern, X, m)
        kern.memory_budget = max(1, kern.memory_budget // 2)

    def _view_basis(self, V, basis, random_state):
        """One view's (kernel, BasisResult) through the one basis -> kernel path, under the
        shared memory rule (``_plan_basis``, with this view's rows and basis)."""
        kern, res = fit_kernel_basis(V, None, kernel=self.kernel, gamma=self.gamma,
                                     degree=self.degree, coef0=self.coef0,
                                     memory_budget=self.memory_budget, n_basis=self.n_basis,
                                     basis=basis, random_state=random_state,
                                     max_n_basis=self._plan_basis(V, basis=basis))
        self._share_kernel_budget(kern, V, res.centers.shape[0])
        return kern, res

    def _paired(self, V, rows):
        """The view's kernel and its rows ``rows`` as the basis (paired with X's rows)."""
        kern = self._view_kernel(V)
        self._share_kernel_budget(kern, V, len(rows))
        return kern, BasisResult(centers=V[rows], indices=rows)

    def _fit_bases(self, X, Y):
        """``(kernel_x, basis_x, kernel_y, basis_y)``, each selector run with its view's kernel."""
        if self.n_basis is None:
            check_full_kernel(self, X)
            rows = np.arange(X.shape[0])
            return *self._paired(X, rows), *self._paired(Y, rows)
        if _is_pair(self.basis):
            return (*self._view_basis(X, self.basis[0], None),
                    *self._view_basis(Y, self.basis[1], None))
        if not isinstance(self.basis, str | BasisSelector):
            raise ValueError("The 'basis' parameter of ReducedKernelCCA must be a name, a "
                             "BasisSelector or a pair (Zx, Zy) of arrays; got a "
                             f"{type(self.basis).__name__} of length {len(self.basis)}.")
        rng = check_random_state(self.random_state)
        kx, rx = self._view_basis(X, self.basis, rng)
        if rx.indices is not None:
            return kx, rx, *self._paired(Y, rx.indices)
        return kx, rx, *self._view_basis(Y, self.basis, rng)

    def fit(self, X, y):
        """Choose both bases and compute the canonical pairs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            First view.
        y : {array-like, sparse matrix} of shape (n_samples,) or (n_samples, n_features_y)
            Second view (paired rows).

        Returns
        -------
        self
        """
        X = self._validate_X(X, reset=True)
        Y = self._check_y(y, X.shape[0], reset=True)
        kx, rx, ky, ry = self._fit_bases(X, Y)
        mom = joint_kernel_moments(kx, X, rx.centers, ky, Y, ry.centers)
        p = rx.centers.shape[0]
        S11, S22, S12 = mom.cov[:p, :p], mom.cov[p:, p:], mom.cov[:p, p:]
        eta_x, eta_y = relative_ridge(S11, self.ridge), relative_ridge(S22, self.ridge)
        res = canonical_correlations(S11, S22, S12, eta_x, eta_y, self.n_components)
        self.correlations_ = res.values
        self.x_weights_, self.y_weights_ = res.vectors, res.vectors_y
        self.x_mean_, self.y_mean_ = mom.mean[:p], mom.mean[p:]
        self.x_ridge_, self.y_ridge_ = eta_x, eta_y
        self.basis_, self.basis_y_, self.basis_indices_ = rx.centers, ry.centers, rx.indices
        self.gamma_, self.gamma_y_ = kx.gamma, ky.gamma
        self._n_features_out = self.n_components
        return self

    @lazy_on_dask
    def transform(self, X, y=None):
        """Canonical variates: ``x_scores``, or ``(x_scores, y_scores)`` when y is given (a
        lazy dask array of ``x_scores`` for dask X alone, block by block)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        xs = self._project(X, self._kernel(), self.basis_, self.x_mean_, self.x_weights_.T)
        if y is None:
            return xs
        Y = self._check_y(y, X.shape[0], reset=False)
        ky = Kernel(self.kernel, gamma=self.gamma_y_, degree=self.degree, coef0=self.coef0,
                    memory_budget=self.memory_budget)
        ys = self._project(Y, ky, self.basis_y_, self.y_mean_, self.y_weights_.T)
        return xs, ys
