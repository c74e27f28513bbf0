"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .decomposition import ReducedKernelCCA, ReducedKernelPCA, ReducedKernelSIR
from .distributed import MapReduceSVC  # imports no Dask: that happens at fit time
from .features import ReducedFeatures
from .lssvm import (
    LSSVC,
    LSSVR,
    LowRankLSSVC,
    LowRankLSSVR,
    OnlineLSSVR,
    PrunedLSSVC,
    PrunedLSSVR,
)
from .svm import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
    "LSSVC",
    "LSSVR",
    "LowRankLSSVC",
    "LowRankLSSVR",
    "MapReduceSVC",
    "OnlineLSSVR",
    "PrunedLSSVC",
    "PrunedLSSVR",
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
