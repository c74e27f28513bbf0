"""Sparse kernel classifiers on m learned expansion vectors (Wu, Schoelkopf & Bakir 2006).

``SparseMarginClassifier`` (SLMC) learns the vectors for the SVM objective,
``SparseFisherDiscriminant`` for Fisher's criterion, and ``ReducedSetSVC`` /
``compress_svc`` compress an already fitted kernel SVM (RS and the modified MRS);
``modified_rsvm`` is the paper's MRSVM, which is ``LowRankSVC`` with random landmarks.
The learned bases are also selectors for any estimator's ``basis=``:
``SparseMarginBasis`` and ``FisherBasis``. The family's objective and the scaling of ``C``
are stated once in :mod:`sparsekernel.sparse_margin._base`.
"""

from ._compress import ReducedSetSVC, compress_svc
from ._fisher import FisherBasis, SparseFisherDiscriminant
from ._reduced_set import kernel_expansion, reduced_set_rbf
from ._slmc import SparseMarginBasis, SparseMarginClassifier, modified_rsvm

__all__ = ["FisherBasis", "ReducedSetSVC", "SparseFisherDiscriminant", "SparseMarginBasis",
           "SparseMarginClassifier", "compress_svc", "kernel_expansion", "modified_rsvm",
           "reduced_set_rbf"]
