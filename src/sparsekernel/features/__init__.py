"""Explicit m-dimensional feature maps built from a kernel and a basis."""

from ._reduced import KernelBlocks, ReducedFeatures, make_kernel, reduced_design, select_basis

__all__ = ["KernelBlocks", "ReducedFeatures", "make_kernel", "reduced_design", "select_basis"]
