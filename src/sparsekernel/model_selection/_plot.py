"""The UD search's plot (figure 2 of the review): its stages over the CV surface.

matplotlib is optional (the ``plot`` extra), imported inside the function only.
"""

from __future__ import annotations

import numpy as np

from ..utils import pyplot
from ._uniform_design import _box_center, check_search_boundary

__all__ = ["plot_ud_search"]


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
    plt = pyplot()
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
