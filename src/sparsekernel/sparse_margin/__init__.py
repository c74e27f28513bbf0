"""Sparse kernel classifiers on m learned expansion vectors (Wu, Schoelkopf & Bakir 2006).

``SparseMarginClassifier`` (SLMC) learns the vectors for the SVM objective,
``SparseFisherDiscriminant`` for Fisher's criterion, and ``ReducedSetSVC`` /
``compress_svc`` compress an already fitted kernel SVM (RS and the modified MRS).
"""

from ._fisher import SparseFisherDiscriminant
from ._reduced_set import ReducedSetSVC, compress_svc, kernel_expansion, reduced_set_rbf
from ._slmc import SparseMarginClassifier

__all__ = [
    "ReducedSetSVC",
    "SparseFisherDiscriminant",
    "SparseMarginClassifier",
    "compress_svc",
    "kernel_expansion",
    "reduced_set_rbf",
]
