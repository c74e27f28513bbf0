"""Plots: the UD search (figure 2 of the review), error and fit time against ``n_basis``,
and 2-D decision regions with the basis points.

matplotlib is optional (the ``plot`` extra): it is imported inside the plotting functions
only, so importing :mod:`sparsekernel` never needs it, and :func:`n_basis_curve` computes
the numbers of the curve without it.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch, indexable
from sklearn.utils.validation import check_is_fitted

from ._uniform_design import _box_center, check_search_boundary

__all__ = ["NBasisCurveDisplay", "n_basis_curve", "plot_decision_boundary", "plot_ud_search"]


def _pyplot():
    """matplotlib.pyplot, or an ImportError that says how to get it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("Plotting needs matplotlib, which is optional: install it with "
                          "pip install 'sparsekernel[plot]'.") from exc
    return plt


def _log2_params(search, names):
    params = search.cv_results_["params"]
    return np.log2([[p[names[0]], p[names[1]]] for p in params])


def _errors(results, metric):
    return 1.0 - np.asarray(results[f"mean_test_{metric}"], dtype=np.float64)


def _stage2_centre(search, stage):
    """The best stage-1 point (first on ties), as the search chose it."""
    metric = search._steering_metric()
    scores = np.asarray(search.cv_results_[metric], dtype=np.float64)[stage == 1]
    first = np.c_[search.cv_results_["log2_C"], search.cv_results_["log2_gamma"]][stage == 1]
    return first[int(np.argmax(np.where(np.isnan(scores), -np.inf, scores)))]


def plot_ud_search(search, surface=None, ax=None, metric="score", levels=12):
    """Draw the evaluated (log2 C, log2 gamma) points of a fitted UniformDesignSearchCV.

    Stage-1 points are circles, stage-2 points triangles, the chosen point a star, and the
    stage-2 box a dashed rectangle, over a filled contour of the CV error ``1 - score``.

    Parameters
    ----------
    search : UniformDesignSearchCV
        A fitted search.
    surface : fitted GridSearchCV (or any search with ``cv_results_``), optional
        Its points give the error surface (e.g. the 15 x 15 grid of a benchmark), read with
        the same ``param_names``. Without it the surface is interpolated (linear, over a
        Delaunay triangulation) from the UD points themselves.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    metric : str, default='score'
        Which ``mean_test_<metric>`` to show (the refit metric for multi-metric searches).
    levels : int, default=12
        Contour levels.

    Returns
    -------
    matplotlib Axes

    Warns
    -----
    SearchBoundaryWarning
        When the chosen point lies on the edge of the search box (see
        :func:`check_search_boundary`): the range to widen is named.
    """
    plt = _pyplot()
    check_search_boundary(search, stacklevel=3)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    names = tuple(search.param_names)
    pts = _log2_params(search, names)
    err = _errors(search.cv_results_, metric)
    src_pts, src_err = (pts, err) if surface is None else (
        _log2_params(surface, names), _errors(surface.cv_results_, metric))
    ok = np.isfinite(src_err)
    if ok.sum() >= 3:
        cs = ax.tricontourf(src_pts[ok, 0], src_pts[ok, 1], src_err[ok], levels=levels,
                            cmap="viridis_r")
        ax.figure.colorbar(cs, ax=ax, label="CV error (1 - score)")
    stage = np.asarray(search.cv_results_["stage"])
    for s, marker, label in ((1, "o", "stage 1"), (2, "^", "stage 2")):
        sel = stage == s
        ax.scatter(pts[sel, 0], pts[sel, 1], marker=marker, c="white", edgecolors="black",
                   s=50, label=f"{label} ({sel.sum()} points)", zorder=3)
    best = pts[search.best_index_]
    ax.scatter(*best, marker="*", c="red", s=220, edgecolors="black", label="chosen",
               zorder=4)
    box = search.search_box_
    half = (box[:, 1] - box[:, 0]) / 2
    centre = _box_center(box[:, 0], box[:, 1], 2, _stage2_centre(search, stage))
    ax.add_patch(plt.Rectangle(centre - half / 2, half[0], half[1], fill=False, ls="--",
                               ec="0.2", lw=1.2, label="stage-2 box"))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.05 * (hi - lo) + 0.1
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_xlabel(f"log2 {names[0]}")
    ax.set_ylabel(f"log2 {names[1]}")
    ax.legend(loc="best", fontsize=8)
    return ax


# --- error and fit time against n_basis -------------------------------------------------


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
    # Fit and time each fold here rather than through cross_validate so that the time is
    # the fit alone, measured the same way as on a holdout set.
    scores, times = [], []
    for train, test in splits:
        fold = clone(est)
        score, fit_time = _holdout(fold, _rows(X, train), _rows(y, train), _rows(X, test),
                                   _rows(y, test), scorer)
        scores += score
        times += fit_time
    return scores, times


