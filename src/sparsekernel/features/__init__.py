"""Explicit m-dimensional feature maps built from a kernel and a basis."""

from ._nystrom import NystromFeatures, NystromMap, nystrom_from_basis, nystrom_map
from ._reduced import KernelBlocks, ReducedFeatures, reduced_design

__all__ = ["KernelBlocks", "NystromFeatures", "NystromMap", "ReducedFeatures",
           "nystrom_from_basis", "nystrom_map", "reduced_design"]
