"""The exact line search of the squared-hinge Newton solvers, shared by all of them.

Along a Newton direction the objective 1/2 ||z + t d||^2 + 1/2 sum_i cs_i max(0, r_i - t c_i)^2
is a piecewise quadratic in t with an increasing, piecewise linear derivative: its minimum
is found exactly, not by backtracking.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_step", "exact_step_sorted"]


def exact_step(r, c, cs, zd, dd, max_tries=20):
    """argmin_t>=0 of 1/2 ||z + t d||^2 + 1/2 sum cs_i max(0, r_i - t c_i)^2.

    The derivative ``zd + t dd - sum cs_i c_i max(0, r_i - t c_i)`` is continuous, piecewise
    linear and increasing; its breakpoints are where rows change side. Newton's method on
    it, from the Newton step's t = 1 and kept inside the bracket of the root, lands on the
    root's segment in a few O(n) passes (the rows active at the new t are those of the
    segment it solved: then the root is exact). Sorting every breakpoint (the fallback,
    :func:`exact_step_sorted`) cost more than the rest of an iteration on small data.
    """
    w = cs * c
    lo, hi = 0.0, np.inf
    slack = r  # at t = 0
    act = slack > 0
    if zd - w[act] @ slack[act] >= 0:  # not a descent direction: stay
        return 0.0
    t = 1.0
    for _ in range(max_tries):
        slack = r - t * c
        act = slack > 0
        wa = w[act]
        a = zd + t * dd - wa @ slack[act]  # phi'(t)
        if a == 0.0:
            return t
        lo, hi = (t, hi) if a < 0 else (lo, t)
        t_new = t - a / (dd + wa @ c[act])  # the root of t's segment
        if not lo < t_new < hi:
            t_new = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * t
        elif np.array_equal(r - t_new * c > 0, act):  # the same segment: exact
            return float(t_new)
        t = t_new
    return exact_step_sorted(r, c, cs, zd, dd)


def exact_step_sorted(r, c, cs, zd, dd):
    """:func:`exact_step` by sorting the breakpoints: the segment where the derivative
    crosses zero."""
    act0 = r > 0
    a0 = zd - np.sum((cs * c * r)[act0])
    b0 = dd + np.sum((cs * c * c)[act0])
    leave = act0 & (c > 0)
    enter = ~act0 & (c < 0)
    ev = leave | enter
    with np.errstate(over="ignore"):  # |c| tiny: the row changes side at t = inf, harmless
        t_ev = r[ev] / c[ev]
    sign = np.where(leave[ev], 1.0, -1.0)
    order = np.argsort(t_ev, kind="stable")
    t_ev = t_ev[order]
    w = (cs * c)[ev][order]
    a = np.concatenate([[a0], a0 + np.cumsum(sign[order] * w * r[ev][order])])
    b = np.concatenate([[b0], b0 - np.cumsum(sign[order] * w * c[ev][order])])
    # phi'(t_e) from the segment to its left; the root lies in the first segment where >= 0.
    at_break = a[:-1] + b[:-1] * t_ev
    hit = np.flatnonzero(at_break >= 0)
    seg = hit[0] if hit.size else len(t_ev)
    return float(-a[seg] / b[seg]) if b[seg] > 0 else 0.0
