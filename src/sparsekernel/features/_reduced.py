"""Reduced kernel features K(X, Z): stored when they fit the budget, recomputed otherwise."""

from __future__ import annotations

from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    SparseKernelEstimator,
    lazy_on_dask,
)
from ..kernels._functions import working_dtype
from ..utils._progress import fit_step
from ..utils.fitted_spec import FEATURES, ClassSpec, kernel_basis

__all__ = ["KernelBlocks", "ReducedFeatures", "reduced_design"]


class KernelBlocks:
    """Row blocks of K(X, Z) computed on demand, for solvers when storing K(X, Z) won't fit.

    Implements the solvers' row-block protocol (``shape``, ``dtype``, iteration over
    ``(rows, block)``); each pass recomputes the kernel, trading time for O(block * m) memory.

    See Also
    --------
    reduced_design : The stored K(X, Z), when it fits.
    sparsekernel.ReducedFeatures : K(X, Z) as a scikit-learn transformer.
    """

    def __init__(self, kernel, X, Z):
        self.kernel, self.X, self.Z = kernel, X, Z
        self.block_rows = kernel.block_rows(X, Z)

    @property
    def shape(self):
        return (self.X.shape[0], self.Z.shape[0])

    @property
    def dtype(self):
        return working_dtype(self.X, self.Z)

    def take(self, indices):
        """K(X[indices], Z) as an array."""
        return self.kernel(self.X[indices], self.Z)

    def __iter__(self):
        return self.kernel.blocks(self.X, self.Z, self.block_rows)


def reduced_design(kernel, X, Z, store=None):
    """K(X, Z) as a stored array, or as KernelBlocks computed at every pass: as ``store``
    says, or by default when it fits ``kernel.memory_budget``."""
    nbytes = X.shape[0] * Z.shape[0] * working_dtype(X, Z).itemsize
    if not (nbytes <= kernel.memory_budget if store is None else store):
        return KernelBlocks(kernel, X, Z)  # computed later, block by block, at every pass
    with fit_step("feature-map"):  # a step of the running fit, for its callbacks
        return kernel(X, Z)


@fill_doc
class ReducedFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, KernelExpansionMixin,
                      SparseKernelEstimator):
    """Map X to the reduced kernel features K(X, Z) on m basis points Z.

    ``basis='systematic'`` needs labels, which a transformer never sees. The m output
    columns are named ``reducedfeatures0``, ``reducedfeatures1``, ...

    Parameters
    ----------
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
    basis_ : ndarray or CSR matrix of shape (m, n_features)
    basis_indices_ : ndarray of shape (m,) or None
    gamma_ : float or ndarray of shape (m,)
    n_features_in_ : int

    See Also
    --------
    NystromFeatures : The whitened features K(X, Z) M, whose inner products approximate the
        kernel.
    ReducedSVC : The smooth SVM on these features.
    sklearn.kernel_approximation.Nystroem : scikit-learn's Nystrom map.

    References
    ----------
    .. [1] Y.-J. Lee and O. L. Mangasarian, "RSVM: Reduced support vector machines",
       Proceedings of the SIAM International Conference on Data Mining, 2001.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import ReducedFeatures
    >>> X, _ = make_moons(300, noise=0.1, random_state=0)
    >>> ReducedFeatures(gamma=2.0, n_basis=25, random_state=0).fit_transform(X).shape
    (300, 25)
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec({**FEATURES, **kernel_basis()})
    _parameter_constraints = {**KERNEL_CONSTRAINTS, **BASIS_CONSTRAINTS}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, n_basis="auto",
                 basis="random", memory_budget=None, random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state

    def fit(self, X, y=None):
        """Choose the basis points Z from X (with this transformer's kernel)."""
        self._fit_kernel_basis(self._validate_X(X, reset=True))
        return self

    @lazy_on_dask
    def transform(self, X):
        """Return K(X, Z) of shape (n, m), float32 for float32 input (a lazy dask array for
        dask input, block by block)."""
        check_is_fitted(self)
        X = self._validate_X(X)
        return self._kernel()(X, self.basis_.astype(X.dtype, copy=False))

    @property
    def _n_features_out(self):
        # Derived, not stored, so a model restored by sparsekernel.io names its columns too.
        return self.basis_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
