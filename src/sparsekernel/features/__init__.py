"""Explicit m-dimensional feature maps built from a kernel and a basis."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["KernelBlocks", "NystromFeatures", "NystromMap", "ReducedFeatures",
           "nystrom_from_basis", "nystrom_map", "reduced_design"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._nystrom": ["NystromFeatures", "NystromMap", "nystrom_from_basis", "nystrom_map"],
    "._reduced": ["KernelBlocks", "ReducedFeatures", "reduced_design"],
})
