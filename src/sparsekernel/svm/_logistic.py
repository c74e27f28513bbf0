"""KernelLogisticRegression: kernel logistic regression on m Nystrom features.

Objective (:mod:`sparsekernel.solvers.logistic`), on the features F(x) = K(x, Z) M of m
landmarks Z (as :class:`~sparsekernel.LowRankSVC`; M = L^(-T) from the pivoted Cholesky factor
of K(Z, Z))::

    min_{W, b}  1/2 ||W||^2 + 1/2 ||b||^2 + C * sum_i s_i CE_i,

the cross-entropy CE of the softmax of the logits F W + b (one sigmoid column for two
classes). In the SVM family's form ``C/2 * sum_i s_i loss_i`` the loss is the deviance
2 CE_i, so ``C`` weighs the data as everywhere else; it is the smooth-plus function of the
SSVM papers at alpha = 1, log(1 + exp(x)), applied to the negative margin. As for LowRankSVC,
||W||^2 is the RKHS norm of the model sum_j mu_j k(., z_j) with mu = M W (Zhang et al. 2012,
Proposition 2), so this is the reduced kernel logistic regression with the RKHS penalty.

Unlike the hinge and squared losses of the other classifiers, the log-loss is a proper
scoring rule: the fitted probabilities are estimates of P(y | x) without a calibration step.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax

from .._docs import fill_doc
from .._input import fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SparseKernelEstimator,
    lazy_on_dask,
    report_result,
)
from ..compute import max_threads, namespace_of
from ..features._nystrom import NystromMapMixin, nystrom_map_spec
from ..solvers.logistic import logistic_newton_bytes, solve_logistic
from ..utils import Interval, Options, SolverProgress, constraints
from ..utils.fitted_spec import CLASSES, INFO, Floats
from ._memory import Budget

__all__ = ["KernelLogisticRegression"]


@fill_doc
class KernelLogisticRegression(OneVsRestClassifierMixin, NystromMapMixin, KernelExpansionMixin,
                               SparseKernelEstimator):
    """Kernel logistic regression on Nystrom features, with class probabilities.

    Binary problems fit one logit (of ``classes_[1]``); more classes fit the multinomial
    (softmax) model jointly, not one-vs-rest, so ``predict_proba`` sums to 1 by construction.
    The solver is Newton's method with the exact Hessian when there are at most 2000
    unknowns (m + 1 for two classes, n_classes * (m + 1) otherwise), else Newton steps by
    preconditioned conjugate gradients: a Hessian of p unknowns costs n p^2 / 2 to build and
    p^3 / 3 to factor per iteration, against 4 n p for one Hessian-vector product.

    With F(x) = M^T K(Z, x) the whitened Nystrom features of the landmarks Z (as in
    :class:`LowRankSVC`), it solves

        min_{W, b}  1/2 ||W||^2 + 1/2 ||b||^2 + C * sum_i s_i CE_i,
        CE_i = -log softmax(W^T F(x_i) + b)_{y_i},

    with one sigmoid column for two classes; ||W||^2 is the RKHS norm of the kernel
    expansion, so this is reduced kernel logistic regression with the RKHS penalty
    (:doc:`/user_guide/logistic`).

    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    C : float, default=1.0
        Weight of the summed cross-entropy: ``1/2 ||W||^2 + 1/2 ||b||^2 + C * sum_i s_i
        CE_i``, the family form ``C/2 * sum_i s_i loss_i`` with the deviance 2 CE_i as loss.
        Equal to scikit-learn's ``LogisticRegression`` C on the same features (which leaves
        the intercept unpenalized).
    {n_basis}
    {basis}
    {rcond}
    {memory_budget}
    tol : float, default=1e-3
        Newton stops when the gradient's largest entry is below ``tol`` times its value at
        zero (at least ``tol``). Tighter changes the probabilities little, for more Newton
        iterations.
    max_iter : int, default=100
        Newton iterations; reaching it warns ``ConvergenceWarning``.
    {class_weight}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (r, n_features)
        Landmarks Z (the r independent ones, in pivot order).
    basis_indices_ : ndarray of shape (r,) or None
    normalization_ : ndarray of shape (r, r)
        M = L_r^(-T), the features being K(X, Z) M.
    eigenvalues_ : None
        (Cholesky whitening keeps no eigenvalues.)
    coef_ : ndarray of shape (1, r) or (n_classes, r)
        W^T, the weights on the Nystrom features.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray
    gamma_ : float or ndarray of shape (r,)
    n_iter_ : int
        Newton iterations.
    objective_ : float
        Objective at the solution.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sparsekernel import KernelLogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KernelLogisticRegression(n_basis=30, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(6).tolist()
    [1.0, 1.0]

    See Also
    --------
    LowRankSVC : The SVM on the same features (scores, no probabilities).
    NystromFeatures : The features, as a transformer.
    sklearn.linear_model.LogisticRegression : The same loss on explicit features (its C is
        this C).
    sklearn.calibration.CalibratedClassifierCV : Probabilities for a classifier that has
        only scores.

    References
    ----------
    .. [1] J. Zhu and T. Hastie, "Kernel logistic regression and the import vector
       machine", Journal of Computational and Graphical Statistics 14(1), 185-205, 2005.
    .. [2] K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up kernel SVM on limited
       resources: A low-rank linearization approach", Proceedings of the 15th
       International Conference on Artificial Intelligence and Statistics (AISTATS), 2012.
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = nystrom_map_spec(
        {"coef_": Floats(("p", "r")), "intercept_": Floats(("p",)), "n_iter_": INFO,
         "objective_": INFO}, head=CLASSES)
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **BASIS_CONSTRAINTS,
        **constraints("C", "tol", "max_iter", "class_weight", "verbose"),
        "rcond": [Options("auto"), Interval("real", 0, 1, closed="left")],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis="auto", basis="kmeans", rcond="auto", memory_budget=None, tol=1e-3,
                 max_iter=100, class_weight=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.rcond = rcond
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    def _memory_parts(self, n, m, d, itemsize):
        """The shared plan (the Nystrom map's m x m arrays among them) plus the stored
        features, in the input's precision, and the Newton solver's working memory."""
        k = self._n_planned_outputs()
        return {**super()._memory_parts(n, m, d, itemsize),
                "features": float(n) * m * itemsize,
                "solver": logistic_newton_bytes(n, m, 1 if k == 1 else k, itemsize,
                                                max_threads())}

    def _solver_squares(self, m, k):
        """``(bytes, gather_bytes)``: logistic_newton's squares (its memory without the
        per-row arrays) and one row gather, and that gather's bytes."""
        gather = Budget(self).gather(m)
        return logistic_newton_bytes(0, m, k, 8, max_threads()) + gather, gather

    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of shape \
(n_samples, n_features)
            float32 input gives float32 features. A dask collection is fitted where its
            rows are: the landmarks chosen on a sample of every chunk (``gamma='scale'``
            from all rows), each chunk's features kept on its worker, where the Newton
            solver's products and Hessian sums run; the same model as in memory.
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), optional

        Returns
        -------
        self
        """
        data = fit_input(self, X, y, sample_weight)
        Y, sw, _ = data.targets(self)
        fmap = self._fit_map(data.sample, data.y_basis(self), "cholesky", **data.basis_args)
        m = fmap.n_components
        squares, gather = self._solver_squares(m, self._n_problems)
        with data.rows(self, fmap.transform, m, np.result_type(data.sample.dtype, np.float32),
                       squares, gather) as rows:
            self._solve(rows, Y, sw)
        return data.finish(self)

    def _solve(self, F, Y, sw):
        """The penalized logistic regression on the features (or their provider) F, for
        the one-vs-rest targets Y (+-1; one column for two classes), wherever they are."""
        with SolverProgress(self.verbose, 1, type(self).__name__) as progress:
            res = solve_logistic(F, Y if Y.shape[1] == 1 else (Y + 1.0) / 2.0, C=self.C,
                                 sample_weight=sw, tol=self.tol, max_iter=self.max_iter,
                                 callback=progress.callback(None))
            progress.done()
        report_result(self, res)
        self.coef_, self.intercept_ = res.coef, res.intercept
        self.n_iter_, self.objective_ = res.n_iter, res.objective
        return self

    def decision_function(self, X):
        """Logits: shape (n,) for two classes (the log-odds of ``classes_[1]``), else
        (n, n_classes) softmax logits (defined up to a constant per row)."""
        return super().decision_function(X)

    @lazy_on_dask
    def predict_proba(self, X):
        """Class probabilities, shape (n, n_classes), columns in ``classes_`` order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            (a lazy dask array for dask input, computed block by block).
        """
        scores = self._raw_decision(X)
        if not isinstance(scores, np.ndarray):  # an array-API namespace
            xp = namespace_of(scores)
            if scores.shape[1] == 1:
                p1 = 1.0 / (1.0 + xp.exp(-scores))
                return xp.concat([1.0 - p1, p1], axis=1)
            e = xp.exp(scores - xp.max(scores, axis=1, keepdims=True))
            return e / xp.sum(e, axis=1, keepdims=True)
        if scores.shape[1] == 1:
            p1 = expit(scores)
            return np.hstack([1.0 - p1, p1])
        return softmax(scores, axis=1)

    @lazy_on_dask
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed without underflow to -inf.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            (a lazy dask array for dask input, computed block by block).
        """
        scores = self._raw_decision(X)
        if not isinstance(scores, np.ndarray):  # an array-API namespace
            xp = namespace_of(scores)
            if scores.shape[1] == 1:  # log expit(s) = -(max(-s, 0) + log1p(exp(-|s|)))
                soft = xp.log1p(xp.exp(-xp.abs(scores)))
                return xp.concat([-(xp.clip(scores, min=0.0) + soft),
                                  -(xp.clip(-scores, min=0.0) + soft)], axis=1)
            shifted = scores - xp.max(scores, axis=1, keepdims=True)
            return shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
        if scores.shape[1] == 1:
            return np.hstack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)
