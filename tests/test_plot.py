"""Plots (headless) and their numbers: the n_basis curve, decision regions with the basis
points, the UD-search plot with its boundary warning, and stage-2 boxes inside the box."""

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons, make_regression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler
from sklearn.svm import SVC

from sparsekernel import ReducedSVC, ReducedSVR, SmoothSVC
from sparsekernel.inspection import NBasisCurveDisplay, n_basis_curve, plot_decision_boundary
from sparsekernel.model_selection import (
    UD_TABLES,
    SearchBoundaryWarning,
    UniformDesignSearchCV,
    check_search_boundary,
    plot_ud_search,
    ud_points,
)


@pytest.fixture
def plt():
    """pyplot on the headless Agg backend; every figure is closed afterwards."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


@pytest.fixture
def moons():
    X, y = make_moons(240, noise=0.25, random_state=0)
    return X[:160], y[:160], X[160:], y[160:]


def _collection(ax, prefix):
    found = [c for c in ax.collections if c.get_label().startswith(prefix)]
    assert len(found) == 1, [c.get_label() for c in ax.collections]
    return found[0]


# --- n_basis curve ----------------------------------------------------------------------


def test_curve_on_a_test_set_is_the_direct_fit(moons):
    X, y, Xt, yt = moons
    est = ReducedSVC(C=10.0, gamma=1.0)
    curve = n_basis_curve(est, X, y, [3, 10, 40], X_test=Xt, y_test=yt, random_state=0)
    assert curve.errors.shape == curve.fit_times.shape == (3, 1)
    for m, err in zip([3, 10, 40], curve.errors[:, 0], strict=True):
        direct = clone(est).set_params(n_basis=m, random_state=0).fit(X, y)
        assert err == 1.0 - direct.score(Xt, yt)
    assert np.all(curve.fit_times > 0)
    assert curve.error_name == "error (1 - accuracy)" and curve.param_name == "n_basis"
    assert curve.errors[-1, 0] < curve.errors[0, 0]  # 40 basis functions beat 3


def test_curve_cross_validates_on_the_same_folds(moons):
    X, y, _, _ = moons
    est = ReducedSVC(C=10.0, gamma=1.0, random_state=0)
    curve = n_basis_curve(est, X, y, [0.05, 0.25], cv=4)
    for frac, errs in zip([0.05, 0.25], curve.errors, strict=True):
        expected = 1.0 - cross_val_score(clone(est).set_params(n_basis=frac), X, y, cv=4)
        np.testing.assert_array_equal(errs, expected)
    assert curve.fit_times.shape == (2, 4) and np.all(curve.fit_times > 0)


def test_curve_finds_a_nested_n_basis_and_reports_a_loss():
    X, y = make_regression(120, 3, noise=5.0, random_state=0)
    pipe = make_pipeline(StandardScaler(), ReducedSVR(C=100.0))
    curve = n_basis_curve(pipe, X[:80], y[:80], [5, 20], X_test=X[80:], y_test=y[80:],
                          scoring="neg_mean_squared_error", random_state=1)
    assert curve.param_name == "reducedsvr__n_basis"
    assert curve.error_name == "mean_squared_error"
    direct = clone(pipe).set_params(reducedsvr__n_basis=20, reducedsvr__random_state=1)
    direct.fit(X[:80], y[:80])
    mse = np.mean((direct.predict(X[80:]) - y[80:]) ** 2)
    assert curve.errors[1, 0] == pytest.approx(mse, rel=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_basis": []}, "non-empty"),
    ({"n_basis": ["auto"]}, "positive ints"),
    ({"n_basis": [0]}, "positive ints"),
    ({"X_test": np.zeros((2, 2))}, "both X_test and y_test"),
    ({"X_test": np.zeros((2, 2)), "y_test": [0, 1], "cv": 3}, "not both"),
])
def test_curve_rejects_bad_arguments(moons, kwargs, match):
    X, y, _, _ = moons
    with pytest.raises(ValueError, match=match):
        n_basis_curve(ReducedSVC(), X, y, **{"n_basis": [5], **kwargs})


def test_curve_needs_an_n_basis_parameter(moons):
    X, y, _, _ = moons
    with pytest.raises(ValueError, match="no nested 'n_basis'"):
        n_basis_curve(SVC(), X, y, [5])


def test_display_draws_the_numbers_on_twin_axes(plt, moons):
    X, y, Xt, yt = moons
    est = ReducedSVC(C=10.0, gamma=1.0)
    disp = NBasisCurveDisplay.from_estimator(est, X, y, n_basis=[2, 8, 32], cv=3,
                                             random_state=0)
    curve = n_basis_curve(est, X, y, [2, 8, 32], cv=3, random_state=0)
    np.testing.assert_array_equal(disp.errors, curve.errors)  # same seed, same folds
    np.testing.assert_array_equal(disp.error_line_.get_ydata(), disp.error_mean)
    np.testing.assert_array_equal(disp.time_line_.get_ydata(), disp.fit_time_mean)
    np.testing.assert_array_equal(disp.error_line_.get_xdata(), [2, 8, 32])
    assert disp.ax_time_.get_shared_x_axes().joined(disp.ax_, disp.ax_time_)
    assert disp.ax_.get_xscale() == "log" and disp.ax_.get_title() == "ReducedSVC"
    assert disp.figure_ is disp.ax_.figure


def test_display_from_arrays_plots_on_a_given_axes(plt):
    _, ax = plt.subplots()
    disp = NBasisCurveDisplay(n_basis=[10, 20], errors=[0.3, 0.2], fit_times=[0.1, 0.2])
    assert disp.plot(ax=ax, log_x=False).ax_ is ax
    assert disp.errors.shape == (2, 1) and ax.get_xscale() == "linear"


# --- decision boundary ------------------------------------------------------------------


def test_decision_boundary_rings_every_basis_point(plt, moons):
    X, y, _, _ = moons
    clf = ReducedSVC(n_basis=12, random_state=0).fit(X, y)
    ax = plot_decision_boundary(clf, X, y).ax_
    basis = _collection(ax, "basis points")
    np.testing.assert_array_equal(basis.get_offsets(), clf.basis_)
    assert len(basis.get_offsets()) == len(clf.basis_) == 12
    assert "m = 12" in basis.get_label()
    assert len(_collection(ax, "class 0").get_offsets()) == np.sum(y == 0)
    assert any(t.get_text().startswith("basis points") for t in ax.get_legend().get_texts())


def test_decision_boundary_with_a_sparse_basis_and_three_classes(plt):
    X, y = make_blobs(150, centers=3, random_state=0)
    clf = ReducedSVC(n_basis=9, random_state=0).fit(sp.csr_matrix(X), y)
    assert sp.issparse(clf.basis_)
    ax = plot_decision_boundary(clf, sp.csr_matrix(X), y).ax_
    np.testing.assert_allclose(_collection(ax, "basis points").get_offsets(),
                               clf.basis_.toarray())
    assert [c.get_label() for c in ax.collections if c.get_label().startswith("class")] == [
        "class 0 (50)", "class 1 (50)", "class 2 (50)"]


def test_decision_boundary_maps_a_pipeline_basis_back(plt, moons):
    X, y, _, _ = moons
    pipe = make_pipeline(StandardScaler(), ReducedSVC(n_basis=10, random_state=0)).fit(X, y)
    ax = plot_decision_boundary(pipe, X, y).ax_
    expected = pipe[0].inverse_transform(pipe[-1].basis_)
    np.testing.assert_allclose(_collection(ax, "basis points").get_offsets(), expected)


def test_decision_boundary_skips_a_basis_it_cannot_map_back(plt, moons):
    X, y, _, _ = moons
    pipe = make_pipeline(SplineTransformer(), ReducedSVC(n_basis=10, random_state=0))
    pipe.fit(X, y)
    with pytest.warns(UserWarning, match="basis points are not drawn"):
        ax = plot_decision_boundary(pipe, X, y).ax_
    assert not [c for c in ax.collections if c.get_label().startswith("basis")]


def test_decision_boundary_rings_an_svcs_support_vectors(plt, moons):
    """scikit-learn's SVC has no basis_: its support vectors are ringed, so named."""
    from sklearn.svm import SVC

    X, y, _, _ = moons
    clf = SVC(C=10.0).fit(X, y)
    ax = plot_decision_boundary(clf, X, y).ax_
    ringed = _collection(ax, "support vectors")
    np.testing.assert_array_equal(ringed.get_offsets(), clf.support_vectors_)
    assert f"m = {len(clf.support_vectors_)}" in ringed.get_label()
    assert not [c for c in ax.collections if c.get_label().startswith("basis")]


