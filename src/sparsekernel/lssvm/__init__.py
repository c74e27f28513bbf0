"""Least-squares SVMs: reduced or exact (LSSVR/LSSVC), batch-pruned (Suykens), on-line pruned
on a fixed budget (Kim, Shim & Oh) and low-rank on M learnable bases (Fang et al.).

All of them minimise one objective, stated once in :mod:`sparsekernel.lssvm._base`; ``C``
means the same as in the SVM family.
"""

from ._base import LSSVC, LSSVR
from ._lowrank import LowRankLSSVC, LowRankLSSVR
from ._online import OnlineLSSVR
from ._pruning import PrunedLSSVC, PrunedLSSVR

__all__ = ["LSSVC", "LSSVR", "LowRankLSSVC", "LowRankLSSVR", "OnlineLSSVR", "PrunedLSSVC",
           "PrunedLSSVR"]
