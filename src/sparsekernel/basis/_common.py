"""Helpers shared by the selectors that look at kernel values."""

from __future__ import annotations

from ..kernels import Kernel, resolve_gamma

__all__ = ["default_kernel"]


def default_kernel(X):
    """The RBF kernel with ``gamma='scale'`` resolved on X, for callers that pass no kernel.

    Estimators always pass their own kernel; this only serves direct ``select`` calls.
    """
    return Kernel("rbf", gamma=resolve_gamma("scale", X))
