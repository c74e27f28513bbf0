"""Least-squares SVMs: exact and reduced LS-SVM, batch and on-line pruning, low-rank LS-SVM.

All of them minimise one objective, stated once in :mod:`sparsekernel.lssvm._base`; ``C``
means the same as in the SVM family.

- :class:`LSSVR`, :class:`LSSVC`: reduced on ``n_basis`` points, or exact with ``n_basis=None``.
- :class:`PrunedLSSVR`, :class:`PrunedLSSVC`: Suykens' batch pruning by smallest |alpha|.
- :class:`OnlineLSSVR`: fixed-budget on-line pruning (Kim, Shim & Oh), O(N_w^2) per point.
- :class:`LowRankLSSVR`, :class:`LowRankLSSVC`: M learnable robust RBF / SBF bases (Fang et al.).
"""

from ._classes import LSSVC, LSSVR
from ._lowrank import LowRankLSSVC, LowRankLSSVR
from ._online import OnlineLSSVR
from ._pruning import PrunedLSSVC, PrunedLSSVR

__all__ = [
    "LSSVC",
    "LSSVR",
    "LowRankLSSVC",
    "LowRankLSSVR",
    "OnlineLSSVR",
    "PrunedLSSVC",
    "PrunedLSSVR",
]
