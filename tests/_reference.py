"""A textbook Newton method, the independent reference the library's Newton core is
tested against (its answers are known, not the code's own)."""

from types import SimpleNamespace

import numpy as np
from scipy.linalg import solve


def reference_newton(F, y, loss, C=1.0, sample_weight=None, tol=1e-12, max_iter=500):
    """Minimise ``1/2 ||z||^2 + C/2 sum_i s_i l(f_i, y_i)``, ``f = [F 1] z`` (the SVM
    family's objective, ``l`` a loss of ``sparsekernel.solvers._losses``) by dense Newton
    steps on the (generalized) Hessian with Armijo backtracking, until the gradient's
    largest entry is ``tol`` times its value at zero."""
    A = np.c_[np.asarray(F, dtype=np.float64), np.ones(F.shape[0])]
    cw = 0.5 * C * (np.ones(len(y)) if sample_weight is None else sample_weight)
    z = np.zeros(A.shape[1])

    def objective(z):
        return 0.5 * z @ z + cw @ loss.value(A @ z, y)

    scale = None
    for _ in range(max_iter):
        _, d1, d2 = loss.derivatives(A @ z, y)
        g = z + A.T @ (cw * d1)
        scale = max(1.0, np.abs(g).max()) if scale is None else scale
        if np.abs(g).max() <= tol * scale:
            break
        d = solve(np.eye(len(z)) + A.T @ ((cw * d2)[:, None] * A), -g, assume_a="pos")
        t, obj = 1.0, objective(z)
        while objective(z + t * d) > obj + 1e-4 * t * (g @ d) and t > 1e-12:
            t *= 0.5
        z = z + t * d
    return SimpleNamespace(coef=z[:-1], intercept=z[-1], objective=objective(z))
