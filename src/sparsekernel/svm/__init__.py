"""Smooth, reduced and low-rank support vector machines (SSVM, RSVM, epsilon-SSVR, LLSVM)."""

from ._classes import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR
from ._lowrank import LowRankSVC

__all__ = ["LowRankSVC", "ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"]
