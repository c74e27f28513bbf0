"""Draw the figures of docs/plots.md into docs/figures/ (about 10 s on one core).

Run from anywhere: ``python docs/make_figures.py``. Everything is seeded, and the data ship
with the package (Ripley's and the banana set), so the figures are reproducible apart from
the fit times.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: files only

import matplotlib.pyplot as plt  # noqa: E402

from sparsekernel import ReducedSVC  # noqa: E402
from sparsekernel.datasets import load_banana, load_ripley  # noqa: E402
from sparsekernel.inspection import NBasisCurveDisplay, plot_decision_boundary  # noqa: E402
from sparsekernel.model_selection import (  # noqa: E402
    SearchBoundaryWarning,
    UniformDesignSearchCV,
    plot_ud_search,
)

FIGURES = Path(__file__).resolve().parent / "figures"


def n_basis_curve_figure():
    """Test error and fit time against m on banana (1,000 training rows)."""
    X, y, Xt, yt = load_banana(random_state=0, n_train=1000)
    disp = NBasisCurveDisplay.from_estimator(
        ReducedSVC(C=100.0, gamma=1.0), X, y, n_basis=[2, 5, 10, 20, 50, 100, 200],
        X_test=Xt, y_test=yt, random_state=0)
    disp.ax_.set_title("ReducedSVC on banana (1,000 train / 4,300 test)")
    return disp.figure_


def decision_boundary_figure():
    """Ripley's data: regions of a 15-basis-function RSVM, basis points ringed."""
    X, y, _, _ = load_ripley()
    clf = ReducedSVC(C=10.0, gamma=8.0, n_basis=15, random_state=0).fit(X, y)
    ax = plot_decision_boundary(clf, X, y).ax_
    ax.set_title("ReducedSVC, n_basis=15, on Ripley's data")
    return ax.figure


def ud_search_figure():
    """The two UD stages on Ripley's data: the paper's gamma range, then the default one."""
    X, y, _, _ = load_ripley()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, gamma_range in zip(axes, ["paper", "auto"], strict=True):
        search = UniformDesignSearchCV(ReducedSVC(n_basis=25, random_state=0), cv=5,
                                       gamma_range=gamma_range, random_state=0).fit(X, y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SearchBoundaryWarning)
            plot_ud_search(search, ax=ax)
        for w in caught:  # the page quotes it
            print(f"gamma_range={gamma_range!r}: {w.message}")
        ax.set_title(f"gamma_range={gamma_range!r}: CV accuracy {search.best_score_:.3f}",
                     fontsize=10)
    return fig


def main():
    FIGURES.mkdir(exist_ok=True)
    for name, draw in [("n_basis_curve", n_basis_curve_figure),
                       ("decision_boundary", decision_boundary_figure),
                       ("ud_search", ud_search_figure)]:
        fig = draw()
        fig.tight_layout()
        fig.savefig(FIGURES / f"{name}.png", dpi=90)
        plt.close(fig)
        print(FIGURES / f"{name}.png")


if __name__ == "__main__":
    main()
