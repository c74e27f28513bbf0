"""Explicit m-dimensional feature maps built from a kernel and a basis."""

from ._nystrom import NystromFeatures, NystromMap, fit_nystrom_map, nystrom_map
from ._reduced import KernelBlocks, ReducedFeatures, make_kernel, reduced_design, select_basis

__all__ = [
    "KernelBlocks",
    "NystromFeatures",
    "NystromMap",
    "ReducedFeatures",
    "fit_nystrom_map",
    "make_kernel",
    "nystrom_map",
    "reduced_design",
    "select_basis",
]
