"""Smooth, reduced and low-rank support vector machines (SSVM, RSVM, epsilon-SSVR, LLSVM),
the nu-one-class SVM and kernel logistic regression on the same Nystrom features."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["KernelLogisticRegression", "LowRankOneClassSVM", "LowRankSVC", "ReducedSVC",
           "ReducedSVR", "SmoothSVC", "SmoothSVR"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._classes": ["ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"],
    "._logistic": ["KernelLogisticRegression"],
    "._lowrank": ["LowRankSVC"],
    "._one_class": ["LowRankOneClassSVM"],
})