def _rows(a, idx):
    return a.iloc[idx] if hasattr(a, "iloc") else a[idx]


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
    (numba's compilation of a solver, first imports) are not timed with the first point.
    Fits run one after the other: the times compare basis sizes on this machine.
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
    # Untimed: one-time costs (numba compilation, first imports) would land on the first
    # point and make the smallest basis look slow.
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
    >>> from sparsekernel.model_selection import NBasisCurveDisplay
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> disp = NBasisCurveDisplay.from_estimator(ReducedSVC(), X, y, n_basis=[5, 20, 60],
    ...                                          cv=3, random_state=0)
    >>> disp.error_mean.shape
    (3,)
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
        plt = _pyplot()
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
        _pyplot()  # fail before the fits, not after them, when matplotlib is missing
        curve = n_basis_curve(estimator, X, y, n_basis, X_test=X_test, y_test=y_test, cv=cv,
                              scoring=scoring, param_name=param_name,
                              random_state=random_state)
        name = (estimator[-1] if isinstance(estimator, Pipeline) else estimator)
        disp = cls(n_basis=curve.n_basis, errors=curve.errors, fit_times=curve.fit_times,
                   error_name=curve.error_name, estimator_name=type(name).__name__)
        return disp.plot(ax=ax, log_x=log_x)


# --- 2-D decision regions with the basis points ----------------------------------------


def _check_2d(X):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError("plot_decision_boundary draws two features only: X must have shape "
                         f"(n_samples, 2). Got X with shape {X.shape}.")
    return X


def _input_space_basis(estimator):
    """``basis_`` of the (final step of the) estimator as points in the space of X.

    A pipeline's basis lives after its transforms, so it is mapped back with their
    ``inverse_transform``; None (with a warning) when that is impossible.
    """
    final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    basis = getattr(final, "basis_", None)
    if basis is None:
        return None  # full kernel or linear model: no separate basis to show
    basis = basis.toarray() if sp.issparse(basis) else np.asarray(basis)
    if isinstance(estimator, Pipeline) and len(estimator) > 1:
        try:
            basis = estimator[:-1].inverse_transform(basis)
        except (AttributeError, ValueError) as exc:
            warnings.warn("The basis points are not drawn: the pipeline's transforms cannot "
                          f"map them back to the space of X ({exc}).", UserWarning,
                          stacklevel=3)
            return None
    return basis if basis.ndim == 2 and basis.shape[1] == 2 else None


def _draw_regions(ax, estimator, X, classes, cmap, resolution, alpha):
    """Fill the plane by predicted class, class i in colour i of ``cmap``."""
    # Drawn here rather than with sklearn's DecisionBoundaryDisplay, whose multiclass
    # colouring differs between the scikit-learn versions this package supports.
    pad = 0.05 * np.ptp(X, axis=0) + 1e-9
    axes = [np.linspace(X[:, j].min() - pad[j], X[:, j].max() + pad[j], resolution)
            for j in range(2)]
    xx, yy = np.meshgrid(*axes)
    pred = estimator.predict(np.c_[xx.ravel(), yy.ravel()])
    index = np.searchsorted(classes, pred).reshape(xx.shape)
    # Levels halfway between the class indices give class i exactly colour i.
    ax.contourf(xx, yy, index, levels=np.arange(len(classes) + 1) - 0.5, cmap=cmap,
                alpha=alpha, zorder=0)
    ax.set_xlim(axes[0][0], axes[0][-1])
    ax.set_ylim(axes[1][0], axes[1][-1])


def plot_decision_boundary(estimator, X, y, *, ax=None, grid_resolution=200, alpha=0.3,
                           show_basis=True):
    """Decision regions of a fitted 2-D classifier, its training points and basis points.

    Regions are filled by predicted class over a grid covering X, points are coloured by
    their class, and the basis points (``basis_``) are ringed in black; the legend gives
    their number m.

    Parameters
    ----------
    estimator : fitted classifier or Pipeline
        Its final step's ``basis_`` (dense or sparse) gives the basis points. In a
        pipeline they live in the transformed space and are mapped back through the
        earlier steps' ``inverse_transform`` (e.g. a StandardScaler); when a step has
        none, they are not drawn (with a warning). Estimators without a separate basis
        (``basis_`` None, e.g. a linear kernel) draw no basis points.
    X : {array-like, sparse matrix} of shape (n_samples, 2)
        The points to show, in the estimator's input space; exactly two features.
    y : array-like of shape (n_samples,)
        Their labels.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    grid_resolution : int, default=200
        Grid points per axis for the regions.
    alpha : float, default=0.3
        Opacity of the regions.
    show_basis : bool, default=True
        Draw the basis points.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        If X does not have exactly two features.
    """
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    X = _check_2d(X)
    check_is_fitted(estimator)
    y = np.asarray(y)
    classes = np.asarray(getattr(estimator, "classes_", np.unique(y)))
    cmap = ListedColormap(plt.get_cmap("tab10").colors[: max(len(classes), 2)])
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    _draw_regions(ax, estimator, X, classes, cmap, grid_resolution, alpha)
    for i, label in enumerate(classes):
        sel = y == label
        ax.scatter(X[sel, 0], X[sel, 1], color=cmap(i), edgecolors="0.2", linewidths=0.4,
                   s=18, label=f"class {label} ({sel.sum()})", zorder=3)
    basis = _input_space_basis(estimator) if show_basis else None
    if basis is not None:
        ax.scatter(basis[:, 0], basis[:, 1], facecolors="none", edgecolors="black", s=90,
                   linewidths=1.3, label=f"basis points (m = {len(basis)})", zorder=4)
    ax.legend(loc="best", fontsize=8)
    return ax
