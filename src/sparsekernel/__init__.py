"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .features import NystromFeatures, ReducedFeatures
from .svm import LowRankSVC, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
    "LowRankSVC",
    "NystromFeatures",
    "ReducedFeatures",
    "ReducedSVC",
    "ReducedSVR",
    "SmoothSVC",
    "SmoothSVR",
    "__version__",
]
