"""Map the ``basis=`` parameter (a name, an array or a selector) to a selector object."""

from __future__ import annotations

import scipy.sparse as sp

from ._base import BasisSelector
from ._clustering import ClusteringBasis
from ._incremental import IncrementalBasis
from ._kmedoids import KMedoidsBasis
from ._selectors import FixedBasis, KMeansBasis, RandomBasis
from ._systematic import SystematicBasis

__all__ = ["BASIS_SELECTORS", "make_basis_selector"]

#: Names accepted by ``basis=``.
BASIS_SELECTORS = {
    "random": RandomBasis,
    "kmeans": KMeansBasis,
    "kmedoids": KMedoidsBasis,
    "incremental": IncrementalBasis,
    "systematic": SystematicBasis,
    "clustering": ClusteringBasis,
}


def make_basis_selector(basis):
    """Return a fresh selector for ``basis``.

    Parameters
    ----------
    basis : str, array-like, CSR matrix or BasisSelector
        A registered name (see :data:`BASIS_SELECTORS`), an explicit (m, d) array of centres,
        or a selector instance (used as is; it is never modified).
    """
    if isinstance(basis, str):
        try:
            return BASIS_SELECTORS[basis]()
        except KeyError:
            names = ", ".join(map(repr, BASIS_SELECTORS))
            raise ValueError(
                f"The 'basis' parameter must be one of {names}, an array of centres or a "
                f"BasisSelector. Got {basis!r} instead."
            ) from None
    if isinstance(basis, BasisSelector):
        return basis
    if sp.issparse(basis) or hasattr(basis, "__array__") or isinstance(basis, list | tuple):
        return FixedBasis(basis)
    raise TypeError(
        f"The 'basis' parameter must be a str, an array of centres or a BasisSelector. "
        f"Got {type(basis).__name__} instead."
    )
