"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .features import NystromFeatures, ReducedFeatures
from .sparse_margin import (
    ReducedSetSVC,
    SparseFisherDiscriminant,
    SparseMarginClassifier,
    compress_svc,
)
from .svm import LowRankSVC, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
    "LowRankSVC",
    "NystromFeatures",
    "ReducedFeatures",
    "ReducedSVC",
    "ReducedSVR",
    "ReducedSetSVC",
    "SmoothSVC",
    "SmoothSVR",
    "SparseFisherDiscriminant",
    "SparseMarginClassifier",
    "__version__",
    "compress_svc",
]
