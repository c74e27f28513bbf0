"""Kernels: K(X, Z) in memory-bounded row blocks, dense or CSR, float32 or float64."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["CACHE_BLOCK_BYTES", "FEATURE_SCALE_RATIO", "KERNELS", "FeatureScaleWarning", "Kernel",
           "iter_row_slices", "laplacian_kernel", "linear_kernel", "plan_block_rows",
           "polynomial_kernel", "rbf_kernel", "resolve_gamma", "sigmoid_kernel"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._blocks": ["CACHE_BLOCK_BYTES", "iter_row_slices", "plan_block_rows"],
    "._functions": ["laplacian_kernel", "linear_kernel", "polynomial_kernel", "rbf_kernel",
                    "sigmoid_kernel"],
    "._kernel": ["FEATURE_SCALE_RATIO", "KERNELS", "FeatureScaleWarning", "Kernel",
                 "resolve_gamma"],
})
