"""Penalized logistic regression (binary, or multinomial by softmax) on one feature matrix.

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

Method. The objective is smooth and strictly convex; Newton's method converges in a few
iterations from Z = 0. Two ways of computing the step, chosen by the size p = q (m + 1) of
the system:

* p <= ``_EXACT_MAX`` (binary problems on up to ~2000 features, small multinomial ones): the
  exact Hessian ``I + [F 1]^T diag(.) [F 1]`` (q x q blocks), built by BLAS-3 products and
  solved by one Cholesky factorization, then a backtracking (Armijo) line search.
* larger p (many classes on hundreds of features): the block Hessian would cost
  n p^2 / 2 multiply-adds to build and p^3 / 3 to factor at every iteration, against
  4 n p for one Hessian-vector product. Each Newton step is then solved inexactly by
  preconditioned conjugate gradients on Hessian-vector products (tolerance min(0.5,
  sqrt(relative gradient)), as in truncated Newton methods), followed by the same Armijo
  search. The preconditioner is the Hessian with each row's class curvature replaced by a
  scalar multiple of its uniform-probability form, I + A (x) B: a Kronecker product, exact
  at Z = 0 (the first step takes one CG step), inverted through the eigenvectors of the
  (m+1)^2 matrix A, rebuilt once per Newton step (``_KroneckerPreconditioner``).

The threshold between the two is empirical: exact Newton's cost grows as n p^2, the CG
methods' as n p, so past ``_EXACT_MAX`` features exact Newton stops being the faster.

The rows reach the solver through a row provider (:mod:`._rows`: in memory, products in F's
dtype split by rows over the planned threads, or on a Dask cluster's workers); logits,
probabilities and iterates are float64.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy.special import expit, log_expit, logsumexp, softmax

from ..compute import (
    add_to_diagonal,
    blas_threads,
    cholesky_solve,
    spd_cholesky,
    spd_solve,
    symmetric_from_lower,
)
from ._line_search import backtrack
from ._losses import LogisticDeviance
from ._result import SolverResult, check_finite
from ._rows import as_rows, is_provider
from .newton_ovr import newton_ovr

__all__ = ["logistic_newton", "logistic_newton_bytes"]

#: Largest q (m + 1) solved with the exact Hessian; past it, Newton with preconditioned CG.
_EXACT_MAX = 2000
#: Conjugate-gradient steps allowed per Newton step of the large problems.
_MAX_CG = 250


def logistic_newton_bytes(n, m, q, itemsize, n_threads):
    """Peak working memory of :func:`logistic_newton` on n rows of m features (of
    ``itemsize`` bytes) and q columns (1 binary, k multinomial), beyond F and y: eight
    float64 arrays of n x q (logits, probabilities, residuals, the step's logits, the trial
    logits of the line search and the log-sum-exp temporaries), the weights, and either
    the exact Hessian of p = q (m + 1) with its factor and the threads' partial grams (a
    gather buffer of at most 8 MiB each), or, past ``_EXACT_MAX``, the float32 copy of F
    for the curvature products, the preconditioner's (m + 1)-square arrays and the
    conjugate-gradient vectors."""
    p, m1 = q * (m + 1), m + 1
    rows = 8.0 * n * (8 * q + 2)
    if p <= _EXACT_MAX:
        gather = min(8.0 * 2**20, float(n) * m1 * itemsize)
        return rows + 2 * 8.0 * p * p + n_threads * (8.0 * m1 * m1 + gather)
    curv = 4.0 * n * m if itemsize == 8 else 0.0
    return rows + curv + 4 * 8.0 * m1 * m1 + 8 * 8.0 * p


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
        Called after every Newton iteration with a dict (n_iter, objective, grad_norm).

    Returns
    -------
    SolverResult
        ``coef`` of shape (q, m) and ``intercept`` of shape (q,), q = 1 for the binary
        problem (logit of class 1) and k for the multinomial one.
    """
    problem = _Problem(F, y, C, sample_weight)
    if problem.binary:  # the SVM family's Newton on the deviance (newton_ovr)
        (res,) = newton_ovr(problem.rows, 2.0 * problem.Y - 1.0, C, problem.s, tol, max_iter,
                            callback=callback, loss=LogisticDeviance())
        return dataclasses.replace(res, coef=res.coef[None], intercept=np.array([res.intercept]))
    with blas_threads(1):
        direction = _exact_direction if problem.p <= _EXACT_MAX else _cg_direction
        Z, info = _newton(problem, tol, max_iter, callback, direction)
    return problem.result(Z, tol, *info)


