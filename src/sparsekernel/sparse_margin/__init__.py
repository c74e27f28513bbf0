"""Sparse kernel classifiers on m learned expansion vectors (Wu, Schoelkopf & Bakir 2006).

``SparseMarginClassifier`` (SLMC) learns the vectors for the SVM objective,
``SparseFisherDiscriminant`` for Fisher's criterion, and ``ReducedSetSVC`` /
``compress_svc`` compress an already fitted kernel SVM (RS and the modified MRS);
``modified_rsvm`` is the paper's MRSVM, which is ``LowRankSVC`` with random landmarks.
"""

from ._fisher import SparseFisherDiscriminant
from ._mrsvm import modified_rsvm
from ._reduced_set import ReducedSetSVC, compress_svc, kernel_expansion, reduced_set_rbf
from ._slmc import SparseMarginClassifier

__all__ = [
    "ReducedSetSVC",
    "SparseFisherDiscriminant",
    "SparseMarginClassifier",
    "compress_svc",
    "kernel_expansion",
    "modified_rsvm",
    "reduced_set_rbf",
]
