"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .decomposition import ReducedKernelCCA, ReducedKernelPCA, ReducedKernelSIR
from .features import ReducedFeatures
from .svm import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
    "ReducedFeatures",
    "ReducedKernelCCA",
    "ReducedKernelPCA",
    "ReducedKernelSIR",
    "ReducedSVC",
    "ReducedSVR",
    "SmoothSVC",
    "SmoothSVR",
    "__version__",
]
