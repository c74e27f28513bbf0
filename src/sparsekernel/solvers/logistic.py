"""Penalized logistic regression (binary, or multinomial by softmax) on the Newton core.

Objective, with Z = [W; b] of shape (m + 1, q)::

    Phi(W, b) = 1/2 ||W||^2 + 1/2 ||b||^2 + C * sum_i s_i * CE_i,
    G = F W + b,  CE_i = log sum_j exp(G_ij) - sum_j Y_ij G_ij   (multinomial, q = k)
                  CE_i = log(1 + exp(-y_i g_i)),  y_i in {-1, +1}   (binary, q = 1)

How C compares. In the form of the SVM family, ``1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i
loss_i``, the loss is the deviance 2 CE_i, so ``C`` weighs the data as it does in every other
estimator. scikit-learn's ``LogisticRegression`` minimises ``1/2 ||W||^2 + C_sk * sum_i s_i
CE_i`` with an unpenalized intercept: ``C = C_sk``, and the two coincide exactly when the bias
is left out (or appended to F as a constant column there). The binary problem is one column
on the logit of class 1; the two-class multinomial with ``C`` is the binary one with ``2 C``
on v = w_1 - w_0 (the penalty of the symmetric parametrisation is ||v||^2 / 4).

Method. Both run on the iteration of :func:`~sparsekernel.solvers.newton_ovr.newton_ovr`,
their per-row state beside the rows: the binary problem is its smooth loss
(:class:`~sparsekernel.solvers._losses.LogisticDeviance` on :class:`SmoothRows`), the
multinomial one its k columns coupled (:class:`SoftmaxRows`, :class:`Multinomial`): one
gradient test, one direction and one backtracking step for all of them. Two ways of
computing the multinomial direction, chosen by the size p = k (m + 1) of its system:

* p <= ``_EXACT_MAX``: the exact Hessian ``I + [F 1]^T diag(.) [F 1]`` (k x k blocks, each a
  Gram sum of the rows), solved by one Cholesky factorization.
* larger p (many classes on hundreds of features): the block Hessian would cost
  n p^2 / 2 multiply-adds to build and p^3 / 3 to factor at every iteration, against
  4 n p for one Hessian-vector product. Each Newton step is then solved inexactly by
  preconditioned conjugate gradients on Hessian-vector products (tolerance min(0.5,
  sqrt(relative gradient)), as in truncated Newton methods). The preconditioner is the
  Hessian with each row's class curvature replaced by a scalar multiple of its
  uniform-probability form, I + A (x) B: a Kronecker product, exact at Z = 0 (the first step
  takes one CG step), rebuilt once per Newton step (:class:`_KroneckerPreconditioner`).

Exact Newton's cost grows as n p^2, the CG method's as n p, so past ``_EXACT_MAX`` the
exact Hessian stops being the faster.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import logsumexp, softmax

from ..compute import add_to_diagonal, cholesky_solve, spd_cholesky, spd_solve
from ..compute import symmetric_from_lower as _full
from ._losses import LogisticDeviance
from ._rows import ArrayRows, as_rows, is_provider
from .newton_ovr import HingeRows, newton_ovr

__all__ = ["Multinomial", "SoftmaxRows", "logistic_newton", "logistic_newton_bytes",
           "solve_logistic"]

#: Largest k (m + 1) solved with the exact Hessian; past it, Newton with preconditioned CG.
_EXACT_MAX = 2000
#: Conjugate-gradient steps allowed per Newton step of the large problems.
_MAX_CG = 250


def logistic_newton_bytes(n, m, q, itemsize, n_threads):
    """Peak working memory of :func:`logistic_newton` on n rows of m features (of
    ``itemsize`` bytes) and q columns (1 binary, k multinomial), beyond F and y: eight
    float64 arrays of n x q (logits, probabilities, residuals, the step's logits, the trial
    logits of the line search and the log-sum-exp temporaries), the weights, and either
    the exact Hessian of p = q (m + 1) with its factor and the threads' partial grams (a
    gather buffer of at most 8 MiB each), or, past ``_EXACT_MAX``, the preconditioner's
    (m + 1)-square arrays and the conjugate-gradient vectors."""
    p, m1 = q * (m + 1), m + 1
    rows = 8.0 * n * (8 * q + 2)
    if p <= _EXACT_MAX:
        gather = min(8.0 * 2**20, float(n) * m1 * itemsize)
        return rows + 2 * 8.0 * p * p + n_threads * (8.0 * m1 * m1 + gather)
    return rows + 4 * 8.0 * m1 * m1 + 8 * 8.0 * p


def logistic_newton(F, y, C=1.0, sample_weight=None, tol=1e-6, max_iter=100, callback=None):
    """Minimise the penalized logistic loss Phi (module docstring).

    Parameters
    ----------
    F : ndarray of shape (n, m), or a row provider
        Dense features, float32 or float64, or their provider (:mod:`._rows`).
    y : ndarray of shape (n,) or (n, k)
        Class indices in ``range(k)`` (two classes give the binary, one-column problem; k > 2
        the multinomial one), or an (n, k) matrix of target probabilities (rows summing to 1;
        always multinomial, also for k = 2).
    C : float
        Weight of the summed cross-entropy.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights s_i.
    tol : float
        Converged when ``||grad||_inf <= tol * max(1, ||grad at 0||_inf)``.
    max_iter : int
        Maximum Newton iterations.
    callback : callable, optional
        Called after every Newton iteration with newton_ovr's dict (n_iter,
        n_unconverged, n_active).

    Returns
    -------
    SolverResult
        ``coef`` of shape (q, m) and ``intercept`` of shape (q,), q = 1 for the binary
        problem (logit of class 1) and k for the multinomial one.
    """
    if not is_provider(F):
        F = np.asarray(F)
        if F.ndim != 2 or F.dtype not in (np.float32, np.float64):
            raise ValueError(f"F must be a 2-D float32 or float64 array, got {F.dtype} "
                             f"of shape {F.shape}.")
    n = F.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    if s.shape != (n,) or np.any(s < 0) or not np.isfinite(s).all():
        raise ValueError(f"sample_weight must hold {n} finite non-negative weights.")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite number, got {C!r}.")
    Y = _targets(np.asarray(y), n)
    return solve_logistic(F, 2.0 * Y - 1.0 if Y.shape[1] == 1 else Y, C, s, tol, max_iter,
                          callback)


def solve_logistic(F, Y, C=1.0, sample_weight=None, tol=1e-6, max_iter=100, callback=None):
    """:func:`logistic_newton` on checked targets, wherever the rows keep them: ``Y`` of
    shape (n, 1) in {-1, +1} (binary; +1 for class 1) or (n, k) probabilities
    (multinomial), an ndarray or what the rows' provider keeps beside its rows (a dask
    array chunked as a cluster's rows), as ``sample_weight``."""
    binary = Y.shape[1] == 1
    # Curvature products only set the CG direction (gradient and objective stay exact),
    # so the CG path runs them on float32 features stored in memory: half the memory
    # traffic. Rows held elsewhere are multiplied as they are.
    curv = (ArrayRows(F.astype(np.float32))
            if isinstance(F, np.ndarray) and F.dtype == np.float64 and not binary
            and Y.shape[1] * (F.shape[1] + 1) > _EXACT_MAX else None)
    results = newton_ovr(as_rows(F), Y, C, sample_weight, tol, max_iter, callback=callback,
                         loss=LogisticDeviance() if binary else Multinomial(curv))
    first = results[0]  # (the columns of the multinomial share one iteration)
    return dataclasses.replace(
        first, coef=np.array([r.coef for r in results]),
        intercept=np.array([r.intercept for r in results]),
        objective=float(sum(r.objective for r in results)),
        grad_norm=max(r.grad_norm for r in results))


