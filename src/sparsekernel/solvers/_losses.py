"""Smooth losses of the SSVM family and the stable smooth plus function.

Every loss ``l(f, y)`` here is the squared smooth plus function of a residual; it returns its
value and first and second derivatives with respect to the decision value ``f``, which is all
Newton's method needs. ``alpha`` is the smoothing parameter (the papers' alpha, the review's
beta); ``alpha = inf`` gives the exact squared hinge / squared epsilon-insensitive loss and a
generalized Hessian.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["SquaredSmoothEpsilonInsensitive", "SquaredSmoothHinge", "smooth_plus"]


def smooth_plus(x, alpha):
    """p(x, alpha) = x + log(1 + exp(-alpha x)) / alpha, evaluated stably.

    Uses ``logaddexp(0, alpha x) / alpha``, which neither overflows for large |alpha x| nor
    cancels for very negative x (the naive form returns 0 for p(-50, 5) = 5.3e-110).
    ``alpha = inf`` returns the plus function max(x, 0).
    """
    if np.isinf(alpha):
        return np.maximum(x, 0.0)
    return np.logaddexp(0.0, alpha * x) / alpha


def _plus_parts(x, alpha):
    """p(x), p'(x) = expit(alpha x), and alpha * p'(x) (1 - p'(x)) (= p''(x))."""
    if np.isinf(alpha):
        p = np.maximum(x, 0.0)
        # Generalized derivative of the plus function: 1/2 at the kink, as the toolbox.
        s = np.where(x > 0, 1.0, np.where(x < 0, 0.0, 0.5))
        return p, s, np.zeros_like(x)
    p = smooth_plus(x, alpha)
    s = expit(alpha * x)
    return p, s, alpha * s * (1.0 - s)


class SquaredSmoothHinge:
    """l(f, y) = p(1 - y f, alpha)^2 for labels y in {-1, +1} (SSVM)."""

    def __init__(self, alpha=5.0):
        self.alpha = alpha

    def value(self, f, y):
        return smooth_plus(1.0 - y * f, self.alpha) ** 2

    def derivatives(self, f, y):
        """Return (loss, dl/df, d2l/df2); uses y**2 = 1."""
        p, s, h = _plus_parts(1.0 - y * f, self.alpha)
        return p**2, -2.0 * y * p * s, 2.0 * (s * s + p * h)


class SquaredSmoothEpsilonInsensitive:
    """l(f, y) = p(f - y - eps, alpha)^2 + p(y - f - eps, alpha)^2 (epsilon-SSVR)."""

    def __init__(self, alpha=5.0, epsilon=0.1):
        self.alpha = alpha
        self.epsilon = epsilon

    def value(self, f, y):
        r = f - y
        return (smooth_plus(r - self.epsilon, self.alpha) ** 2
                + smooth_plus(-r - self.epsilon, self.alpha) ** 2)

    def derivatives(self, f, y):
        r = f - y
        p1, s1, h1 = _plus_parts(r - self.epsilon, self.alpha)
        p2, s2, h2 = _plus_parts(-r - self.epsilon, self.alpha)
        loss = p1**2 + p2**2
        d1 = 2.0 * (p1 * s1 - p2 * s2)
        d2 = 2.0 * (s1 * s1 + p1 * h1 + s2 * s2 + p2 * h2)
        return loss, d1, d2
