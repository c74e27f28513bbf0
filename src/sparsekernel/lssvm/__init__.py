"""Least-squares SVMs: exact and reduced LS-SVM, batch and on-line pruning, low-rank LS-SVM.

Objective of the whole family, per regression target or one-vs-rest class problem::

    min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2,   f(x) = w^T phi(x) + b

``s_i`` is ``sample_weight`` times the class weight; classifiers use targets in {-1, +1}.
``C`` scales the summed loss exactly as in the SVM family (svm/_base.py:
``1/2 ||w||^2 + 1/2 b^2 + C/2 sum_i s_i loss_i``), so one ``C`` means one trade-off across
the library; LS-SVMs differ in the loss (plain squared error) and leave the bias unpenalized
(Suykens). The LS-SVM papers' regularization constant (gamma in Suykens, C in Kim et al.,
gamma in Fang et al.) is this ``C``; their RBF exp(-||x - x'||^2 / sigma^2) is
``kernel='rbf', gamma=1/sigma^2``.

- :class:`LSSVR`, :class:`LSSVC`: exact (bordered (n+1) system, Cholesky) or reduced on
  ``n_basis`` points (Nystrom features, centred (m+1) normal equations).
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