def _targets(y, n):
    """(n, q) targets: P(class 1) in one column for two class indices, else probabilities."""
    if y.ndim == 2:
        if y.shape[0] != n or y.shape[1] < 2 or not np.isfinite(y).all() or np.any(y < 0):
            raise ValueError(f"A 2-D y must be an ({n}, k >= 2) matrix of non-negative "
                             f"target probabilities, got shape {y.shape}.")
        if not np.allclose(y.sum(axis=1), 1.0):
            raise ValueError("The rows of a 2-D y (target probabilities) must sum to 1.")
        return y.astype(np.float64)
    if y.shape != (n,) or y.dtype.kind not in "iu" or (y.size and y.min() < 0):
        raise ValueError(f"y must hold {n} class indices (non-negative ints) or be an "
                         f"(n, k) probability matrix; got dtype {y.dtype}, shape {y.shape}.")
    k = max(int(y.max()) + 1 if y.size else 0, 2)
    if k == 2:
        return np.where(y == 1, 1.0, 0.0)[:, None]  # P(class 1) through the sigmoid
    return (y[:, None] == np.arange(k)).astype(np.float64)


class SoftmaxRows(HingeRows):
    """The per-row state of the multinomial problem: target probabilities ``Y`` (n, k),
    weights, logits ``f`` and, during an iteration, the probabilities ``R`` at the tested
    logits and the logits ``U`` of the direction. Its loss part is ``C sum_i s_i CE_i``,
    reported in the first column (the columns share it); its curvature couples the
    columns, so the Hessian's blocks (:meth:`pair_gram`) and its products
    (:meth:`curvature`, on ``curv``: the rows' float32 copy, when the solver made one) are
    its own members."""

    def __init__(self, Y, s=None, curv=None):
        super().__init__(Y, s)
        self.curv = curv

    def every(self, start, stride):
        return SoftmaxRows(self.Y[start::stride], self.s[start::stride])

    def _residuals(self, Y, f, C):
        """``(P, V)``: the probabilities at logits f and the loss part of the gradient per
        row, ``C s (P - Y)``."""
        P = softmax(f, axis=1)
        return P, (C * self.s)[:, None] * (P - Y)

    def _active(self):
        return np.broadcast_to((self.s > 0)[:, None], self.R.shape)

    def counts(self, js):
        """Every weighted row is active in every column, and none differs."""
        n = np.full(len(js), np.count_nonzero(self.s > 0))
        return np.array([n, np.zeros_like(n), n])

    def pair_gram(self, F, a, b, C):
        """Block (a, b) of the Hessian's loss part, the Gram sum of the rows with weights
        ``C s P_a (delta_ab - P_b)`` (its lower triangle)."""
        P, cs = self.R, C * self.s
        w, sign = (cs * P[:, a] * (1.0 - P[:, a]), 1.0) if a == b else \
            (cs * P[:, a] * P[:, b], -1.0)
        return F.add_gram(F.square(F.shape[1] + 1), w, np.arange(F.shape[0]), sign)

    def kron_gram(self, F, C):
        """``A / k`` of :class:`_KroneckerPreconditioner` (its lower triangle; on ``curv``
        when there is one: a preconditioner needs no more)."""
        F, P, k = self.curv or F, self.R, self.R.shape[1]
        w = C * self.s * (1.0 - np.einsum("ij,ij->i", P, P)) / (k - 1)
        return F.add_gram(F.square(F.shape[1] + 1), w, np.arange(F.shape[0]))

    def curvature(self, F, D, C):
        """The Hessian's loss part times D ((m + 1) x k): ``[F 1]^T diag(C s) (P o U -
        P (P . U))`` with U the logits of D."""
        F = self.curv or F
        m, P = F.shape[1], self.R
        PU = P * (F.margins(D[:m]) + D[m])
        return F.gradient((C * self.s)[:, None] * (PU - P * PU.sum(axis=1, keepdims=True)))

    def direction(self, F, D, C, keep=((), ())):
        """The logits of the direction D, and the loss at t = 0 and t = 1 along it."""
        self.U = F.margins(D[:-1]) + D[-1]
        return self.values(F, np.array([[0.0], [1.0]]), C)

    def values(self, F, T, C):
        """The loss part at steps ``T`` (q, 1) along the direction."""
        return np.array([[self._cross_entropy(self.f + t * self.U, C)] for t in T[:, 0]])

    def _cross_entropy(self, G, C):
        return (C * self.s) @ (logsumexp(G, axis=1) - np.einsum("ij,ij->i", self.Y, G))

    def advance(self, F, t):
        self.f, self.U = self.f + t * self.U, None
        n = np.full(self.f.shape[1], np.count_nonzero(self.s > 0))
        return np.array([n, n])

    def loss(self, F, C):
        out = np.zeros(self.f.shape[1])
        out[0] = self._cross_entropy(self.f, C)
        return out


