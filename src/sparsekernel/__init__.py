"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

from .features import ReducedFeatures
from .sparse_margin import (
    ReducedSetSVC,
    SparseFisherDiscriminant,
    SparseMarginClassifier,
    compress_svc,
)
from .svm import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__version__ = "0.1.0"

__all__ = [
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
