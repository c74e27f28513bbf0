"""Classifier and regressor glue: label handling, weights and problem setup."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..solvers import SquaredSmoothEpsilonInsensitive, SquaredSmoothHinge
from ..utils import Interval, Options, check_sample_weight, plain
from ._base import _DTYPES, BaseSmoothSVM


class SmoothClassifierBase(ClassifierMixin, BaseSmoothSVM):
    """One-vs-rest SSVM classification sharing one feature map across classes."""

    _parameter_constraints = {
        **BaseSmoothSVM._parameter_constraints,
        "class_weight": [None, Options("balanced"), "dict"],
    }

    def _loss(self):
        return SquaredSmoothHinge(self.smoothing)

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 input is kept in float32.
        y : array-like of shape (n_samples,)
            Class labels of any type scikit-learn accepts (ints, strings, ...).
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms (and ``C``).

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; got 1 class "
                f"({plain(self.classes_[0])!r})."
            )
        sw = check_sample_weight(sample_weight, X.shape[0])
        if self.class_weight is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        F = self._design(X, y_enc)
        if len(self.classes_) == 2:
            problems = [(None, np.where(y_enc == 1, 1.0, -1.0))]
        else:
            problems = [(c, np.where(y_enc == k, 1.0, -1.0)) for k, c in enumerate(self.classes_)]
        self.coef_, self.intercept_ = self._solve(F, problems, sw)
        return self

    def decision_function(self, X):
        """Signed distance-like scores: shape (n,) for two classes, (n, n_classes) otherwise.

        For two classes a positive score means ``classes_[1]``.
        """
        scores = self._raw_decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the sign for two classes, the largest one-vs-rest score otherwise."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]


class SmoothRegressorBase(RegressorMixin, BaseSmoothSVM):
    """epsilon-SSVR on one real target."""

    _parameter_constraints = {
        **BaseSmoothSVM._parameter_constraints,
        "epsilon": [Interval("real", 0, None, closed="left")],
    }

    def _loss(self):
        return SquaredSmoothEpsilonInsensitive(self.smoothing, self.epsilon)

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 input is kept in float32.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights multiplying the loss terms.

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES, y_numeric=True)
        sw = check_sample_weight(sample_weight, X.shape[0])
        F = self._design(X, None)
        coef, intercept = self._solve(F, [(None, y.astype(np.float64))], sw)
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        self.n_iter_ = int(self.n_iter_[0])
        return self

    def predict(self, X):
        """Predicted targets, shape (n,)."""
        return self._raw_decision(X).ravel()
