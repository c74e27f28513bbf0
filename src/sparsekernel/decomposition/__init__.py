"""Reduced kernel dimension reduction: PCA, sliced inverse regression and CCA on K(X, Z)."""

from ._kcca import ReducedKernelCCA
from ._kpca import ReducedKernelPCA
from ._ksir import ReducedKernelSIR

__all__ = ["ReducedKernelCCA", "ReducedKernelPCA", "ReducedKernelSIR"]
