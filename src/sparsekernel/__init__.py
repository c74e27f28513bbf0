"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .decomposition import ReducedKernelCCA, ReducedKernelPCA, ReducedKernelSIR
from .distributed import MapReduceSVC  # imports no Dask: that happens at fit time
from .features import NystromFeatures, ReducedFeatures
from .lssvm import (
    LSSVC,
    LSSVR,
    LowRankLSSVC,
    LowRankLSSVR,
    OnlineLSSVR,
    PrunedLSSVC,
    PrunedLSSVR,
)
from .sparse_margin import (
    FisherBasis,
    ReducedSetSVC,
    SparseFisherDiscriminant,
    SparseMarginBasis,
    SparseMarginClassifier,
    compress_svc,
)
from .svm import LowRankSVC, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
    "FisherBasis",
    "LSSVC",
    "LSSVR",
    "LowRankLSSVC",
    "LowRankLSSVR",
    "LowRankSVC",
    "MapReduceSVC",
    "NystromFeatures",
    "OnlineLSSVR",
    "PrunedLSSVC",
    "PrunedLSSVR",
    "ReducedFeatures",
    "ReducedKernelCCA",
    "ReducedKernelPCA",
    "ReducedKernelSIR",
    "ReducedSVC",
    "ReducedSVR",
    "ReducedSetSVC",
    "SmoothSVC",
    "SmoothSVR",
    "SparseFisherDiscriminant",
    "SparseMarginBasis",
    "SparseMarginClassifier",
    "compress_svc",
    "__version__",
]
