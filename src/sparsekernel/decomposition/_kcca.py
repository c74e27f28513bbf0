"""Reduced kernel canonical correlation analysis (two views, one reduced kernel each)."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils import check_array, check_consistent_length, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..basis import BasisSelector, FixedBasis, make_basis_selector, resolve_n_basis
from ..features import make_kernel
from ..solvers import canonical_correlations, relative_ridge
from ..utils import Interval
from ._base import DTYPES, ReducedKernelBase, doc, joint_kernel_moments

__all__ = ["ReducedKernelCCA"]

#: Default relative ridge; see the class docstring for why it is not ~0 as in KSIR.
DEFAULT_RIDGE = 1e-3


def _is_pair(basis):
    return isinstance(basis, tuple | list) and len(basis) == 2 and not np.isscalar(basis[0])


class ReducedKernelCCA(ClassNamePrefixFeaturesOutMixin, ReducedKernelBase):
    __doc__ = doc("""Kernel CCA between two views, each on its own reduced kernel K(., Z).

    With ``K1 = K(X, Zx)`` and ``K2 = K(Y, Zy)`` (column-centred), ``S11``, ``S22`` their
    covariances and ``S12`` the cross-covariance (1/n, accumulated in one pass over row
    blocks), solves the review's eq. (47) with a ridge on each view,

        max  a^T S12 b   subject to  a^T (S11 + eta1 I) a = b^T (S22 + eta2 I) b = 1,

    by Cholesky whitening and an SVD: ``L1^{-1} S12 L2^{-T} = U diag(rho) V^T``,
    ``a = L1^{-T} U``, ``b = L2^{-T} V`` (formulas.md 6.2). The canonical correlations
    ``rho`` lie in [0, 1].

    The ridge is relative: ``eta = ridge * trace(S) / m`` per view. Without it (``ridge=0``)
    the correlations reach 1 trivially once ``m_x + m_y`` approaches n, and even well below
    that they are inflated by fitting noise; the default 1e-3 keeps them strictly below 1
    and close to their held-out values for bases of a few hundred points (see
    benchmarks/bench_decomposition.py). With a linear kernel, ``basis=(Ix, Iy)`` (identity
    matrices) and ``ridge=0`` this is textbook linear CCA.

    ``fit(X, y)`` and ``transform(X, y)`` follow scikit-learn's ``CCA``: ``y`` is the second
    view (a 1-D y is one feature), and ``transform`` returns ``(x_scores, y_scores)`` when
    ``y`` is given, ``x_scores`` otherwise. Unlike ``CCA``, ``fit_transform(X, y)`` returns
    ``x_scores`` only, so that the estimator works as a Pipeline step (a pipeline passes the
    target as ``y``); call ``transform(X, y)`` for both variates.

    Parameters
    ----------
    n_components : int, default=2
        Number of canonical pairs; at most the smaller view's number of basis points.
    ridge : float, default=1e-3
        Relative ridge on each view's covariance (above).
    {kernel_params}
        The same kernel parameters serve both views; 'scale' resolves gamma on each view.
    basis : {'random', 'kmeans'}, BasisSelector or a pair (Zx, Zy), default='random'
        How to choose the basis points. A selector is run on X; when it picks training rows
        (random) the same rows of Y are Y's basis (the pairing is kept), otherwise it is run
        on Y as well. A pair of arrays gives both bases explicitly.
    {memory_params}

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
    basis_x_, basis_y_ : ndarray or CSR matrix
        The basis points of each view.
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points of both views, when they are training rows.
    gamma_x_, gamma_y_ : float or ndarray
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
    """)

    _parameter_constraints = {
        **ReducedKernelBase._parameter_constraints,
        "n_components": [Interval("int", 1, None, closed="left")],
        "basis": [str, BasisSelector, tuple, list],
        "ridge": [Interval("real", 0, None, closed="left")],
    }

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
        Y = check_array(y, accept_sparse="csr", dtype=DTYPES, ensure_2d=False,
                        input_name="y")
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        check_consistent_length(np.empty(n_rows), Y)
        if reset:
            self.n_features_y_in_ = Y.shape[1]
        elif Y.shape[1] != self.n_features_y_in_:
            raise ValueError(f"y has {Y.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.n_features_y_in_} features for y.")
        return Y

    def _select_bases(self, X, Y):
        """(result for X, result for Y) of the basis selection, keeping rows paired."""
        if _is_pair(self.basis):
            zx, zy = self.basis
            return (FixedBasis(zx).select(X), FixedBasis(zy).select(Y))
        if not isinstance(self.basis, str | BasisSelector):
            raise ValueError("The 'basis' parameter of ReducedKernelCCA must be a name, a "
                             "BasisSelector or a pair (Zx, Zy) of arrays; got a "
                             f"{type(self.basis).__name__} of length {len(self.basis)}.")
        selector = make_basis_selector(self.basis)
        fixed = hasattr(selector, "centers")
        m = None if fixed else resolve_n_basis(self.n_basis, X.shape[0])
        rng = check_random_state(self.random_state)
        rx = selector.select(X, None, n_basis=m, random_state=rng)
        if rx.indices is not None:
            return rx, type(rx)(centers=Y[rx.indices], indices=rx.indices)
        return rx, selector.select(Y, None, n_basis=m, random_state=rng)

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
        self._check_params()
        X = self._validate_X(X, reset=True)
        Y = self._check_y(y, X.shape[0], reset=True)
        rx, ry = self._select_bases(X, Y)
        params = (self.kernel, self.gamma, self.degree, self.coef0, self.memory_budget)
        kx = make_kernel(*params, X, rx.gamma)
        ky = make_kernel(*params, Y, ry.gamma)
        mom = joint_kernel_moments(kx, X, rx.centers, ky, Y, ry.centers)
        p = rx.centers.shape[0]
        S11, S22, S12 = mom.cov[:p, :p], mom.cov[p:, p:], mom.cov[:p, p:]
        eta_x, eta_y = relative_ridge(S11, self.ridge), relative_ridge(S22, self.ridge)
        res = canonical_correlations(S11, S22, S12, eta_x, eta_y, self.n_components)
        self.correlations_ = res.values
        self.x_weights_, self.y_weights_ = res.vectors, res.vectors_y
        self.x_mean_, self.y_mean_ = mom.mean[:p], mom.mean[p:]
        self.x_ridge_, self.y_ridge_ = eta_x, eta_y
        self.basis_x_, self.basis_y_, self.basis_indices_ = rx.centers, ry.centers, rx.indices
        self.gamma_x_, self.gamma_y_ = kx.gamma, ky.gamma
        self._n_features_out = self.n_components
        return self

    def transform(self, X, y=None):
        """Canonical variates: ``x_scores``, or ``(x_scores, y_scores)`` when y is given."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        xs = self._project(X, self.basis_x_, self.gamma_x_, self.x_mean_, self.x_weights_.T)
        if y is None:
            return xs
        Y = self._check_y(y, X.shape[0], reset=False)
        ys = self._project(Y, self.basis_y_, self.gamma_y_, self.y_mean_, self.y_weights_.T)
        return xs, ys

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
