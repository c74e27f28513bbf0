"""Low-rank LS-SVM with learnable basis functions (LR-LSSVM; Fang, Xu, Hong & Gao 2019).

The estimators standardise X, learn the bases and weights with
:func:`sparsekernel.lssvm._lowrank_fit.fit_learnable_bases` (where the algorithm is
described) and store the bases in input units.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from ..base import (
    N_BASIS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SingleTargetRegressorMixin,
    SparseKernelEstimator,
)
from ..basis import resolve_n_basis
from ..utils import Interval, Options, column_mean_std, constraints
from ..utils.fitted_spec import CLASSES, FEATURES, INFO, OVR, SINGLE, Basis, ClassSpec, Floats
from ._base import fit_data, fitted
from ._learnable import BASIS_FUNCTIONS, basis_values
from ._lowrank_fit import CRITERIA, fit_learnable_bases

__all__ = ["LowRankLSSVC", "LowRankLSSVR"]


def _dense(X):
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


#: Docstring sections both estimators share (each adds its remaining parameters).
_PARAMS = """
    The LS-SVM family's objective (:doc:`/user_guide/lssvm`) on the learned features
    phi(x) = [phi_1(x) .. phi_M(x)],

        min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i (y_i - f(x_i))^2,    f(x) = w^T phi(x) + b,

    alternating a closed-form step for (w, b) with a gradient step on the centres and
    shapes of the basis functions (the basis step, by ``criterion``).

    Parameters
    ----------
    n_basis : int, float or 'auto', default=5
        Number m = M of basis functions of the fitted model: an int, a fraction of the
        training rows in (0, 1], or 'auto'
        (the middle of [max(100, 4 sqrt(n)), 10 sqrt(n)]). The LR-LSSVM is meant for few
        (each step costs O(n M d)); prefer an int.
    basis_function : {'robust_rbf', 'sbf'}, default='robust_rbf'
        ``exp(-z)`` or ``max(0, 1 - z)`` of ``z = sum_j sigma_kj |x_j - mu_kj|``.
    criterion : {'abs', 'square', 'target', 'objective'}, default='square'
        Criterion of the basis step:
        maximise mean ``|f(x_i)|`` (w, b fixed), maximise mean ``f(x_i)^2 / 2`` (through the closed
        form), minimise mean ``|y_i - f(x_i)|`` (w, b fixed), or minimise the LR-LSSVM
        objective itself (not one of the paper's three).
    {C}
    learning_rate : float, default=0.05
        Initial length of the normalized gradient step (standardised input units).
    max_iter : int, default=100
        Basis steps (each followed by the closed-form step); 0 keeps the k-medoids bases
        with their closed-form weights.
    n_init : int, default=1
        Runs from different k-medoids seedings; the one with the lowest LR-LSSVM training
        objective is kept (``n_iter_``, ``best_iter_``, ``history_`` describe that run).
    shape_init : 'auto' or float, default='auto'
        Initial shapes: 'auto' = c / mean L1 distance of the cluster's members to its
        medoid (c = 1 robust RBF, 1/2 SBF), or one constant (standardised units).
    basis : 'kmedoids' or array-like of shape (M, n_features), default='kmedoids'
        Initial centres: L1 k-medoids of (at most 2000 rows of) the standardised data, or
        given centres in input units.
"""

_ATTRIBUTES = """
    Attributes
    ----------
    basis_ : ndarray of shape (M, n_features)
        The learned centres mu in input units.
    shapes_ : ndarray of shape (M, n_features)
        Positive shapes sigma in input units (phi uses ``sigma_kj |x_j - mu_kj|``).
    coef_ : ndarray of shape (M,), (1, M) or (n_classes, M)
        Weights w on the basis functions.
    intercept_ : float or ndarray
        Bias b.
    objective_ : float
        LR-LSSVM objective of the returned iterate.
    n_iter_ : int
        Basis steps taken.
    best_iter_ : int
        Iteration of the returned (lowest-objective) iterate.
    history_ : ndarray of shape (``n_iter_`` + 1, 2)
        Objective and criterion (as minimised) at every iterate.
    n_reseeded_ : int
        Dead units re-seeded.
    n_support_ : int
        M (property).
    n_features_in_ : int
"""


def _low_rank_lssvm_spec(classifier):
    return ClassSpec({**FEATURES, **(CLASSES if classifier else {}),
                      "basis_": Basis(csr=False), "shapes_": Floats(("m", "d"), positive=True),
                      **(OVR if classifier else SINGLE), "objective_": INFO, "n_iter_": INFO,
                      "best_iter_": INFO, "history_": INFO, "n_reseeded_": INFO})


class _LowRankBase(KernelExpansionMixin, SparseKernelEstimator):
    _parameter_constraints = {
        **constraints("C", "random_state", "verbose"),
        "n_basis": N_BASIS,
        "basis_function": [Options(*BASIS_FUNCTIONS)],
        "criterion": [Options(*CRITERIA)],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 0, None, closed="left")],
        "n_init": [Interval("int", 1, None, closed="left")],
        "shape_init": [Options("auto"), Interval("real", 0, None, closed="neither")],
        "basis": [Options("kmedoids"), "array-like"],
    }

    def fit(self, X, y, sample_weight=None):
        """Fit bases, weights and bias (one-vs-rest problems share the M bases).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            CSR input is densified (the bases work on dense rows).
        y : array-like of shape (n_samples,)
            Real targets (regression) or class labels.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, Y, sw, _ = fit_data(self, X, y, sample_weight)
        Xd = _dense(X)
        mean, scale = column_mean_std(Xd)  # no overflow at any feature scale
        M = resolve_n_basis(self.n_basis, Xd.shape[0])
        centers = None
        if not isinstance(self.basis, str):
            centers = (np.asarray(self.basis, dtype=np.float64) - mean) / scale
        learned = {}

        def solve(j, callback):
            res, learned["bases"] = fit_learnable_bases(
                (Xd - mean) / scale, Y, sw, n_basis=M, basis_function=self.basis_function,
                criterion=self.criterion, C=self.C, learning_rate=self.learning_rate,
                max_iter=self.max_iter, n_init=self.n_init, shape_init=self.shape_init,
                centers=centers, random_state=self.random_state, callback=callback)
            return res

        (res,) = self._solve_each(1, solve)  # progress, warnings and verbose lines
        bases = learned["bases"]
        # Back to input units: sigma |x'_j - mu'_j| with x' = (x - m) / s.
        self.basis_, self.shapes_ = mean + scale * bases.centers, bases.shapes / scale
        self.coef_, self.intercept_ = np.ascontiguousarray(res.coef.T), np.atleast_1d(
            res.intercept)
        self.objective_, self.n_iter_, self.best_iter_ = res.objective, res.n_iter, bases.best_iter
        self.history_, self.n_reseeded_ = bases.history, bases.n_reseeded
        return fitted(self)

    def transform_bases(self, X):
        """The learned features phi(x), shape (n, M)."""
        check_is_fitted(self)
        X = self._validate_X(X)
        return basis_values(_dense(X), self.basis_, self.shapes_, self.basis_function)

    def _raw_decision(self, X):
        # The learned bases are not a Kernel: phi(X) W^T + b instead of K(X, Z) coef^T + b.
        return self.transform_bases(X) @ self._expansion_coef() + np.atleast_1d(self.intercept_)


@fill_doc
class LowRankLSSVR(SingleTargetRegressorMixin, _LowRankBase):
    __doc__ = """Low-rank LS-SVM regression on M learnable robust RBF / simplex basis functions.
""" + _PARAMS + """    {random_state}
    {verbose}
""" + _ATTRIBUTES + """
    See Also
    --------
    LowRankLSSVC : The same model for classification.
    LSSVR : The LS-SVR on kernel features, exact or reduced.

    References
    ----------
    .. [1] M. Fang, D. Xu, X. Hong and J. Gao, "Sparse least squares low rank kernel
       machines", arXiv:1901.10098, 2019.

    Examples
    --------
    >>> from sparsekernel import LowRankLSSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(300, noise=0.1, random_state=0)
    >>> reg = LowRankLSSVR(n_basis=6, max_iter=20, random_state=0).fit(X, y)
    >>> reg.basis_.shape
    (6, 1)
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _low_rank_lssvm_spec(False)

    def __init__(self, *, n_basis=5, basis_function="robust_rbf", criterion="square", C=1.0,
                 learning_rate=0.05, max_iter=100, n_init=1, shape_init="auto",
                 basis="kmedoids", random_state=None, verbose=0):
        self.n_basis = n_basis
        self.basis_function = basis_function
        self.criterion = criterion
        self.C = C
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.n_init = n_init
        self.shape_init = shape_init
        self.basis = basis
        self.random_state = random_state
        self.verbose = verbose


@fill_doc
class LowRankLSSVC(OneVsRestClassifierMixin, _LowRankBase):
    __doc__ = """Low-rank LS-SVM classifier (LR-LSSVM, Fang et al. 2019) on M learnable bases.
""" + _PARAMS + """    {class_weight}
    {random_state}
    {verbose}
""" + _ATTRIBUTES + """    classes_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> from sparsekernel import LowRankLSSVC
    >>> from sparsekernel.datasets import load_ripley
    >>> Xtr, ytr, Xte, yte = load_ripley()
    >>> clf = LowRankLSSVC(n_basis=4, random_state=0).fit(Xtr, ytr)
    >>> clf.basis_.shape
    (4, 2)

    See Also
    --------
    LowRankLSSVR : The same model for regression.
    LSSVC : The LS-SVM classifier on kernel features, exact or reduced.
    SparseMarginClassifier : An SVM whose few basis points are learned as well.

    References
    ----------
    .. [1] M. Fang, D. Xu, X. Hong and J. Gao, "Sparse least squares low rank kernel
       machines", arXiv:1901.10098, 2019.
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = _low_rank_lssvm_spec(True)
    _parameter_constraints = {**_LowRankBase._parameter_constraints,
                              **constraints("class_weight")}

    def __init__(self, *, n_basis=5, basis_function="robust_rbf", criterion="square", C=1.0,
                 learning_rate=0.05, max_iter=100, n_init=1, shape_init="auto",
                 basis="kmedoids", class_weight=None, random_state=None, verbose=0):
        self.n_basis = n_basis
        self.basis_function = basis_function
        self.criterion = criterion
        self.C = C
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.n_init = n_init
        self.shape_init = shape_init
        self.basis = basis
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
