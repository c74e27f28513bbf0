"""Error and fit time against the basis size: the curve that picks ``n_basis``.

The numbers come from scikit-learn's ``cross_validate`` (or one held-out set); the display
follows scikit-learn's display API (``from_estimator``, ``plot``, ``ax_``, ``figure_``).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch, indexable

from ..utils import pyplot

__all__ = ["NBasisCurveDisplay", "n_basis_curve"]


def _param_key(estimator, name):
    """The ``get_params`` key of ``name``: itself, or the one nested ``..__name``."""
    keys = estimator.get_params(deep=True)
    if name in keys:
        return name
    nested = [k for k in keys if k.endswith(f"__{name}")]
    if len(nested) != 1:
        raise ValueError(f"{type(estimator).__name__} has {len(nested) or 'no'} nested "
                         f"'{name}' parameters; pass param_name to say which to vary.")
    return nested[0]


def _check_n_basis_values(n_basis):
    values = list(n_basis)
    if not values or not all(isinstance(v, int | float | np.integer | np.floating)
                             and not isinstance(v, bool) and v > 0 for v in values):
        raise ValueError("n_basis must be a non-empty sequence of positive ints (basis "
                         f"sizes) or fractions of the training rows. Got {n_basis!r}.")
    # A list, not an array: mixing ints and fractions must not turn the ints into floats.
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def _error_name(estimator, scoring):
    """What ``errors`` holds: a loss for 'neg_*' scorers, else 1 - score."""
    if scoring is None:
        return "error (1 - accuracy)" if is_classifier(estimator) else "1 - R^2"
    if isinstance(scoring, str):
        return scoring[4:] if scoring.startswith("neg_") else f"1 - {scoring}"
    return "1 - score"


def _to_error(scores, scoring):
    scores = np.asarray(scores, dtype=np.float64)
    return -scores if isinstance(scoring, str) and scoring.startswith("neg_") else 1.0 - scores


def _holdout(est, X, y, X_test, y_test, scorer):
    start = time.perf_counter()
    est.fit(X, y)
    fit_time = time.perf_counter() - start
    return [scorer(est, X_test, y_test)], [fit_time]


def _cross_validated(est, X, y, splits, scorer):
    """Scores and fit times on the folds, through scikit-learn's ``cross_validate`` (its
    ``fit_time`` is the fit alone, as :func:`_holdout` times it)."""
    result = cross_validate(est, X, y, cv=splits, scoring=scorer, error_score="raise")
    return list(result["test_score"]), list(result["fit_time"])


def n_basis_curve(estimator, X, y, n_basis=(0.02, 0.05, 0.1, 0.2, 0.5), *, X_test=None,
                  y_test=None, cv=None, scoring=None, param_name=None, random_state=None):
    """Error and fit time of an estimator at several basis sizes (no plotting).

    Each value of ``n_basis`` is set on a clone, which is fitted on (X, y) and scored on
    (X_test, y_test), or, without a test set, cross-validated on (X, y). This is the curve
    that picks m: the error flattens out while the fit time keeps growing.

    Parameters
    ----------
    estimator : estimator object
        An estimator with an ``n_basis`` parameter, or a pipeline with one such step.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    n_basis : sequence of int or float, default=(0.02, 0.05, 0.1, 0.2, 0.5)
        Basis sizes to try: ints (m) or fractions of the training rows, as the estimator's
        ``n_basis`` accepts them.
    X_test, y_test : array-like, optional
        A held-out set to score on; give both, or neither to cross-validate.
    cv : int, cross-validation generator or iterable, optional
        Folds when no test set is given (default 5, stratified for classifiers). Every
        n_basis is scored on the same folds.
    scoring : str, callable or None, default=None
        Scorer as in scikit-learn (None: the estimator's ``score``). The error is
        ``1 - score``, or the loss itself for ``'neg_*'`` scorers.
    param_name : str, optional
        The parameter to vary, e.g. ``'svc__n_basis'``; default the estimator's only
        ``n_basis`` (at any nesting level).
    random_state : int or None, default=None
        Set as the ``random_state`` beside that parameter (when there is one), so that
        each point is the same fit as ``clone(estimator).set_params(n_basis=m,
        random_state=random_state)``. None keeps the estimator's own.

    Returns
    -------
    Bunch
        ``n_basis`` (ndarray of shape (n_values,)), ``errors`` and ``fit_times`` (ndarrays
        of shape (n_values, n_splits), seconds; one split with a test set), ``error_name``
        (what ``errors`` measures) and ``param_name``.

    Notes
    -----
    One untimed fit at the smallest ``n_basis`` comes first, so that one-time costs
    (compilation, first imports) are not timed with the first point.
    """
    values = _check_n_basis_values(n_basis)
    if (X_test is None) != (y_test is None):
        raise ValueError("Pass both X_test and y_test, or neither to cross-validate.")
    if X_test is not None and cv is not None:
        raise ValueError("Pass either a test set (X_test, y_test) or cv, not both.")
    key = param_name or _param_key(estimator, "n_basis")
    base = clone(estimator)
    seed_key = key[: -len("n_basis")] + "random_state" if key.endswith("n_basis") else None
    if random_state is not None and seed_key in base.get_params(deep=True):
        base.set_params(**{seed_key: random_state})
    scorer = check_scoring(base, scoring=scoring)
    X, y = indexable(X, y)
    splits = None if X_test is not None else list(
        check_cv(cv, y, classifier=is_classifier(base)).split(X, y))
    _holdout(clone(base).set_params(**{key: min(values)}), X, y, X, y, scorer)
    errors, times = [], []
    for m in values:
        est = clone(base).set_params(**{key: m})
        scores, fit_times = (_holdout(est, X, y, X_test, y_test, scorer) if splits is None
                             else _cross_validated(est, X, y, splits, scorer))
        errors.append(_to_error(scores, scoring))
        times.append(fit_times)
    return Bunch(n_basis=np.asarray(values), errors=np.asarray(errors),
                 fit_times=np.asarray(times), error_name=_error_name(base, scoring),
                 param_name=key)


class NBasisCurveDisplay:
    """Error and fit time against ``n_basis``, on twin y-axes.

    Build it with :meth:`from_estimator` (fits and plots) or from the numbers of
    :func:`n_basis_curve`; the arrays stay available as attributes.

    Parameters
    ----------
    n_basis : ndarray of shape (n_values,)
        The basis sizes (ints or fractions).
    errors : ndarray of shape (n_values, n_splits)
        Error per basis size and split.
    fit_times : ndarray of shape (n_values, n_splits)
        Fit time in seconds per basis size and split.
    error_name : str, default='error'
        Label of the error axis.
    estimator_name : str, optional
        Shown in the title.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The error axis (left).
    ax_time_ : matplotlib Axes
        The fit-time axis (right, a twin of ``ax_``).
    figure_ : matplotlib Figure
    error_line_, time_line_ : matplotlib Line2D
        The two mean curves.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import ReducedSVC
    >>> from sparsekernel.inspection import NBasisCurveDisplay
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> disp = NBasisCurveDisplay.from_estimator(ReducedSVC(), X, y, n_basis=[5, 20, 60],
    ...                                          cv=3, random_state=0)
    >>> disp.error_mean.shape
    (3,)

    See Also
    --------
    n_basis_curve : The same measurements, without a plot.
    sklearn.model_selection.ValidationCurveDisplay : The curve of any one parameter.
    """

    def __init__(self, *, n_basis, errors, fit_times, error_name="error",
                 estimator_name=None):
        self.n_basis = np.asarray(n_basis)
        self.errors = np.atleast_2d(np.asarray(errors, dtype=np.float64).T).T
        self.fit_times = np.atleast_2d(np.asarray(fit_times, dtype=np.float64).T).T
        self.error_name = error_name
        self.estimator_name = estimator_name

    @property
    def error_mean(self):
        """ndarray of shape (n_values,): mean error over splits."""
        return self.errors.mean(axis=1)

    @property
    def fit_time_mean(self):
        """ndarray of shape (n_values,): mean fit time (seconds) over splits."""
        return self.fit_times.mean(axis=1)

    def plot(self, ax=None, *, log_x=None):
        """Draw the mean error (left axis, with a ±1 std band over splits) and fit time.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw the error; the fit time goes on its twin. Default a new figure.
        log_x : bool, optional
            Log scale for n_basis; default when the values span a factor of 10 or more.

        Returns
        -------
        self
        """
        plt = pyplot()
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        x = self.n_basis
        err, spread = self.error_mean, self.errors.std(axis=1)
        (self.error_line_,) = ax.plot(x, err, "o-", color="C0", label=self.error_name)
        if self.errors.shape[1] > 1:
            ax.fill_between(x, err - spread, err + spread, color="C0", alpha=0.2)
        self.ax_time_ = ax.twinx()
        (self.time_line_,) = self.ax_time_.plot(x, self.fit_time_mean, "s--", color="C1",
                                                label="fit time")
        if log_x if log_x is not None else x.max() >= 10 * x.min():
            ax.set_xscale("log")
        ax.set_xlabel("n_basis")
        ax.set_ylabel(self.error_name, color="C0")
        self.ax_time_.set_ylabel("fit time (s)", color="C1")
        ax.legend(handles=[self.error_line_, self.time_line_], loc="upper center", fontsize=8)
        if self.estimator_name:
            ax.set_title(self.estimator_name)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, X, y, *, n_basis=(0.02, 0.05, 0.1, 0.2, 0.5),
                       X_test=None, y_test=None, cv=None, scoring=None, param_name=None,
                       random_state=None, ax=None, log_x=None):
        """Fit at each ``n_basis`` (see :func:`n_basis_curve`) and plot.

        Parameters
        ----------
        estimator, X, y, n_basis, X_test, y_test, cv, scoring, param_name, random_state
            As in :func:`n_basis_curve`.
        ax : matplotlib Axes, optional
        log_x : bool, optional
            As in :meth:`plot`.

        Returns
        -------
        NBasisCurveDisplay
        """
        pyplot()  # fail before the fits, not after them, when matplotlib is missing
        curve = n_basis_curve(estimator, X, y, n_basis, X_test=X_test, y_test=y_test, cv=cv,
                              scoring=scoring, param_name=param_name,
                              random_state=random_state)
        name = (estimator[-1] if isinstance(estimator, Pipeline) else estimator)
        disp = cls(n_basis=curve.n_basis, errors=curve.errors, fit_times=curve.fit_times,
                   error_name=curve.error_name, estimator_name=type(name).__name__)
        return disp.plot(ax=ax, log_x=log_x)
