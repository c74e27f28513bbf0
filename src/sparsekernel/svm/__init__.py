"""Smooth and reduced support vector machines (SSVM, RSVM, epsilon-SSVR)."""

from ._classes import ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR

__all__ = ["ReducedSVC", "ReducedSVR", "SmoothSVC", "SmoothSVR"]