class Multinomial:
    """The multinomial cross-entropy as :func:`~sparsekernel.solvers.newton_ovr.newton_ovr`'s
    loss: k columns coupled, its per-row state :class:`SoftmaxRows`, its Newton direction
    from the exact block Hessian or by preconditioned conjugate gradients (module
    docstring)."""

    coupled = True

    def __init__(self, curv=None):
        self.curv = curv

    @property
    def state(self):
        """The constructor ``state(Y, s)`` of :class:`SoftmaxRows` (``UPDATES`` included)."""
        return SoftmaxRows.of(curv=self.curv)

    @staticmethod
    def direction(P, G, C, rel, goal):
        """The Newton direction ((m + 1) x k) at gradient G of the rows' state ``P``; ``rel``:
        the gradient relative to its value at zero, ``goal``: the stopping threshold."""
        m1, k = G.shape
        if k * m1 <= _EXACT_MAX:
            H = P.square(k * m1)
            for a in range(k):
                for b in range(a, k):
                    block = _full(P("pair_gram", a, b, C))
                    H[a * m1:(a + 1) * m1, b * m1:(b + 1) * m1] = block
                    H[b * m1:(b + 1) * m1, a * m1:(a + 1) * m1] = block.T
            D = spd_solve(add_to_diagonal(H, 1.0), -G.T.ravel())[0]
            return np.asarray(D).reshape(k, m1).T
        return _pcg(lambda D: D + P("curvature", D, C), -G,
                    _KroneckerPreconditioner(_full(P("kron_gram", C))),
                    min(0.5, float(np.sqrt(rel))), 0.5 * goal, _MAX_CG)


