"""Choose the m basis points Z (landmarks / reduced set) for a reduced kernel machine."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["BASIS_SELECTORS", "BasisResult", "BasisSelector", "ClusteringBasis", "FixedBasis",
           "IncrementalBasis", "IncrementalQR", "KMeansBasis", "KMedoidsBasis", "RandomBasis",
           "SystematicBasis", "auto_n_basis", "fit_kernel_basis", "make_basis_selector",
           "make_kernel", "oyang_hwang_width", "resolve_n_basis"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._base": ["BasisResult", "BasisSelector", "auto_n_basis", "resolve_n_basis"],
    "._clustering": ["ClusteringBasis", "oyang_hwang_width"],
    "._incremental": ["IncrementalBasis", "IncrementalQR"],
    "._kernel_basis": ["fit_kernel_basis", "make_kernel"],
    "._kmedoids": ["KMedoidsBasis"],
    "._registry": ["BASIS_SELECTORS", "make_basis_selector"],
    "._selectors": ["FixedBasis", "KMeansBasis", "RandomBasis"],
    "._systematic": ["SystematicBasis"],
})