def test_decision_boundary_without_a_basis(plt, moons):
    X, y, _, _ = moons
    clf = SmoothSVC(kernel="linear").fit(X, y)
    assert clf.basis_ is None
    ax = plot_decision_boundary(clf, X, y).ax_
    assert not [c for c in ax.collections if c.get_label().startswith("basis")]


@pytest.mark.parametrize("centers", [2, 3])
def test_decision_boundary_is_sklearns_display_of_the_predictions(plt, centers):
    """The regions are scikit-learn's DecisionBoundaryDisplay of ``predict`` on a grid
    covering X, class i in the colour of the points of class i."""
    from sklearn.inspection import DecisionBoundaryDisplay

    X, y = make_blobs(120, centers=centers, random_state=1)
    y = np.asarray(["a", "b", "c"])[y]  # string labels: the regions hold class indices
    clf = ReducedSVC(n_basis=10, random_state=0).fit(X, y)
    disp = plot_decision_boundary(clf, X, y, grid_resolution=40)
    assert isinstance(disp, DecisionBoundaryDisplay) and disp.xx0.shape == (40, 40)
    grid = np.c_[disp.xx0.ravel(), disp.xx1.ravel()]
    expected = np.searchsorted(clf.classes_, clf.predict(grid)).reshape(disp.xx0.shape)
    np.testing.assert_array_equal(disp.response, expected)
    assert disp.xx0.min() < X[:, 0].min() and disp.xx0.max() > X[:, 0].max()
    points = [c for c in disp.ax_.collections if c.get_label().startswith("class")]
    surface = disp.surface_
    for i, collection in enumerate(points):
        colour = collection.get_facecolor()[0][:3]
        np.testing.assert_allclose(surface.cmap(surface.norm(i))[:3], colour)


