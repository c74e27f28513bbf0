"""Reduced kernel dimension reduction: PCA, sliced inverse regression and CCA on K(X, Z)."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["ReducedKernelCCA", "ReducedKernelPCA", "ReducedKernelSIR"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._kcca": ["ReducedKernelCCA"],
    "._kpca": ["ReducedKernelPCA"],
    "._ksir": ["ReducedKernelSIR"],
})
