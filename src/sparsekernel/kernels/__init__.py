"""Kernels: K(X, Z) in memory-bounded row blocks, dense or CSR, float32 or float64."""

from ._blocks import CACHE_BLOCK_BYTES, iter_row_slices, plan_block_rows
from ._functions import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from ._kernel import KERNELS, Kernel, resolve_gamma

__all__ = ["CACHE_BLOCK_BYTES", "KERNELS", "Kernel", "iter_row_slices", "laplacian_kernel",
           "linear_kernel", "plan_block_rows", "polynomial_kernel", "rbf_kernel", "resolve_gamma",
           "sigmoid_kernel"]
