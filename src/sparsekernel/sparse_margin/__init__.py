"""Sparse kernel classifiers on m learned expansion vectors (Wu, Schoelkopf & Bakir 2006).

``SparseMarginClassifier`` (SLMC) learns the vectors for the SVM objective,
``SparseFisherDiscriminant`` for Fisher's criterion, and ``ReducedSetSVC`` /
``compress_svc`` compress an already fitted kernel SVM (RS and the modified MRS);
``modified_rsvm`` is the paper's MRSVM, which is ``LowRankSVC`` with random landmarks.
The learned bases are also selectors for any estimator's ``basis=``:
``SparseMarginBasis`` and ``FisherBasis``. The family's objective and the scaling of ``C``
are stated once in :mod:`sparsekernel.sparse_margin._base`.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["FisherBasis", "ReducedSetSVC", "SparseFisherDiscriminant", "SparseMarginBasis",
           "SparseMarginClassifier", "compress_svc", "kernel_expansion", "modified_rsvm",
           "reduced_set_rbf"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._compress": ["ReducedSetSVC", "compress_svc"],
    "._fisher": ["FisherBasis", "SparseFisherDiscriminant"],
    "._reduced_set": ["kernel_expansion", "reduced_set_rbf"],
    "._slmc": ["SparseMarginBasis", "SparseMarginClassifier", "modified_rsvm"],
})
