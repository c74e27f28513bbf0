"""Glue shared by the sparse-margin classifiers: labels, weights, prediction on the basis."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernels import Kernel
from ..utils import check_sample_weight, parse_memory_budget, plain, validate_params

__all__ = ["BasisClassifierMixin", "dedupe_rows"]

_DTYPES = [np.float64, np.float32]


def dedupe_rows(Z, decimals=None):
    """Z without repeated rows (first occurrence kept, order preserved).

    Coinciding expansion vectors make K_z singular (the paper removes duplicated points);
    ``decimals`` rounds before comparing, to merge vectors that became numerically equal.
    """
    key = Z if decimals is None else np.round(Z, decimals)
    _, first = np.unique(key, axis=0, return_index=True)
    return Z[np.sort(first)]


class BasisClassifierMixin(ClassifierMixin, BaseEstimator):
    """fit-entry checks and predict for classifiers ``f(x) = sum_j coef_j K(x, z_j) + b``.

    Subclasses set ``basis_`` (dense (m, d)), ``coef_`` ((1, m) or (n_classes, m)),
    ``intercept_`` and ``gamma_`` in fit.
    """

    def _check_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))
        parse_memory_budget(self.memory_budget)

    def _validate_fit(self, X, y, sample_weight):
        """Validated (X, y_enc, sample weights, +-1 targets) with classes_ set."""
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
        if getattr(self, "class_weight", None) is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        weighted = np.bincount(y_enc, weights=sw, minlength=len(self.classes_)) > 0
        if weighted.sum() < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes with positive "
                f"weight; only class {plain(self.classes_[weighted.argmax()])!r} has any."
            )
        if len(self.classes_) == 2:
            targets = [np.where(y_enc == 1, 1.0, -1.0)]
        else:
            targets = [np.where(y_enc == k, 1.0, -1.0) for k in range(len(self.classes_))]
        return X, y_enc, sw, targets

    def _kernel(self):
        return Kernel("rbf", gamma=self.gamma_, memory_budget=self.memory_budget)

    def decision_function(self, X):
        """Scores ``K(X, Z) coef^T + b``: shape (n,) for two classes, (n, n_classes) otherwise.

        For two classes a positive score means ``classes_[1]``. Costs O(n m d) for the m
        expansion vectors, computed in memory-bounded blocks.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_DTYPES, reset=False)
        Z = self.basis_.astype(X.dtype, copy=False)
        scores = self._kernel().apply(X, Z, np.atleast_2d(self.coef_).T)
        scores = scores + np.atleast_1d(self.intercept_)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the sign for two classes, the largest one-vs-rest score otherwise."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
