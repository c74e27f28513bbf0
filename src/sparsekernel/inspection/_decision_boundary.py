"""Decision regions of a fitted 2-D classifier with its basis points, on scikit-learn's
:class:`~sklearn.inspection.DecisionBoundaryDisplay`."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ..compute import to_numpy
from ..utils import pyplot

__all__ = ["plot_decision_boundary"]


def _multiclass_colors():
    """Whether this scikit-learn's DecisionBoundaryDisplay takes ``multiclass_colors``."""
    from sklearn.inspection import DecisionBoundaryDisplay

    parameters = inspect.signature(DecisionBoundaryDisplay.from_estimator).parameters
    return "multiclass_colors" in parameters


def _check_2d(X):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError("plot_decision_boundary draws two features only: X must have shape "
                         f"(n_samples, 2). Got X with shape {X.shape}.")
    return X


def _input_space_basis(estimator):
    """``(points, name)``: the basis (``basis_``) or, for scikit-learn's and LIBSVM-style
    SVMs, the support vectors (``support_vectors_``) of the (final step of the) estimator,
    as points in the space of X; None when it has neither.

    A pipeline's basis lives after its transforms, so it is mapped back with their
    ``inverse_transform``; None (with a warning) when that is impossible.
    """
    final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    basis, name = getattr(final, "basis_", None), "basis points"
    if basis is None and getattr(final, "support_vectors_", None) is not None:
        basis, name = final.support_vectors_, "support vectors"
    if basis is None:
        return None  # full kernel or linear model: no separate basis to show
    basis = basis.toarray() if sp.issparse(basis) else np.asarray(to_numpy(basis))
    if isinstance(estimator, Pipeline) and len(estimator) > 1:
        try:
            basis = estimator[:-1].inverse_transform(basis)
        except (AttributeError, ValueError) as exc:
            warnings.warn("The basis points are not drawn: the pipeline's transforms cannot "
                          f"map them back to the space of X ({exc}).", UserWarning,
                          stacklevel=3)
            return None
    return (basis, name) if basis.ndim == 2 and basis.shape[1] == 2 else None


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
        none, they are not drawn (with a warning). An estimator without ``basis_`` but
        with ``support_vectors_`` (scikit-learn's ``SVC``) has its support vectors
        ringed instead; estimators with neither (``basis_`` None, e.g. a linear kernel)
        draw no points.
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
        Draw the basis points (or support vectors).

    Returns
    -------
    sklearn.inspection.DecisionBoundaryDisplay
        scikit-learn's display of the regions (``response_method='predict'``); the
        points, the basis points and the legend are drawn on its ``ax_``.

    Raises
    ------
    ValueError
        If X does not have exactly two features.
    """
    plt = pyplot()
    from matplotlib.colors import ListedColormap
    from sklearn.inspection import DecisionBoundaryDisplay

    X = _check_2d(X)
    check_is_fitted(estimator)
    y = np.asarray(y)
    classes = np.asarray(getattr(estimator, "classes_", np.unique(y)))
    colors = list(plt.get_cmap("tab10").colors[: max(len(classes), 2)])
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    # Class i in colour i: levels halfway between the class indices; scikit-learn >= 1.7
    # colours more than two classes from multiclass_colors (and ignores a cmap), older
    # releases from the cmap.
    colouring = ({"multiclass_colors": colors} if len(classes) > 2 and _multiclass_colors()
                 else {"cmap": ListedColormap(colors)})
    disp = DecisionBoundaryDisplay.from_estimator(
        estimator, X, response_method="predict", grid_resolution=grid_resolution,
        eps=0.05 * float(np.ptp(X, axis=0).max()) + 1e-9, plot_method="contourf", ax=ax,
        alpha=alpha, levels=np.arange(len(classes) + 1) - 0.5, **colouring)
    for i, label in enumerate(classes):
        sel = y == label
        ax.scatter(X[sel, 0], X[sel, 1], color=colors[i], edgecolors="0.2", linewidths=0.4,
                   s=18, label=f"class {label} ({sel.sum()})", zorder=3)
    shown = _input_space_basis(estimator) if show_basis else None
    if shown is not None:
        basis, name = shown
        ax.scatter(basis[:, 0], basis[:, 1], facecolors="none", edgecolors="black", s=90,
                   linewidths=1.3, label=f"{name} (m = {len(basis)})", zorder=4)
    ax.legend(loc="best", fontsize=8)
    return disp
