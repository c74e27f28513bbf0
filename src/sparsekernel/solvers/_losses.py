"""Losses of the Newton solvers: the SSVM family's, the logistic deviance, and the stable
smooth plus function.

Every loss ``l(f, y)`` returns its value and first and second derivatives with respect to
the decision value ``f``, which is all Newton's method needs. The SSVM family's losses are
squared smooth plus functions of a residual, ``alpha`` the smoothing parameter (the papers'
alpha, the review's beta); ``alpha = inf`` gives the exact squared hinge / squared
epsilon-insensitive loss, sums of one-sided squared hinges (:func:`hinge_terms`), piecewise
quadratic along any line, where the solvers find the step exactly (:mod:`._line_search`)
instead of backtracking.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit

__all__ = ["LogisticDeviance", "SquaredSmoothEpsilonInsensitive", "SquaredSmoothHinge",
           "hinge_terms", "smooth_plus"]


def hinge_terms(y, epsilon=None):
    """The exact loss as one-sided squared hinges ``max(0, r_h)^2`` with residuals
    ``r_h = sign_h (target_h - f_row(h))``: ``(row, sign, target)``, one array each.

    A label (``epsilon`` None) is one hinge, ``r = 1 - y f`` (sign and target the label); a
    regression target two, ``y - epsilon`` from below and ``y + epsilon`` from above (at
    most one of them violated). Along a change ``u`` of f a residual falls at the rate
    ``sign_h u_row(h)``.
    """
    n = len(y)
    if epsilon is None:
        return np.arange(n), y, y
    return (np.concatenate([np.arange(n), np.arange(n)]),
            np.concatenate([np.ones(n), -np.ones(n)]),
            np.concatenate([y - epsilon, y + epsilon]))


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


class LogisticDeviance:
    """l(f, y) = 2 log(1 + exp(-y f)) for labels y in {-1, +1}: the binomial deviance, so
    that ``C/2 sum_i s_i l`` is logistic regression's ``C sum_i s_i`` cross-entropy."""

    def value(self, f, y):
        return -2.0 * log_expit(y * f)

    def derivatives(self, f, y):
        """Return (loss, dl/df, d2l/df2); uses y**2 = 1."""
        p = expit(-y * f)  # the probability of the other label
        return -2.0 * log_expit(y * f), -2.0 * y * p, 2.0 * p * (1.0 - p)