class _KroneckerPreconditioner:
    """Inverse of I + A (x) B: the Hessian with every row's class curvature replaced by a
    scalar multiple of the uniform one.

    Row i's curvature is cs_i (diag(p_i) - p_i p_i^T). Replacing it by cs_i c_i B, with
    B = I/k - 1 1^T/k^2 its value at uniform probabilities and c_i = (1 - ||p_i||^2) k /
    (k - 1) matching its trace, gives I + A (x) B with A = [F 1]^T diag(cs c) [F 1]: exact at
    Z = 0. B is 0 on the all-ones vector and 1/k on its complement, so on a direction D of
    shape (m + 1, k) the matrix acts as D + A D B: it leaves the row means of D alone and
    multiplies the rest by I + A/k. One Cholesky factor of that (m+1)^2 matrix, once per
    Newton step, inverts it; applying it costs two triangular solves with k columns.
    """

    def __init__(self, A_over_k):
        self.L = spd_cholesky(add_to_diagonal(A_over_k, 1.0))[0]

    def __call__(self, R):
        mean = R.mean(axis=1, keepdims=True)
        return mean + cholesky_solve(self.L, R - mean)


def _pcg(hessp, b, precond, rtol, atol_inf, maxiter):
    """Preconditioned conjugate gradients for H x = b (matrices of shape (m + 1, k)), until
    ||r||_2 <= rtol ||b||_2 or ||r||_inf <= atol_inf (the residual is the gradient the step
    leaves to first order: the last step need not be solved further than the stopping
    threshold)."""
    x = np.zeros_like(b)
    r = b.copy()
    z = precond(r)
    d = z.copy()
    rz = float(np.sum(r * z))
    target = rtol * float(np.sqrt(np.sum(b * b)))
    for _ in range(maxiter):
        Hd = hessp(d)
        dHd = float(np.sum(d * Hd))
        if dHd <= 0:  # cannot happen for the positive definite H, but stop safely
            break
        alpha = rz / dHd
        x += alpha * d
        r -= alpha * Hd
        if float(np.sqrt(np.sum(r * r))) <= target or float(np.abs(r).max()) <= atol_inf:
            break
        z = precond(r)
        rz_new = float(np.sum(r * z))
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x