@pytest.mark.parametrize("shape", [(50, 3), (50,)])
def test_decision_boundary_needs_two_features(plt, shape):
    X, y = np.zeros(shape), np.zeros(50)
    with pytest.raises(ValueError, match=rf"X with shape \({shape[0]},{' 3' * (len(shape) > 1)}"):
        plot_decision_boundary(ReducedSVC(), X, y)


# --- UD search: boundary warning and stage-2 boxes --------------------------------------

_BOX = {"C_range": (2.0**-2, 2.0**6), "gamma_range": (2.0**-4, 2.0**4)}


def _search_towards(log2_c, log2_gamma):
    """A 9-5 search whose score peaks at (log2_c, log2_gamma): the optimum is steered."""
    def score(est, X, y):
        return -abs(math.log2(est.C) - log2_c) - abs(math.log2(est.gamma) - log2_gamma)

    X, y = make_moons(60, noise=0.2, random_state=0)
    return UniformDesignSearchCV(ReducedSVC(n_basis=5, random_state=0), design="9-5", cv=2,
                                 scoring=score, **_BOX).fit(X, y)


def test_boundary_warning_names_the_range_and_direction(plt):
    search = _search_towards(20.0, 0.0)  # far above the C range, inside the gamma range
    assert math.log2(search.best_params_["C"]) == pytest.approx(6.0)
    with pytest.warns(SearchBoundaryWarning, match=r"upper edge.*Widen C_range upward"):
        assert check_search_boundary(search) == [("C_range", "upper")]
    with pytest.warns(SearchBoundaryWarning, match="C_range"):
        plot_ud_search(search)
    low_gamma = _search_towards(2.0, -30.0)
    with pytest.warns(SearchBoundaryWarning, match="Widen gamma_range downward"):
        assert check_search_boundary(low_gamma) == [("gamma_range", "lower")]


def test_no_boundary_warning_for_an_interior_optimum(plt):
    search = _search_towards(2.2, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchBoundaryWarning)
        assert check_search_boundary(search) == []
        plot_ud_search(search)


def test_boundary_check_without_warning_and_without_a_best_point():
    search = _search_towards(20.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchBoundaryWarning)
        assert check_search_boundary(search, warn=False) == [("C_range", "upper")]
    del search.best_params_
    assert check_search_boundary(search) == []


