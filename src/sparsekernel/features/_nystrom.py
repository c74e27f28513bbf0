"""Nystrom features K(X, Z) M: the LLSVM empirical kernel map (identity: NystromFeatures).

Eigen whitening (``method='eigh'``): M = U Lambda^(-1/2) with K(Z, Z) = U Lambda U^T.
Eigenvalues at or below ``rcond * lambda_max`` are dropped rather than inverted, which is exact
for a positive semi-definite kernel (such a direction u has K(x, Z) u = 0 for every x): duplicate
landmarks cost one feature each and never produce infinities. The default ``rcond`` is
``10 * eps`` of the feature dtype, since M amplifies the rounding of K(x, Z) by lambda^(-1/2).

Cholesky whitening (``method='cholesky'``, LowRankSVC's default): a pivoted Cholesky
factorization P^T K(Z, Z) P = L L^T stops when the largest remaining pivot is at or below the
floor times an upper bound of lambda_max (the largest absolute row sum). The r landmarks chosen,
Z_r, give F = K(X, Z_r) L_r^(-T): the same features up to a rotation and the floor, by a
triangular product on r <= m landmarks and without an eigendecomposition.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from .._input import fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    SparseKernelEstimator,
    lazy_on_dask,
)
from ..compute import (
    backend_of,
    namespace_of,
    pivoted_cholesky,
    row_slices,
    sign_columns,
    symmetric_eigh,
    to_numpy,
    triangular_inverse,
)
from ..kernels import Kernel
from ..kernels._kernel import UNIT_DIAGONAL
from ..kernels._xp import xp_apply, xp_basis, xp_kernel
from ..utils import (
    Interval,
    Options,
    eigenvalue_floor,
    feature_dtype,
)
from ..utils._progress import fit_note, fit_step
from ..utils.fitted_spec import (
    FEATURES,
    ClassSpec,
    Count,
    kernel_basis,
    triangular_is_square,
    whitening,
)

__all__ = ["NystromFeatures", "NystromMap", "NystromMapMixin", "nystrom_from_basis", "nystrom_map",
           "nystrom_map_bytes"]


class NystromMap:
    """A fitted Nystrom map: kernel, landmarks Z and normalization M (features K(X, Z) M).

    Plain object shared by :class:`NystromFeatures` and the low-rank SVM (which applies it to
    stream chunks). ``triangular=True``: M = L^(-T) of Cholesky whitening, a triangular product.

    See Also
    --------
    nystrom_map : Builds one from a kernel and landmarks.
    nystrom_from_basis : Builds one from a basis selection.
    sparsekernel.NystromFeatures : The map as a scikit-learn transformer.
    """

    def __init__(self, kernel, Z, normalization, eigenvalues, triangular=False, dtype=None):
        self.kernel, self.Z = kernel, Z
        self.normalization, self.eigenvalues = normalization, eigenvalues
        self.triangular = triangular
        self.dtype = dtype  # of the features; None: the input's precision
        self.selected = None  # indices into the given landmarks, when only some are used
        self.indices = None  # training rows of the landmarks, when they are training rows

    @property
    def n_components(self):
        return self.normalization.shape[1]

    def transform(self, X, out=None):
        """F = K(X, Z) M in row blocks of the kernel's memory budget, stored in
        ``self.dtype`` when set, else float32 for float32 X.

        K(X, Z) M is computed in float64 whatever the storage (:ref:`precision`), since M
        amplifies the rounding of K by up to lambda^(-1/2); only the leading columns that
        float32 resolves (:meth:`float32_columns`) are computed in float32.
        """
        backend = backend_of(X)
        if not backend.is_numpy:  # on X's device: its widest float, one dense product a block
            xp, wide = backend.xp, backend.widest_float()
            M = backend.asarray(self.normalization, dtype=wide)
            return xp_apply(self.kernel, X, backend.asarray(self.Z, dtype=wide),
                            xp.triu(M) if self.triangular else M, backend, wide,
                            out_dtype=xp.float32 if self.dtype == np.float32 else X.dtype)
        Z = self.Z.astype(np.float64, copy=False)  # K in float64, even for float32 X
        if out is None:
            out = np.empty((X.shape[0], self.n_components),
                           dtype=np.result_type(X.dtype, np.float32) if self.dtype is None
                           else self.dtype)
        c = self.float32_columns() if out.dtype == np.float32 else 0
        if c == self.n_components or out.dtype == np.float64:  # one precision throughout
            return self._blocks(X, Z, out, np.ascontiguousarray(self.normalization,
                                                                dtype=out.dtype))
        return self._split_blocks(X, Z, out, c)

    def _blocks(self, X, Z, out, M):
        """out = K(X, Z) M in M's precision (out's), block by block."""
        if self.triangular:  # K computed into out's blocks, M applied in place
            def product(rows, K):
                block = out[rows]
                if not np.shares_memory(K, block):  # sparse products come back as copies
                    block[...] = K
                upper_product(block, M)

            self.kernel.map_blocks(X, Z, product, out=out)
        else:
            def product(rows, K):
                np.matmul(K, M, out=out[rows])

            self.kernel.map_blocks(X, Z, product, dtype=M.dtype)
        return out

    def _split_blocks(self, X, Z, out, c):
        """Float32 ``out`` from float64 kernel blocks: the first c columns by float32
        products, the others by float64 ones rounded (:meth:`float32_columns`)."""
        M = np.ascontiguousarray(self.normalization, dtype=np.float64)
        # Column j of a triangular M reads K's first j + 1 columns, of a dense M all of them.
        lead_M = np.ascontiguousarray(M[:c, :c] if self.triangular else M[:, :c],
                                      dtype=np.float32)
        rest_M = np.ascontiguousarray(M[:, c:])

        def product(rows, K):
            if c:
                lead = np.ascontiguousarray(K[:, :c] if self.triangular else K,
                                            dtype=np.float32)
                out[rows, :c] = (upper_product(lead, lead_M) if self.triangular and c > _PANEL
                                 else lead @ lead_M)
            # (rest_M's zeros below a triangular M's diagonal cost less than copying K's
            # columns c: to skip them)
            out[rows, c:] = K @ rest_M

        self.kernel.map_blocks(X, Z, product, dtype=np.float64)
        return out

    def float32_columns(self):
        """How many leading feature columns float32 computes to float32 accuracy: those
        whose eigenvalue (or Cholesky pivot) is above float32's eigenvalue floor times the
        largest (:func:`~sparsekernel.utils.eigenvalue_floor`); columns are in decreasing
        order of it."""
        M = np.asarray(self.normalization)
        scale = np.abs(np.diagonal(M)) if self.triangular else np.linalg.norm(M, axis=0)
        relative = (scale[0] / scale) ** 2  # lambda_j / lambda_0: scale_j = lambda_j^(-1/2)
        return int(np.count_nonzero(np.cumprod(relative > eigenvalue_floor(np.float32))))


#: Columns of M per panel of :func:`upper_product`.
_PANEL = 128


def upper_product(B, M):
    """``B <- B M`` in place for an upper-triangular M, by NumPy products on column panels.

    Panels are computed right to left, each written over columns no later panel reads.
    Not BLAS ``trmm``: SciPy's wrapper holds the GIL, which would serialize the blocks the
    library's threads compute side by side.
    """
    m = M.shape[0]
    for start in range(((m - 1) // _PANEL) * _PANEL, -1, -_PANEL):
        stop = min(start + _PANEL, m)
        B[:, start:stop] = B[:, :stop] @ M[:stop, start:stop]
    return B


def nystrom_map_bytes(m):
    """Peak memory of :func:`nystrom_map` on m landmarks (float64 K(Z, Z), its symmetrized
    copy, the factor or eigenvectors with LAPACK's workspace, and M): six m x m arrays, the
    last of which (M) the fitted model keeps."""
    return 6 * 8.0 * m * m


def nystrom_map(kernel, Z, rcond="auto", method="eigh"):
    """Eigendecompose (or factor) K(Z, Z) in float64 and return the :class:`NystromMap`.

    Computed where Z is: on NumPy, or on the device of an array-API namespace's Z
    (``array_api_dispatch``), in its widest float (float64 but on devices without it).

    Parameters
    ----------
    kernel : Kernel
    Z : ndarray, CSR matrix or a namespace's array of shape (m, d)
        Landmarks.
    rcond : 'auto' or float
        Eigenvalues ``<= rcond * lambda_max`` are dropped ('auto': ``10 * eps`` of float64,
        whatever the precision the features are stored in: a landmark is dropped only when
        it is redundant in float64 arithmetic, :ref:`precision`).
    method : {'eigh', 'cholesky'}
        Whitening by U Lambda^(-1/2) on all landmarks (K(Z, Z) = U Lambda U^T, eigenvalues
        at or below the floor dropped), or by the pivoted Cholesky factor P^T K(Z, Z) P =
        L L^T on the numerically independent landmarks Z_r, the pivots chosen until the
        largest remaining one is at or below the floor: M = L_r^(-T), a triangular product
        on r <= m landmarks, the same features up to a rotation and the floor.
    """
    backend = backend_of(Z)
    xp, wide = backend.xp, backend.widest_float()
    K = _landmark_gram(kernel, Z, backend)
    # In float64 whatever the features' precision: float32 eigenpairs are too inexact at
    # the floor and differ between LAPACK builds and devices.
    floor = eigenvalue_floor(np.float32 if wide == xp.float32 else np.float64, rcond)
    if method == "cholesky":
        return _cholesky_map(kernel, Z, K, floor, backend)
    lam, U = symmetric_eigh(K)
    del K
    U = sign_columns(xp, U)  # each eigenvector's sign fixed: reproducible features
    lam_host = np.asarray(to_numpy(lam), dtype=np.float64)
    r = int(np.count_nonzero(lam_host > floor * max(lam_host[0], 0.0)))
    if r == 0:
        raise ValueError(
            "K(Z, Z) has no positive eigenvalue: the kernel is zero on the landmarks "
            f"(largest eigenvalue {lam_host[0]:.3g}); check the kernel parameters.")
    lam, U = xp.astype(lam[:r], wide), xp.astype(U[:, :r], wide)
    M = U / xp.sqrt(lam)
    return NystromMap(kernel, Z, np.ascontiguousarray(M) if backend.is_numpy else M, lam)


def _landmark_gram(kernel, Z, backend):
    """K(Z, Z) in the widest float where Z is, exactly symmetric with the unit diagonal of
    the kernels that have one (as :meth:`Kernel.__call__`)."""
    if backend.is_numpy:
        Z64 = Z.astype(np.float64)
        return kernel(Z64, Z64)
    xp = backend.xp
    K = xp_kernel(kernel, Z, Z, backend, backend.widest_float())
    K = 0.5 * (K + K.T)
    if kernel.name in UNIT_DIAGONAL:
        eye = xp.eye(K.shape[0], dtype=xp.bool, device=backend.device)
        K = xp.where(eye, xp.ones_like(K), K)
    return K


def _kernel_on_selected(kernel, selected):
    """The kernel with per-centre widths following the landmarks kept (others unchanged)."""
    if np.isscalar(kernel.gamma):
        return kernel
    return Kernel(kernel.name, gamma=np.asarray(kernel.gamma)[selected], degree=kernel.degree,
                  coef0=kernel.coef0, memory_budget=kernel.memory_budget)


def _cholesky_map(kernel, Z, K, floor, backend):
    """Triangular map on the landmarks chosen by pivoted Cholesky (module docstring),
    K factored where it is (on NumPy in place)."""
    xp = backend.xp
    if backend.is_numpy:  # the largest absolute row sum, without an m-square copy
        top = max(float(np.abs(K[rows]).sum(axis=1).max())
                  for rows in row_slices(len(K), -(-len(K) // 256)))
    else:
        top = float(xp.max(xp.sum(xp.abs(K), axis=1)))
    diagonal = float(xp.max(xp.linalg.diagonal(K)))  # (for the message: K is overwritten)
    L, selected = pivoted_cholesky(K, floor * top)
    if not selected.size:
        raise ValueError(
            "K(Z, Z) has no positive pivot: the kernel is zero or negative on the landmarks "
            f"(largest diagonal entry {diagonal:.3g}); check the kernel parameters.")
    M = triangular_inverse(L).T
    kernel = _kernel_on_selected(kernel, selected)  # per-centre widths follow their centres
    if backend.is_numpy:
        Z_r, M = Z[selected], np.ascontiguousarray(M)
    else:
        Z_r = xp.take(Z, backend.asarray(selected), axis=0)
    fmap = NystromMap(kernel, Z_r, M, None, triangular=True)
    fmap.selected = selected
    return fmap


def nystrom_map_spec(extra, head=None, identity=False, optional=()):
    """The fitted attributes of a model on a fitted Nystrom map (:class:`NystromMapMixin`):
    ``head`` (e.g. the classes) before the basis and the map, ``extra`` after them;
    ``identity``: the map may be the identity (``normalization_`` None)."""
    return ClassSpec({**FEATURES, **(head or {}), **kernel_basis(),
                      **whitening(identity=identity), **extra},
                     optional=frozenset({"feature_names_in_", *optional}),
                     relations=(triangular_is_square,))


class NystromMapMixin:
    """Estimator glue of a fitted :class:`NystromMap` (``rcond``, ``_fit_kernel_basis``)."""

    #: The map's m x m arrays in the shared memory plan (:func:`nystrom_map_bytes`).
    _M_SQUARES = 6

    def _fit_map(self, X, y_basis=None, method="eigh", max_n_basis=None, planned=False,
                 gamma=None, n_rows=None, X_device=None):
        """Landmarks chosen with this estimator's kernel, then whitened; stores the map.

        ``planned=True``: the features are in :func:`~sparsekernel.utils.feature_dtype`'s
        precision for ``n_rows`` (default: X's rows) and m (float32 for large float64
        problems), else the input's. ``gamma``: see :meth:`_fit_kernel_basis`; ``gamma``
        and ``n_rows`` serve a map fitted on a sample of the rows it will transform;
        ``X_device``: X's rows on a namespace's device, where k-means chooses the landmarks
        and the map is computed.
        """
        kern, res = self._fit_kernel_basis(X, y_basis, max_n_basis, gamma=gamma,
                                           n_rows=n_rows, X_device=X_device)
        return self._map_on_basis(kern, res, X, method, planned, n_rows, X_device)

    def _map_on_basis(self, kern, res, X, method="eigh", planned=False, n_rows=None,
                      X_device=None):
        """The whitened map on chosen landmarks ``res`` (of the training rows ``X``),
        stored as the estimator's (``_fit_map``); computed on the device of ``X_device``
        (X's rows there) when given, its arrays then that namespace's."""
        n_rows = X.shape[0] if n_rows is None else n_rows
        dtype, rcond = np.result_type(X.dtype, np.float32), self.rcond
        if planned:
            m = res.centers.shape[0]
            dtype = feature_dtype(X.dtype, n_rows, m)
            if (res.info.get("auto") and isinstance(rcond, str)
                    and feature_dtype(np.float64, n_rows, m) == np.float32):
                # n_basis='auto' sizes a large fit, whose features are float32, by the
                # landmarks float32 resolves (:ref:`precision`)
                rcond = eigenvalue_floor(np.float32)
        fmap = nystrom_from_basis(kern, res, rcond, method, rows=X_device)
        fmap.dtype = dtype if planned else None
        # Cholesky whitening keeps the independent landmarks only (and their widths).
        if fmap.Z.shape[0] < res.centers.shape[0]:
            fit_note("kept the numerically independent basis functions",
                     {"m": fmap.Z.shape[0], "of": res.centers.shape[0]})
        self.basis_, self.basis_indices_, self.gamma_ = fmap.Z, fmap.indices, fmap.kernel.gamma
        self.normalization_ = fmap.normalization  # float64 (the widest float), as computed
        self.eigenvalues_ = fmap.eigenvalues
        return fmap

    def _map(self):
        return NystromMap(self._kernel(), self.basis_, self.normalization_, self.eigenvalues_,
                          triangular=self.eigenvalues_ is None)  # Cholesky: M = L^(-T)

    def _kernel_dtype(self):
        """float64 on a map: mu = M coef^T resolves eigenvalues of K(Z, Z) down to the float64
        floor, so float32 kernel values would cancel in K(X, Z) mu (the precision policy,
        :ref:`precision`). None without one: the input's precision."""
        return None if self.normalization_ is None else np.dtype(np.float64)

    def _expansion_coef(self):
        """mu = M coef^T (m x n_outputs) of a linear model on the features: prediction
        evaluates the reduced kernel model K(X, Z) mu + b, never the features. Formed at the
        end of each fit (:meth:`_after_fit`) and reused while ``normalization_`` and
        ``coef_`` are unchanged."""
        coef = self.coef_
        if not isinstance(coef, np.ndarray):  # on an array-API namespace: no cache
            xp = namespace_of(coef)
            coef = (xp.reshape(coef, (1, -1)) if coef.ndim == 1 else coef).T
            if self.normalization_ is None:
                return coef
            M = self.normalization_  # in the wider of the two precisions, as NumPy's product
            wide = xp.result_type(M.dtype, coef.dtype)
            return xp.astype(M, wide) @ xp.astype(coef, wide)
        if self.normalization_ is None:  # the identity map: coef_ is mu itself
            return np.atleast_2d(coef).T
        kept = self.__dict__.get("_expansion")
        if (kept is not None and kept[0] is self.normalization_
                and np.array_equal(kept[1], self.coef_)):
            return kept[2]
        return self.normalization_ @ np.atleast_2d(self.coef_).T

    def _after_fit(self):
        """Keep mu with what it was formed from (:meth:`_expansion_coef`)."""
        self.__dict__.pop("_expansion", None)
        if isinstance(getattr(self, "normalization_", None), np.ndarray) and hasattr(
                self, "coef_"):
            self._expansion = (self.normalization_, np.array(self.coef_),
                               self.normalization_ @ np.atleast_2d(self.coef_).T)


@fill_doc
class NystromFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, NystromMapMixin,
                      KernelExpansionMixin, SparseKernelEstimator):
    """Map X to Nystrom features K(X, Z) U Lambda^(-1/2) on m landmarks Z (LLSVM).

    Inner products of the features approximate the kernel: F(X) F(Y)^T = K(X, Z) K(Z, Z)^+
    K(Z, Y), exact when Z contains X. A linear model on these features with the penalty
    ||beta||^2 is the reduced kernel model with the RKHS penalty mu^T K(Z, Z) mu
    (beta = Lambda^(1/2) U^T mu; Zhang et al. 2012, Proposition 2). The landmarks are
    k-means centres by default, the LLSVM choice. Eigenvalues of K(Z, Z) at or below
    ``rcond`` times the largest are dropped rather than inverted, so duplicate landmarks
    never give infinities, and r = ``n_components_`` <= m. Output columns are named
    ``nystromfeatures0``, ``nystromfeatures1``, ... (as scikit-learn's ``Nystroem``).

    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {n_basis}
    {basis}
    {rcond}
    {memory_budget}
    {random_state}

    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features)
        Landmarks Z.
    basis_indices_ : ndarray of shape (m,) or None
    normalization_ : ndarray of shape (m, ``n_components_``)
        U Lambda^(-1/2) for the kept eigenpairs.
    eigenvalues_ : ndarray of shape (``n_components_``,)
        Kept eigenvalues of K(Z, Z), descending.
    n_components_ : int
        Output dimension r <= m.
    gamma_ : float or ndarray of shape (m,)
    n_features_in_ : int

    See Also
    --------
    ReducedFeatures : The unwhitened reduced kernel features K(X, Z).
    LowRankSVC : A linear SVM on these features, in memory or streamed.
    KernelLogisticRegression : Logistic regression on these features.
    sparsekernel.features.nystrom_map : The same map as a function of a kernel and landmarks.
    sklearn.kernel_approximation.Nystroem : scikit-learn's Nystrom map (random landmarks,
        ``K(Z, Z)^(-1/2)`` by SVD).

    References
    ----------
    .. [1] C. K. I. Williams and M. Seeger, "Using the Nystrom method to speed up kernel
       machines", Advances in Neural Information Processing Systems 13, 682-688, 2001.
    .. [2] K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up kernel SVM on limited
       resources: A low-rank linearization approach", Proceedings of the 15th
       International Conference on Artificial Intelligence and Statistics (AISTATS), 2012.

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sparsekernel import NystromFeatures
    >>> X, y = make_circles(400, factor=0.3, noise=0.05, random_state=0)
    >>> nystrom = NystromFeatures(gamma=2.0, n_basis=40, random_state=0)
    >>> nystrom.fit_transform(X).shape
    (400, 40)
    >>> clf = make_pipeline(NystromFeatures(gamma=2.0, n_basis=40, random_state=0),
    ...                     LogisticRegression()).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = nystrom_map_spec({"n_components_": Count("r", minimum=1)})
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **BASIS_CONSTRAINTS,
        "rcond": [Options("auto"), Interval("real", 0, 1, closed="left")],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, n_basis="auto",
                 basis="kmeans", rcond="auto", memory_budget=None, random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.rcond = rcond
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None):
        """Choose the landmarks from X and whiten K(Z, Z).

        Under ``array_api_dispatch`` with X of another namespace (a GPU's), the kernel, the
        eigendecomposition of K(Z, Z), k-means landmarks and the fitted arrays are on X's
        device; gamma and 'auto' are resolved on a host copy of X. On a dask collection
        the landmarks are chosen on a sample of every chunk, gamma='scale' from all rows.
        """
        data = fit_input(self, X)
        data.targets(self)  # (validates X)
        self.n_components_ = self._fit_map(data.sample, **data.basis_args).n_components
        return data.finish(self)

    @lazy_on_dask
    def transform(self, X):
        """Return the (n, ``n_components_``) features, float32 for float32 input (a lazy dask
        array for dask input, block by block)."""
        check_is_fitted(self)
        return self._map().transform(self._validate_X(X))

    @property
    def _n_features_out(self):
        # Derived, not stored, so a model restored by sparsekernel.io names its columns too.
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def nystrom_from_basis(kernel, basis, rcond="auto", method="eigh", rows=None):
    """The :class:`NystromMap` on a selector's landmarks (plain arguments, no estimator).

    Parameters
    ----------
    kernel : Kernel
        With gamma resolved (per-centre widths follow their centres).
    basis : BasisResult
        The chosen landmarks and, when they are training rows, their indices.
    rcond, method
        As in :func:`nystrom_map`.
    rows : array of shape (n, d), optional
        The training rows on an array-API namespace's device (``array_api_dispatch``):
        the landmarks (its rows ``basis.indices``, or ``basis.centers`` moved there),
        K(Z, Z) and the whitening are then computed there.

    Returns
    -------
    NystromMap
        ``indices`` holds the training rows of the landmarks kept (None when they are not
        training rows); with Cholesky whitening only the independent ones are kept.
    """
    Z = basis.centers if rows is None else xp_basis(backend_of(rows), rows, basis.indices,
                                                     basis.centers)
    with fit_step("feature-map"):  # a step of the running fit, for its callbacks
        fmap = nystrom_map(kernel, Z, rcond, method)
    idx = basis.indices
    if idx is not None and fmap.selected is not None:
        idx = np.asarray(idx)[fmap.selected]
    fmap.indices = idx
    return fmap