class _Problem:
    """Objective, gradient and curvature of Phi on fixed features and targets."""

    def __init__(self, F, y, C, sample_weight):
        if not is_provider(F):
            F = np.asarray(F)
            if F.ndim != 2 or F.dtype not in (np.float32, np.float64):
                raise ValueError(f"F must be a 2-D float32 or float64 array, got {F.dtype} "
                                 f"of shape {F.shape}.")
        n, m = F.shape
        self.rows = as_rows(F)
        self.s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        if self.s.shape != (n,) or np.any(self.s < 0) or not np.isfinite(self.s).all():
            raise ValueError(f"sample_weight must hold {n} finite non-negative weights.")
        if not (np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}.")
        self.cs = float(C) * self.s
        self.Y = _targets(np.asarray(y), n)
        self.binary = self.Y.shape[1] == 1
        self.q = self.Y.shape[1]
        self.m, self.p = m, self.q * (m + 1)
        # Curvature products only set the CG direction (gradient and objective stay exact),
        # so the CG path runs them on float32 features stored in memory: half the memory
        # traffic. Rows held elsewhere are multiplied as they are.
        self.curv = (as_rows(F.astype(np.float32))
                     if isinstance(F, np.ndarray) and F.dtype == np.float64
                     and self.p > _EXACT_MAX else self.rows)

    def logits(self, Z):
        return self.rows.margins(Z[:-1]) + Z[-1]

    def loss(self, G):
        """Per-row cross-entropy."""
        if self.binary:
            return -log_expit(np.where(self.Y[:, 0] > 0, G[:, 0], -G[:, 0]))
        return logsumexp(G, axis=1) - np.einsum("ij,ij->i", self.Y, G)

    def objective(self, Z, G):
        return 0.5 * float(np.sum(Z * Z)) + float(self.cs @ self.loss(G))

    def residual(self, G):
        """d CE / d G row by row: P - Y."""
        P = expit(G) if self.binary else softmax(G, axis=1)
        return P, P - self.Y

    def gradient(self, Z, R):
        return Z + self.rows.gradient(R * self.cs[:, None])

    def hessian_times(self, P, D):
        """(I + [F 1]^T diag(curvature) [F 1]) D, for D of shape (m + 1, q), with the
        products in the precision of the curvature rows."""
        U = self.curv.margins(D[:-1]) + D[-1]
        if self.binary:
            V = P * (1.0 - P) * U
        else:
            PU = P * U
            V = PU - P * PU.sum(axis=1, keepdims=True)
        return D + self.curv.gradient(V * self.cs[:, None])

    def hessian(self, P):
        """The exact (q (m + 1))^2 Hessian, blocks (a, b) in class order: block (a, b) is
        the Gram sum of the rows with weights cs P_a (delta_ab - P_b), added (a = b) or
        subtracted (the off-diagonal weights are -cs P_a P_b), one lower triangle each."""
        q, m1 = self.q, self.m + 1
        # Where the provider keeps its squares (the host, or the rows' device).
        H, every = self.rows.square(q * m1), np.arange(self.rows.shape[0])
        for a in range(q):
            for b in range(a, q):
                if self.binary or a == b:
                    w, sign = self.cs * P[:, a] * (1.0 - P[:, a]), 1.0
                else:
                    w, sign = self.cs * P[:, a] * P[:, b], -1.0
                block = symmetric_from_lower(
                    self.rows.add_gram(self.rows.square(m1), w, every, sign))
                H[a * m1:(a + 1) * m1, b * m1:(b + 1) * m1] = block
                H[b * m1:(b + 1) * m1, a * m1:(a + 1) * m1] = block.T
        return add_to_diagonal(H, 1.0)

    def result(self, Z, tol, n_iter, converged, status, gnorm, scale, history):
        G = self.logits(Z)
        tol_abs = tol * scale
        if converged:
            message = (f"Converged after {n_iter} Newton iterations: gradient norm "
                       f"{gnorm:.3g} <= {tol_abs:.3g}.")
        elif status == "line_search":
            message = (f"The line search failed after {n_iter} iterations with gradient norm "
                       f"{gnorm:.3g} > {tol_abs:.3g} (the objective stopped decreasing in "
                       "floating point); loosen tol.")
        else:
            message = (f"Reached max_iter={n_iter} with gradient norm {gnorm:.3g} > "
                       f"{tol_abs:.3g}; increase max_iter or tol.")
        return SolverResult(
            coef=Z[:-1].T.copy(), intercept=Z[-1].copy(), objective=self.objective(Z, G),
            grad_norm=float(gnorm), tol_reached=float(tol_abs), n_iter=int(n_iter),
            converged=bool(converged), status=status, message=message, history=history)


def _targets(y, n):
    """(n, q) targets: +-1 in one column for two class indices, else probabilities."""
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


def _newton(problem, tol, max_iter, callback, direction):
    """Newton with backtracking, the step from ``direction(problem, P, grad, rel, goal)`` (exact or
    by conjugate gradients); returns (Z, info for ``result``)."""
    Z = np.zeros((problem.m + 1, problem.q))
    G = problem.logits(Z)
    obj = problem.objective(Z, G)
    history, scale, status = [], None, "max_iter"
    for it in range(max_iter + 1):
        P, R = problem.residual(G)
        grad = problem.gradient(Z, R)
        gnorm = float(np.abs(grad).max())
        check_finite("logistic_newton", it, objective=obj, gradient_norm=gnorm)
        scale = max(1.0, gnorm) if scale is None else scale
        if gnorm <= tol * scale:
            status = "converged"
            break
        if it == max_iter:
            break
        D, extra = direction(problem, P, grad, gnorm / scale, tol * scale)
        step = _backtrack(problem, Z, G, obj, grad, D)
        if step is None:
            status = "line_search"
            break
        Z, G, obj, t = step
        history.append({"n_iter": it + 1, "objective": obj, "grad_norm": gnorm, "step": t,
                        **extra})
        if callback is not None:
            callback(history[-1])
    return Z, (len(history), status == "converged", status, gnorm, scale, history)


