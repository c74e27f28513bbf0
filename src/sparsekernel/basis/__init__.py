"""Choose the m basis points Z (landmarks / reduced set) for a reduced kernel machine."""

from ._base import BasisResult, BasisSelector, resolve_n_basis
from ._clustering import ClusteringBasis, oyang_hwang_width
from ._incremental import IncrementalBasis, IncrementalQR
from ._kernel_basis import fit_kernel_basis, make_kernel
from ._kmedoids import KMedoidsBasis
from ._registry import BASIS_SELECTORS, make_basis_selector
from ._selectors import FixedBasis, KMeansBasis, RandomBasis
from ._systematic import SystematicBasis

__all__ = ["BASIS_SELECTORS", "BasisResult", "BasisSelector", "ClusteringBasis", "FixedBasis",
           "IncrementalBasis", "IncrementalQR", "KMeansBasis", "KMedoidsBasis", "RandomBasis",
           "SystematicBasis", "fit_kernel_basis", "make_basis_selector", "make_kernel",
           "oyang_hwang_width", "resolve_n_basis"]