@pytest.mark.parametrize("n1, n2", [(13, 9), (9, 5)])
def test_stage2_points_stay_inside_the_box(n1, n2):
    low, high = np.array([0.0, -10.0]), np.array([20.0, 1.0])
    outside = 0
    for centre in ud_points(UD_TABLES[n1], low, high):
        stage2 = ud_points(UD_TABLES[n2], low, high, stage=2, center=centre)
        assert np.all(stage2 >= low - 1e-12) and np.all(stage2 <= high + 1e-12)
        width = stage2.max(axis=0) - stage2.min(axis=0)
        np.testing.assert_allclose(width, (high - low) / 2)  # shifted, not shrunk
        assert np.all(np.abs(stage2[0] - centre) <= (high - low) / 4 + 1e-12)
        paper = ud_points(UD_TABLES[n2], low, high, stage=2, center=centre, keep_inside=False)
        outside += not (np.all(paper >= low) and np.all(paper <= high))
        if np.all(paper >= low) and np.all(paper <= high):  # interior centre: unchanged
            np.testing.assert_allclose(stage2, paper)
    assert outside > 0  # the unclipped design does leave the box for edge centres


def test_search_with_an_edge_optimum_stays_inside_the_box(plt):
    search = _search_towards(-30.0, 30.0)  # the corner (low C, high gamma)
    box = search.search_box_
    pts = np.c_[search.cv_results_["log2_C"], search.cv_results_["log2_gamma"]]
    assert np.all(pts >= box[:, 0] - 1e-12) and np.all(pts <= box[:, 1] + 1e-12)
    with pytest.warns(SearchBoundaryWarning):
        ax = plot_ud_search(search)
    rect = next(p for p in ax.patches if p.get_label() == "stage-2 box")
    assert rect.get_x() == pytest.approx(box[0, 0])
    assert rect.get_y() + rect.get_height() == pytest.approx(box[1, 1])


# --- optional dependency ----------------------------------------------------------------


def test_plots_name_the_extra_when_matplotlib_is_missing(monkeypatch, moons):
    X, y, _, _ = moons
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.colors"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import name` fail
    clf = ReducedSVC(n_basis=5, random_state=0).fit(X, y)
    with pytest.raises(ImportError, match=r"pip install 'sparsekernel\[plot\]'"):
        plot_decision_boundary(clf, X, y)
    with pytest.raises(ImportError, match=r"sparsekernel\[plot\]"):
        NBasisCurveDisplay.from_estimator(ReducedSVC(), X, y, n_basis=[5])
    assert n_basis_curve(ReducedSVC(), X, y, [5], cv=2).errors.shape == (1, 2)


def test_importing_the_plots_does_not_import_matplotlib():
    code = ("import sys; from sparsekernel.inspection import NBasisCurveDisplay, "
            "n_basis_curve, plot_decision_boundary; "
            "from sparsekernel.model_selection import plot_ud_search; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_n_basis_curve_on_ripley(plt):
    from sparsekernel.datasets import load_ripley

    try:
        X, y, Xt, yt = load_ripley()
    except (FileNotFoundError, OSError):
        pytest.skip("Ripley's data is not available")
    disp = NBasisCurveDisplay.from_estimator(ReducedSVC(C=10.0, gamma=8.0), X, y,
                                             n_basis=[2, 10, 50], X_test=Xt, y_test=yt,
                                             random_state=0)
    # Ripley's Bayes error is about 8 %; 50 basis functions come within a few points of it.
    assert disp.error_mean[-1] < 0.12 and disp.error_mean[0] > disp.error_mean[-1]


def test_curve_keeps_ints_and_fractions_apart(moons):
    X, y, Xt, yt = moons
    seen = []
    original = ReducedSVC.fit

    def fit(self, X_, y_):
        seen.append(self.n_basis)
        return original(self, X_, y_)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ReducedSVC, "fit", fit)
        n_basis_curve(ReducedSVC(), X, y, [0.1, 20], X_test=Xt, y_test=yt)
    # One untimed warm-up fit at the smallest basis, then one fit per value, types kept.
    assert seen == [0.1, 0.1, 20] and type(seen[-1]) is int


def test_the_code_of_docs_plots_md_runs(plt):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "plots.md"
    if not page.exists():
        pytest.skip("docs/plots.md is not in this checkout")
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchBoundaryWarning)  # the page's example warns
        for code in blocks:  # one namespace: later blocks reuse X, y
            exec(compile(code, str(page), "exec"), namespace)
    assert namespace["disp"].errors.shape == (7, 1)
    paper, search = namespace["paper"], namespace["search"]
    assert check_search_boundary(paper, warn=False) == [("gamma_range", "lower")]
    assert check_search_boundary(search, warn=False) == [("C_range", "lower")]
    assert search.best_score_ > paper.best_score_ + 0.2  # 0.89 against 0.65 (the page)
