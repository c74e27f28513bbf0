"""Choose the m basis points Z (landmarks / reduced set) for a reduced kernel machine."""

from ._base import BasisResult, BasisSelector, resolve_n_basis
from ._kmedoids import KMedoidsBasis
from ._registry import BASIS_SELECTORS, make_basis_selector
from ._selectors import FixedBasis, KMeansBasis, RandomBasis

__all__ = [
    "BASIS_SELECTORS",
    "BasisResult",
    "BasisSelector",
    "FixedBasis",
    "KMeansBasis",
    "KMedoidsBasis",
    "RandomBasis",
    "make_basis_selector",
    "resolve_n_basis",
]
