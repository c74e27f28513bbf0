"""Least-squares SVMs: reduced or exact (LSSVR/LSSVC), batch-pruned (Suykens), on-line pruned
on a fixed budget (Kim, Shim & Oh) and low-rank on M learnable bases (Fang et al.).

All of them minimise one objective, stated once in :mod:`sparsekernel.lssvm._base`; ``C``
means the same as in the SVM family.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["LSSVC", "LSSVR", "LowRankLSSVC", "LowRankLSSVR", "OnlineLSSVR", "PrunedLSSVC",
           "PrunedLSSVR"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._base": ["LSSVC", "LSSVR"],
    "._lowrank": ["LowRankLSSVC", "LowRankLSSVR"],
    "._online": ["OnlineLSSVR"],
    "._pruning": ["PrunedLSSVC", "PrunedLSSVR"],
})