def _exact_direction(problem, P, grad, rel, goal):
    """The Newton step from the exact Hessian, by one Cholesky factorization."""
    return spd_solve(problem.hessian(P), -grad.T.ravel())[0].reshape(problem.q, -1).T, {}


def _cg_direction(problem, P, grad, rel, goal):
    """The Newton step by preconditioned CG on Hessian-vector products (no p x p matrix), to
    the relative residual min(0.5, sqrt(rel)) (rel: the gradient relative to its value at
    zero): superlinear convergence near the solution without solving early steps more
    exactly than they are worth. CG also stops once its residual, the gradient the step
    leaves to first order, is below half the stopping threshold ``goal`` in every entry: the
    last step need not be solved further than that."""
    D, n_cg = _pcg(functools.partial(problem.hessian_times, P), -grad,
                   _KroneckerPreconditioner(problem, P), min(0.5, float(np.sqrt(rel))),
                   0.5 * goal, _MAX_CG)
    return D, {"cg_steps": n_cg}


def _backtrack(problem, Z, G, obj, grad, D):
    """Armijo backtracking from the full Newton step (the solvers' one,
    :func:`~sparsekernel.solvers._line_search.backtrack`); None when no step decreases
    Phi."""
    U = problem.logits(D)  # the logits move linearly along D
    (t,) = backtrack(lambda T: np.array([problem.objective(Z + T[0] * D, G + T[0] * U)]),
                     obj, float(np.sum(grad * D)))
    if t == 0.0:
        return None
    Z_new, G_new = Z + t * D, G + t * U
    return Z_new, G_new, problem.objective(Z_new, G_new), t


class _KroneckerPreconditioner:
    """Inverse of I + A (x) B: the Hessian with every row's class curvature replaced by a
    scalar multiple of the uniform one.

    Row i's curvature is cs_i (diag(p_i) - p_i p_i^T) (cs_i p_i (1 - p_i) for the binary
    problem). Replacing it by cs_i c_i B, with B = I/q - 1 1^T/q^2 its value at uniform
    probabilities and c_i = (1 - ||p_i||^2) q / (q - 1) matching its trace, gives
    I + A (x) B with A = [F 1]^T diag(cs c) [F 1]: exact at Z = 0 (and for the binary
    problem always). B is 0 on the all-ones vector and 1/q on its complement, so on a
    direction D of shape (m + 1, q) the matrix acts as D + A D B: it leaves the row means of
    D alone and multiplies the rest by I + A/q. One Cholesky factor of that (m+1)^2 matrix,
    once per Newton step, inverts it; applying it costs two triangular solves with q columns.
    """

    def __init__(self, problem, P):
        q = problem.q
        if problem.binary:
            w, shrink = P[:, 0] * (1.0 - P[:, 0]), 1.0
        else:
            w, shrink = (1.0 - np.einsum("ij,ij->i", P, P)) * q / (q - 1), 1.0 / q
        A = add_to_diagonal(_weighted_gram(problem, problem.cs * w) * shrink, 1.0)
        self.binary, self.L = problem.binary, spd_cholesky(A)[0]

    def _solve(self, R):
        return cholesky_solve(self.L, R)

    def __call__(self, R):
        if self.binary:
            return self._solve(R)
        mean = R.mean(axis=1, keepdims=True)
        return mean + self._solve(R - mean)


def _weighted_gram(problem, w):
    """[F 1]^T diag(w) [F 1] (float64, both triangles) on the curvature rows (float32 on the
    CG path: the preconditioner needs no more)."""
    A = problem.curv.add_gram(problem.curv.square(problem.m + 1), w,
                              np.arange(problem.curv.shape[0]), 1.0)
    return symmetric_from_lower(A)


def _pcg(hessp, b, precond, rtol, atol_inf, maxiter):
    """Preconditioned conjugate gradients for H x = b (matrices of shape (m + 1, q)), until
    ||r||_2 <= rtol ||b||_2 or ||r||_inf <= atol_inf."""
    x = np.zeros_like(b)
    r = b.copy()
    z = precond(r)
    d = z.copy()
    rz = float(np.sum(r * z))
    target = rtol * float(np.sqrt(np.sum(b * b)))
    for it in range(1, maxiter + 1):
        Hd = hessp(d)
        dHd = float(np.sum(d * Hd))
        if dHd <= 0:  # cannot happen for the positive definite H, but stop safely
            break
        alpha = rz / dHd
        x += alpha * d
        r -= alpha * Hd
        if float(np.sqrt(np.sum(r * r))) <= target or float(np.abs(r).max()) <= atol_inf:
            return x, it
        z = precond(r)
        rz_new = float(np.sum(r * z))
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x, maxiter
