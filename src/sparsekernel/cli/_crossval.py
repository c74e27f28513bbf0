"""Cross-validation as svm-train ``-v`` runs it, and svm-predict's scores."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier, is_outlier_detector
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

__all__ = ["cross_validation_lines", "cv_splitter", "score_lines"]


def cv_splitter(classifier, n_folds, seed):
    """Shuffled folds (stratified for classifiers), as LIBSVM's cross-validation draws them."""
    splitter = StratifiedKFold if classifier else KFold
    return splitter(n_folds, shuffle=True, random_state=seed)


def cross_validation_lines(model, X, y, n_folds, seed):
    """svm-train ``-v``'s report: every row predicted by the model fitted without its fold.

    Parameters
    ----------
    model : unfitted estimator
    X : sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    n_folds : int
    seed : int
        Seed of the fold assignment.

    Returns
    -------
    list of str
        'Cross Validation Accuracy = 85.2%' (of a novelty detector: its +1 / -1 against the
        labels, as LIBSVM's one-class SVM), or the mean squared error and squared
        correlation coefficient lines of a regressor.
    """
    classifier = is_classifier(model)
    predictions = cross_val_predict(model, X, y, cv=cv_splitter(classifier, n_folds, seed))
    if classifier or is_outlier_detector(model):
        return [f"Cross Validation Accuracy = {100 * np.mean(predictions == y):g}%"]
    mse, r2 = regression_scores(predictions, y)
    return [f"Cross Validation Mean squared error = {mse:g}",
            f"Cross Validation Squared correlation coefficient = {r2:g}"]


def score_lines(model, predictions, y):
    """svm-predict's report of ``predictions`` against the true ``y`` (a novelty detector's
    +1 / -1 as a classifier's labels, as LIBSVM's one-class SVM)."""
    if is_classifier(model) or is_outlier_detector(model):
        correct = int(np.sum(predictions == y))
        return [f"Accuracy = {100 * correct / len(y):g}% ({correct}/{len(y)}) (classification)"]
    mse, r2 = regression_scores(predictions, y)
    return [f"Mean squared error = {mse:g} (regression)",
            f"Squared correlation coefficient = {r2:g} (regression)"]


def regression_scores(v, y):
    """(mean squared error, squared correlation coefficient) with LIBSVM's formulas."""
    v, y = np.asarray(v, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(y)
    sv, sy, svv, syy, svy = v.sum(), y.sum(), v @ v, y @ y, v @ y
    with np.errstate(divide="ignore", invalid="ignore"):  # constant predictions: nan, as LIBSVM
        r2 = (n * svy - sv * sy) ** 2 / ((n * svv - sv * sv) * (n * syy - sy * sy))
    return float(np.mean((v - y) ** 2)), float(r2)
