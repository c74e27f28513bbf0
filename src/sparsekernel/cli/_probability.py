"""Probability estimates for ``-b 1``: Platt's sigmoid on cross-validated decision values.

LIBSVM fits the sigmoid P(y = 1 | f) = 1 / (1 + exp(A f + B)) on decision values that an
internal 5-fold cross-validation predicts, and keeps the model trained on all rows. That is
``CalibratedClassifierCV(model, cv=5, method='sigmoid', ensemble=False)``. sparsekernel's
model files hold sparsekernel estimators only, so the calibrated model is saved as the
estimator trained on all rows plus the sigmoid parameters as its fitted attributes
``probA_`` and ``probB_`` (LIBSVM's names), one per one-vs-rest problem.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV

from ._crossval import cv_splitter

__all__ = ["fit_with_probability", "predict_proba"]

N_FOLDS = 5  # LIBSVM's internal cross-validation for -b 1


def fit_with_probability(model, X, y, seed):
    """Fit ``model`` so that :func:`predict_proba` can use it.

    Parameters
    ----------
    model : unfitted classifier
    X, y : training data
    seed : int
        Seed of the internal folds.

    Returns
    -------
    classifier
        ``model`` fitted on all rows; with ``probA_`` and ``probB_`` unless the estimator
        has ``predict_proba`` of its own.
    """
    if hasattr(model, "predict_proba"):
        return model.fit(X, y)
    calibrated = CalibratedClassifierCV(model, cv=cv_splitter(True, N_FOLDS, seed),
                                        method="sigmoid", ensemble=False).fit(X, y)
    (fitted,) = calibrated.calibrated_classifiers_
    estimator = fitted.estimator
    estimator.probA_ = np.array([c.a_ for c in fitted.calibrators], dtype=np.float64)
    estimator.probB_ = np.array([c.b_ for c in fitted.calibrators], dtype=np.float64)
    return estimator


def predict_proba(model, X):
    """Class probabilities, columns in ``model.classes_`` order.

    Raises
    ------
    ValueError
        The model has neither ``predict_proba`` nor Platt parameters (trained without -b 1).
    """
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    if not hasattr(model, "probA_"):
        raise ValueError("the model does not support probability estimates: train it with "
                         "-b 1")
    scores = np.asarray(model.decision_function(X), dtype=np.float64).reshape(X.shape[0], -1)
    proba = expit(-(scores * model.probA_ + model.probB_))
    if proba.shape[1] == 1:  # binary: the sigmoid gives P(classes_[1])
        return np.hstack([1.0 - proba, proba])
    # One-vs-rest sigmoids normalized to sum to 1 (CalibratedClassifierCV's rule).
    total = proba.sum(axis=1, keepdims=True)
    uniform = np.full_like(proba, 1.0 / proba.shape[1])
    return np.divide(proba, total, out=uniform, where=total > 0)
