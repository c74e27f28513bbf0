"""Batch pruning of the exact LS-SVM (Suykens, Lukas & Vandewalle 2000).

Procedure (as summarised by Kim, Shim & Oh, section 3): (a) train the LS-SVM on N points;
(b) remove a small fraction (5 %) with the smallest ``|alpha_i|``; (c) retrain on the rest;
(d) iterate until the performance degrades, here: until the held-out mean squared error of f
(the LS-SVM's own loss) exceeds ``(1 + prune_tol)`` times the unpruned model's.

Separate estimators, not a ``prune=`` switch: pruning needs the exact dual and its own
parameters and validation data, meaningless for the reduced fit.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.model_selection import train_test_split

from .._docs import fill_doc
from ..base import (
    OneVsRestClassifierMixin,
    SingleTargetRegressorMixin,
    report_result,
)
from ..kernels import resolve_gamma
from ..solvers import LSSVMPath
from ..utils import Interval, constraints, fit_step, log_line
from ..utils.fitted_spec import INFO
from ._base import (
    ATTRIBUTES,
    KERNEL_PARAMS,
    LSSVM_CONSTRAINTS,
    BaseLSSVM,
    fit_data,
    fitted,
    lssvm_spec,
)

__all__ = ["PrunedLSSVC", "PrunedLSSVR"]

#: Docstring pieces of both pruned estimators (each adds its own remaining parameters).
_PRUNE_PARAMS = KERNEL_PARAMS + """    prune_fraction : float in (0, 1), default=0.05
        Fraction of the current support vectors removed per round (smallest ``|alpha|``;
        largest ``|alpha|`` over the one-vs-rest problems for multiclass).
    prune_tol : float, default=0.05
        Stop when the validation mean squared error exceeds (1 + prune_tol) times the
        unpruned model's; the last model within the tolerance is kept.
    validation_fraction : float in (0, 1), default=0.2
        Share of the training data held out when no X_val is passed to fit.
    min_support : int, default=2
        Never prune below this many support vectors.
    memory_budget : int, str or None, default=None
        Bytes (or a string such as '512MB'); None is 3 GiB. An exact fit needing more
        (about 32 n^2 bytes, plus the validation rows' kernel) is refused with the estimate.
"""

_PATH_AND_NOTES = """    pruning_path_ : dict
        ``'n_support'`` and ``'validation_mse'`` arrays, one entry per refit (the last
        entry is the first model past the tolerance, unless pruning hit min_support).

    Notes
    -----
    Each round refits the exact LS-SVM; pruning 5 % per round takes about
    log(n_final / n) / log(0.95) rounds. The kernel is computed once, and a refit factors
    only the rows after the first pruned one in a factor kept in the order of the last ``|alpha|``
    (:class:`~sparsekernel.solvers.LSSVMPath`), so a round costs less than a fresh
    factorization. The training rows held out for validation are not support vectors.
    Zero-weight rows are dropped before the first round.
"""


class _PrunedLSSVM(BaseLSSVM):
    _parameter_constraints = {
        **LSSVM_CONSTRAINTS,
        **constraints("random_state"),
        "prune_fraction": [Interval("real", 0, 1, closed="neither")],
        "prune_tol": [Interval("real", 0, None, closed="left")],
        "validation_fraction": [Interval("real", 0, 1, closed="neither")],
        "min_support": [Interval("int", 1, None, closed="left")],
    }

    def fit(self, X, y, sample_weight=None, X_val=None, y_val=None):
        """Fit, then prune by the smallest ``|alpha|`` while the validation error holds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        X_val, y_val : array-likes, optional
            Validation set; without it ``validation_fraction`` of (X, y) is held out
            (stratified by class for the classifier).

        Returns
        -------
        self
        """
        X, T, sw, y_enc = fit_data(self, X, y, sample_weight)
        self._prune(*self._split(X, T, sw, X_val, y_val, y_enc))
        return fitted(self)

    def _split(self, X, T, sw, X_val, y_val, stratify):
        """Training and validation parts: the user's set, or a validation_fraction split."""
        if X_val is not None:
            if y_val is None:
                raise ValueError("X_val was given without y_val; pass both or neither.")
            X_val, y_val = self._validate_X(X_val), np.asarray(y_val).reshape(-1)
            if y_val.shape[0] != X_val.shape[0]:
                raise ValueError(f"y_val has {y_val.shape[0]} values but X_val has "
                                 f"{X_val.shape[0]} rows.")
            if isinstance(self, OneVsRestClassifierMixin):
                return X, T, sw, X_val, self._targets(self._encode(y_val))
            return X, T, sw, X_val, y_val.astype(np.float64)[:, None]
        idx = np.arange(X.shape[0])
        try:
            tr, va = train_test_split(idx, test_size=self.validation_fraction,
                                      random_state=self.random_state, stratify=stratify)
        except ValueError:  # too few rows per class to stratify
            tr, va = train_test_split(idx, test_size=self.validation_fraction,
                                      random_state=self.random_state)
        return X[tr], T[tr], sw[tr], X[va], T[va]

    def _prune(self, X, T, sw, X_val, T_val):
        """Refit on shrinking subsets; keep the last model within the tolerance.

        The kernel of the training rows and that of the validation rows against them are
        computed once; each refit keeps what it can of the last factor
        (:class:`~sparsekernel.solvers.LSSVMPath`, its rows in the order of the last ``|alpha|``).
        """
        keep = np.flatnonzero(sw > 0)
        n = len(keep)
        # the kernel, two factors and a complement; the validation rows' kernel
        self._check_exact_budget(n, kernel_matrix_and_factors=32.0 * n * n,
                                 validation_kernel=8.0 * n * X_val.shape[0],
                                 working_vectors=8.0 * (n + X_val.shape[0]) * (T.shape[1] + 1))
        # One kernel for the whole path: gamma='scale' is resolved on the training part once.
        self.gamma_ = resolve_gamma(self.gamma, X)
        kern, Xk = self._kernel(), X[keep]
        with fit_step("solve"):
            path = LSSVMPath(np.asarray(kern(Xk, Xk), dtype=np.float64), T[keep], self.C,
                             sw[keep])
            K_val = np.asarray(kern(X_val, Xk), dtype=np.float64)
        self.pruning_path_ = {"n_support": [], "validation_mse": []}
        rows, priority, state = np.arange(n), None, None
        while True:
            with fit_step("solve"):
                res = path.solve(rows, priority)
            report_result(self, res)
            alpha = res.coef.reshape(len(rows), -1)
            if not self._accept(rows, alpha, res.intercept, K_val, T_val):
                break
            state = (rows, alpha, res)
            n_drop = max(1, math.ceil(self.prune_fraction * len(rows)))
            if len(rows) - n_drop < self.min_support:
                break
            priority = np.zeros(n)
            priority[rows] = np.abs(alpha).max(axis=1)
            order = np.argsort(priority[rows], kind="stable")
            rows = np.sort(rows[order[n_drop:]])
        rows, alpha, res = state
        self._store(res.coef, res)
        self.basis_, self.basis_indices_ = Xk[rows], keep[rows]
        self.pruning_path_ = {k: np.array(v) for k, v in self.pruning_path_.items()}

    def _accept(self, rows, alpha, intercept, K_val, T_val):
        """Record the refit on ``rows`` in the path; False once it is past the tolerance."""
        sizes, errors = self.pruning_path_["n_support"], self.pruning_path_["validation_mse"]
        sizes.append(len(rows))
        full = np.zeros((K_val.shape[1], alpha.shape[1]))
        full[rows] = alpha  # (a product with every column: no gathered copy of K_val's)
        errors.append(float(np.mean((K_val @ full + intercept - T_val) ** 2)))
        log_line(self.verbose, type(self).__name__, f"pruning round {len(sizes)}",
                 {"n_support": sizes[-1], "validation_mse": errors[-1]})
        return len(sizes) == 1 or errors[-1] <= errors[0] * (1.0 + self.prune_tol) + 1e-15


@fill_doc
class PrunedLSSVR(SingleTargetRegressorMixin, _PrunedLSSVM):
    __doc__ = """LS-SVM regression made sparse by batch pruning (Suykens et al. 2000).

    Exact fits of :class:`LSSVR`'s objective (:doc:`/user_guide/lssvm`), each after
    dropping the rows of smallest ``|alpha|``, until the validation error rises.
""" + _PRUNE_PARAMS + """    {random_state}
    {verbose}
""" + ATTRIBUTES + _PATH_AND_NOTES + """
    See Also
    --------
    PrunedLSSVC : The same pruning for classification.
    LSSVR : The LS-SVR, exact or reduced on chosen basis points.
    OnlineLSSVR : Pruning one arrival at a time, on a fixed budget.

    References
    ----------
    .. [1] J. A. K. Suykens, L. Lukas and J. Vandewalle, "Sparse approximation using least
       squares support vector machines", IEEE International Symposium on Circuits and
       Systems (ISCAS 2000), 757-760, 2000.

    Examples
    --------
    >>> from sparsekernel import PrunedLSSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(200, noise=0.1, random_state=0)
    >>> reg = PrunedLSSVR(gamma=1.0, C=100.0, random_state=0).fit(X, y)
    >>> bool(reg.n_support_ < 160)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = lssvm_spec(False, {"pruning_path_": INFO})

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 prune_fraction=0.05, prune_tol=0.05, validation_fraction=0.2, min_support=2,
                 memory_budget=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.prune_fraction = prune_fraction
        self.prune_tol = prune_tol
        self.validation_fraction = validation_fraction
        self.min_support = min_support
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose


@fill_doc
class PrunedLSSVC(OneVsRestClassifierMixin, _PrunedLSSVM):
    __doc__ = """LS-SVM classifier made sparse by batch pruning (Suykens et al. 2000).

    Exact fits of :class:`LSSVC`'s objective (:doc:`/user_guide/lssvm`), each after
    dropping the rows of smallest ``|alpha|``, until the validation error rises.
""" + _PRUNE_PARAMS + """    {class_weight}
    {random_state}
    {verbose}
""" + ATTRIBUTES + """    classes_ : ndarray of shape (n_classes,)
        Class labels.
""" + _PATH_AND_NOTES + """
    See Also
    --------
    PrunedLSSVR : The same pruning for regression.
    LSSVC : The LS-SVM classifier, exact or reduced on chosen basis points.
    sparsekernel.compress_svc : Compress a fitted SVC to fewer support vectors.

    References
    ----------
    .. [1] J. A. K. Suykens, L. Lukas and J. Vandewalle, "Sparse approximation using least
       squares support vector machines", IEEE International Symposium on Circuits and
       Systems (ISCAS 2000), 757-760, 2000.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import PrunedLSSVC
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> clf = PrunedLSSVC(gamma=2.0, C=10.0, random_state=0).fit(X, y)
    >>> bool(clf.n_support_ < 160 and clf.score(X, y) > 0.95)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = lssvm_spec(True, {"pruning_path_": INFO})
    _parameter_constraints = {**_PrunedLSSVM._parameter_constraints,
                              **constraints("class_weight")}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 prune_fraction=0.05, prune_tol=0.05, validation_fraction=0.2, min_support=2,
                 memory_budget=None, class_weight=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.prune_fraction = prune_fraction
        self.prune_tol = prune_tol
        self.validation_fraction = validation_fraction
        self.min_support = min_support
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
