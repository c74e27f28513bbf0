"""Probability estimates for ``-b 1``: Platt's sigmoid on cross-validated decision values.

LIBSVM fits the sigmoid P(y = 1 | f) = 1 / (1 + exp(A f + B)) on decision values that an
internal 5-fold cross-validation predicts, and keeps the model trained on all rows: that is
``CalibratedClassifierCV(model, cv=5, method='sigmoid', ensemble=False)``.
"""

from __future__ import annotations

from sklearn.calibration import CalibratedClassifierCV

from ._crossval import cv_splitter

__all__ = ["fit_with_probability", "inner_model", "predict_proba"]

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
        ``model`` fitted on all rows when it has ``predict_proba`` of its own, else the
        fitted ``CalibratedClassifierCV`` around it (one sigmoid per one-vs-rest problem,
        the model refitted on all rows).
    """
    if hasattr(model, "predict_proba"):
        return model.fit(X, y)
    calibrated = CalibratedClassifierCV(model, cv=cv_splitter(True, N_FOLDS, seed),
                                        method="sigmoid", ensemble=False).fit(X, y)
    # A model file holds parameters as plain values, not splitter objects: the folds (and
    # their seed) were a detail of this fit; a refit of the stored model uses 5 folds.
    return calibrated.set_params(cv=N_FOLDS)


def inner_model(model):
    """The sparsekernel estimator of a ``-b 1`` model (the one trained on all rows), or
    ``model`` itself."""
    if isinstance(model, CalibratedClassifierCV) and hasattr(model, "calibrated_classifiers_"):
        return model.calibrated_classifiers_[0].estimator
    return model


def predict_proba(model, X):
    """Class probabilities, columns in ``model.classes_`` order.

    Raises
    ------
    ValueError
        The model has no ``predict_proba`` (trained without -b 1).
    """
    if not hasattr(model, "predict_proba"):
        raise ValueError("the model does not support probability estimates: train it with "
                         "-b 1")
    return model.predict_proba(X)
